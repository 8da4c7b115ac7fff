"""MiniGrid-DoorKey-5x5-v0 (minigrid's DoorKeyEnv, size 5) as a batched NumPy env
(envport's NumPy contract, next-step autoreset).

Observation: uint8[B, 148], each env's 7x7x3 egocentric image in C order then its direction
(the spec's reference presents minigrid's dict this way; the mission is a constant string).
Walls and closed doors hide what is behind them (Grid.process_vis).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .objects import DOOR, EMPTY, GOAL, GREY, KEY, LOCKED, WALL
from .rules import transition
from .view import observe

SIZE = 5
YELLOW = 4
MAX_STEPS = 10 * SIZE * SIZE
SEE_THROUGH_WALLS = False
FIELDS = ("grid", "agent_pos", "agent_dir", "carrying", "step_count")


def _uniform_cells(rng, free):
    """[n, 2]: for each of n envs a cell drawn uniformly among its `free` ones (place_obj's
    rejection sampling); `free` is bool[n, W, H]."""
    keys = rng.random(free.shape)
    keys[~free] = -1.0
    index = keys.reshape(len(free), -1).argmax(axis=1)
    return np.stack([index // SIZE, index % SIZE], axis=1)


def generate(rng, count: int):
    """DoorKeyEnv._gen_grid for `count` envs: walls all round, the goal in the bottom-right
    corner, a wall splitting the room at a random column with a locked yellow door at a
    random row, the agent (random direction) and a yellow key on the left of it."""
    rows = np.arange(count)
    grid = np.zeros((count, SIZE, SIZE, 3), dtype=np.int64)
    grid[..., 0] = EMPTY
    wall = [WALL, GREY, 0]
    grid[:, 0, :] = grid[:, -1, :] = grid[:, :, 0] = grid[:, :, -1] = wall
    grid[:, SIZE - 2, SIZE - 2] = [GOAL, 1, 0]
    split = rng.integers(2, SIZE - 2, size=count)
    grid[rows, split] = wall
    xs = np.arange(SIZE)[None, :, None]
    left_free = (grid[..., 0] == EMPTY) & (xs < split[:, None, None])
    agent = _uniform_cells(rng, left_free)
    direction = rng.integers(0, 4, size=count)
    door_row = rng.integers(1, SIZE - 2, size=count)
    grid[rows, split, door_row] = [DOOR, YELLOW, LOCKED]
    left_free[rows, agent[:, 0], agent[:, 1]] = False
    key = _uniform_cells(rng, left_free)
    grid[rows, key[:, 0], key[:, 1]] = [KEY, YELLOW, 0]
    return grid, agent, direction


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.grid = np.zeros((num_envs, SIZE, SIZE, 3), dtype=np.int64)
        self.agent_pos = np.zeros((num_envs, 2), dtype=np.int64)
        self.agent_dir = np.zeros(num_envs, dtype=np.int64)
        self.carrying = np.zeros((num_envs, 3), dtype=np.int64)
        self.step_count = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _reset_where(self, mask: np.ndarray) -> None:
        grid, agent, direction = generate(self.rng, int(mask.sum()))
        self.grid[mask] = grid
        self.agent_pos[mask] = agent
        self.agent_dir[mask] = direction
        self.carrying[mask] = [1, 0, 0]
        self.step_count[mask] = 0
        self.needs_reset[mask] = False

    def _obs(self) -> np.ndarray:
        return observe(self.grid, self.agent_pos, self.agent_dir, self.carrying, SEE_THROUGH_WALLS)

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
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
