"""Acrobot-v1 as a batched NumPy env (envport's NumPy contract, next-step autoreset).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .physics import MAX_STEPS, dynamics, is_terminated


def observation(s: np.ndarray) -> np.ndarray:
    return np.stack(
        [np.cos(s[:, 0]), np.sin(s[:, 0]), np.cos(s[:, 1]), np.sin(s[:, 1]), s[:, 2], s[:, 3]],
        axis=1,
    ).astype(np.float32)


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.physics = np.zeros((num_envs, 4))
        self.elapsed = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()

    def _reset_where(self, mask: np.ndarray) -> None:
        # The reference draws its start state in float32.
        start = self.rng.uniform(-0.1, 0.1, size=(int(mask.sum()), 4)).astype(np.float32)
        self.physics[mask] = start
        self.elapsed[mask] = 0
        self.needs_reset[mask] = False

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return observation(self.physics), {}

    def step(self, actions):
        done_before = self.needs_reset.copy()
        self.physics = dynamics(self.physics, np.asarray(actions))
        self.elapsed += 1
        terminated = is_terminated(self.physics)
        truncated = self.elapsed >= MAX_STEPS
        reward = np.where(terminated, 0.0, -1.0)
        # Next-step autoreset: envs that ended last step start over now.
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            truncated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated | truncated
        return observation(self.physics), reward, terminated, truncated, {}

    def set_state(self, states) -> None:
        self.physics = np.array(states["physics"], dtype=np.float64)
        self.elapsed = np.array(states["elapsed_steps"], dtype=np.int64)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {"physics": self.physics.copy(), "elapsed_steps": self.elapsed.copy()}


def state_from_reference(ref_state):
    return {
        "physics": np.asarray(ref_state["physics"], dtype=np.float64),
        "elapsed_steps": np.asarray(ref_state["elapsed_steps"], dtype=np.int64),
    }


def state_to_reference(state):
    return {
        "physics": np.asarray(state["physics"], dtype=np.float64),
        "elapsed_steps": np.asarray(state["elapsed_steps"], dtype=np.int64),
    }
