"""`fresh_turn` on PettingZoo's card games, which run on RLCard and keep no AgentSelector:
a game's position written into an env that has just finished another game (the RLCard game
copied, as a bridge writes it) plays on from the start of a turn exactly as the original
does: same player to move, observation, mask, and the same rewards to the end."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

from envport.targets.turns import fresh_turn

pytest.importorskip("rlcard")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4

GAMES = {"leduc_holdem_v4": leduc_holdem_v4, "texas_holdem_v4": texas_holdem_v4}
FOLD = 2  # both games' actions: call, raise, fold, check


def _play(env: Any, rng: np.random.Generator, moves: int, fold: bool = True) -> None:
    """Up to `moves` legal moves (fewer if the game ends), folding only if `fold`."""
    for _ in range(moves):
        game = env.unwrapped
        if any(game.terminations.values()):
            return
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(rng.choice(legal if fold else legal[legal != FOLD])))


def _turn(env: Any) -> tuple[str, list[float], list[int]]:
    seen = env.observe(env.agent_selection)
    return env.agent_selection, seen["observation"].tolist(), seen["action_mask"].tolist()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_written_card_game_plays_on_from_a_fresh_turn(name: str) -> None:
    module = GAMES[name]
    original, written = module.env(), module.env()
    original.reset(seed=3)
    _play(original, np.random.default_rng(0), 3, fold=False)  # a game still in play
    assert not any(original.unwrapped.terminations.values())
    written.reset(seed=4)
    _play(written, np.random.default_rng(1), 100)  # to its end: terminations set, no moves
    assert any(written.unwrapped.terminations.values())
    # The bridge's write: the RLCard game (cards, chips, deck, whose turn), then the turn.
    written.unwrapped.env.game = copy.deepcopy(original.unwrapped.env.game)
    player = original.unwrapped.possible_agents.index(original.agent_selection)
    fresh_turn(written, player)
    assert not any(written.unwrapped.terminations.values())
    assert _turn(written) == _turn(original)
    # Played on with the same moves, both end alike.
    for step in range(100):
        if any(original.unwrapped.terminations.values()):
            break
        assert _turn(written) == _turn(original), step
        mask = original.observe(original.agent_selection)["action_mask"]
        action = int(np.flatnonzero(mask)[step % int(mask.sum())])
        original.step(action)
        written.step(action)
    assert any(written.unwrapped.terminations.values())
    assert written.unwrapped.rewards == original.unwrapped.rewards


def test_a_card_game_written_with_another_player_to_move_is_named() -> None:
    env = leduc_holdem_v4.env()
    env.reset(seed=0)
    moving = env.unwrapped.possible_agents.index(env.agent_selection)
    with pytest.raises(ValueError, match=f"player {moving} to move, not {1 - moving}"):
        fresh_turn(env, 1 - moving)
