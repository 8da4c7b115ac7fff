"""The known-good NumPy chess port (examples/chess/ports/numpy) played side by side with
PettingZoo's own `chess_v6.env()`, without the verifier.

PettingZoo's games are played once (a module fixture): seeded policies that reach every way a
game ends (checkmates, stalemate, insufficient material, fifty moves, threefold repetition,
illegal moves by each player) and the special moves (castling, en passant, promotions),
some from set-up positions. Each step's results are recorded, so the known-good port and
each mutant of examples/chess/mutants.toml replay the games batched against the record;
every few plies the port's state is written to and loaded from the reference's leaves (the
brief's flat dict) mid-game. The probes' two halves must agree on the visited states.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
import tomllib
import types
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envport.repair.edits import parse_answer
from envport.verifiers.draws.probes import load_probes
from envport.verifiers.selfcheck import Mutant, apply_mutant

from helpers import ROOT, check_failures, chess_bridge, chess_leaves, translated_offline

pytest.importorskip("pettingzoo")
chess = pytest.importorskip("chess")
with warnings.catch_warnings():
    # PettingZoo 1.27 deprecates importing its versioned modules; the reference is
    # `chess_v6.env()` all the same.
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import chess_v6
    from pettingzoo.classic.chess import chess_utils
    from pettingzoo.utils.env_logger import EnvLogger

CHESS = ROOT / "examples" / "chess"
AGENTS = ("player_0", "player_1")
MAX_PLIES = 200
CHECK_EVERY = 15  # plies between two writes/loads of the port's state
ILLEGAL_SHARE = 0.03  # of the random policy's moves
# (start position or None for the initial one, policy): one game each.
GAMES = (
    [(None, "random")] * 8
    + [(None, "aggressive")] * 6
    + [(None, "shuffle")] * 2
    + [(None, "quiet")] * 2
    + [
        ("k7/8/1Q6/8/8/8/8/7K w - - 0 1", "stalemate"),
        ("8/8/8/KPp4r/8/8/8/7k w - c6 0 1", "random"),  # en passant would expose the king
        ("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1", "random"),
        ("r3k2r/8/8/8/8/8/6b1/R3K2R w KQkq - 0 1", "aggressive"),  # f1 attacked
        ("4k3/P6p/8/8/8/8/p6P/4K3 w - - 0 1", "random"),  # promotions both ways
        ("8/8/4k3/8/2NN4/8/4K3/8 w - - 90 60", "quiet"),  # two knights: not a dead draw
        ("8/8/4k3/8/2N5/8/4K3/6n1 b - - 0 1", "aggressive"),
        ("8/8/4k3/8/2B5/8/4K3/6b1 w - - 0 1", "quiet"),  # opposite-coloured bishops
        ("8/8/4k3/8/8/3K4/8/R7 b - - 97 80", "quiet"),  # fifty moves in a few plies
        ("8/8/8/8/8/1k6/7q/K7 b - - 0 1", "aggressive"),  # black mates in one
        # After Ka1 black is at 99 halfmoves, but each quiet move of black's stalemates
        # white: no fifty-move claim (python-chess wants the opponent to have a reply).
        ("8/8/8/8/8/p1k5/P1p5/1K6 w - - 98 80", "quiet:b1a1"),
    ]
)
BRIDGE = chess_bridge()


def _leaves(env: Any) -> dict[str, np.ndarray]:
    """The reference state's leaves, as the example's bridge reads them."""
    return chess_leaves(env, BRIDGE)


def _stack(leaves: list[dict]) -> dict[str, np.ndarray]:
    return {name: np.stack([one[name] for one in leaves]) for name in leaves[0]}


def _reference(start: str | None) -> Any:
    env = chess_v6.env()
    env.reset()
    if start is not None:
        raw = env.unwrapped
        raw.board = chess.Board(start)
        if raw.board.turn == chess.BLACK:
            raw.agent_selection = raw._agent_selector.next()
    return env


def _results(env: Any) -> dict[str, Any]:
    agent = env.agent_selection
    seen = env.observe(agent)
    return {
        "current_player": AGENTS.index(agent),
        "observation": seen["observation"],
        "legal_action_mask": seen["action_mask"].astype(bool),
        "rewards": [env.rewards[a] for a in AGENTS],
        "terminated": env.terminations["player_0"],
        "truncated": env.truncations["player_0"],
    }


class Player:
    """A seeded policy over PettingZoo's legal actions, tagging the moves it plays."""

    def __init__(self, policy: str, seed: int) -> None:
        # "policy:move move ...": the moves (UCI) are played first.
        self.policy, _, script = policy.partition(":")
        self.script = script.split()
        self.rng = np.random.default_rng(seed)
        self.last: dict[int, Any] = {}

    def choose(self, env: Any, tags: set[str]) -> int:
        board = env.unwrapped.board
        player = AGENTS.index(env.agent_selection)
        mask = env.observe(env.agent_selection)["action_mask"]
        if self.policy == "random" and self.rng.random() < ILLEGAL_SHARE:
            return int(self.rng.choice(np.flatnonzero(mask == 0)))
        moves = {
            int(a): chess_utils.action_to_move(board, int(a), player) for a in np.flatnonzero(mask)
        }
        pool = self._preferred(board, moves, player)
        if self.script:
            scripted = self.script.pop(0)
            pool = [a for a, m in moves.items() if m.uci() == scripted]
        action = int(self.rng.choice(pool))
        move = moves[action]
        self.last[player] = move
        if board.is_castling(move):
            tags.add(
                "castles kingside" if board.is_kingside_castling(move) else "castles queenside"
            )
        if board.is_en_passant(move):
            tags.add("en passant")
        if move.promotion:
            tags.add("promotes to a queen" if move.promotion == chess.QUEEN else "underpromotes")
        return action

    def _preferred(self, board: Any, moves: dict[int, Any], player: int) -> list[int]:
        def ending(test: str) -> list[int]:
            found = []
            for action, move in moves.items():
                board.push(move)
                if getattr(board, test)():
                    found.append(action)
                board.pop()
            return found

        special = [a for a, m in moves.items() if board.is_castling(m) or board.is_en_passant(m)]
        if special and self.rng.random() < 0.9:
            return special
        quiet = [a for a, m in moves.items() if not board.is_zeroing(m)]
        chances = [
            ("stalemate", lambda: ending("is_stalemate")),
            ("aggressive", lambda: ending("is_checkmate")),
            ("aggressive", lambda: [a for a, m in moves.items() if board.is_zeroing(m)]),
            ("shuffle", lambda: [a for a, m in moves.items() if self._undoes(m, player)]),
            ("shuffle", lambda: quiet),
            ("quiet", lambda: quiet),
        ]
        for policy, pick in chances:
            if policy == self.policy and self.rng.random() < 0.9:
                found = pick()
                if found:
                    return found
        return list(moves)

    def _undoes(self, move: Any, player: int) -> bool:
        last = self.last.get(player)
        return last is not None and (move.from_square, move.to_square) == (
            last.to_square,
            last.from_square,
        )


def _ending(env: Any, mover: str) -> str | None:
    board = env.unwrapped.board
    if env.truncations[mover]:
        return f"illegal by {mover}"
    if not env.terminations[mover]:
        return None
    if board.is_checkmate():
        return f"checkmate by {mover}"
    tests = {
        "stalemate": board.is_stalemate,
        "insufficient_material": board.is_insufficient_material,
        "fifty_moves": board.can_claim_fifty_moves,
        "threefold_repetition": board.can_claim_threefold_repetition,
    }
    for name, test in tests.items():
        if test():
            return name
    return "unexplained"


@dataclass
class Record:
    """PettingZoo's games: the start leaves, then per ply the actions, which games were
    still being played, and the results after the step; leaves every CHECK_EVERY plies."""

    starts: dict[str, np.ndarray]
    first: dict[str, np.ndarray]
    actions: list[np.ndarray] = field(default_factory=list)
    live: list[np.ndarray] = field(default_factory=list)
    results: list[dict[str, np.ndarray]] = field(default_factory=list)
    leaves: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)
    events: set[str] = field(default_factory=set)
    visited: list[tuple[dict, int, dict]] = field(default_factory=list)


def _record() -> Record:
    envs = [_reference(start) for start, _ in GAMES]
    players = [Player(policy, seed) for seed, (_, policy) in enumerate(GAMES)]
    record = Record(
        starts=_stack([_leaves(env) for env in envs]),
        first=_stack([_fields_of(_results(env)) for env in envs]),
    )
    live = np.ones(len(envs), dtype=bool)
    logger = logging.getLogger(EnvLogger.__module__)
    level = logger.level
    logger.setLevel(logging.ERROR)  # an illegal move logs a warning, made on purpose here
    try:
        for ply in range(MAX_PLIES):
            actions = np.zeros(len(envs), dtype=np.int64)
            for game in np.flatnonzero(live):
                env = envs[game]
                # A sample of the states for the probes, and every one with an en passant
                # capture in hand (rare, and a probe's best test).
                sampled = ply % 7 == game % 7 or env.unwrapped.board.has_legal_en_passant()
                before = _leaves(env) if sampled else None
                actions[game] = players[game].choose(env, record.events)
                mover = env.agent_selection
                env.step(int(actions[game]))
                ended = _ending(env, mover)
                if ended:
                    record.events.add(ended)
                if before is not None:
                    record.visited.append((before, int(actions[game]), _leaves(env)))
            record.actions.append(actions)
            record.live.append(live.copy())
            record.results.append(_stack([_fields_of(_results(env)) for env in envs]))
            if ply % CHECK_EVERY == CHECK_EVERY - 1:
                record.leaves[ply] = _stack([_leaves(env) for env in envs])
            live = live & ~np.asarray([env.terminations["player_0"] for env in envs])
            if not live.any():
                break
    finally:
        logger.setLevel(level)
        EnvLogger.flush()
    return record


def _fields_of(results: dict[str, Any]) -> dict[str, np.ndarray]:
    return {name: np.asarray(value) for name, value in results.items()}


def _load_port(folder: Path, name: str) -> types.ModuleType:
    """The port's env module, its folder imported as a package of its own name."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package
    return importlib.import_module(f"{name}.env")


def _differs(name: str, got: np.ndarray, want: np.ndarray, rows: np.ndarray) -> str | None:
    got = np.asarray(got)[rows].astype(np.float64)
    want = np.asarray(want)[rows].astype(np.float64)
    if np.array_equal(got, want):
        return None
    bad = rows[int(np.argmax((got != want).reshape(len(rows), -1).any(axis=1)))]
    return f"game {bad}: {name} differs"


def _garbled(leaves: dict, rng: np.random.Generator) -> dict:
    """Leaves whose positions padding holds pieces: a port must ignore padding."""
    positions = leaves["positions"].copy()
    junk = rng.integers(0, 13, size=positions.shape)
    padding = np.arange(100)[None, :, None] >= leaves["positions.length"][:, None, None]
    return {**leaves, "positions": np.where(padding, junk, positions)}


def _replay(env: types.ModuleType, record: Record) -> str | None:
    """The port's batch replaying the record; the first difference, or None."""
    size = len(GAMES)
    rng = np.random.default_rng(3)
    loaded = env.state_from_reference(_garbled(record.starts, rng))
    fresh = env.init(rng, size)
    set_up = np.asarray([start is not None for start, _ in GAMES])
    state = {
        k: np.where(set_up.reshape((-1,) + (1,) * (v.ndim - 1)), loaded[k], v)
        for k, v in fresh.items()
    }
    everyone = np.arange(size)
    for name, want in record.first.items():
        found = _differs(name, state[name], want, everyone)
        if found:
            return f"at the start: {found}"
    for ply, actions in enumerate(record.actions):
        state = env.step(state, actions)
        rows = np.flatnonzero(record.live[ply])
        for name, want in record.results[ply].items():
            found = _differs(name, state[name], want, rows)
            if found:
                return f"ply {ply}: {found}"
        if ply in record.leaves:
            found = _written_and_loaded(env, state, record.leaves[ply], rows, rng)
            if found:
                return f"ply {ply}: {found}"
            # Go on from the loaded state, as the verifier's injected states do.
            loaded = env.state_from_reference(_garbled(record.leaves[ply], rng))
            ongoing = record.live[ply] & ~record.results[ply]["terminated"]
            state = {
                k: np.where(ongoing.reshape((-1,) + (1,) * (v.ndim - 1)), loaded[k], v)
                for k, v in state.items()
            }
    return None


def _written_and_loaded(env: types.ModuleType, state: dict, leaves: dict, rows, rng) -> str | None:
    written = env.state_to_reference(state)
    assert set(written) == set(leaves)
    for name, want in leaves.items():
        found = _differs(f"state_to_reference's {name}", written[name], want, rows)
        if found:
            return found
    loaded = env.state_from_reference(_garbled(leaves, rng))
    ongoing = rows[~np.asarray(state["terminated"])[rows]]
    for name in ("current_player", "observation", "legal_action_mask"):
        found = _differs(f"state_from_reference's {name}", loaded[name], state[name], ongoing)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def record() -> Record:
    return _record()


def test_the_games_reach_every_ending_and_special_move(record: Record) -> None:
    """The comparison is worth something only if PettingZoo's games end every way one ends
    and play every special move."""
    assert record.events >= {
        "illegal by player_0",
        "illegal by player_1",
        "checkmate by player_0",
        "checkmate by player_1",
        "stalemate",
        "insufficient_material",
        "fifty_moves",
        "threefold_repetition",
        "castles kingside",
        "castles queenside",
        "en passant",
        "promotes to a queen",
        "underpromotes",
    }, record.events
    assert "unexplained" not in record.events


def test_the_port_plays_as_pettingzoo(record: Record) -> None:
    env = _load_port(CHESS / "ports" / "numpy", "chess_good_numpy")
    assert _replay(env, record) is None


def test_a_finished_game_stays_and_inputs_are_kept(record: Record) -> None:
    """Stepping a finished game changes nothing but zeroes the rewards (pgx's convention),
    and step leaves the state it was given as it was."""
    env = _load_port(CHESS / "ports" / "numpy", "chess_stay_numpy")
    state = env.state_from_reference(record.starts)
    copy = {k: v.copy() for k, v in state.items()}
    illegal = np.argmin(state["legal_action_mask"], axis=1)
    ended = env.step(state, illegal)
    for name, value in state.items():
        assert np.array_equal(value, copy[name]), name
    assert ended["terminated"].all() and ended["truncated"].all()
    again = env.step(ended, np.argmax(state["legal_action_mask"], axis=1))
    for name, value in again.items():
        want = np.zeros_like(ended[name]) if name == "rewards" else ended[name]
        assert np.array_equal(value, want), name


def _mutants() -> Iterator[Any]:
    entries = tomllib.loads((CHESS / "mutants.toml").read_text(encoding="utf-8"))["mutant"]
    for entry in entries:
        mutant = Mutant.model_validate(entry)
        if mutant.target == "numpy":
            yield pytest.param(mutant, id=mutant.id)


# Each mutant replays the recorded games in well under a second: not a slow test.
@pytest.mark.parametrize("mutant", list(_mutants()))
def test_each_mutant_plays_differently(mutant: Mutant, record: Record, tmp_path: Path) -> None:
    port = apply_mutant(mutant, CHESS / "ports" / "numpy", tmp_path / "numpy")
    env = _load_port(port, f"chess_{mutant.id.replace('-', '_')}")
    assert _replay(env, record) is not None


def test_the_probes_agree_with_the_known_good_port(record: Record) -> None:
    """Each probe's port half (on the known-good rules) equals its reference half
    (python-chess and PettingZoo's own functions) on the states the games visited."""
    _load_port(CHESS / "ports" / "numpy", "chess_probe_numpy")
    rules = importlib.import_module("chess_probe_numpy.rules")
    probes = load_probes(CHESS / "probes" / "numpy.py")
    assert set(probes) == {
        "rules.legal_action_mask",
        "rules.attacked",
        "rules.legal_en_passant",
        "rules.insufficient_material",
        "rules.mirror",
        "rules.play",
    }
    assert record.visited
    for before, drawn, after in record.visited:
        for probe in probes.values():
            assert probe.expect_fn is not None
            state, action = before, np.asarray(drawn)
            if probe.arrange_fn is not None:
                # The verifier's search picks; here the drawn action stands in for its pick.
                state, action = probe.arrange_fn(before, action, _picker(drawn))
            want = probe.expect_fn(state, action, after, None)
            got = probe.call(rules, state, action, after)
            assert want.keys() == got.keys()
            for name in want:
                assert np.array_equal(np.asarray(got[name]), np.asarray(want[name])), (
                    probe.name,
                    name,
                    state,
                    action,
                )


def _picker(drawn: int) -> Any:
    def pick(low: int, high: int) -> int:
        return low + drawn % (high - low + 1)

    return pick


def test_a_probe_catches_a_mutant_rule(record: Record, tmp_path: Path) -> None:
    """A probe that compared nothing would pass any rule: the mutant that forgets en
    passant must disagree with python-chess's legal moves on some visited state."""
    mutant = next(m.values[0] for m in _mutants() if m.values[0].id == "numpy-en-passant-missed")
    port = apply_mutant(mutant, CHESS / "ports" / "numpy", tmp_path / "numpy")
    _load_port(port, "chess_probe_mutant")
    rules = importlib.import_module("chess_probe_mutant.rules")
    legal = load_probes(CHESS / "probes" / "numpy.py")["rules.legal_action_mask"]
    assert legal.expect_fn is not None
    caught = [
        before
        for before, action, after in record.visited
        if not np.array_equal(
            legal.call(rules, before, action, after)["legal_action_mask"],
            legal.expect_fn(before, action, after, None)["legal_action_mask"],
        )
    ]
    assert caught


def test_the_replay_session_ends_on_the_known_good_port(tmp_path: Path) -> None:
    """The hand-written session (examples/chess/replay/numpy): every entry labelled, the
    rules module generated with the pinned-piece slip, and the answers a run ends on (the
    repair's rules, the other modules' generation) the known-good port without its label
    line, so the session cannot drift from the port the tests check."""
    folder = ROOT / "examples" / "chess" / "replay" / "numpy"
    entries = json.loads((folder / "session.json").read_text())["entries"]
    assert {entry["source"] for entry in entries} == {"hand-written"}
    final: dict[str, str] = {}
    for entry in entries:  # in order: a later answer for a file replaces an earlier one
        answer = (folder / entry["answer_file"]).read_text()
        parsed = parse_answer(answer, tmp_path)
        if entry["phase"] == "generate" and entry["module"] == "rules":
            assert "| _pinned(boards, kings)" not in parsed.files["rules.py"]
        final |= parsed.files
    note = "\nHand-written known-good port, not model output.\n"
    port = ROOT / "examples" / "chess" / "ports" / "numpy"
    assert set(final) == {path.name for path in port.glob("*.py")}
    for name, text in final.items():
        assert text == (port / name).read_text().replace(note, "\n"), name


@pytest.mark.slow
def test_chess_translates_offline_and_the_pinned_piece_slip_is_repaired(tmp_path: Path) -> None:
    """`envport translate` from the session, on a copy of the example with the levels' budgets
    cut (the reference takes milliseconds a step; the spec's own take half an hour here):
    the env module's endings check names the moves a pinned piece may not make, the repair
    ends on the known-good rules, and the whole port verifies."""
    import shutil

    example = tmp_path / "chess"
    shutil.copytree(ROOT / "examples" / "chess", example, ignore=shutil.ignore_patterns("ports"))
    spec = example / "envport.toml"
    cut = {
        "[levels.l1]\nexamples = 60\nendings = 6": "[levels.l1]\nexamples = 20\nendings = 3",
        "[levels.l2]\nexamples = 12": "[levels.l2]\nexamples = 4",
        "[levels.l3]\nepisodes = 24\nsteps = 200": "[levels.l3]\nepisodes = 4\nsteps = 60",
    }
    text = spec.read_text()
    for old, new in cut.items():
        assert old in text, old
        text = text.replace(old, new)
    spec.write_text(text)
    run = translated_offline(example, "numpy", tmp_path / "runs", timeout=1200)
    failed = check_failures(run)
    assert failed and "L1 endings, module env" in failed[0]
    assert "legal_action_mask[" in failed[0] and "expected 0, got 1" in failed[0]
    note = "\nHand-written known-good port, not model output.\n"
    known_good = (ROOT / "examples" / "chess" / "ports" / "numpy" / "rules.py").read_text()
    assert (run / "port" / "rules.py").read_text() == known_good.replace(note, "\n")
