"""MinAtar Freeway (minatar 1.0.15, `MinAtar/Freeway-v1`, sticky actions off) as a batched
NumPy env (envport's NumPy contract, next-step autoreset), with explicit randomness:
`sample_noise` draws the lanes' next speeds, `step_given_noise` is the deterministic rest,
and `step` is the two composed.

Actions: the minimal set, 0 no-op, 1 up, 2 down. Observation bool[B, 10, 10, 7]. Reward 1
a crossing; an episode ends after 2501 frames and is never truncated.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import BOTTOM, LANES, MOVE_DELAY, SPEEDS, speeds_from_noise, transition
from .view import observe

TIME_LIMIT = 2500
CARS = ("car_x", "car_timer", "car_speed")
SCALARS = ("pos", "move_timer", "terminate_timer")
FIELDS = (*CARS, "car_right", *SCALARS, "terminal")


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        for name in CARS:
            setattr(self, name, np.zeros((num_envs, LANES), dtype=np.int64))
        self.car_right = np.zeros((num_envs, LANES), dtype=bool)
        for name in SCALARS:
            setattr(self, name, np.zeros(num_envs, dtype=np.int64))
        self.terminal = np.zeros(num_envs, dtype=bool)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _draw(self, count: int) -> np.ndarray:
        """Lanes' speeds as noise: uniform over 0..9 (speed 1..5, either way)."""
        return self.rng.integers(0, 2 * SPEEDS, size=(count, LANES))

    def _reset_where(self, mask: np.ndarray) -> None:
        # Every car starts at the left edge, waiting as many frames as its speed.
        speed, right = speeds_from_noise(self._draw(int(mask.sum())))
        self.car_x[mask] = 0
        self.car_speed[mask] = speed
        self.car_timer[mask] = speed
        self.car_right[mask] = right
        self.pos[mask] = BOTTOM
        self.move_timer[mask] = MOVE_DELAY
        self.terminate_timer[mask] = TIME_LIMIT
        self.terminal[mask] = False
        self.needs_reset[mask] = False

    def _obs(self) -> np.ndarray:
        return observe(self.car_x, self.car_speed, self.car_right, self.pos)

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def sample_noise(self, actions):
        return self._draw(self.num_envs)

    def step_given_noise(self, actions, noise):
        done_before = self.needs_reset.copy()
        (
            self.car_x,
            self.car_timer,
            self.car_speed,
            self.car_right,
            self.pos,
            self.move_timer,
            self.terminate_timer,
            self.terminal,
            reward,
        ) = transition(
            self.car_x,
            self.car_timer,
            self.car_speed,
            self.car_right,
            self.pos,
            self.move_timer,
            self.terminate_timer,
            self.terminal,
            np.asarray(actions),
            np.asarray(noise).reshape(self.num_envs, LANES),
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

    def step(self, actions):
        return self.step_given_noise(actions, self.sample_noise(actions))

    def set_state(self, states) -> None:
        for name in CARS:
            setattr(self, name, np.array(states[name], dtype=np.int64).reshape(-1, LANES))
        self.car_right = np.array(states["car_right"], dtype=bool).reshape(-1, LANES)
        for name in SCALARS:
            setattr(self, name, np.array(states[name], dtype=np.int64))
        self.terminal = np.array(states["terminal"], dtype=bool)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {name: getattr(self, name).copy() for name in FIELDS}


def state_from_reference(ref_state):
    state = {name: np.asarray(ref_state[name], dtype=np.int64).reshape(LANES) for name in CARS}
    state["car_right"] = np.asarray(ref_state["car_right"], dtype=bool).reshape(LANES)
    state.update({name: np.asarray(ref_state[name], dtype=np.int64) for name in SCALARS})
    state["terminal"] = np.asarray(ref_state["terminal"], dtype=bool)
    return state


def state_to_reference(state):
    return state_from_reference(state)
