"""A test reference: a two-player PettingZoo AEC game whose observation is float32 and whose
payoffs are fractions (0.5, 0.75, ...), the combination a float32 JAX port must verify on
with `jax_enable_x64` off.

The pot starts at 1.0. The player to move raises (action 0: the pot grows by 0.5) or takes
(action 1: the mover wins half the pot, the other loses it, and the game ends). After four
raises the game ends level (0, 0). Each player observes float32 [pot, raises / 4]; both
actions are always legal.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector

RAISES = 4


class PotGame(AECEnv):
    metadata: ClassVar[dict[str, Any]] = {
        "name": "pot_v0",
        "is_parallelizable": False,
        "render_modes": [],
    }

    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        view = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 8.0, (2,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (2,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, view)
        self.action_spaces = {a: spaces.Discrete(2) for a in self.possible_agents}
        self.pot = 1.0
        self.raises = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return {
            "observation": np.array([self.pot, self.raises / RAISES], dtype=np.float32),
            "action_mask": np.ones(2, dtype=np.int8),
        }

    def reset(self, seed: int | None = None, options: Any = None) -> None:
        self.agents = self.possible_agents[:]
        self.pot, self.raises = 1.0, 0
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._agent_selector = AgentSelector(self.agents)
        self.agent_selection = self._agent_selector.reset()

    def step(self, action: int) -> None:
        mover = self.agent_selection
        other = self.agents[1 - self.agents.index(mover)]
        self.rewards = dict.fromkeys(self.agents, 0)
        if action == 1:
            self.rewards[mover], self.rewards[other] = self.pot / 2, -self.pot / 2
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.pot += 0.5
            self.raises += 1
            if self.raises == RAISES:
                self.terminations = dict.fromkeys(self.agents, True)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self._accumulate_rewards()
        self.agent_selection = self._agent_selector.next()


def env() -> PotGame:
    return PotGame()
