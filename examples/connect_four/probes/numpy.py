"""L1 probes for the NumPy Connect Four port's rules (harness code, not generated).

`call` runs in the worker with the port's `rules` module on a batch of one: it rebuilds the
board (int8[1, 6, 7], row 0 the top, as the rules take it) from the reference state's
leaves. `expect` asks PettingZoo's raw env itself (`_legal_moves`, `check_for_winner`,
`observe`) holding the same board, so the probes check the rules against the reference's
own methods, not against a second reading of them.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

ROWS, COLUMNS = 6, 7
AGENTS = ("player_0", "player_1")


def _board(state):
    """PettingZoo's [6, 7] board: column c's pieces bottom-up in `board.c{c}`, padding past
    `board.c{c}.length` ignored; height 0 is the bottom row (row 5)."""
    board = np.zeros((ROWS, COLUMNS), dtype=np.int8)
    for c in range(COLUMNS):
        length = int(state[f"board.c{c}.length"])
        board[::-1][:length, c] = np.asarray(state[f"board.c{c}"])[:length]
    return board


def _reference(state):
    """PettingZoo's raw connect_four env holding the state's board with its player to
    move."""
    from pettingzoo.classic.connect_four.connect_four import raw_env

    env = raw_env()
    env.reset()
    env.board = _board(state).astype(np.int64).ravel().tolist()
    env.agent_selection = AGENTS[int(state["current_player"])]
    return env


@probe("rules.legal_moves")
def legal_moves(module, before, action, after):
    return {"legal": np.asarray(module.legal_moves(_board(before)[None])[0], dtype=bool)}


@legal_moves.expect
def _(before, action, after, transition):
    legal = np.zeros(COLUMNS, dtype=bool)
    legal[_reference(before)._legal_moves()] = True
    return {"legal": legal}


@probe("rules.has_four")
def has_four(module, before, action, after):
    board = _board(before)[None]
    return {
        f"four_{agent}": np.bool_(module.has_four(board, np.asarray([piece]))[0])
        for piece, agent in enumerate(AGENTS, start=1)
    }


@has_four.expect
def _(before, action, after, transition):
    # check_for_winner scans for the pieces of the agent it is asked as.
    env = _reference(before)
    found = {}
    for agent in AGENTS:
        env.agent_selection = agent
        found[f"four_{agent}"] = np.bool_(env.check_for_winner())
    return found


@probe("rules.observe")
def observe(module, before, action, after):
    board = _board(before)[None]
    return {
        f"observation_{agent}": module.observe(board, np.asarray([player]))[0]
        for player, agent in enumerate(AGENTS)
    }


@observe.expect
def _(before, action, after, transition):
    env = _reference(before)
    return {f"observation_{agent}": env.observe(agent)["observation"] for agent in AGENTS}


@probe("rules.drop")
def drop(module, before, action, after):
    piece = np.asarray([int(before["current_player"]) + 1])
    boards, _ = module.drop(_board(before)[None], np.asarray([int(action)]), piece)
    return {"board": boards[0]}


@drop.expect
def _(before, action, after, transition):
    # The reference's own next board: the mover's piece in the lowest empty cell, or the
    # board unchanged when the column was full (the illegal move ends the game instead).
    return {"board": np.asarray(_reference(after).board, dtype=np.int8).reshape(ROWS, COLUMNS)}
