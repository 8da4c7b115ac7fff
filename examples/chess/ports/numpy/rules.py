"""Chess move rules (PettingZoo 1.27 `chess_v6` on python-chess 1.11) on a batch of boards,
vectorised over the leading axis B; no function modifies its inputs.

Every rule works in the MOVER'S FRAME, where the side to move plays white: a black mover's
position is mirrored first (`mirror`: ranks flipped, colours swapped), exactly as PettingZoo
mirrors it to encode black's moves. A board is int8[B, 64] in python-chess square order
(a1=0, b1=1, ..., h8=63): 0 empty, 1..6 the mover's pawn, knight, bishop, rook, queen, king,
7..12 the opponent's. Castling rights are int8[B, 4] of 0/1: the mover's kingside, the
mover's queenside, the opponent's kingside, the opponent's queenside (python-chess's
`clean_castling_rights()`). `ep` is int[B], python-chess's `ep_square` in the mover's frame,
-1 for none.

An action is (file * 8 + rank) * 73 + plane of the source square: planes 0-55 queen-like
moves ((distance - 1) * 8 + direction, directions in `chess_utils.get_queen_dir`'s order),
56-63 knight moves (`get_knight_dir`'s order), 64-72 underpromotions (3 * (dx + 1) + {knight
0, bishop 1, rook 2}); any other pawn move to the last rank promotes to a queen.

Exports:
    ACTIONS = 4672
    mirror(boards: int8[B, 64]) -> int8[B, 64]
        the position seen from the other side (python-chess's `Board.mirror()` board).
    attacked(boards: int8[N, 64], squares: int[N]) -> bool[N]
        whether the opponent's pieces (7..12) attack each square.
    king_square(boards: int8[B, 64]) -> int[B]
        the mover's king's square.
    legal_action_mask(boards: int8[B, 64], castling: int8[B, 4], ep: int[B]) -> bool[B, 4672]
        exactly the actions of python-chess's legal moves (PettingZoo's `action_mask`).
    legal_en_passant(boards: int8[B, 64], ep: int[B], mask: bool[B, 4672]) -> bool[B]
        python-chess's `has_legal_en_passant()`, read off the legal mask.
    play(boards: int8[B, 64], castling: int8[B, 4], ep: int[B], actions: int[B]) -> Played
        each (legal) action played: the board, castling rights and `ep` after it (all still in
        the mover's frame), and whether it was zeroing (a pawn move or capture: it resets the
        halfmove clock) and whether it reduced castling rights.
    action_of_move(sources: int[N], targets: int[N]) -> int[N]
        the action of a non-promoting move between two squares (mover's frame), -1 if no
        plane reaches it.
    insufficient_material(boards: int8[B, 64]) -> bool[B]
        python-chess's `is_insufficient_material()` (either frame: it is colour-symmetric).

Hand-written known-good port, not model output.
"""

from typing import NamedTuple

import numpy as np

ACTIONS = 8 * 8 * 73
WALL = 13  # the code gathered for an off-board square (index 64 of a padded board)
FILES = np.arange(64) % 8
RANKS = np.arange(64) // 8
# chess_utils.get_queen_dir's order: x from -1 to 1, then y from -1 to 1, (0, 0) skipped.
QUEEN_DIRS = [(x, y) for x in (-1, 0, 1) for y in (-1, 0, 1) if (x, y) != (0, 0)]
# chess_utils.get_knight_dir's order.
KNIGHT_DIRS = [(x, y) for x in range(-2, 3) for y in range(-2, 3) if abs(x) + abs(y) == 3]
KING_SIDE_PLANE = 8 + QUEEN_DIRS.index((1, 0))  # e1g1: two squares east
QUEEN_SIDE_PLANE = 8 + QUEEN_DIRS.index((-1, 0))  # e1c1: two squares west
SWAP_COLOUR = np.array([0, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6], dtype=np.int8)
# The action's source index (file * 8 + rank) of each square, and the square of each index.
SOURCE_INDEX = FILES * 8 + RANKS
SQUARE_OF_SOURCE = np.argsort(SOURCE_INDEX)


def _square(file: int, rank: int) -> int:
    return rank * 8 + file if 0 <= file < 8 and 0 <= rank < 8 else 64


def _plane_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each plane's target square from each source (64 when off the board), its dx and its
    promotion piece (0 none)."""
    target = np.full((64, 73), 64, dtype=np.int64)
    dx = np.zeros(73, dtype=np.int64)
    promotion = np.zeros(73, dtype=np.int64)
    moves = [(d * x, d * y) for d in range(1, 8) for x, y in QUEEN_DIRS] + KNIGHT_DIRS
    moves += [(x, 1) for x in (-1, 0, 1) for _ in range(3)]
    promotion[64:] = np.tile([2, 3, 4], 3)  # knight, bishop, rook
    for plane, (x, y) in enumerate(moves):
        dx[plane] = x
        for sq in range(64):
            target[sq, plane] = _square(FILES[sq] + x, RANKS[sq] + y)
    return target, dx, promotion


TARGET, PLANE_DX, PLANE_PROMOTION = _plane_tables()
# RAY[sq, k, d - 1]: the square d steps from sq in queen direction k (64 off the board).
RAY = TARGET[:, :56].reshape(64, 7, 8).transpose(0, 2, 1)
KNIGHT_TARGETS = TARGET[:, 56:64]
KING_TARGETS = TARGET[:, :8]
# The squares from which an opponent pawn (moving down the board) attacks each square.
PAWN_ATTACKERS = np.array(
    [[_square(FILES[s] + x, RANKS[s] + 1) for x in (-1, 1)] for s in range(64)]
)
ORTHOGONAL = np.array([x == 0 or y == 0 for x, y in QUEEN_DIRS])


def _padded(boards: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards, dtype=np.int8)
    return np.concatenate([boards, np.full((len(boards), 1), WALL, np.int8)], axis=1)


def mirror(boards: np.ndarray) -> np.ndarray:
    return SWAP_COLOUR[np.asarray(boards)[:, np.arange(64) ^ 56]]


def king_square(boards: np.ndarray) -> np.ndarray:
    return np.argmax(np.asarray(boards) == 6, axis=1)


def attacked(boards: np.ndarray, squares: np.ndarray) -> np.ndarray:
    padded = _padded(boards)
    squares = np.asarray(squares, dtype=np.int64)
    rows = np.arange(len(padded))[:, None]
    hit = (padded[rows, KNIGHT_TARGETS[squares]] == 8).any(axis=1)
    hit |= (padded[rows, KING_TARGETS[squares]] == 12).any(axis=1)
    hit |= (padded[rows, PAWN_ATTACKERS[squares]] == 7).any(axis=1)
    # Along each ray the first piece met attacks if it slides that way (a queen, or a rook
    # orthogonally, a bishop diagonally); the wall ends the ray as a piece would.
    pieces = padded[rows[:, :, None], RAY[squares]]  # [N, 8, 7]
    occupied = pieces != 0
    first = np.argmax(occupied, axis=2)
    met = np.take_along_axis(pieces, first[:, :, None], axis=2)[:, :, 0]
    met = np.where(occupied.any(axis=2), met, 0)
    slider = np.where(ORTHOGONAL[None, :], met == 10, met == 9)
    return hit | ((met == 11) | slider).any(axis=1)


def _pseudo_legal(boards: np.ndarray, castling: np.ndarray, ep: np.ndarray) -> np.ndarray:
    """bool[B, 73, 64] by plane, then source square (planes first, so each plane's slice
    is contiguous): the moves of the mover's pieces that land on an empty or opponent
    square, slide through empty squares only, and castle through unattacked ones; own-king
    safety is checked later."""
    padded = _padded(boards)
    size = len(padded)
    source = padded[:, :64]
    landing = padded[:, TARGET.T]  # [B, 73, 64]
    empty = landing == 0
    enemy = (landing >= 7) & (landing <= 12)
    moves = np.zeros((size, 73, 64), dtype=bool)
    # Sliding moves: a ray stays open while the squares before it are empty.
    is_queen = source == 5
    for k, orthogonal in enumerate(ORTHOGONAL):
        slides = is_queen | (source == (4 if orthogonal else 3))
        open_ray = np.ones((size, 64), dtype=bool)
        for d in range(7):
            plane = d * 8 + k
            reach = open_ray & (empty[:, plane] | enemy[:, plane])
            moves[:, plane] = reach & (slides | ((source == 6) & (d == 0)))
            open_ray &= empty[:, plane]
    knights = (source == 2)[:, None, :]
    moves[:, 56:64] = knights & (empty[:, 56:64] | enemy[:, 56:64])
    # Pawns: one step up onto an empty square, two from the second rank, diagonally onto
    # an opponent piece or the en passant square.
    pawns = source == 1
    up, up_left, up_right = (QUEEN_DIRS.index(v) for v in ((0, 1), (-1, 1), (1, 1)))
    moves[:, up] |= pawns & empty[:, up]
    moves[:, 8 + up] |= pawns & (RANKS == 1) & empty[:, up] & empty[:, 8 + up]
    ep = np.asarray(ep, dtype=np.int64)[:, None]
    for plane in (up_left, up_right):
        capture = enemy[:, plane] | ((TARGET[:, plane][None, :] == ep) & empty[:, plane])
        moves[:, plane] |= pawns & capture
    promoting = (pawns & (RANKS == 6))[:, None, :]
    straight = (PLANE_DX[64:] == 0)[None, :, None]
    moves[:, 64:] = promoting & np.where(straight, empty[:, 64:], enemy[:, 64:])
    _add_castling(moves, boards, castling)
    return moves


def _add_castling(moves: np.ndarray, boards: np.ndarray, castling: np.ndarray) -> None:
    """python-chess's `_generate_castling_moves` in the mover's frame: king on e1 and the
    rook on its corner with the right kept, the squares between empty, and the king neither
    in check nor passing through or landing on an attacked square (b1 may be attacked)."""
    boards = np.asarray(boards)
    castling = np.asarray(castling)
    size = len(boards)

    def safe(square: int) -> np.ndarray:
        return ~attacked(boards, np.full(size, square))

    home = (boards[:, 4] == 6) & safe(4)
    kingside = home & (castling[:, 0] == 1) & (boards[:, 7] == 4)
    kingside &= (boards[:, 5] == 0) & (boards[:, 6] == 0)
    kingside &= safe(5) & safe(6)
    queenside = home & (castling[:, 1] == 1) & (boards[:, 0] == 4)
    queenside &= (boards[:, 1] == 0) & (boards[:, 2] == 0) & (boards[:, 3] == 0)
    queenside &= safe(3) & safe(2)
    moves[:, KING_SIDE_PLANE, 4] |= kingside
    moves[:, QUEEN_SIDE_PLANE, 4] |= queenside


def _moved(boards: np.ndarray, ep: np.ndarray, sources, targets, promotion) -> np.ndarray:
    """The boards after each move's piece went from source to target (promoted when asked,
    a pawn's en passant capture removing the pawn behind), castling's rook left as is."""
    after = np.asarray(boards).copy()
    rows = np.arange(len(after))
    piece = after[rows, sources]
    en_passant = (piece == 1) & (targets == ep) & (FILES[sources] != FILES[targets])
    after[rows, sources] = 0
    after[rows, targets] = np.where(promotion > 0, promotion, piece)
    behind = np.where(en_passant, targets - 8, 0)
    after[rows, behind] = np.where(en_passant, 0, after[rows, behind])
    return after


def _pinned(boards: np.ndarray, kings: np.ndarray) -> np.ndarray:
    """bool[B, 64]: the mover's pieces standing alone between their king and an opponent
    piece that slides along that line."""
    padded = _padded(boards)
    rows = np.arange(len(padded))
    pieces = padded[rows[:, None, None], RAY[kings]]  # [B, 8 directions, 7 steps]
    occupied = pieces != 0
    first = np.argmax(occupied, axis=2)
    behind = occupied & (np.arange(7)[None, None, :] > first[:, :, None])
    second = np.argmax(behind, axis=2)
    met = np.take_along_axis(pieces, first[:, :, None], axis=2)[:, :, 0]
    slider = np.take_along_axis(pieces, second[:, :, None], axis=2)[:, :, 0]
    slides = (slider == 11) | np.where(ORTHOGONAL[None, :], slider == 10, slider == 9)
    pins = occupied.any(axis=2) & (met >= 1) & (met <= 6) & behind.any(axis=2) & slides
    squares = np.take_along_axis(RAY[kings], first[:, :, None], axis=2)[:, :, 0]
    pinned = np.zeros((len(padded), 65), dtype=bool)
    pinned[np.nonzero(pins)[0], squares[pins]] = True
    return pinned[:, :64]


def legal_action_mask(boards: np.ndarray, castling: np.ndarray, ep: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards, dtype=np.int8)
    ep = np.asarray(ep, dtype=np.int64)
    moves = _pseudo_legal(boards, castling, ep)
    kings = king_square(boards)
    # Out of check, only a king move, a pinned piece's move or an en passant capture (two
    # pieces leave one rank) can expose the king: only those are played out and tested.
    doubtful = attacked(boards, kings)[:, None] | (boards == 6) | _pinned(boards, kings)
    doubtful = np.broadcast_to(doubtful[:, None, :], moves.shape).copy()
    for direction in ((-1, 1), (1, 1)):
        plane = QUEEN_DIRS.index(direction)
        doubtful[:, plane] |= (boards == 1) & (TARGET[:, plane][None, :] == ep[:, None])
    env, planes, sources = np.nonzero(moves & doubtful)
    targets = TARGET[sources, planes]
    after = _moved(boards[env], ep[env], sources, targets, np.zeros_like(sources))
    kings = np.where(boards[env, sources] == 6, targets, kings[env])
    moves[env, planes, sources] = ~attacked(after, kings)
    by_source = moves.transpose(0, 2, 1)[:, SQUARE_OF_SOURCE]
    return np.ascontiguousarray(by_source).reshape(len(boards), ACTIONS)


def legal_en_passant(boards: np.ndarray, ep: np.ndarray, mask: np.ndarray) -> np.ndarray:
    ep = np.asarray(ep, dtype=np.int64)
    found = np.zeros(len(boards), dtype=bool)
    by_source = np.asarray(mask).reshape(len(boards), 64, 73)[:, SOURCE_INDEX]
    for direction in ((-1, 1), (1, 1)):
        plane = QUEEN_DIRS.index(direction)
        lands = TARGET[:, plane][None, :] == ep[:, None]
        found |= (by_source[:, :, plane] & lands & (np.asarray(boards) == 1)).any(axis=1)
    return found & (ep >= 0)


class Played(NamedTuple):
    boards: np.ndarray  # int8[B, 64], still the mover's frame
    castling: np.ndarray  # int8[B, 4]
    ep: np.ndarray  # int[B], -1 unless a pawn just moved two squares
    zeroing: np.ndarray  # bool[B]: a pawn move or a capture
    reduces_castling: np.ndarray  # bool[B]


def play(boards: np.ndarray, castling: np.ndarray, ep: np.ndarray, actions) -> Played:
    boards = np.asarray(boards, dtype=np.int8)
    castling = np.asarray(castling, dtype=np.int8)
    ep = np.asarray(ep, dtype=np.int64)
    actions = np.asarray(actions, dtype=np.int64)
    rows = np.arange(len(boards))
    sources = SQUARE_OF_SOURCE[actions // 73]
    planes = actions % 73
    targets = TARGET[sources, planes]
    targets = np.where(targets == 64, sources, targets)  # an off-board plane: no move
    piece = boards[rows, sources]
    pawn = piece == 1
    # PettingZoo's action_to_move: a pawn move onto the last rank without an underpromotion
    # plane promotes to a queen.
    promotion = np.where(pawn & (RANKS[targets] == 7), PLANE_PROMOTION[planes], 0)
    promotion = np.where(pawn & (RANKS[targets] == 7) & (promotion == 0), 5, promotion)
    after = _moved(boards, ep, sources, targets, promotion)
    king_moved = piece == 6
    for plane, rook_from, rook_to in ((KING_SIDE_PLANE, 7, 5), (QUEEN_SIDE_PLANE, 0, 3)):
        castles = king_moved & (sources == 4) & (planes == plane)
        after[rows, rook_to] = np.where(castles, 4, after[rows, rook_to])
        after[rows, rook_from] = np.where(castles, 0, after[rows, rook_from])
    # python-chess clears a right when its rook's corner or its king's square is touched.
    touched = np.zeros((len(boards), 64), dtype=bool)
    touched[rows, sources] = True
    touched[rows, targets] = True
    kept = castling.copy()
    kept[:, 0] &= ~(touched[:, 7] | king_moved)
    kept[:, 1] &= ~(touched[:, 0] | king_moved)
    kept[:, 2] &= ~touched[:, 63]
    kept[:, 3] &= ~touched[:, 56]
    double = pawn & (targets - sources == 16)
    return Played(
        boards=after,
        castling=kept,
        ep=np.where(double, sources + 8, -1),
        zeroing=pawn | (boards[rows, targets] != 0),
        reduces_castling=(kept != castling).any(axis=1),
    )


def _action_table() -> np.ndarray:
    table = np.full((64, 64), -1, dtype=np.int64)
    for sq in range(64):
        for plane in range(64):  # queen-like and knight planes, no underpromotion
            if TARGET[sq, plane] < 64:
                table[sq, TARGET[sq, plane]] = SOURCE_INDEX[sq] * 73 + plane
    return table


ACTION_OF_MOVE = _action_table()


def action_of_move(sources, targets) -> np.ndarray:
    return ACTION_OF_MOVE[np.asarray(sources, dtype=np.int64), np.asarray(targets, dtype=np.int64)]


DARK = (FILES + RANKS) % 2 == 0  # a1 is dark


def insufficient_material(boards: np.ndarray) -> np.ndarray:
    boards = np.asarray(boards)
    count = np.stack([(boards == code).sum(axis=1) for code in range(13)], axis=1)
    pawns = count[:, 1] + count[:, 7]
    knights = count[:, 2] + count[:, 8]
    bishops = (boards == 3) | (boards == 9)
    same_colour = ~(bishops & DARK).any(axis=1) | ~(bishops & ~DARK).any(axis=1)
    result = np.ones(len(boards), dtype=bool)
    for own, other in ((0, 6), (6, 0)):
        heavy = count[:, own + 1] + count[:, own + 4] + count[:, own + 5] > 0
        pieces = count[:, own + 1 : own + 7].sum(axis=1)
        # The opponent's pawns, knights, bishops or rooks would allow a selfmate.
        helpers = count[:, other + 1 : other + 5].sum(axis=1) > 0
        with_knight = (pieces <= 2) & ~helpers
        with_bishop = same_colour & (pawns == 0) & (knights == 0)
        alone = np.where(
            count[:, own + 2] > 0, with_knight, np.where(count[:, own + 3] > 0, with_bishop, True)
        )
        result &= ~heavy & alone
    return result
