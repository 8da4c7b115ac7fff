"""The state bridge of PettingZoo's Connect Four (connect_four_v3.env()), for envport.

The game's state is its board (a list of 42 cells, row 0 on top: 0 empty, 1 player_0's
piece, 2 player_1's) and whose turn it is (`agent_selection`). The bridge presents the
board as seven columns, each the list of its pieces from the bottom up: every state drawn
that way is one gravity allows, where a drawn grid of 42 cells almost never is. Writing a
state also clears what a game that ended leaves behind (terminations, rewards, the illegal
move wrapper's flag), so any drawn position can be played on from the start of a turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.targets.turns import fresh_turn

ROWS, COLUMNS = 6, 7


def read_state(env: Any) -> dict[str, Any]:
    game = env.unwrapped
    board = np.asarray(game.board).reshape(ROWS, COLUMNS)
    state: dict[str, Any] = {}
    for column in range(COLUMNS):
        bottom_up = board[::-1, column]
        state[f"board.c{column}"] = [int(p) for p in bottom_up[bottom_up != 0]]
    state["current_player"] = game.possible_agents.index(game.agent_selection)
    return state


def write_state(env: Any, state: dict[str, Any]) -> None:
    game = env.unwrapped
    board = np.zeros((ROWS, COLUMNS), dtype=np.int64)
    for column in range(COLUMNS):
        pieces = [int(p) for p in state[f"board.c{column}"]]
        for height, piece in enumerate(pieces):
            board[ROWS - 1 - height, column] = piece
    player = int(state["current_player"])
    game.board = [int(cell) for cell in board.reshape(-1)]
    fresh_turn(env, player)
