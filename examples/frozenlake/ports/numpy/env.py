"""FrozenLake-v1 (4x4, slippery) as a batched NumPy env (envport's NumPy contract, next-step
autoreset), with explicit randomness: `sample_noise` draws the slips, `step_given_noise` is
the deterministic rest, and `step` is the two composed.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .lake import MAX_STEPS, slip_direction, transition

SUCCESS_RATE = 1.0 / 3.0


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.s = np.zeros(num_envs, dtype=np.int64)
        self.elapsed = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()

    def _reset_where(self, mask: np.ndarray) -> None:
        self.s[mask] = 0
        self.elapsed[mask] = 0
        self.needs_reset[mask] = False

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self.s.copy(), {}

    def sample_noise(self, actions):
        """Which way each agent goes: 1 as intended with SUCCESS_RATE, else 0 or 2 evenly."""
        fail = (1.0 - SUCCESS_RATE) / 2.0
        return self.rng.choice(3, size=self.num_envs, p=[fail, SUCCESS_RATE, fail])

    def step_given_noise(self, actions, noise):
        done_before = self.needs_reset.copy()
        self.s, reward, terminated = transition(self.s, slip_direction(actions, noise))
        self.elapsed += 1
        truncated = self.elapsed >= MAX_STEPS
        # Next-step autoreset: envs that ended last step start over now.
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            truncated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated | truncated
        return self.s.copy(), reward, terminated, truncated, {}

    def step(self, actions):
        return self.step_given_noise(actions, self.sample_noise(actions))

    def set_state(self, states) -> None:
        self.s = np.array(states["s"], dtype=np.int64)
        self.elapsed = np.array(states["elapsed_steps"], dtype=np.int64)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {"s": self.s.copy(), "elapsed_steps": self.elapsed.copy()}


def state_from_reference(ref_state):
    return {
        "s": np.asarray(ref_state["s"], dtype=np.int64),
        "elapsed_steps": np.asarray(ref_state["elapsed_steps"], dtype=np.int64),
    }


def state_to_reference(state):
    return {
        "s": np.asarray(state["s"], dtype=np.int64),
        "elapsed_steps": np.asarray(state["elapsed_steps"], dtype=np.int64),
    }
