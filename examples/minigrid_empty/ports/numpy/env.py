"""MiniGrid-Empty-8x8-v0 (minigrid's EmptyEnv, size 8) as a batched NumPy env (envport's
NumPy contract, next-step autoreset).

Observation: uint8[B, 148], each env's 7x7x3 egocentric image in C order then its direction
(the spec's reference presents minigrid's dict this way; the mission is a constant string).
Empty sees through walls: every cell of the view is visible.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .objects import GOAL, GREY, WALL
from .rules import transition
from .view import observe

SIZE = 8
MAX_STEPS = 4 * SIZE * SIZE
SEE_THROUGH_WALLS = True
FIELDS = ("grid", "agent_pos", "agent_dir", "carrying", "step_count")


def empty_grid(size: int = SIZE) -> np.ndarray:
    """Walls all round (grey), the goal (green) in the bottom-right corner."""
    grid = np.zeros((size, size, 3), dtype=np.int64)
    grid[..., 0] = 1
    wall = [WALL, GREY, 0]
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = wall
    grid[size - 2, size - 2] = [GOAL, 1, 0]
    return grid


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.grid = np.zeros((num_envs, SIZE, SIZE, 3), dtype=np.int64)
        self.agent_pos = np.zeros((num_envs, 2), dtype=np.int64)
        self.agent_dir = np.zeros(num_envs, dtype=np.int64)
        self.carrying = np.zeros((num_envs, 3), dtype=np.int64)
        self.step_count = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _reset_where(self, mask: np.ndarray) -> None:
        # Deterministic: the agent starts at (1, 1) facing right, carrying nothing.
        self.grid[mask] = empty_grid()
        self.agent_pos[mask] = [1, 1]
        self.agent_dir[mask] = 0
        self.carrying[mask] = [1, 0, 0]
        self.step_count[mask] = 0
        self.needs_reset[mask] = False

    def _obs(self) -> np.ndarray:
        return observe(self.grid, self.agent_pos, self.agent_dir, self.carrying, SEE_THROUGH_WALLS)

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def step(self, actions):
        done_before = self.needs_reset.copy()
        (
            self.grid,
            self.agent_pos,
            self.agent_dir,
            self.carrying,
            self.step_count,
            reward,
            terminated,
        ) = transition(
            self.grid,
            self.agent_pos,
            self.agent_dir,
            self.carrying,
            self.step_count,
            np.asarray(actions),
            MAX_STEPS,
        )
        truncated = self.step_count >= MAX_STEPS
        # Next-step autoreset: envs that ended last step start over now.
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            truncated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated | truncated
        return self._obs(), reward, terminated, truncated, {}

    def set_state(self, states) -> None:
        for name in FIELDS:
            setattr(self, name, np.array(states[name], dtype=np.int64))
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {name: getattr(self, name).copy() for name in FIELDS}


def state_from_reference(ref_state):
    return {name: np.asarray(ref_state[name], dtype=np.int64) for name in FIELDS}


def state_to_reference(state):
    return {name: np.asarray(state[name], dtype=np.int64) for name in FIELDS}
