"""MinAtar Asterix (minatar 1.0.15, `MinAtar/Asterix-v1`, sticky actions at MinAtar's
default 0.1) as a batched NumPy env (envport's NumPy contract, next-step autoreset), with
explicit randomness: `sample_noise` draws each step's four numbers (the sticky draw, the
spawn's side, gold or enemy, and which free slot), `step_given_noise` is the deterministic
rest, and `step` is the two composed.

Actions: the minimal set, 0 no-op, 1 left, 2 up, 3 right, 4 down. Observation bool[B, 10,
10, 4]. Reward 1 per gold picked up; an episode ends when an enemy touches the player and is
never truncated. `last_action` (the action a sticky step repeats) starts at 0 and is kept
across episodes, as MinAtar's wrapper keeps it.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import SLOTS, transition
from .view import observe

INTEGERS = (
    "player_x",
    "player_y",
    "spawn_speed",
    "spawn_timer",
    "move_speed",
    "move_timer",
    "ramp_timer",
    "ramp_index",
    "last_action",
)
SLOT_INTEGERS = ("slot_x",)
SLOT_FLAGS = ("slot_taken", "slot_right", "slot_gold")
FIELDS = (*INTEGERS, *SLOT_INTEGERS, *SLOT_FLAGS, "terminal")
# Env.reset's values (the ramp's first speeds: a spawn every 10 frames, a move every 5).
START = {
    "player_x": 5,
    "player_y": 5,
    "spawn_speed": 10,
    "spawn_timer": 10,
    "move_speed": 5,
    "move_timer": 5,
    "ramp_timer": 100,
    "ramp_index": 0,
}


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.state = {name: np.zeros(num_envs, dtype=np.int64) for name in INTEGERS}
        self.state["slot_x"] = np.zeros((num_envs, SLOTS), dtype=np.int64)
        for name in SLOT_FLAGS:
            self.state[name] = np.zeros((num_envs, SLOTS), dtype=bool)
        self.state["terminal"] = np.zeros(num_envs, dtype=bool)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _reset_where(self, mask: np.ndarray) -> None:
        # Env.reset draws nothing; the wrapper's last action is not reset.
        for name, value in START.items():
            self.state[name][mask] = value
        self.state["slot_x"][mask] = 0
        for name in SLOT_FLAGS:
            self.state[name][mask] = False
        self.state["terminal"][mask] = False
        self.needs_reset[mask] = False

    def _obs(self) -> np.ndarray:
        s = self.state
        return observe(
            s["player_x"],
            s["player_y"],
            s["slot_taken"],
            s["slot_x"],
            s["slot_right"],
            s["slot_gold"],
        )

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def sample_noise(self, actions):
        return self.rng.random((self.num_envs, 4))

    def step_given_noise(self, actions, noise):
        done_before = self.needs_reset.copy()
        kept_action = self.state["last_action"].copy()
        self.state, reward = transition(
            self.state, np.asarray(actions), np.asarray(noise, dtype=np.float64).reshape(-1, 4)
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
        return self._obs(), reward, terminated, truncated, {}

    def step(self, actions):
        return self.step_given_noise(actions, self.sample_noise(actions))

    def set_state(self, states) -> None:
        self.state = state_from_batch(states)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {name: value.copy() for name, value in self.state.items()}


def state_from_batch(states):
    out = {name: np.array(states[name], dtype=np.int64).reshape(-1) for name in INTEGERS}
    out["slot_x"] = np.array(states["slot_x"], dtype=np.int64).reshape(-1, SLOTS)
    for name in SLOT_FLAGS:
        out[name] = np.array(states[name], dtype=bool).reshape(-1, SLOTS)
    out["terminal"] = np.array(states["terminal"], dtype=bool).reshape(-1)
    return out


def state_from_reference(ref_state):
    state = {name: np.asarray(ref_state[name], dtype=np.int64) for name in INTEGERS}
    state["slot_x"] = np.asarray(ref_state["slot_x"], dtype=np.int64).reshape(SLOTS)
    for name in SLOT_FLAGS:
        state[name] = np.asarray(ref_state[name], dtype=bool).reshape(SLOTS)
    state["terminal"] = np.asarray(ref_state["terminal"], dtype=bool)
    return state


def state_to_reference(state):
    return state_from_reference(state)
