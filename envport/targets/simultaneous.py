"""Agents moving at once (a PettingZoo Parallel env) presented to the verifier as one env.

The levels compare transitions of one env: one action in, the outputs out. A Parallel env's
step takes every agent's action at once and answers five dicts keyed by agent. The least
machinery that lets every level compare it is to see it as one env (docs/design.md, The
way forward for new environment kinds):

- the action is the joint action, each agent's Discrete action in the spec's `[parallel]
  agents` order (PettingZoo's `possible_agents`): a MultiDiscrete space, so draws, policies
  and the port's batch (`actions[B, n_agents]`) are arrays like any other;
- the observation is every agent's, stacked in that order (`[n_agents, *shape]`), so a
  component reads as `agent_1.obs[4]` (`agent_names`); agents whose flat observations
  differ in length (simple_tag's adversaries and runner) declare each length
  (`[parallel] observation_sizes`), and a shorter agent's row is padded with zeros to the
  longest: the padding is the stacking's, not the env's, so it is never compared
  (`padding`);
- the reward is a vector, one entry per agent (the comparison names `agent_1.reward`);
- `terminated` / `truncated` are the episode's: every agent's flags agree at each step
  (MPE's agents all leave at the end of the last cycle), and a reference whose agents
  leave one by one is refused with one line rather than compared wrongly.

After an episode ends PettingZoo's wrapper empties `agents`; the levels never step past
an episode's end, and a state bridge calls `fresh_cycle` after writing a state, so any
written state is stepped from the start of a cycle with every agent present.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from envport.errors import SpecError
from envport.parallel_spec import ParallelSpec
from envport.targets.turns import same_agents


def is_parallel(env: Any) -> bool:
    """A PettingZoo ParallelEnv: `possible_agents`, per-agent spaces, and no turn loop."""
    return (
        all(hasattr(env, name) for name in ("possible_agents", "action_space", "step"))
        and callable(getattr(env, "action_space", None))
        and not hasattr(env, "agent_iter")
    )


def agent_names(parallel: ParallelSpec, size: int, observation: Sequence[str] = ()) -> list[str]:
    """Names of a stacked observation's `size` components, agent by agent: `agent_1.obs[4]`,
    with the agent's names beside the index when there are as many as its observation has
    components (`[parallel] observation_names`, else `[observation] names`):
    `agent_1.obs[4] (landmark_0.x)`. A shorter agent's padding reads `agent_0.obs[15]
    (padding)`; `padding` says which components those are."""
    agents = parallel.agents
    if size % len(agents):
        return [f"obs[{i}]" for i in range(size)]
    width = size // len(agents)
    names = []
    for agent in agents:
        own = min(parallel.size_of(agent) or width, width)
        labels = parallel.observation_names.get(agent) or observation
        named = len(labels) == own
        names += [f"{agent}.obs[{i}]" + (f" ({labels[i]})" if named else "") for i in range(own)]
        names += [f"{agent}.obs[{i}] (padding)" for i in range(own, width)]
    return names


def padding(parallel: ParallelSpec, size: int) -> np.ndarray:
    """bool[size] over a stacked observation's components: True where a shorter agent's row
    is padded (never compared: neither the reference nor the port computes it)."""
    padded = np.zeros(size, dtype=bool)
    if parallel.observation_sizes is None or size % len(parallel.agents):
        return padded
    rows = padded.reshape(len(parallel.agents), -1)
    for row, own in zip(rows, parallel.observation_sizes, strict=True):
        row[own:] = True
    return padded


def reward_names(agents: Sequence[str]) -> list[str]:
    return [f"{agent}.reward" for agent in agents]


class Simultaneous:
    """A PettingZoo Parallel env (the user's trusted reference) as reset/step of joint
    actions."""

    def __init__(self, parallel: Any, layout: ParallelSpec) -> None:
        if not is_parallel(parallel):
            raise SpecError(
                "key `parallel`: the reference is not a PettingZoo Parallel env (it has no "
                "`possible_agents` and `action_space(agent)`, or it is an AEC env: its "
                "`parallel_env` factory makes the Parallel one); `[parallel]` describes one"
            )
        found = same_agents(parallel, layout.agents, "parallel.agents")
        self.parallel = parallel
        self.agents = found
        actions = [parallel.action_space(agent) for agent in found]
        for agent, space in zip(found, actions, strict=True):
            if not isinstance(space, spaces.Discrete) or int(space.start) != 0:
                raise SpecError(
                    f"key `parallel`: {agent}'s action space is {space}; agents moving at "
                    "once are checked with Discrete actions from 0 (a joint MultiDiscrete)"
                )
        # Discrete spaces of different sizes are one MultiDiscrete all the same.
        self.action_space = spaces.MultiDiscrete([int(space.n) for space in actions])
        shape = observation_shape(parallel, found, layout)
        first = parallel.observation_space(found[0])
        self.observation_space = spaces.Box(-np.inf, np.inf, shape, first.dtype or np.float32)
        # Read by the reference's harness (a bridge reaches the world through it).
        self.unwrapped = parallel.unwrapped
        self.spec = None  # no Gymnasium registration, so no time limit of Gymnasium's
        # What Gymnasium's SyncVectorEnv reads of an env (l2.vector's reference).
        self.metadata: dict[str, Any] = dict(getattr(parallel, "metadata", {}) or {})
        self.render_mode = None

    # ---- the env interface the levels drive ----

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        observations, _ = self.parallel.reset(seed=seed, options=options)
        return self._stacked(observations), {}

    def step(self, action: Any) -> tuple[np.ndarray, np.ndarray, bool, bool, dict]:
        joint = np.asarray(action).reshape(-1)
        if joint.size != len(self.agents):
            raise ValueError(
                f"a joint action has one entry per agent ({len(self.agents)}), got {joint.size}"
            )
        actions = {agent: int(a) for agent, a in zip(self.agents, joint, strict=True)}
        # Drawn states may put two agents on one point: MPE's contact force is then 0/0, a
        # NaN the comparison holds the port to; the reference's warning about it is noise.
        with np.errstate(divide="ignore", invalid="ignore"):
            observations, rewards, terminations, truncations, _ = self.parallel.step(actions)
        reward = np.asarray([float(rewards.get(agent, 0.0)) for agent in self.agents])
        return (
            self._stacked(observations),
            reward,
            self._ended(terminations, "terminations"),
            self._ended(truncations, "truncations"),
            {},
        )

    def close(self) -> None:
        self.parallel.close()

    def _stacked(self, observations: dict[str, Any]) -> np.ndarray:
        missing = [agent for agent in self.agents if agent not in observations]
        if missing:
            raise SpecError(
                f"key `parallel`: the reference gave no observation for {', '.join(missing)}: "
                "agents that leave before the episode ends are not compared yet"
            )
        rows = [np.asarray(observations[agent]) for agent in self.agents]
        if len({row.shape for row in rows}) == 1:
            return np.stack(rows)
        # Agents observing different lengths (declared; observation_shape checked them):
        # each row in front, zeros after it.
        stacked = np.zeros(self.observation_space.shape, dtype=rows[0].dtype)
        for index, row in enumerate(rows):
            stacked[index, : row.size] = row.reshape(-1)
        return stacked

    def _ended(self, flags: dict[str, Any], kind: str) -> bool:
        values = {agent: bool(flags.get(agent, False)) for agent in self.agents}
        if len(set(values.values())) > 1:
            raise SpecError(
                f"key `parallel`: the reference's {kind} differ between agents ({values}): "
                "agents that leave one by one are not compared yet"
            )
        return any(values.values())

    # ---- for a state bridge ----

    def fresh_cycle(self) -> None:
        """Clear what the last steps left behind (an ended episode's empty `agents`,
        rewards, flags, the AEC env's half-collected actions) and start a cycle with every
        agent present, so a written state is stepped like one reached in play."""
        fresh_cycle(self.parallel)


def observation_shape(parallel: Any, agents: list[str], layout: ParallelSpec) -> tuple[int, ...]:
    """The stacked observation's shape: [n_agents, *shape] when every agent observes one
    shape, [n_agents, the longest] for the flat lengths `[parallel] observation_sizes`
    declares. A declaration the reference contradicts, or one missing, is one line."""
    shapes = {agent: tuple(parallel.observation_space(agent).shape or ()) for agent in agents}
    actual = ", ".join(f"{agent} {list(shape)}" for agent, shape in shapes.items())
    declared = layout.observation_sizes
    flat = all(len(shape) == 1 for shape in shapes.values())
    if declared is None and len(set(shapes.values())) > 1:
        hint = (
            f"declare each length in `[parallel]`: observation_sizes = "
            f"{[shape[0] for shape in shapes.values()]} (shorter rows are padded, never compared)"
            if flat
            else "only flat observations of different lengths are compared yet"
        )
        raise SpecError(
            f"key `parallel`: the agents' observations differ in shape ({actual}); {hint}"
        )
    if declared is not None:
        for agent, size in zip(agents, declared, strict=True):
            if shapes[agent] != (size,):
                raise SpecError(
                    f"key `parallel.observation_sizes`: {agent}'s observation is "
                    f"{list(shapes[agent])} in the reference, the spec says [{size}]; the "
                    f"reference's are {actual}"
                )
    for agent, names in layout.observation_names.items():
        if declared is None and (len(names),) != shapes[agent]:
            raise SpecError(
                f"key `parallel.observation_names.{agent}`: {len(names)} names for "
                f"{agent}'s observation of {list(shapes[agent])}; give one per component"
            )
    if declared is None:
        return (len(agents), *shapes[agents[0]])
    return (len(agents), max(declared))


def fresh_cycle(env: Any) -> None:
    """For a state bridge (`write_state`, after it has written the world): every agent
    back, with no rewards, endings or pending actions, the first agent to act. `env` is the
    reference as a bridge receives it (a `Simultaneous`), or the Parallel env itself.

    PettingZoo's Parallel envs made from an AEC env (`parallel_wrapper_fn`, as mpe2's are)
    keep this in the AEC env (`unwrapped`) and the wrapper's own `agents`."""
    parallel = env.parallel if isinstance(env, Simultaneous) else env
    game = parallel.unwrapped
    game.agents = game.possible_agents[:]
    game.rewards = dict.fromkeys(game.agents, 0.0)
    game._cumulative_rewards = dict.fromkeys(game.agents, 0.0)
    game.terminations = dict.fromkeys(game.agents, False)
    game.truncations = dict.fromkeys(game.agents, False)
    game.infos = {agent: {} for agent in game.agents}
    selector = getattr(game, "_agent_selector", None)
    if selector is not None:
        # A list of its own: the env removes agents from `agents` as they leave, and a
        # selector sharing that list would be left with none at the next reset.
        selector.reinit(list(game.possible_agents))
        game.agent_selection = selector.reset()
    if hasattr(game, "current_actions"):  # an AEC env collecting a cycle's actions (MPE)
        game.current_actions = [None] * len(game.agents)
    parallel.agents = game.agents[:]
