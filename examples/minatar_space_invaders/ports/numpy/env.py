"""MinAtar SpaceInvaders (minatar 1.0.15, `MinAtar/SpaceInvaders-v1`, sticky actions off) as
a batched NumPy env (envport's NumPy contract, next-step autoreset).

Actions: the minimal set, 0 no-op, 1 left, 2 right, 3 fire. Observation bool[B, 10, 10, 6].
Reward 1 per alien shot; an episode ends when an alien or an alien's bullet reaches the
cannon and is never truncated. The game has no randomness: every reset is the same.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .rules import ALIEN_SHOT_INTERVAL, FIELDS, SIZE, WAVE_COLUMNS, WAVE_ROWS, transition
from .view import observe

MAPS = ("alien_map", "f_bullet_map", "e_bullet_map")
START_MOVE_INTERVAL = 12


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.state = {name: np.zeros(num_envs, dtype=np.int64) for name in FIELDS}
        self.state.update({name: np.zeros((num_envs, SIZE, SIZE), dtype=np.int64) for name in MAPS})
        self.state["terminal"] = np.zeros(num_envs, dtype=bool)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self._reset_where(np.ones(num_envs, dtype=bool))

    def _reset_where(self, mask: np.ndarray) -> None:
        """The cannon in column 5, a 4x6 block of aliens top centre marching left, no bullet,
        the cannon loaded, the ramp at its start."""
        s = self.state
        s["pos"][mask] = 5
        for name in MAPS:
            s[name][mask] = 0
        s["alien_map"][np.flatnonzero(mask), WAVE_ROWS, WAVE_COLUMNS] = 1
        s["alien_dir"][mask] = -1
        s["enemy_move_interval"][mask] = START_MOVE_INTERVAL
        s["alien_move_timer"][mask] = START_MOVE_INTERVAL
        s["alien_shot_timer"][mask] = ALIEN_SHOT_INTERVAL
        s["shot_timer"][mask] = 0
        s["ramp_index"][mask] = 0
        s["terminal"][mask] = False
        self.needs_reset[mask] = False

    def _obs(self) -> np.ndarray:
        s = self.state
        return observe(
            s["pos"], s["alien_map"], s["f_bullet_map"], s["e_bullet_map"], s["alien_dir"]
        )

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        # The seed changes nothing: the game draws no random number.
        mask = None if options is None else options.get("reset_mask")
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def step(self, actions):
        done_before = self.needs_reset.copy()
        self.state, reward = transition(self.state, np.asarray(actions))
        terminated = self.state["terminal"].copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        # Next-step autoreset: envs that ended last step start over now.
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated
        return self._obs(), reward, terminated, truncated, {}

    def set_state(self, states) -> None:
        self.state = {name: np.array(states[name], dtype=np.int64) for name in FIELDS}
        for name in MAPS:
            self.state[name] = self.state[name].reshape(-1, SIZE, SIZE)
        self.state["terminal"] = np.array(states["terminal"], dtype=bool)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {name: value.copy() for name, value in self.state.items()}


def state_from_reference(ref_state):
    state = {name: np.asarray(ref_state[name], dtype=np.int64) for name in FIELDS}
    for name in MAPS:
        state[name] = state[name].reshape(SIZE, SIZE)
    state["terminal"] = np.asarray(ref_state["terminal"], dtype=bool)
    return state


def state_to_reference(state):
    return state_from_reference(state)
