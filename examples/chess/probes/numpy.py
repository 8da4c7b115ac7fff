"""L1 probes for the NumPy chess port's rules (harness code, not generated).

`call` runs in the worker with the port's `rules` module on a batch of one: it rebuilds the
position from the reference state's leaves (`board`, `current_player`, `castling`,
`ep_square`; the brief's flat dict, one game, no batch axis) and turns it into the mover's
frame the rules take (black's position mirrored: ranks flipped, colours swapped). `expect`
asks python-chess and PettingZoo's own chess_utils holding the same position, so the probes
check the rules against the reference's own functions, not against a second reading of them.

Assumptions: a drawn state is a position of a game in progress whose side to move is
`current_player` (0 white), each side has one king, and `castling` holds only rights whose
king and rook stand on their squares (python-chess's `clean_castling_rights`). The
`rules.play` probe arranges its action: it replaces the drawn action by one of the legal
moves (python-chess's order), since an illegal action never reaches the rules' `play`.

Hand-written known-good probes, not model output.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

OTHER_SIDE = [2, 3, 0, 1]


def _frame(rules, state):
    """The position as the rules take it: int8[1, 64] board, castling, ep in the mover's
    frame."""
    board = np.asarray(state["board"]).astype(np.int8)[None]
    castling = np.asarray(state["castling"]).astype(np.int8)[None]
    ep = np.asarray([int(state["ep_square"])])
    if int(state["current_player"]) == 1:
        board = rules.mirror(board)
        castling = castling[:, OTHER_SIDE]
        ep = np.where(ep >= 0, ep ^ 56, ep)
    return board, castling, ep


def _absolute(rules, state, board):
    """A mover's-frame board back in python-chess's squares."""
    return rules.mirror(board) if int(state["current_player"]) == 1 else board


def _board(state):
    """python-chess's Board holding the leaves' position."""
    import chess

    board = chess.Board(None)
    for square, code in enumerate(np.asarray(state["board"]).tolist()):
        if code:
            board.set_piece_at(square, chess.Piece((code - 1) % 6 + 1, code <= 6))
    board.turn = chess.WHITE if int(state["current_player"]) == 0 else chess.BLACK
    corners = (chess.BB_H1, chess.BB_A1, chess.BB_H8, chess.BB_A8)
    board.castling_rights = sum(
        bb for bb, kept in zip(corners, np.asarray(state["castling"]).tolist(), strict=True) if kept
    )
    ep = int(state["ep_square"])
    board.ep_square = ep if ep >= 0 else None
    board.halfmove_clock = int(state["halfmove_clock"])
    return board


def _codes(board):
    codes = np.zeros(64, dtype=np.int8)
    for square, piece in board.piece_map().items():
        codes[square] = piece.piece_type + (0 if piece.color else 6)
    return codes


@probe("rules.legal_action_mask")
def legal_action_mask(module, before, action, after):
    mask = np.asarray(module.legal_action_mask(*_frame(module, before))[0], dtype=bool)
    # With the player to move beside it, a differing entry is named by its move (`[game] moves`).
    return {"legal_action_mask": mask, "current_player": np.asarray(before["current_player"])}


@legal_action_mask.expect
def _(before, action, after, transition):
    from pettingzoo.classic.chess import chess_utils

    mask = np.zeros(4672, dtype=bool)
    mask[chess_utils.legal_moves(_board(before))] = True
    return {"legal_action_mask": mask, "current_player": np.asarray(before["current_player"])}


@probe("rules.attacked")
def attacked(module, before, action, after):
    board, _, _ = _frame(module, before)
    flip = 56 if int(before["current_player"]) == 1 else 0
    squares = np.arange(64) ^ flip  # each absolute square in the mover's frame
    return {"attacked": np.asarray(module.attacked(np.repeat(board, 64, axis=0), squares))}


@attacked.expect
def _(before, action, after, transition):
    board = _board(before)
    return {"attacked": np.asarray([board.is_attacked_by(not board.turn, s) for s in range(64)])}


@probe("rules.legal_en_passant")
def legal_en_passant(module, before, action, after):
    board, castling, ep = _frame(module, before)
    mask = module.legal_action_mask(board, castling, ep)
    return {"en_passant": np.bool_(module.legal_en_passant(board, ep, mask)[0])}


@legal_en_passant.expect
def _(before, action, after, transition):
    return {"en_passant": np.bool_(_board(before).has_legal_en_passant())}


@probe("rules.insufficient_material")
def insufficient_material(module, before, action, after):
    board, _, _ = _frame(module, before)
    return {"insufficient": np.bool_(module.insufficient_material(board)[0])}


@insufficient_material.expect
def _(before, action, after, transition):
    return {"insufficient": np.bool_(_board(before).is_insufficient_material())}


@probe("rules.mirror")
def mirror(module, before, action, after):
    board = np.asarray(before["board"]).astype(np.int8)[None]
    return {"mirrored": np.asarray(module.mirror(board)[0], dtype=np.int8)}


@mirror.expect
def _(before, action, after, transition):
    return {"mirrored": _codes(_board(before).mirror())}


@probe("rules.play")
def play(module, before, action, after):
    board, castling, ep = _frame(module, before)
    played = module.play(board, castling, ep, np.asarray([int(action)]))
    black = int(before["current_player"]) == 1
    rights = np.asarray(played.castling)[:, OTHER_SIDE] if black else np.asarray(played.castling)
    target = int(played.ep[0])
    return {
        "board": np.asarray(_absolute(module, before, played.boards)[0], dtype=np.int8),
        "castling": rights[0].astype(np.int8),
        "ep_square": np.int64(target ^ 56 if black and target >= 0 else target),
        "zeroing": np.bool_(played.zeroing[0]),
    }


@play.expect
def _(before, action, after, transition):
    import chess
    from pettingzoo.classic.chess import chess_utils

    board = _board(before)
    move = chess_utils.action_to_move(board, int(action), int(before["current_player"]))
    zeroing = board.is_zeroing(move)
    board.push(move)
    rights = board.clean_castling_rights()
    corners = (chess.BB_H1, chess.BB_A1, chess.BB_H8, chess.BB_A8)
    return {
        "board": _codes(board),
        "castling": np.asarray([bool(rights & bb) for bb in corners], dtype=np.int8),
        "ep_square": np.int64(-1 if board.ep_square is None else board.ep_square),
        "zeroing": np.bool_(zeroing),
    }


@play.arrange
def _(state, action, pick):
    from pettingzoo.classic.chess import chess_utils

    legal = sorted(chess_utils.legal_moves(_board(state)))
    if not legal:
        return state, action
    return state, np.int64(legal[pick(0, len(legal) - 1)])
