"""MinAtar Seaquest (minatar 1.0.15, `MinAtar/Seaquest-v1`, sticky actions at MinAtar's
default 0.1) as a batched NumPy env (envport's NumPy contract, next-step autoreset), with
explicit randomness: `sample_noise` draws each step's six numbers (the sticky draw; the
enemy spawn's side, kind and row; the diver spawn's side and row), `step_given_noise` is the
deterministic rest, and `step` is the two composed.

Actions: the minimal set, which is all six: 0 no-op, 1 left, 2 up, 3 right, 4 down, 5 fire.
Observation bool[B, 10, 10, 10]. Reward 1 per enemy sunk, and at a surfacing with six divers
10 per tenth of the oxygen left; an episode ends on an enemy, an enemy bullet, oxygen out
or surfacing with no diver, and is never truncated. The object lists are `name` [B,
capacity, fields] plus `name.length` [B]. `last_action` starts at 0 and is kept across
episodes, as MinAtar's wrapper keeps it.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import CAPACITY, DIVER_SPAWN, FIELDS, MAX_OXYGEN, transition
from .view import observe

INTEGERS = (
    "oxygen",
    "diver_count",
    "sub_x",
    "sub_y",
    "e_spawn_speed",
    "e_spawn_timer",
    "d_spawn_timer",
    "move_speed",
    "ramp_index",
    "shot_timer",
    "last_action",
)
FLAGS = ("sub_or", "surface", "terminal")
# Env.reset's values: the sub on the surface in the middle, facing left, full oxygen.
START = {
    "oxygen": MAX_OXYGEN,
    "diver_count": 0,
    "sub_x": 5,
    "sub_y": 0,
    "e_spawn_speed": 20,
    "e_spawn_timer": 20,
    "d_spawn_timer": DIVER_SPAWN,
    "move_speed": 5,
    "ramp_index": 0,
    "shot_timer": 0,
    "sub_or": False,
    "surface": True,
    "terminal": False,
}


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.state = state_from_batch(
            {
                **{name: np.zeros(num_envs, dtype=np.int64) for name in (*INTEGERS, *FLAGS)},
                **_empty_lists(num_envs),
            }
        )
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _reset_where(self, mask: np.ndarray) -> None:
        # Env.reset draws nothing; the wrapper's last action is not reset.
        for name, value in START.items():
            self.state[name][mask] = value
        for name in CAPACITY:
            self.state[name][mask] = 0
            self.state[f"{name}.length"][mask] = 0
        self.needs_reset[mask] = False

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return observe(self.state), {}

    def sample_noise(self, actions):
        return self.rng.random((self.num_envs, 6))

    def step_given_noise(self, actions, noise):
        done_before = self.needs_reset.copy()
        kept_action = self.state["last_action"].copy()
        self.state, reward = transition(
            self.state, np.asarray(actions), np.asarray(noise, dtype=np.float64).reshape(-1, 6)
        )
        terminated = self.state["terminal"].copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        # Next-step autoreset: envs that ended last step start over now instead of stepping,
        # so their last action is the one they ended with.
        if done_before.any():
            self._reset_where(done_before)
            self.state["last_action"][done_before] = kept_action[done_before]
            terminated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated
        return observe(self.state), reward, terminated, truncated, {}

    def step(self, actions):
        return self.step_given_noise(actions, self.sample_noise(actions))

    def set_state(self, states) -> None:
        self.state = state_from_batch(states)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {name: value.copy() for name, value in self.state.items()}


def _empty_lists(batch):
    lists = {}
    for name, capacity in CAPACITY.items():
        lists[name] = np.zeros((batch, capacity, FIELDS[name]), dtype=np.int64)
        lists[f"{name}.length"] = np.zeros(batch, dtype=np.int64)
    return lists


def state_from_batch(states):
    out = {name: np.array(states[name], dtype=np.int64).reshape(-1) for name in INTEGERS}
    out.update({name: np.array(states[name], dtype=bool).reshape(-1) for name in FLAGS})
    batch = len(out["sub_x"])
    for name, capacity in CAPACITY.items():
        out[name] = np.array(states[name], dtype=np.int64).reshape(batch, capacity, FIELDS[name])
        out[f"{name}.length"] = np.array(states[f"{name}.length"], dtype=np.int64).reshape(-1)
    return out


def state_from_reference(ref_state):
    one = state_from_batch(ref_state)
    return {name: value[0] for name, value in one.items()}


def state_to_reference(state):
    return {name: np.asarray(value) for name, value in state.items()}
