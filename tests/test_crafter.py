"""The Crafter example's known-good NumPy and JAX ports verified at a small budget, a copy
of the NumPy port with one crafting requirement changed, which the book's start states catch
by name, the mutants (examples/crafter/mutants.toml) only the book's start states reach,
a JAX port updating its objects kind by kind instead of in the world's list order,
Craftax-Classic's verdict through its bridge (examples/crafter/ports/craftax), and the JAX
port's world generator against the NumPy port's (itself Crafter's, given Crafter's draws:
tests/test_crafter_bridge.py).

`envport verify examples/crafter --port examples/crafter/ports/numpy` runs the full budgets.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, with_budgets

pytest.importorskip("crafter")

CRAFTER = ROOT / "examples" / "crafter"
# One short episode of play, the book one action deep (8 x 17 steps), 16 noise samples, and
# no branch coverage (tracing Crafter's code triples its steps' time; the spec's coverage
# is measured with its full play: README).
BUDGETS = {
    "state.reached": {"episodes": 1, "steps": 60, "depth": 1},
    "randomness": {"samples": 16},
    "coverage": {"enabled": "false"},
}


def _small(tmp_path: Path) -> Path:
    return with_budgets(CRAFTER, tmp_path / "crafter", BUDGETS)


# Few examples: the JAX port's two step programs take most of its run to compile.
@pytest.mark.slow
@pytest.mark.parametrize("target, examples", [("numpy", 20), ("jax", 10)])
def test_the_known_good_ports_verify_at_l1(target: str, examples: int, tmp_path: Path) -> None:
    options = VerifyOptions(target=target, levels=("l1",), examples=examples)
    report = verify(str(_small(tmp_path)), str(CRAFTER / "ports" / target), options)
    assert report.passed, report.text()


@pytest.mark.slow
def test_a_wood_pickaxe_costing_two_wood_is_named(tmp_path: Path) -> None:
    port = tmp_path / "port"
    shutil.copytree(CRAFTER / "ports" / "numpy", port)
    world = port / "world.py"
    text = world.read_text()
    fair = '"wood_pickaxe": ({"wood": 1}, ("table",)),'
    assert text.count(fair) == 1
    world.write_text(text.replace(fair, '"wood_pickaxe": ({"wood": 2}, ("table",)),'))
    options = VerifyOptions(target="numpy", levels=("l1",), examples=20)
    report = verify(str(_small(tmp_path)), str(port), options)
    assert not report.passed
    # The slip by name and by what it does: the pickaxe takes one wood more than Crafter's.
    # Which example shows it is shrinking's, which load cuts short, so no numbers are fixed.
    found = re.search(r"obs\.inventory\.wood: expected (\d+), got (\d+)", report.text())
    assert found and int(found[2]) == int(found[1]) - 1, report.text()


def test_every_mutant_applies_exactly_once(tmp_path: Path) -> None:
    mutants = load_mutants(CRAFTER)
    assert len({m.id for m in mutants}) == len(mutants) >= 20
    assert {m.target for m in mutants} == {"jax", "numpy"}
    for mutant in mutants:
        port = apply_mutant(mutant, CRAFTER / "ports" / mutant.target, tmp_path / mutant.id)
        assert mutant.new in (port / mutant.file).read_text()


@pytest.mark.slow
def test_a_jax_port_updating_kind_by_kind_is_caught_at_l1(tmp_path: Path) -> None:
    # Crafter updates its objects in its one list's order; updated kind by kind, a zombie
    # moves before a cow listed ahead of it, and the orders read back come out of turn.
    mutant = next(m for m in load_mutants(CRAFTER) if m.id == "jax-objects-updated-kind-by-kind")
    port = apply_mutant(mutant, CRAFTER / "ports" / "jax", tmp_path / "port")
    # Unshrunk: the first divergence found names the orders as a minimal one would, and
    # shrinking only adds batches (65 s unshrunk, 67 s and 102 s shrunk, at load 4 to 5).
    options = VerifyOptions(target="jax", levels=("l1",), examples=10, fail_fast=True, shrink=False)
    report = verify(str(_small(tmp_path)), str(port), options)
    assert not report.passed, report.text()
    assert re.search(r"(zombies|skeletons|cows|arrows|plants)\[\d+\]\.order", report.text())


# Missed by every level until the book laid out their start states: iron and a wood
# pickaxe alone, a table and furnace two cells away, a zombie a stone sword kills at once,
# a cow ahead (eaten before it can move away), an unripe plant of 250 steps.
BOOK_CAUGHT = [
    "numpy-iron-needs-wood-pickaxe",
    "numpy-tools-made-two-cells-away",
    "numpy-stone-sword-damage-two",
    "numpy-cow-feeds-five",
    "numpy-plant-ripe-at-200",
]


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", BOOK_CAUGHT)
def test_a_slip_only_the_books_positions_reach_is_caught_at_l1(
    mutant_id: str, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(CRAFTER) if m.id == mutant_id)
    port = apply_mutant(mutant, CRAFTER / "ports" / "numpy", tmp_path / "port")
    # The book two actions deep (the iron and the plant are a turn away), play cut short.
    budgets = {"state.reached": {"episodes": 1, "steps": 60}, "randomness": {"samples": 16}}
    budgets["coverage"] = {"enabled": "false"}
    spec = with_budgets(CRAFTER, tmp_path / "crafter", budgets)
    options = VerifyOptions(target="numpy", levels=("l1",), examples=20, fail_fast=True)
    report = verify(str(spec), str(port), options)
    assert not report.passed, report.text()


@pytest.mark.slow
def test_craftax_classic_diverges_from_crafter_where_their_sources_differ(tmp_path: Path) -> None:
    """Craftax-Classic through its bridge (examples/crafter/ports/craftax). Crafter keeps
    every creature of its 64x64 world (dozens at a reset), Craftax a few in fixed slots, so
    the bridge refuses the reset state L3 starts from. And a zombie waking the sleeper
    (7 damage in both) earns Craftax's `wake_up` (update_mobs), where Crafter's player wakes
    when hurt without it (Player._wake_up_when_hurt): reward -0.7 in Crafter, 0.3 in
    Craftax. A bridge stepping as Crafter does would hold both states and pass."""
    pytest.importorskip("craftax")
    # One case of examples/crafter/cases/craftax: Crafter's world at reset(0) emptied of
    # creatures, the player asleep with energy 3, a zombie of spent cooldown beside it
    # walled in by stone (no move of its own takes it away), one noop.
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copy(CRAFTER / "cases" / "craftax" / "sleeper.toml", cases)
    options = VerifyOptions(target="jax", levels=("l3",), episodes=1, steps=2, cases=cases)
    report = verify(str(CRAFTER), str(CRAFTER / "ports" / "craftax"), options)
    text = report.text()
    assert not report.passed, text
    assert re.search(r"^FAIL l3: .*\n.*`can_hold` refused row 0", text, re.MULTILINE), text
    assert re.search(r"^FAIL cases\.proposed: 1 cases", text, re.MULTILINE), text
    assert re.search(r"reward: expected -0\.7, got 0\.29999", text), text


def _port_module(folder: Path, package: str, module: str) -> types.ModuleType:
    """A port's module, its folder imported as a package of its own name."""
    if package not in sys.modules:
        root = types.ModuleType(package)
        root.__path__ = [str(folder)]
        sys.modules[package] = root
    return importlib.import_module(f"{package}.{module}")


def test_the_jax_ports_noise_is_jax_randoms_to_the_bit() -> None:
    # The port writes threefry out (JAX's loop of it is a sixth of a step on CPU); its
    # numbers must stay jax.random.uniform's, for raw and typed keys, batched or not.
    jax = pytest.importorskip("jax")
    env = _port_module(CRAFTER / "ports" / "jax", "crafter_jax_port", "env")

    def theirs(key):
        return jax.random.uniform(key, (env.NOISE,))

    for keys in (
        jax.random.split(jax.random.PRNGKey(5), 16),
        jax.random.split(jax.random.key(9), 4),
    ):
        assert np.array_equal(jax.jit(jax.vmap(env._uniform))(keys), jax.vmap(theirs)(keys))
    one = jax.random.PRNGKey(2)
    assert np.array_equal(env._uniform(one), theirs(one))


def test_the_jax_ports_simplex_is_the_numpy_ports() -> None:
    # The permutation from the seed exactly (64-bit arithmetic in uint32 words); the noise
    # (the lattice geometry in float64, the sums in float32) within 4e-7 of the NumPy
    # port's float64, which is opensimplex's own (2.2e-7 the most over 500,000 points).
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    ours = _port_module(CRAFTER / "ports" / "jax", "crafter_jax_simplex", "simplex")
    theirs = _port_module(CRAFTER / "ports" / "numpy", "crafter_numpy_simplex", "simplex")
    rng = np.random.default_rng(50)
    points = rng.uniform(-42, 42, (3, 10000))
    geometry = ours.Geometry(*points)
    at, weighted = jnp.asarray(geometry.at), jnp.asarray(geometry.weighted)

    @jax.jit  # one program for every seed: op by op, each call would compile its own
    def noise(seed, at, weighted):
        perm = ours.permutation(seed)
        return perm, ours.noise3(perm, at, weighted)

    for seed in (0, 1, 2**31 - 2, int(rng.integers(2**31 - 1))):
        perm, got = noise(jnp.int32(seed), at, weighted)
        assert np.array_equal(np.asarray(perm), theirs.permutation(seed)), seed
        want = theirs.Simplex(seed).noise3(*points)
        assert np.abs(np.asarray(got) - want).max() < 4e-7, seed
        assert np.abs(want).max() > 0.5  # noise, not zeros on both sides


def _jax_world(worldgen: types.ModuleType, env: types.ModuleType, key) -> tuple:
    """The JAX port's world for a key: (its start state's leaves, the simplex seed, the
    sequential stream that Crafter's generator would read for it: each cell's numbers, as
    many as the cell took, x outer, the materials' pass then the objects')."""
    seed, u_mat, u_obj = worldgen.draw(key)
    mat, kind, took_mat, took_obj = worldgen.generate(seed, u_mat, u_obj)
    _, state = env.start(mat, kind)
    leaves = {name: np.asarray(v) for name, v in env.state_to_reference(state).items()}
    stream: list[float] = []
    for numbers, took in ((u_mat, took_mat), (u_obj, took_obj)):
        numbers, took = np.asarray(numbers), np.asarray(took)
        for x, y in np.ndindex(took.shape):
            stream += numbers[x, y, : took[x, y]].tolist()
    return leaves, int(seed), stream


def _differing(got: dict, want: dict) -> list[str]:
    """The bridged fields that differ (the float32 daylight by more than 1e-6)."""
    assert set(got) == set(want)
    differing = []
    for name, value in want.items():
        if name == "daylight":
            same = np.allclose(got[name], value, rtol=0, atol=1e-6)
        else:
            same = np.array_equal(got[name], np.asarray(value))
        if not same:
            differing.append(name)
    return differing


@pytest.mark.slow
def test_the_jax_ports_generator_makes_the_numpy_ports_worlds(tmp_path: Path) -> None:
    # Fed the numbers the JAX port drew per cell, laid end to end as Crafter reads them,
    # the NumPy port's generator (Crafter's own, tests/test_crafter_bridge.py) must make the
    # same start state, every bridged field (lists, orders, chunk keys), and read every
    # number. Float32 noise could flip a cell at a threshold (about 7 worlds in 100 differ
    # somewhere); these four worlds have none.
    jax = pytest.importorskip("jax")
    worldgen = _port_module(CRAFTER / "ports" / "jax", "crafter_jax_port", "worldgen")
    env = _port_module(CRAFTER / "ports" / "jax", "crafter_jax_port", "env")
    numpy_env = _port_module(CRAFTER / "ports" / "numpy", "crafter_numpy_port", "env")
    keys = [jax.random.PRNGKey(i) for i in range(4)]
    worlds = []
    for i, key in enumerate(keys):
        got, seed, stream = _jax_world(worldgen, env, key)
        numbers = iter(stream)
        want = numpy_env._leaves(numpy_env.start(seed, numbers.__next__))
        assert next(numbers, None) is None, f"world {i}: numbers left unread"
        assert not _differing(got, want), f"world {i}"
        assert int(got["zombies.length"]) + int(got["cows.length"]) > 10
        worlds.append(got)
    assert not np.array_equal(worlds[0]["mat_map"], worlds[1]["mat_map"])
    # Each slip in the JAX generator makes another world for one of the keys at least.
    mutants = [m for m in load_mutants(CRAFTER) if m.target == "jax" and m.file == "worldgen.py"]
    assert len(mutants) >= 3
    for index, mutant in enumerate(mutants):
        folder = apply_mutant(mutant, CRAFTER / "ports" / "jax", tmp_path / mutant.id)
        package = f"crafter_jax_mutant_{index}"
        mutated = _port_module(folder, package, "worldgen")
        mutated_env = _port_module(folder, package, "env")
        # The first world that differs will do (each costs seconds): none is the failure.
        changed = any(
            _differing(_jax_world(mutated, mutated_env, key)[0], worlds[i])
            for i, key in enumerate(keys)
        )
        assert changed, f"{mutant.id}: every world as the port's"
