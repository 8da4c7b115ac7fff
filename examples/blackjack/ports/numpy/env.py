"""Blackjack-v1 (Gymnasium's toy text) as a batched NumPy env (envport's NumPy contract,
next-step autoreset), with explicit randomness: `sample_noise` draws the next DRAWS cards of
the infinite deck for each env (as values minus one), `step_given_noise` plays them.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

from .cards import DRAWS, add_card, dealer_play, is_bust, is_natural, score, sum_hand, usable_ace
from .settings import NATURAL, SAB  # the reference's kwargs, set per example

PLAYER_CAPACITY, DEALER_CAPACITY = 22, 16
# The infinite deck: ace to nine once, ten four times (ten, jack, queen, king).
DECK = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10], dtype=np.int64)


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.player = np.zeros((num_envs, PLAYER_CAPACITY), dtype=np.int64)
        self.player_length = np.zeros(num_envs, dtype=np.int64)
        self.dealer = np.zeros((num_envs, DEALER_CAPACITY), dtype=np.int64)
        self.dealer_length = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()

    def _obs(self):
        return np.stack(
            [
                sum_hand(self.player, self.player_length),
                self.dealer[:, 0],
                usable_ace(self.player, self.player_length).astype(np.int64),
            ],
            axis=1,
        )

    def _reset_where(self, mask: np.ndarray) -> None:
        count = int(mask.sum())
        cards = self.rng.choice(DECK, size=(count, 4))
        self.dealer[mask] = 0
        self.player[mask] = 0
        self.dealer[mask, :2] = cards[:, :2]
        self.player[mask, :2] = cards[:, 2:]
        self.dealer_length[mask] = 2
        self.player_length[mask] = 2
        self.needs_reset[mask] = False

    def reset(self, seed=None, options=None):
        # Gymnasium's partial reset: options={"reset_mask": bool[B]} resets only those envs.
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def sample_noise(self, actions):
        """The next DRAWS cards of the deck for each env, as card value minus one (0..9)."""
        return self.rng.choice(DECK, size=(self.num_envs, DRAWS)) - 1

    def step_given_noise(self, actions, noise):
        done_before = self.needs_reset.copy()
        draws = np.asarray(noise, dtype=np.int64) + 1
        hit = np.asarray(actions) == 1
        stick = ~hit
        # The player's hand and natural as they were: stick scores the hand it holds.
        natural_player = is_natural(self.player, self.player_length)
        add_card(self.player, self.player_length, draws[:, 0], hit)
        bust = is_bust(self.player, self.player_length)
        dealer_play(self.dealer, self.dealer_length, draws, stick)
        diff = score(self.player, self.player_length) - score(self.dealer, self.dealer_length)
        reward = np.where(hit, np.where(bust, -1.0, 0.0), np.sign(diff).astype(np.float64))
        natural_dealer = is_natural(self.dealer, self.dealer_length)
        if SAB:
            reward = np.where(stick & natural_player & ~natural_dealer, 1.0, reward)
        elif NATURAL:
            reward = np.where(stick & natural_player & (reward == 1.0), 1.5, reward)
        terminated = np.where(hit, bust, True)
        truncated = np.zeros(self.num_envs, dtype=bool)
        # Next-step autoreset: envs that ended last step start over now.
        if done_before.any():
            self._reset_where(done_before)
            terminated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated | truncated
        return self._obs(), reward, terminated, truncated, {}

    def step(self, actions):
        return self.step_given_noise(actions, self.sample_noise(actions))

    def set_state(self, states) -> None:
        self.player = np.array(states["hand.player"], dtype=np.int64)
        self.player_length = np.array(states["hand.player.length"], dtype=np.int64)
        self.dealer = np.array(states["hand.dealer"], dtype=np.int64)
        self.dealer_length = np.array(states["hand.dealer.length"], dtype=np.int64)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {
            "hand.player": self.player.copy(),
            "hand.player.length": self.player_length.copy(),
            "hand.dealer": self.dealer.copy(),
            "hand.dealer.length": self.dealer_length.copy(),
        }


def state_from_reference(ref_state):
    return {
        "hand.player": np.asarray(ref_state["hand.player"], dtype=np.int64),
        "hand.player.length": np.asarray(ref_state["hand.player.length"], dtype=np.int64),
        "hand.dealer": np.asarray(ref_state["hand.dealer"], dtype=np.int64),
        "hand.dealer.length": np.asarray(ref_state["hand.dealer.length"], dtype=np.int64),
    }


def state_to_reference(state):
    return state_from_reference(state)
