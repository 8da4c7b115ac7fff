"""MountainCarContinuous-v0 as a batched NumPy env (envport's NumPy contract).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

MIN_POSITION, MAX_POSITION, MAX_SPEED = -1.2, 0.6, 0.07
GOAL_POSITION, GOAL_VELOCITY, POWER = 0.45, 0.0, 0.0015
MAX_STEPS = 999


def dynamics(physics: np.ndarray, force: np.ndarray) -> np.ndarray:
    position, velocity = physics[:, 0], physics[:, 1]
    velocity = velocity + force * POWER - 0.0025 * np.cos(3 * position)
    velocity = np.clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = np.clip(position + velocity, MIN_POSITION, MAX_POSITION)
    velocity = np.where((position == MIN_POSITION) & (velocity < 0), 0.0, velocity)
    return np.stack([position, velocity], axis=1)


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.physics = np.zeros((num_envs, 2))
        self.elapsed = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()

    def _reset_where(self, mask: np.ndarray) -> None:
        count = int(mask.sum())
        self.physics[mask] = np.stack(
            [self.rng.uniform(-0.6, -0.4, size=count), np.zeros(count)], axis=1
        )
        self.elapsed[mask] = 0
        self.needs_reset[mask] = False

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool))
        return self.physics.astype(np.float32), {}

    def step(self, actions):
        done_before = self.needs_reset.copy()
        action = np.asarray(actions, dtype=np.float32).reshape(self.num_envs, -1)[:, 0]
        force = np.clip(action, -1.0, 1.0).astype(np.float64)
        # The reference stores its state as float32 after every step.
        self.physics = dynamics(self.physics, force).astype(np.float32).astype(np.float64)
        self.elapsed += 1
        terminated = (self.physics[:, 0] >= GOAL_POSITION) & (self.physics[:, 1] >= GOAL_VELOCITY)
        truncated = self.elapsed >= MAX_STEPS
        # Charged for the action as given, not the clipped force.
        reward = np.where(terminated, 100.0, 0.0) - action.astype(np.float64) ** 2 * 0.1
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            truncated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated | truncated
        return self.physics.astype(np.float32), reward, terminated, truncated, {}

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
