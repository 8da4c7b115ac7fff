"""The known-good JAX chess port (examples/chess/ports/jax) played side by side with
PettingZoo's own `chess_v6.env()`, without the verifier: seeded games in lockstep (random
legal moves, a few illegal ones, and players that shuffle pieces to reach the fifty-move and
threefold endings), compared after every step; mid-game states read from the reference
injected and stepped; the reference-state bridge round-tripped; and each JAX mutant of
examples/chess/mutants_jax.part.toml must make that play differ.
"""

from __future__ import annotations

import importlib
import logging
import sys
import tomllib
import types
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import ROOT

pytest.importorskip("pettingzoo")
pytest.importorskip("jax")
chess = pytest.importorskip("chess")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import chess_v6
    from pettingzoo.utils.env_logger import EnvLogger

PORT = ROOT / "examples" / "chess" / "ports" / "jax"
MUTANTS = ROOT / "examples" / "chess" / "mutants_jax.part.toml"
AGENTS = ("player_0", "player_1")
CODES = {(t, c): t + (0 if c else 6) for t in range(1, 7) for c in (True, False)}


def _load_port(folder: Path, name: str) -> types.ModuleType:
    """The port's env module, its folder imported as a package of its own name."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package
    return importlib.import_module(f"{name}.env")


@contextmanager
def _quiet() -> Iterator[None]:
    """PettingZoo logs a warning on every illegal move: the games make some on purpose."""
    logger = logging.getLogger(EnvLogger.__module__)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
        EnvLogger.flush()


def _codes(board: chess.Board) -> list[int]:
    out = [0] * 64
    for square, piece in board.piece_map().items():
        out[square] = CODES[(piece.piece_type, piece.color)]
    return out


def _key_row(board: chess.Board) -> list[int]:
    rights = board.clean_castling_rights()
    mask = sum(bit for bit, sq in zip((1, 2, 4, 8), (chess.H1, chess.A1, chess.H8, chess.A8), strict=True) if rights & chess.BB_SQUARES[sq])
    ep = board.ep_square if board.has_legal_en_passant() else -1
    return [*_codes(board), mask, ep, 0 if board.turn else 1]


def _leaves(env: Any) -> dict[str, np.ndarray]:
    """The reference state's leaves, read from a live chess_v6.env() as the bridge does."""
    raw = env.unwrapped
    board: chess.Board = raw.board
    rights = board.clean_castling_rights()
    rows = []
    popped = []
    while board.move_stack:
        move = board.pop()
        popped.append(move)
        if board.is_irreversible(move):
            break
        rows.append(_key_row(board))
    while popped:
        board.push(popped.pop())
    rows.reverse()
    padded = np.zeros((100, 67), dtype=np.int64)
    if rows:
        padded[: len(rows)] = rows
    return {
        "board": np.asarray(_codes(board), dtype=np.int64),
        "current_player": np.int64(0 if board.turn else 1),
        "castling": np.asarray([bool(rights & chess.BB_SQUARES[s]) for s in (chess.H1, chess.A1, chess.H8, chess.A8)], dtype=np.int64),
        "ep_square": np.int64(-1 if board.ep_square is None else board.ep_square),
        "halfmove_clock": np.int64(board.halfmove_clock),
        "board_history": raw.board_history.astype(np.int64),
        "positions": padded,
        "positions.length": np.int64(len(rows)),
    }


def chess_utils_move(board: chess.Board, action: int, player: int) -> chess.Move:
    from pettingzoo.classic.chess import chess_utils

    return chess_utils.action_to_move(board, action, player)
