"""The chess example's state bridge against PettingZoo's chess_v6 itself.

States read from real games (random legal play, and knights shuffled back and forth so
positions repeat) are written into a fresh env: it must read back the same, observe the
same, claim the same draws and play on exactly as the game it was read from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pettingzoo.classic import chess_v6

from helpers import chess_bridge


def _fresh() -> Any:
    env = chess_v6.env()
    env.reset()
    return env


def _legal(env: Any) -> np.ndarray:
    return np.flatnonzero(env.observe(env.agent_selection)["action_mask"])


def _shuffle_knights(env: Any, rng: np.random.Generator) -> int:
    """A knight move out and back when there is one (positions repeat), else any legal one."""
    legal = _legal(env)
    knights = [a for a in legal if 56 <= a % 73 < 64]
    return int(rng.choice(knights if knights and rng.random() < 0.8 else legal))


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert np.array_equal(np.asarray(a[key]), np.asarray(b[key])), key


@pytest.mark.parametrize("player", ["random", "knights"])
def test_states_read_from_games_write_back_and_play_on_the_same(player: str) -> None:
    bridge = chess_bridge()
    rng = np.random.default_rng(7 if player == "random" else 11)
    checked = repeated = 0
    for _ in range(3):
        game = _fresh()
        for ply in range(120):
            choose = _shuffle_knights if player == "knights" else None
            action = choose(game, rng) if choose is not None else int(rng.choice(_legal(game)))
            if ply % 3 == 0:
                state = bridge.read_state(game)
                copy = _fresh()
                bridge.write_state(copy, state)
                _same(bridge.read_state(copy), state)
                seen, again = game.observe(game.agent_selection), copy.observe(copy.agent_selection)
                assert np.array_equal(seen["observation"], again["observation"])
                assert np.array_equal(seen["action_mask"], again["action_mask"])
                board, written = game.unwrapped.board, copy.unwrapped.board
                assert board.can_claim_draw() == written.can_claim_draw()
                assert board.is_repetition(2) == written.is_repetition(2)
                repeated += int(len(state["positions"]) > 0 and board.is_repetition(2))
                copy.step(action)
                game.step(action)
                assert copy.rewards == game.rewards
                assert copy.terminations == game.terminations
                _same(bridge.read_state(copy), bridge.read_state(game))
                checked += 1
            else:
                game.step(action)
            if any(game.terminations.values()) or any(game.truncations.values()):
                break
    assert checked > 20
    if player == "knights":
        assert repeated > 0, "no repeated position was bridged"
