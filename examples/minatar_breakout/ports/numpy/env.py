"""MinAtar Breakout (minatar 1.0.15, `MinAtar/Breakout-v1`, sticky actions off) as a batched
NumPy env (envport's NumPy contract, next-step autoreset).

Actions: the minimal set, 0 no-op, 1 left, 2 right. Observation bool[B, 10, 10, 4]. Reward
1 per brick broken; an episode ends when the ball passes the paddle and is never truncated.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import BRICK_ROWS, SIZE, transition
from .view import observe

INTS = ("ball_x", "ball_y", "ball_dir", "pos", "last_x", "last_y")
BOOLS = ("strike", "terminal")
FIELDS = (*INTS, "brick_map", *BOOLS)
START_ROW = 3
# The ball starts on row 3 at the left wall heading down-right, or at the right wall
# heading down-left, one chance in two.
STARTS_X = np.array([0, SIZE - 1])
STARTS_DIR = np.array([2, 3])


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        for name in INTS:
            setattr(self, name, np.zeros(num_envs, dtype=np.int64))
        for name in BOOLS:
            setattr(self, name, np.zeros(num_envs, dtype=bool))
        self.brick_map = np.zeros((num_envs, SIZE, SIZE), dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _reset_where(self, mask: np.ndarray) -> None:
        start = self.rng.integers(0, 2, size=int(mask.sum()))
        self.ball_x[mask] = STARTS_X[start]
        self.ball_dir[mask] = STARTS_DIR[start]
        self.ball_y[mask] = START_ROW
        self.last_x[mask] = self.ball_x[mask]
        self.last_y[mask] = START_ROW
        self.pos[mask] = 4
        self.brick_map[mask] = 0
        self.brick_map[np.flatnonzero(mask)[:, None], BRICK_ROWS] = 1
        self.strike[mask] = False
        self.terminal[mask] = False
        self.needs_reset[mask] = False

    def _obs(self) -> np.ndarray:
        return observe(self.ball_x, self.ball_y, self.pos, self.brick_map, self.last_x, self.last_y)

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
            self.ball_x,
            self.ball_y,
            self.ball_dir,
            self.pos,
            self.brick_map,
            self.strike,
            self.last_x,
            self.last_y,
            self.terminal,
            reward,
        ) = transition(
            self.ball_x,
            self.ball_y,
            self.ball_dir,
            self.pos,
            self.brick_map,
            self.strike,
            self.last_x,
            self.last_y,
            self.terminal,
            np.asarray(actions),
        )
        terminated = self.terminal.copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        # Next-step autoreset: envs that ended last step start over now.
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated
        return self._obs(), reward, terminated, truncated, {}

    def set_state(self, states) -> None:
        for name in INTS:
            setattr(self, name, np.array(states[name], dtype=np.int64))
        for name in BOOLS:
            setattr(self, name, np.array(states[name], dtype=bool))
        self.brick_map = np.array(states["brick_map"], dtype=np.int64).reshape(-1, SIZE, SIZE)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {name: getattr(self, name).copy() for name in FIELDS}


def state_from_reference(ref_state):
    state = {name: np.asarray(ref_state[name], dtype=np.int64) for name in INTS}
    state.update({name: np.asarray(ref_state[name], dtype=bool) for name in BOOLS})
    state["brick_map"] = np.asarray(ref_state["brick_map"], dtype=np.int64).reshape(SIZE, SIZE)
    return state


def state_to_reference(state):
    return state_from_reference(state)
