"""The state bridge of the pot game (pot_game.py): its pot, raises and the player to move."""

from __future__ import annotations

from typing import Any

from envport.targets.turns import fresh_turn


def read_state(env: Any) -> dict[str, Any]:
    game = env.unwrapped
    return {
        "pot": float(game.pot),
        "raises": int(game.raises),
        "current_player": game.possible_agents.index(game.agent_selection),
    }


def write_state(env: Any, state: dict[str, Any]) -> None:
    game = env.unwrapped
    game.pot = float(state["pot"])
    game.raises = int(state["raises"])
    fresh_turn(env, int(state["current_player"]))
