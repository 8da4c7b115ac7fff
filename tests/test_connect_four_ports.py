"""The known-good Connect Four ports (examples/connect_four/ports/{jax,numpy}) played side by
side with PettingZoo's own `connect_four_v3.env()`, without the verifier: seeded random games
with illegal moves among them, compared after every step; each mutant of
examples/connect_four/mutants.toml must make that play differ; and the probes' two halves
agree on the states the games visit.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envport.verifiers.draws.probes import load_probes
from envport.verifiers.selfcheck import Mutant, apply_mutant

from helpers import ROOT, quiet_pettingzoo

pytest.importorskip("pettingzoo")
with warnings.catch_warnings():
    # PettingZoo 1.27 deprecates importing its versioned modules (for a `make`); the
    # example's reference is `connect_four_v3.env()` all the same.
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.classic import connect_four_v3

C4 = ROOT / "examples" / "connect_four"
GAMES = 300
ILLEGAL_SHARE = 0.2
AGENTS = ("player_0", "player_1")
# 42 moves that fill the board with no four for either player (columns alternating from the
# bottom, shifted in columns 2 and 5): the only way random play reliably reaches a draw.
DRAWN_GAME = [0] * 6 + [1] * 6 + [3, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3] + [4] * 6
DRAWN_GAME += [6, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6]


@dataclass
class Driver:
    """A port made batched: B games in lockstep (JAX: the one-game functions vmapped)."""

    state: Any
    step: Callable[[Any, np.ndarray], Any]
    to_reference: Callable[[Any], dict]
    from_reference: Callable[[dict], Any]


def _load_port(folder: Path, name: str) -> types.ModuleType:
    """The port's env module, its folder imported as a package of its own name (the
    modules import each other relatively)."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package
    return importlib.import_module(f"{name}.env")


def _jax_driver(env: types.ModuleType, size: int) -> Driver:
    import jax

    step = jax.jit(jax.vmap(env.step))
    keys = jax.random.split(jax.random.key(1), size)

    def play(state: Any, actions: np.ndarray) -> Any:
        return step(state, jax.numpy.asarray(actions, jax.numpy.int32), keys)

    return Driver(
        state=jax.vmap(env.init)(jax.random.split(jax.random.key(0), size)),
        step=play,
        to_reference=jax.jit(jax.vmap(env.state_to_reference)),
        from_reference=jax.jit(jax.vmap(env.state_from_reference)),
    )


def _numpy_driver(env: types.ModuleType, size: int) -> Driver:
    return Driver(
        env.init(np.random.default_rng(0), size),
        env.step,
        env.state_to_reference,
        env.state_from_reference,
    )


def _fields(state: Any) -> dict[str, np.ndarray]:
    items = state.items() if isinstance(state, dict) else state._asdict().items()
    return {name: np.asarray(value) for name, value in items}


def _leaves(board: list[int], player: int) -> dict[str, np.ndarray]:
    """The reference state's leaves from PettingZoo's row-major board (row 0 the top)."""
    grid = np.asarray(board).reshape(6, 7)[::-1]  # height 0 (the bottom row) first
    leaves = {}
    for c in range(7):
        leaves[f"board.c{c}"] = grid[:, c].copy()
        leaves[f"board.c{c}.length"] = np.int64(np.count_nonzero(grid[:, c]))
    leaves["current_player"] = np.int64(player)
    return leaves


def _board(leaves: dict) -> np.ndarray:
    """PettingZoo's board [6, 7] (row 0 the top) from the leaves, padding ignored."""
    board = np.zeros((6, 7), dtype=np.int64)
    for c in range(7):
        length = int(leaves[f"board.c{c}.length"])
        board[::-1][:length, c] = np.asarray(leaves[f"board.c{c}"])[:length]
    return board


def _garbled(leaves: dict, rng: np.random.Generator) -> dict:
    """The leaves with their padding (items past each column's length) set to pieces: the
    bridge promises nothing about padding, so a port and a probe must ignore it."""
    out = dict(leaves)
    for c in range(7):
        column = np.asarray(leaves[f"board.c{c}"]).copy()
        length = int(leaves[f"board.c{c}.length"])
        column[length:] = rng.integers(1, 3, size=6 - length)
        out[f"board.c{c}"] = column
    return out


def _loaded(leaves: dict) -> Any:
    """PettingZoo's env() holding the leaves' board with their player to move (its agent
    selector moved on too, which names the player after the mover)."""
    env = connect_four_v3.env()
    env.reset()
    raw = env.unwrapped
    raw.board = _board(leaves).ravel().tolist()
    for _ in range(int(leaves["current_player"])):
        raw.agent_selection = raw._agent_selector.next()
    return env


def _moves(rng: np.random.Generator, board: list[int]) -> int:
    """A random column: a full one with probability ILLEGAL_SHARE when there is one."""
    full = [c for c in range(7) if board[c] != 0]
    if full and rng.random() < ILLEGAL_SHARE:
        return int(rng.choice(full))
    return int(rng.choice([c for c in range(7) if board[c] == 0]))


def _compare(game: int, reference: Any, port: dict[str, np.ndarray]) -> str | None:
    agent = reference.agent_selection
    seen = reference.observe(agent)
    want = {
        "current_player": AGENTS.index(agent),
        "observation": seen["observation"],
        "legal_action_mask": seen["action_mask"],
        "rewards": [reference.rewards[a] for a in AGENTS],
        "terminated": [reference.terminations[a] for a in AGENTS],
        "truncated": [reference.truncations[a] for a in AGENTS],
        "board": np.asarray(reference.unwrapped.board).reshape(6, 7),
    }
    for name, expected in want.items():
        got = port[name][game]
        if name in ("terminated", "truncated"):
            got = [got, got]  # one flag for both players
        if not np.array_equal(np.asarray(got).astype(np.float64), np.asarray(expected, float)):
            return f"game {game}: {name} is {np.asarray(got).tolist()}, PettingZoo's {expected}"
    return None


def _references(size: int) -> list[Any]:
    envs = []
    for _ in range(size):
        env = connect_four_v3.env()
        env.reset()
        envs.append(env)
    return envs


def _play(
    driver: Callable[[types.ModuleType, int], Driver],
    env: types.ModuleType,
    seed: int = 0,
    states: list[tuple[dict, int, dict]] | None = None,
) -> str | None:
    """GAMES random games and DRAWN_GAME, each game an env of one batch moved in lockstep
    with its own PettingZoo env; the first difference, or None. `states` collects the
    (before, action, after) leaves of every live step."""
    rng = np.random.default_rng(seed)
    size = GAMES + 1
    references = _references(size)
    port = driver(env, size)
    state = port.state
    live = np.ones(size, dtype=bool)
    found = _differences(port, state, references, live)
    if found:
        return f"at the start: {found}"
    for turn in range(42):
        actions = np.zeros(size, dtype=np.int64)
        for game in np.flatnonzero(live):
            board = references[game].unwrapped.board
            actions[game] = DRAWN_GAME[turn] if game == GAMES else _moves(rng, board)
        befores = [_leaves_of(reference) for reference in references]
        with quiet_pettingzoo():
            for game in np.flatnonzero(live):
                references[game].step(int(actions[game]))
        state = port.step(state, actions)
        found = _differences(port, state, references, live)
        if found:
            return f"turn {turn}: {found}"
        for game in np.flatnonzero(live):
            if states is not None:
                states.append((befores[game], int(actions[game]), _leaves_of(references[game])))
            live[game] = not any(references[game].terminations.values())
        if not live.any():
            return None
    return None


def _leaves_of(reference: Any) -> dict[str, np.ndarray]:
    return _leaves(list(reference.unwrapped.board), AGENTS.index(reference.agent_selection))


def _differences(port: Driver, state: Any, references: list[Any], live: np.ndarray) -> str | None:
    """The first difference of a live game: its step's results against PettingZoo's, then
    state_to_reference against the reference's leaves, and state_from_reference of those
    leaves against the played state."""
    fields = _fields(state)
    for game in np.flatnonzero(live):
        found = _compare(game, references[game], fields)
        if found:
            return found
    leaves = [_leaves_of(reference) for reference in references]
    stacked = {name: np.stack([one[name] for one in leaves]) for name in leaves[0]}
    written = {name: np.asarray(value) for name, value in port.to_reference(state).items()}
    loaded = _fields(port.from_reference(stacked))
    for game in np.flatnonzero(live):
        for name, want in leaves[game].items():
            if not np.array_equal(written[name][game], want):
                got = written[name][game].tolist()
                return f"game {game}: state_to_reference's {name} is {got}, the reference's {want}"
        for name in ("board", "current_player", "observation", "legal_action_mask"):
            if not np.array_equal(loaded[name][game], fields[name][game]):
                return f"game {game}: state_from_reference's {name} differs from the played one"
    return None


DRIVERS = {"jax": _jax_driver, "numpy": _numpy_driver}


@pytest.fixture(scope="module")
def visited() -> list[tuple[dict, int, dict]]:
    states: list[tuple[dict, int, dict]] = []
    assert _play(_numpy_driver, _load_port(C4 / "ports" / "numpy", "c4_visits"), 1, states) is None
    return states


@pytest.mark.parametrize("target", ["jax", "numpy"])
def test_the_port_plays_as_pettingzoo(target: str) -> None:
    env = _load_port(C4 / "ports" / target, f"c4_good_{target}")
    assert _play(DRIVERS[target], env) is None


def test_the_games_reach_every_ending(visited: list[tuple[dict, int, dict]]) -> None:
    """The comparison is worth something only if the games end every way PettingZoo ends
    one: wins by each player, a draw, and illegal moves by each player."""
    endings = set()
    for before, action, _ in visited:
        env = _loaded(before)
        mover = env.agent_selection
        with quiet_pettingzoo():
            env.step(action)
        if any(env.truncations.values()):
            endings.add(f"illegal by {mover}")
        elif any(env.terminations.values()):
            winner = [a for a in AGENTS if env.rewards[a] == 1]
            endings.add(f"won by {winner[0]}" if winner else "draw")
    assert endings == {
        "illegal by player_0",
        "illegal by player_1",
        "won by player_0",
        "won by player_1",
        "draw",
    }


def _mutants() -> Iterator[Any]:
    entries = tomllib.loads((C4 / "mutants.toml").read_text(encoding="utf-8"))["mutant"]
    for entry in entries:
        mutant = Mutant.model_validate(entry)
        yield pytest.param(mutant, id=mutant.id)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", list(_mutants()))
def test_each_mutant_plays_differently(mutant: Mutant, tmp_path: Path) -> None:
    port = apply_mutant(mutant, C4 / "ports" / mutant.target, tmp_path / mutant.target)
    env = _load_port(port, f"c4_{mutant.id.replace('-', '_')}")
    assert _play(DRIVERS[mutant.target], env) is not None


@pytest.mark.parametrize("target", ["jax", "numpy"])
def test_the_probes_agree_with_the_known_good_port(
    target: str, visited: list[tuple[dict, int, dict]]
) -> None:
    """Each probe's port half (on the known-good rules) equals its reference half
    (PettingZoo's own methods) on the states the games visited."""
    _load_port(C4 / "ports" / target, f"c4_probe_{target}")
    rules = importlib.import_module(f"c4_probe_{target}.rules")
    probes = load_probes(C4 / "probes" / f"{target}.py")
    assert set(probes) == {"rules.legal_moves", "rules.has_four", "rules.observe", "rules.drop"}
    calls = {name: _call(probe, rules, target) for name, probe in probes.items()}
    rng = np.random.default_rng(5)
    for clean_before, action, clean_after in visited[::3]:
        before, after = _garbled(clean_before, rng), _garbled(clean_after, rng)
        for probe in probes.values():
            assert probe.expect_fn is not None
            want = probe.expect_fn(before, np.asarray(action), after, None)
            got = calls[probe.name](before, np.asarray(action), after)
            assert want.keys() == got.keys()
            for name in want:
                assert np.array_equal(np.asarray(got[name]), np.asarray(want[name])), (
                    probe.name,
                    name,
                    before,
                    action,
                )


def _call(probe: Any, rules: types.ModuleType, target: str) -> Callable[..., dict]:
    """The probe's port half as the worker runs it: compiled for JAX."""

    def call(before: dict, action: np.ndarray, after: dict) -> dict:
        return probe.call(rules, before, action, after)

    if target != "jax":
        return call
    import jax

    return jax.jit(call)


def test_the_probes_catch_a_mutant_rule(
    tmp_path: Path, visited: list[tuple[dict, int, dict]]
) -> None:
    """A probe that compared nothing would pass any rule: the anti-diagonal mutant's
    has_four must disagree with PettingZoo's check_for_winner on some visited state."""
    mutant = next(m.values[0] for m in _mutants() if m.id == "jax-anti-diagonal-missed")
    port = apply_mutant(mutant, C4 / "ports" / "jax", tmp_path / "jax")
    _load_port(port, "c4_probe_mutant")
    rules = importlib.import_module("c4_probe_mutant.rules")
    has_four = load_probes(C4 / "probes" / "jax.py")["rules.has_four"]
    assert has_four.expect_fn is not None
    # The states after a winning move: the only ones where the mutant can answer otherwise.
    ends = [after for _, _, after in visited if _has_any_four(after)]
    caught = [
        after
        for after in ends
        if not all(
            np.array_equal(np.asarray(v), np.asarray(has_four.call(rules, after, 0, after)[k]))
            for k, v in has_four.expect_fn(after, 0, after, None).items()
        )
    ]
    assert ends and caught


def _has_any_four(leaves: dict) -> bool:
    raw = _loaded(leaves).unwrapped
    found = False
    for agent in AGENTS:
        raw.agent_selection = agent
        found = found or raw.check_for_winner()
    return found


@pytest.mark.parametrize("target", ["jax", "numpy"])
def test_padding_is_ignored_and_a_finished_game_stays(
    target: str, visited: list[tuple[dict, int, dict]]
) -> None:
    """state_from_reference of leaves whose padding holds pieces gives the state of the
    clean leaves; and stepping a finished game (the port's own convention, as pgx's)
    changes nothing but zeroes the rewards."""
    # The steps that ended a game: (before, action) of each, loaded with garbled padding.
    endings = [(before, action) for before, action, after in visited if _ended(before, action)]
    port = DRIVERS[target](_load_port(C4 / "ports" / target, f"c4_pad_{target}"), len(endings))
    rng = np.random.default_rng(9)
    clean = _stack([before for before, _ in endings])
    garbled = _stack([_garbled(before, rng) for before, _ in endings])
    assert any(not np.array_equal(clean[k], garbled[k]) for k in clean)
    loaded, from_garbled = _fields(port.from_reference(clean)), port.from_reference(garbled)
    for name, value in _fields(from_garbled).items():
        assert np.array_equal(value, loaded[name]), name
    finished = port.step(from_garbled, np.asarray([action for _, action in endings]))
    fields = _fields(finished)
    assert fields["terminated"].all()
    again = _fields(port.step(finished, np.arange(len(endings)) % 7))
    for name, value in again.items():
        want = np.zeros_like(fields[name]) if name == "rewards" else fields[name]
        assert np.array_equal(value, want), name


def _stack(leaves: list[dict]) -> dict[str, np.ndarray]:
    return {name: np.stack([one[name] for one in leaves]) for name in leaves[0]}


def _ended(before: dict, action: int) -> bool:
    env = _loaded(before)
    with quiet_pettingzoo():
        env.step(action)
    return any(env.terminations.values())


def test_a_piece_falls_where_pettingzoo_puts_it_in_a_gapped_column() -> None:
    """A drawn state may hold a column with an empty cell under a piece (never reached in
    play): PettingZoo fills the lowest empty cell, and so must drop."""
    board = np.zeros((6, 7), dtype=np.int8)
    board[4, 3] = 1  # a piece floating over an empty bottom cell of column 3
    board[5, 0] = 2
    env = connect_four_v3.env()
    env.reset()
    env.unwrapped.board = board.astype(np.int64).ravel().tolist()
    env.step(3)
    want = np.asarray(env.unwrapped.board).reshape(6, 7)
    assert want[5, 3] == 1 and want[4, 3] == 1
    import jax.numpy as jnp

    for target in ("jax", "numpy"):
        _load_port(C4 / "ports" / target, f"c4_gap_{target}")
        rules = importlib.import_module(f"c4_gap_{target}.rules")
        if target == "jax":
            got, row = rules.drop(jnp.asarray(board), jnp.int32(3), jnp.int8(1))
        else:
            got, rows = rules.drop(board[None], np.asarray([3]), np.asarray([1]))
            got, row = got[0], rows[0]
        assert np.array_equal(np.asarray(got), want), target
        assert int(row) == 5
