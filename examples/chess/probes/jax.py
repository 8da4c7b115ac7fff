"""L1 probes for the JAX chess port's rules (harness code, not generated).

`call` runs in the worker with the port's `rules` module, compiled: it passes the reference
state's leaves (board int[64] in python-chess square order, current_player, castling int[4],
ep_square, halfmove_clock) to the rule functions with traceable conversions. `expect` asks
python-chess and PettingZoo's own chess_utils holding the same position (a `chess.Board`
set up from the leaves), so the probes check the rules against the reference's methods, not
against a second reading of them.

Assumptions: the leaves are those of docs/port-contract.md's chess bridge; the board the
leaves describe is a legal position (one side to move, its opponent not in check); a probe of
the history planes compares the 12 piece planes only (the repetition plane needs the game's
move stack, which a board set up from the leaves lacks).
"""

import numpy as np

from envport.verifiers.draws.probes import probe

RIGHTS = (7, 0, 63, 56)  # the rook corner of white O-O, white O-O-O, black O-O, black O-O-O


def _inputs(jnp, state):
    return (
        jnp.asarray(state["board"]).astype(jnp.int8),
        jnp.asarray(state["current_player"]).astype(jnp.int32),
        jnp.asarray(state["castling"]).astype(jnp.bool_),
        jnp.asarray(state["ep_square"]).astype(jnp.int32),
    )


def _board(state):
    """python-chess's Board holding the leaves' position."""
    import chess

    board = chess.Board(None)
    for square, code in enumerate(np.asarray(state["board"]).tolist()):
        if code:
            board.set_piece_at(square, chess.Piece((code - 1) % 6 + 1, code <= 6))
    board.turn = int(state["current_player"]) == 0
    castling = np.asarray(state["castling"]).tolist()
    board.castling_rights = sum(
        1 << corner for corner, right in zip(RIGHTS, castling, strict=True) if right
    )
    ep = int(state["ep_square"])
    board.ep_square = None if ep < 0 else ep
    board.halfmove_clock = int(state["halfmove_clock"])
    return board


@probe("rules.legal_moves")
def legal_moves(module, before, action, after):
    import jax.numpy as jnp

    moves = module.legal_moves(*_inputs(jnp, before))
    # The mask beside the player to move: a differing entry is named by its move.
    return {
        "legal_action_mask": moves.mask,
        "current_player": jnp.asarray(before["current_player"]),
        "in_check": moves.in_check,
        "legal_ep": moves.legal_ep,
    }


@legal_moves.expect
def _(before, action, after, transition):
    from pettingzoo.classic.chess import chess_utils

    board = _board(before)
    mask = np.zeros(4672, dtype=bool)
    mask[chess_utils.legal_moves(board)] = True
    return {
        "legal_action_mask": mask,
        "current_player": np.asarray(before["current_player"]),
        "in_check": np.bool_(board.is_check()),
        "legal_ep": np.bool_(board.has_legal_en_passant()),
    }


@probe("rules.insufficient_material")
def insufficient_material(module, before, action, after):
    import jax.numpy as jnp

    board = jnp.asarray(before["board"]).astype(jnp.int8)
    return {"insufficient": module.insufficient_material(board)}


@insufficient_material.expect
def _(before, action, after, transition):
    return {"insufficient": np.bool_(_board(before).is_insufficient_material())}


@probe("rules.history_planes")
def history_planes(module, before, action, after):
    import jax.numpy as jnp

    board, _, _, ep = _inputs(jnp, before)
    return {"pieces": module.history_planes(board, ep, jnp.bool_(False))[:, :, :12]}


@history_planes.expect
def _(before, action, after, transition):
    from pettingzoo.classic.chess import chess_utils

    return {"pieces": chess_utils.get_observation(_board(before), 0)[:, :, 7:19]}


@probe("rules.aux_planes")
def aux_planes(module, before, action, after):
    import jax.numpy as jnp

    castling = jnp.asarray(before["castling"]).astype(jnp.bool_)
    clock = jnp.asarray(before["halfmove_clock"]).astype(jnp.int32)
    return {
        f"aux_player_{player}": module.aux_planes(castling, clock, jnp.int32(player))
        for player in (0, 1)
    }


@aux_planes.expect
def _(before, action, after, transition):
    from pettingzoo.classic.chess import chess_utils

    board = _board(before)
    return {
        f"aux_player_{player}": chess_utils.get_observation(board, player)[:, :, :7]
        for player in (0, 1)
    }
