"""The known-good JAX chess port (examples/chess/ports/jax) played side by side with
PettingZoo's own `chess_v6.env()`, without the verifier: seeded games in lockstep (random
legal moves, a few illegal ones, and players that shuffle pieces to reach the fifty-move and
threefold endings), compared after every step; mid-game states read from the reference
injected and stepped; the reference-state bridge round-tripped; and each JAX mutant of
examples/chess/mutants.toml must make that play differ.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import ROOT, chess_bridge, chess_leaves, quiet_pettingzoo

pytest.importorskip("pettingzoo")
pytest.importorskip("jax")
chess = pytest.importorskip("chess")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import chess_v6

PORT = ROOT / "examples" / "chess" / "ports" / "jax"
MUTANTS = ROOT / "examples" / "chess" / "mutants.toml"
AGENTS = ("player_0", "player_1")
CODES = {(t, c): t + (0 if c else 6) for t in range(1, 7) for c in (True, False)}


def _load_port(folder: Path, name: str) -> types.ModuleType:
    """The port's env module, its folder imported as a package of its own name."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package
    return importlib.import_module(f"{name}.env")


def _codes(board: chess.Board) -> list[int]:
    out = [0] * 64
    for square, piece in board.piece_map().items():
        out[square] = CODES[(piece.piece_type, piece.color)]
    return out


BRIDGE = chess_bridge()


def _leaves(env: Any) -> dict[str, np.ndarray]:
    """The reference state's leaves, as the example's bridge reads them."""
    return chess_leaves(env, BRIDGE)


def _move(board: chess.Board, action: int) -> chess.Move:
    from pettingzoo.classic.chess import chess_utils

    return chess_utils.action_to_move(board, action, 0 if board.turn else 1)


# Knights out and back, twice: the position after 1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1
# lets black claim threefold by 4... Ng8 (the look-ahead), one ply before it is on the board.
SHUFFLE = ["g1f3", "g8f6", "f3g1", "f6g8"] * 3


def _policy(game: int, rng: np.random.Generator, env: Any, ply: int, illegal_at: int) -> int:
    """A seeded action: uniform (game % 3 == 0), capture-loving (1: material runs out,
    pawns promote), or quiet (2: no pawn move or capture while one exists, for the
    fifty-move and threefold endings); game 0 shuffles knights; some games play one illegal
    action."""
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    legal = np.flatnonzero(mask)
    board: chess.Board = env.unwrapped.board
    if ply == illegal_at:
        return int(rng.choice(np.flatnonzero(mask == 0)))
    if game == 0 and ply < len(SHUFFLE):
        from pettingzoo.classic.chess import chess_utils

        move = chess.Move.from_uci(SHUFFLE[ply])
        if not board.turn:
            move = chess_utils.mirror_move(move)
        return int(chess_utils.moves_to_actions[move.uci()])
    moves = {int(a): _move(board, int(a)) for a in legal}
    if game % 3 == 1:
        taking = [a for a, m in moves.items() if board.is_capture(m) or m.promotion]
        if taking and rng.random() < 0.8:
            return int(rng.choice(taking))
    if game % 3 == 2:
        calm = [a for a, m in moves.items() if not board.is_zeroing(m)]
        if calm and rng.random() < 0.97:
            return int(rng.choice(calm))
    return int(rng.choice(legal))


def _expected(env: Any) -> dict[str, Any]:
    agent = env.agent_selection
    seen = env.observe(agent)
    return {
        "current_player": AGENTS.index(agent),
        "observation": seen["observation"],
        "legal_action_mask": seen["action_mask"],
        "rewards": [env.rewards[a] for a in AGENTS],
        "terminated": env.terminations[agent],
        "truncated": env.truncations[agent],
    }


def _differs(game: int, ply: int, env: Any, port: dict[str, np.ndarray]) -> str | None:
    for name, want in _expected(env).items():
        got = np.asarray(port[name][game])
        if not np.array_equal(got.astype(np.float64), np.asarray(want, dtype=np.float64)):
            return f"game {game} ply {ply}: {name} differs ({env.unwrapped.board.fen()})"
    return None


def _features(board: chess.Board, move: chess.Move, seen: dict[str, int]) -> None:
    for name, hit in (
        ("castling", board.is_castling(move)),
        ("en_passant", board.is_en_passant(move)),
        ("promotion", move.promotion == chess.QUEEN),
        ("underpromotion", move.promotion not in (None, chess.QUEEN)),
    ):
        seen[name] += bool(hit)


def _ending(board: chess.Board, seen: dict[str, int]) -> None:
    if board.is_checkmate():
        seen["checkmate"] += 1
    elif board.is_insufficient_material():
        seen["insufficient"] += 1
    elif not any(board.generate_legal_moves()):
        seen["stalemate"] += 1
    elif board.can_claim_fifty_moves():
        seen["fifty"] += 1
    elif board.can_claim_threefold_repetition():
        seen["threefold"] += 1


def _stack(leaves: list[dict]) -> dict[str, np.ndarray]:
    return {name: np.stack([leaf[name] for leaf in leaves]) for name in leaves[0]}


def _play(
    env_module: types.ModuleType,
    games: int,
    seed: int,
    plies: int,
    visited: list[dict] | None = None,
) -> tuple[str | None, dict]:
    """`games` seeded games of PettingZoo's chess_v6 and the port's batch in lockstep, every
    game compared after every step; every 25 plies the live games' reference states are
    read, the port's state_to_reference compared with them, and the port restarted from
    them (state_from_reference)."""
    import jax
    import jax.numpy as jnp

    step = _compiled(env_module)
    rng = np.random.default_rng(seed)
    keys = jax.random.split(jax.random.key(seed), games)
    state = step.init(keys)
    envs = []
    for _ in range(games):
        env = chess_v6.env()
        env.reset()
        envs.append(env)
    illegal_at = [int(rng.integers(5, 150)) if rng.random() < 0.25 else -1 for _ in range(games)]
    seen = dict.fromkeys(
        (
            "castling",
            "en_passant",
            "promotion",
            "underpromotion",
            "checkmate",
            "stalemate",
            "insufficient",
            "fifty",
            "threefold",
            "illegal",
            "injected",
        ),
        0,
    )
    with quiet_pettingzoo():
        for ply in range(plies):
            live = [
                not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection])
                for e in envs
            ]
            if not any(live):
                break
            if ply % 25 == 24:
                leaves = [_leaves(e) for e in envs]
                if visited is not None:
                    visited.extend(leaf for leaf, alive in zip(leaves, live, strict=True) if alive)
                got = step.to_reference(state)
                for g in (g for g in range(games) if live[g]):
                    for name, want in leaves[g].items():
                        if not np.array_equal(np.asarray(got[name][g]), want):
                            return f"game {g} ply {ply}: state_to_reference's {name} differs", seen
                loaded = step.from_reference(_stack(leaves))
                alive = jnp.asarray(live)
                state = jax.tree_util.tree_map(
                    lambda new, old, alive=alive: jnp.where(
                        alive.reshape((-1,) + (1,) * (old.ndim - 1)), new, old
                    ),
                    loaded,
                    state,
                )
                seen["injected"] += sum(live)
            actions = np.zeros(games, dtype=np.int32)
            for g, env in enumerate(envs):
                if not live[g]:
                    continue
                actions[g] = _policy(g, rng, env, ply, illegal_at[g])
                board = env.unwrapped.board
                legal = env.observe(env.agent_selection)["action_mask"][actions[g]]
                if legal:
                    _features(board, _move(board, int(actions[g])), seen)
                env.step(int(actions[g]))
                if not legal:
                    seen["illegal"] += 1
                elif env.terminations[env.agent_selection]:
                    _ending(board, seen)
            state = step.step(state, jnp.asarray(actions), keys)
            port = {name: np.asarray(value) for name, value in state._asdict().items()}
            for g, env in enumerate(envs):
                if live[g] and (problem := _differs(g, ply, env, port)):
                    return problem, seen
    return None, seen


class _Compiled(types.SimpleNamespace):
    pass


_CACHE: dict[int, _Compiled] = {}


def _compiled(env_module: types.ModuleType) -> _Compiled:
    """The port's batched functions, compiled once per module."""
    import jax

    if id(env_module) not in _CACHE:
        _CACHE[id(env_module)] = _Compiled(
            init=jax.jit(jax.vmap(env_module.init)),
            step=jax.jit(jax.vmap(env_module.step)),
            to_reference=jax.jit(jax.vmap(env_module.state_to_reference)),
            from_reference=jax.jit(jax.vmap(env_module.state_from_reference)),
        )
    return _CACHE[id(env_module)]


@pytest.fixture(scope="module")
def port() -> types.ModuleType:
    return _load_port(PORT, "chess_jax_port")


@pytest.fixture(scope="module")
def visited() -> list[dict]:
    return []


@pytest.mark.slow
def test_port_plays_as_pettingzoo(port: types.ModuleType, visited: list[dict]) -> None:
    """The games reach every ending and special move PettingZoo's chess has (so the
    comparison is worth something), and the port matches every step of them."""
    problem, seen = _play(port, games=12, seed=0, plies=400, visited=visited)
    assert problem is None, problem
    for feature in (
        "castling",
        "en_passant",
        "promotion",
        "checkmate",
        "insufficient",
        "fifty",
        "threefold",
        "illegal",
        "injected",
    ):
        assert seen[feature] > 0, f"no {feature} in the games: {seen}"


def _mutants() -> Iterator[Any]:
    from envport.verifiers.selfcheck import Mutant

    for entry in tomllib.loads(MUTANTS.read_text(encoding="utf-8"))["mutant"]:
        mutant = Mutant.model_validate(entry)
        if mutant.target == "jax":
            yield pytest.param(mutant, id=mutant.id)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", list(_mutants()))
def test_each_mutant_plays_differently(mutant: Any, tmp_path: Path) -> None:
    from envport.verifiers.selfcheck import apply_mutant

    folder = apply_mutant(mutant, PORT, tmp_path / "jax")
    env = _load_port(folder, f"chess_jax_{mutant.id.replace('-', '_')}")
    problem, _ = _play(env, games=12, seed=0, plies=400)
    assert problem is not None


@pytest.mark.slow
def test_the_probes_agree_with_the_known_good_port(
    port: types.ModuleType, visited: list[dict]
) -> None:
    """Each probe's port half (the known-good rules, compiled) equals its reference half
    (python-chess and PettingZoo's chess_utils) on the states the games visited."""
    import jax

    from envport.verifiers.draws.probes import load_probes

    if not visited:
        _play(port, games=12, seed=0, plies=400, visited=visited)
    rules = importlib.import_module("chess_jax_port.rules")
    probes = load_probes(ROOT / "examples" / "chess" / "probes" / "jax.py")
    assert set(probes) == {
        "rules.legal_moves",
        "rules.insufficient_material",
        "rules.history_planes",
        "rules.aux_planes",
    }
    for name, found in probes.items():
        call = jax.jit(lambda state, found=found: found.call(rules, state, 0, state))
        for state in visited[::3]:
            got = call(state)
            want = found.expect_fn(state, 0, state, None)
            for field, value in want.items():
                assert np.array_equal(np.asarray(got[field]), np.asarray(value)), (name, field)


# Positions random games reach rarely, each with the rule it tests.
TRICKY = [
    "8/8/8/KPp4r/8/8/8/7k w - c6 0 2",  # en passant would uncover a rank check
    "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",  # the same for black, queen on the rank
    "4k3/8/8/2Pp4/8/8/8/4K3 w - d6 0 1",  # a plain en passant
    "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1",  # black takes en passant
    "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1",  # O-O crosses an attacked square, O-O-O does not
    "4k3/8/8/8/4b3/8/8/R3K2R w KQ - 0 1",  # b1 attacked: O-O-O still legal
    "r3k2r/8/8/8/8/8/8/4K1R1 b kq - 0 1",  # black: O-O lands on an attacked g8
    "4k3/8/8/8/8/5n2/8/r3K3 w - - 0 1",  # double check: only the king moves
    "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1",  # promotion by push and by capture
    "4k3/8/8/8/8/8/p7/1N2K3 b - - 0 1",  # black promotes
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
    "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1",  # a pinned bishop cannot move
    "4k3/8/8/8/8/2b5/3R4/4K3 w - - 0 1",  # a diagonally pinned rook cannot move
    "4k3/8/8/1b6/8/8/4P3/4K2R w K - 0 1",  # a check-blocking move only, castling out
]


def _position_leaves(board: chess.Board) -> dict[str, np.ndarray]:
    rights = board.clean_castling_rights()
    corners = (chess.H1, chess.A1, chess.H8, chess.A8)
    return {
        "board": np.asarray(_codes(board), dtype=np.int64),
        "current_player": np.int64(0 if board.turn else 1),
        "castling": np.asarray([bool(rights & chess.BB_SQUARES[s]) for s in corners]),
        "ep_square": np.int64(-1 if board.ep_square is None else board.ep_square),
    }


def test_legal_moves_of_tricky_positions(port: types.ModuleType) -> None:
    """The move generator against PettingZoo's chess_utils.legal_moves (python-chess) on
    positions random games seldom reach: en passant uncovering a check, castling past an
    attacked square, double check, pins, promotions, stalemate."""
    import jax
    from pettingzoo.classic.chess import chess_utils

    rules = importlib.import_module("chess_jax_port.rules")
    moves = jax.jit(jax.vmap(rules.legal_moves))
    boards = [chess.Board(fen) for fen in TRICKY]
    leaves = _stack([_position_leaves(board) for board in boards])
    got = moves(leaves["board"], leaves["current_player"], leaves["castling"], leaves["ep_square"])
    for k, board in enumerate(boards):
        want = np.zeros(4672, dtype=bool)
        want[chess_utils.legal_moves(board)] = True
        assert np.array_equal(np.asarray(got.mask[k]), want), TRICKY[k]
        assert bool(got.in_check[k]) == board.is_check(), TRICKY[k]
        assert bool(got.legal_ep[k]) == board.has_legal_en_passant(), TRICKY[k]
        quiet = any(not board.is_zeroing(move) for move in board.legal_moves)
        assert bool(got.any_quiet[k]) == quiet, TRICKY[k]


def test_the_start_is_pettingzoo_s(port: types.ModuleType) -> None:
    """init shows player_0 PettingZoo's first observation and mask, and its
    state_to_reference is a fresh env's leaves."""
    import jax

    state = jax.jit(port.init)(jax.random.key(0))
    env = chess_v6.env()
    env.reset()
    seen = env.observe("player_0")
    assert np.array_equal(np.asarray(state.observation), seen["observation"])
    assert np.array_equal(np.asarray(state.legal_action_mask), seen["action_mask"].astype(bool))
    written = jax.jit(port.state_to_reference)(state)
    for name, want in _leaves(env).items():
        assert np.array_equal(np.asarray(written[name]), want), name


# At 99 halfmoves: after Ka1 every quiet move of black's stalemates white, so python-chess
# claims nothing; after Ra2 black has quiet moves with a reply, and the claim ends the game.
FIFTY = [
    ("8/8/8/8/8/p1k5/P1p5/1K6 w - - 98 80", "b1a1"),
    ("8/8/4k3/8/8/3K4/8/R7 w - - 98 80", "a1a2"),
]


def test_the_fifty_move_claim_one_move_early(port: types.ModuleType) -> None:
    """At 99 halfmoves the game ends when some quiet move leaves the opponent a reply,
    as PettingZoo's `can_claim_fifty_moves` has it, and not when every one stalemates."""
    import jax
    from pettingzoo.classic.chess import chess_utils

    step = jax.jit(port.step)
    ended = []
    for fen, uci in FIFTY:
        env = chess_v6.env()
        env.reset()
        board = env.unwrapped.board = chess.Board(fen)
        state = port.state_from_reference({k: np.asarray(v) for k, v in _leaves(env).items()})
        (action,) = [a for a in chess_utils.legal_moves(board) if _move(board, a).uci() == uci]
        env.step(action)
        after = step(state, action, jax.random.key(0))
        agent = env.agent_selection
        assert bool(after.terminated) == env.terminations[agent], fen
        mask = env.observe(agent)["action_mask"]
        assert np.array_equal(np.asarray(after.legal_action_mask), mask), fen
        ended.append(env.terminations[agent])
    assert ended == [False, True]
