"""The Crafter example's reference side: the state bridge (map, player, objects as one list
per kind with their place in the world's list, chunk keys in Crafter's order) and the
declared randomness (each step's draws as one row per drawing site, harness/noise.py).

Both are checked on states from real play: a state written back and stepped must step as
the original did, and the noise a step is mapped to must be enough to replay that step.
The known-good NumPy port's world generator is checked here too, against Crafter's worlds.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l1 import sampled_step
from envport.verifiers.selfcheck import apply_mutant, load_mutants

from helpers import ROOT

pytest.importorskip("crafter")

CRAFTER = ROOT / "examples" / "crafter"
STEPS = 60


def _world(reference: Reference):
    return reference.env.unwrapped.game._world


def _generator(reference: Reference) -> np.random.RandomState:
    current = _world(reference).random
    return getattr(current, "inner", current)


def _assert_same(a: dict, b: dict, where: str) -> None:
    for name in a:
        assert np.array_equal(a[name], b[name]), f"{where}: {name} differs"


def _played(reference: Reference, seed: int):
    """(state, action) along an episode of random play from reset(seed), its clock moved
    to dusk halfway, so the night's render draws come into the steps too."""
    rng = np.random.default_rng(seed)
    reference.reset(seed)
    for t in range(STEPS):
        if t == STEPS // 2:
            state = reference.read_state()
            state["step"] = np.int64(205)
            reference.write_state(state)
        state, action = reference.read_state(), int(rng.integers(17))
        yield state, action
        out = reference.step(action)
        if out.terminated or out.truncated:
            return


def test_a_written_state_steps_as_the_state_it_was_read_from() -> None:
    spec = load_spec(CRAFTER)
    played, copy = Reference(spec), Reference(spec)
    copy.reset(99)
    balanced = 0
    for state, action in _played(played, 3):
        copy.write_state(state)
        _assert_same(state, copy.read_state(), "read after write")
        _generator(copy).set_state(_generator(played).get_state())
        want = played.step(action)
        got = copy.step(action)
        where = f"step {int(state['step']) + 1}, action {action}"
        assert np.array_equal(want.obs, got.obs), where
        assert (want.reward, want.terminated, want.truncated) == (
            got.reward,
            got.terminated,
            got.truncated,
        ), where
        _assert_same(played.read_state(), copy.read_state(), where)
        balanced += (int(state["step"]) + 1) % 10 == 0
    assert balanced >= 3


class _Replay:
    """A generator answering each of the game's draws from a step's noise, by the site the
    harness logs: what a port reads. The render's night noise is any number."""

    def __init__(self, world, noise: np.ndarray, rows) -> None:
        self.world, self.noise, self.rows, self.used = world, noise, rows, {}

    def _next(self) -> float:
        row = self.rows(self.world.draw_sites[-1])
        at = self.used.get(row, 0)
        self.used[row] = at + 1
        return float(self.noise[row + at])

    def uniform(self, *args):
        return np.full(args[2], 64.0) if args else self._next()

    def randint(self, low: int, high: int) -> int:
        return low + int(np.floor(self._next() * (high - low)))


def test_the_noise_of_a_step_replays_it() -> None:
    spec = load_spec(CRAFTER)
    played, replay = Reference(spec), Reference(spec)
    replay.reset(99)
    from envport.targets.randomness import load_harness

    rows = load_harness(spec).__globals__["_row"]
    drew = 0
    for state, action in _played(played, 5):
        want = played.step(action)
        replay.write_state(state)
        world = _world(replay)
        recording = world.random
        world.random = _Replay(world, np.asarray(want.noise), rows)
        try:
            got = replay.env.step(action)
        finally:
            world.random = recording
        where = f"step {int(state['step']) + 1}, action {action}"
        assert np.array_equal(want.obs, got[0]), where
        _assert_same(played.read_state(), replay.read_state(), where)
        drew += len(world.draw_sites) > 0
    assert drew >= STEPS // 2


def test_a_remembered_world_is_the_one_crafter_makes() -> None:
    spec = load_spec(CRAFTER)
    made, remembered = Reference(spec), Reference(spec)
    bridge = sys.modules[type(made.env.unwrapped).__module__]
    bridge._WORLDS.clear()
    made.reset(7)  # Crafter's generator
    remembered.reset(7)  # written back
    _assert_same(made.read_state(), remembered.read_state(), "reset")
    for t in range(40):
        want, got = made.step(t % 17), remembered.step(t % 17)
        assert np.array_equal(want.obs, got.obs), f"step {t + 1}"
        assert np.array_equal(want.noise, got.noise), f"step {t + 1}"
    _assert_same(made.read_state(), remembered.read_state(), "after 40 steps")


def test_the_sampled_steps_fresh_envs_make_one_world() -> None:
    # l1.sampled_step steps a fresh env per row (about 320): each an unseeded reset made a
    # new world before (Crafter's episode counter rose by one a row), now one seeded reset
    # the harness keeps, its draws continuing the check's stream (rows differ).
    spec = load_spec(CRAFTER)
    reference = Reference(spec)
    reference.reset(5)
    state, rows = reference.read_state(), 6
    outcomes = sampled_step._reference_outcomes(reference, [state] * rows, [0] * rows, 0)
    assert reference.env.unwrapped.game._episode == 1
    assert len(outcomes["obs"]) == rows
    # A noop from the same state: only the creatures' draws move things, and they differ.
    assert len({row.tobytes() for row in outcomes["obs"]}) > 1


def _numpy_port_env(folder: Path, name: str) -> types.ModuleType:
    """A NumPy port's env module, its folder imported as a package of its own name."""
    package = types.ModuleType(name)
    package.__path__ = [str(folder)]
    sys.modules[name] = package
    return importlib.import_module(f"{name}.env")


def _made(port: types.ModuleType, seed: int) -> tuple[dict, np.random.RandomState]:
    """The port's start from the numbers Crafter's reset(seed) draws: Crafter seeds the
    world's RandomState with hash((seed, episode)) and its generator draws the simplex seed,
    then its uniforms, from it."""
    draws = np.random.RandomState(hash((seed, 1)) % (2**31 - 1))
    game = port.start(draws.randint(0, 2**31 - 1), draws.uniform)
    return port._leaves(game), draws


def _same_world(want: dict, after: tuple, got: dict, draws: np.random.RandomState) -> bool:
    """Every bridged field equal, and the draws left where Crafter's generator left them."""
    state = draws.get_state()
    fields = set(got) == set(want) and all(np.array_equal(want[k], got[k]) for k in want)
    return fields and state[2] == after[2] and np.array_equal(state[1], after[1])


# The generator's mutants (examples/crafter/mutants.toml): l2.reset alone would see them.
WORLDGEN_MUTANTS = ("worldgen.py", "simplex.py")


@pytest.mark.slow
def test_the_numpy_ports_generator_makes_crafters_worlds(tmp_path: Path) -> None:
    # The port's generator, fed the numbers Crafter's reset draws, must make the same world
    # (every field the bridge reads) and take as many numbers, none more.
    spec = load_spec(CRAFTER)
    reference = Reference(spec)
    port = _numpy_port_env(CRAFTER / "ports" / "numpy", "crafter_numpy_port")
    worlds = {}
    for seed in (0, 1, 2, 3):
        reference.reset(seed)
        want, after = reference.read_state(), _generator(reference).get_state()
        got, draws = _made(port, seed)
        _assert_same(want, got, f"seed {seed}")
        assert _same_world(want, after, got, draws), f"seed {seed}: the draws taken"
        assert int(want["zombies.length"]) + int(want["cows.length"]) > 0
        worlds[seed] = want, after
    # Its own resets: a seed gives its worlds again, another seed other worlds.
    states = []
    for reset_seed in (7, 7, 8):
        env = port.VectorEnv(2)
        env.reset(seed=reset_seed)
        states.append(env.get_state())
    assert np.array_equal(states[0]["mat_map"], states[1]["mat_map"])
    assert not np.array_equal(states[0]["mat_map"][0], states[0]["mat_map"][1])
    assert not np.array_equal(states[0]["mat_map"], states[2]["mat_map"])
    # Each slip in the generator makes another world for one of the seeds at least.
    mutants = [
        m for m in load_mutants(CRAFTER) if m.target == "numpy" and m.file in WORLDGEN_MUTANTS
    ]
    assert len(mutants) >= 3
    for index, mutant in enumerate(mutants):
        folder = apply_mutant(mutant, CRAFTER / "ports" / "numpy", tmp_path / mutant.id)
        mutated = _numpy_port_env(folder, f"crafter_worldgen_mutant_{index}")
        caught = [
            s
            for s, (want, after) in worlds.items()
            if not _same_world(want, after, *_made(mutated, s))
        ]
        assert caught, f"{mutant.id}: every world as Crafter's"
