"""L1 probes for the JAX Connect Four port's rules (harness code, not generated).

`call` runs in the worker with the port's `rules` module, compiled: it rebuilds the board
(int8[6, 7], row 0 the top, as the rules take it) from the reference state's leaves with
traceable operations. `expect` asks PettingZoo's raw env itself (`_legal_moves`,
`check_for_winner`, `observe`) holding the same board, so the probes check the rules against
the reference's own methods, not against a second reading of them.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

ROWS, COLUMNS = 6, 7
AGENTS = ("player_0", "player_1")


def _board(jnp, state):
    """Column c's pieces bottom-up in `board.c{c}`, padding past `board.c{c}.length` cleared;
    height 0 is the bottom row (row 5)."""
    heights = jnp.arange(ROWS)
    columns = [
        jnp.where(
            heights < jnp.asarray(state[f"board.c{c}.length"]),
            jnp.asarray(state[f"board.c{c}"]),
            0,
        )
        for c in range(COLUMNS)
    ]
    return jnp.stack(columns, axis=1)[::-1].astype(jnp.int8)


def _reference(state):
    """PettingZoo's raw connect_four env holding the state's board (row-major, row 0 the
    top) with its player to move."""
    from pettingzoo.classic.connect_four.connect_four import raw_env

    env = raw_env()
    env.reset()
    board = np.zeros((ROWS, COLUMNS), dtype=np.int64)
    for c in range(COLUMNS):
        length = int(state[f"board.c{c}.length"])
        board[::-1][:length, c] = np.asarray(state[f"board.c{c}"])[:length]
    env.board = board.ravel().tolist()
    env.agent_selection = AGENTS[int(state["current_player"])]
    return env


@probe("rules.legal_moves")
def legal_moves(module, before, action, after):
    import jax.numpy as jnp

    return {"legal": module.legal_moves(_board(jnp, before)).astype(jnp.bool_)}


@legal_moves.expect
def _(before, action, after, transition):
    legal = np.zeros(COLUMNS, dtype=bool)
    legal[_reference(before)._legal_moves()] = True
    return {"legal": legal}


@probe("rules.has_four")
def has_four(module, before, action, after):
    import jax.numpy as jnp

    board = _board(jnp, before)
    return {
        f"four_{agent}": module.has_four(board, jnp.int8(piece)).astype(jnp.bool_)
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
    import jax.numpy as jnp

    board = _board(jnp, before)
    return {
        f"observation_{agent}": module.observe(board, jnp.int32(player))
        for player, agent in enumerate(AGENTS)
    }


@observe.expect
def _(before, action, after, transition):
    env = _reference(before)
    return {f"observation_{agent}": env.observe(agent)["observation"] for agent in AGENTS}


@probe("rules.drop")
def drop(module, before, action, after):
    import jax.numpy as jnp

    piece = (jnp.asarray(before["current_player"]) + 1).astype(jnp.int8)
    board, _ = module.drop(_board(jnp, before), jnp.asarray(action, jnp.int32), piece)
    return {"board": board}


@drop.expect
def _(before, action, after, transition):
    # The reference's own next board: the mover's piece in the lowest empty cell, or the
    # board unchanged when the column was full (the illegal move ends the game instead).
    return {"board": np.asarray(_reference(after).board, dtype=np.int8).reshape(ROWS, COLUMNS)}
