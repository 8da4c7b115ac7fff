"""Explicit randomness: record the reference's draws and turn them into the port's noise.

A stochastic transition is split (as Pgx does) into drawing noise and a deterministic step
given the noise (docs/design.md, contract 3). NumPy's PCG64 can never match JAX's threefry, so the
harness wraps the generator the reference draws from in a recording proxy (its `np_random`,
or the object `[randomness] generator` names: a legacy `np.random.RandomState` such as
MinAtar's `game.env.random`, or another Generator), keeps every draw made during one step,
and maps them with the spec's harness function (`[randomness] harness`) to the noise the
port's `step_given_noise` takes. L1 to L3 then compare the port's deterministic step fed
the reference's own noise; the port's sampler is checked apart (envport.verifiers.levels.l1.noise).

A harness file belongs to the spec (harness code, like probes) and defines

    def noise_from_draws(draws: list[Draw], before: dict, action, env) -> np.ndarray

`draws` are the step's draws in order, `before` the reference state before the step, `env`
the reference env (`env.unwrapped` reaches the base env). It imports only numpy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.errors import SpecError
from envport.runs import harness
from envport.spec import PortSpec

HARNESS_FUNCTION = "noise_from_draws"


# What the proxy may stand in for: NumPy's two generator APIs.
GENERATORS = (np.random.Generator, np.random.RandomState)
# How deep to look for other names of the named generator (env.env.env.game.random is 4).
ALIAS_DEPTH = 5


@dataclass
class Draw:
    """One call of a generator's method during a step (`randint`, `rand`, `integers`, ...),
    and what it returned."""

    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    value: np.ndarray


@dataclass
class RecordingGenerator:
    """Stands in for the reference's `np.random.Generator` or legacy `RandomState`: every
    call passes through to the real generator and is recorded with its result, so the
    reference behaves exactly as before and the harness sees what it drew."""

    inner: np.random.Generator | np.random.RandomState
    draws: list[Draw] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "draws"):  # not yet set (copying): no recursion into self.inner
            raise AttributeError(name)
        value = getattr(self.inner, name)
        if name.startswith("_") or not callable(value):
            return value

        def recorded(*args: Any, **kwargs: Any) -> Any:
            result = value(*args, **kwargs)
            self.draws.append(Draw(name, args, kwargs, np.array(result)))
            return result

        return recorded


def load_harness(spec: PortSpec) -> Callable[..., Any]:
    """The spec's `noise_from_draws`, imported from its harness file."""
    assert spec.randomness is not None
    path = spec.harness_file(spec.randomness.harness)
    if not path.is_file():
        raise SpecError(f"key `randomness.harness`: harness file {path} does not exist")
    harness.check(path)
    name = f"envport_noise_harness_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise SpecError(f"key `randomness.harness`: {path} cannot be loaded")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    function = getattr(module, HARNESS_FUNCTION, None)
    if not callable(function):
        raise SpecError(f"key `randomness.harness`: {path} defines no `{HARNESS_FUNCTION}`")
    return function


@dataclass
class Held:
    """A stream of draws set aside (NoiseRecorder.hold): the generator and its position."""

    stream: np.random.Generator | np.random.RandomState
    position: Any


def _position(stream: np.random.Generator | np.random.RandomState) -> Any:
    if isinstance(stream, np.random.RandomState):
        return stream.get_state()
    return stream.bit_generator.state  # a new dict each read: a copy


class NoiseRecorder:
    """Installs the recording proxy in a reference env and maps each step's draws to noise."""

    def __init__(self, spec: PortSpec) -> None:
        self.spec = spec
        self._harness = load_harness(spec)
        self._proxy: RecordingGenerator | None = None

    def install(self, env: Any) -> None:
        """Wrap the generator the reference draws from; `reset(seed)` makes a new one (Gymnasium's
        `np_random`, MinAtar's `seed` replacing `self.random`), so call after each."""
        assert self.spec.randomness is not None
        path = self.spec.randomness.generator
        if path is None:
            base = env.unwrapped
            current = base.np_random  # creates the generator if the env has none yet
            if isinstance(current, RecordingGenerator):
                self._proxy = current
                return
            self._proxy = RecordingGenerator(current)
            # The attribute behind the `np_random` property: the setter would forget the seed.
            base._np_random = self._proxy
            return
        holder, attr = _named_generator(env, path)
        current = getattr(holder, attr)
        if isinstance(current, RecordingGenerator):
            self._proxy = current
            return
        self._proxy = RecordingGenerator(current)
        # The same object under other names draws from the same stream (MinAtar's sticky
        # actions read `game.random`, its game `game.env.random`, one RandomState after
        # `seed`): wrap those too, or a fresh stream would split it in two.
        for alias_holder, alias in [(holder, attr), *_aliases(env, current)]:
            setattr(alias_holder, alias, self._proxy)

    def reseed(self, seed: int) -> None:
        """Draw from a fresh stream: L1 examples all start from `reset(seed)`, and without this
        every example would replay the same first draw. The stream keeps its API: a legacy
        RandomState's caller calls `randint` and `rand`, which a Generator lacks."""
        if self._proxy is None:
            return
        if isinstance(self._proxy.inner, np.random.RandomState):
            # Through MT19937's seed sequence: the 64-bit example seeds exceed RandomState's.
            self._proxy.inner = np.random.RandomState(np.random.MT19937(seed))
        else:
            self._proxy.inner = np.random.default_rng(seed)

    def hold(self) -> Held | None:
        """The stream the draws come from now and where it stands, for `resume` after a
        seeded reset (which makes a new generator, or reseeds the one it has in place)."""
        if self._proxy is None:
            return None
        inner = self._proxy.inner
        return Held(inner, _position(inner))

    def resume(self, held: Held | None) -> None:
        """Draw on from `held`, where it stood: what a reset drew or reseeded is undone."""
        if self._proxy is None or held is None:
            return
        if isinstance(held.stream, np.random.RandomState):
            held.stream.set_state(held.position)
        else:
            held.stream.bit_generator.state = held.position
        self._proxy.inner = held.stream

    def begin(self) -> None:
        if self._proxy is not None:
            self._proxy.draws.clear()

    def noise(self, before: dict[str, np.ndarray], action: Any, env: Any) -> np.ndarray:
        draws = list(self._proxy.draws) if self._proxy is not None else []
        try:
            return np.asarray(self._harness(draws, before, action, env))
        except Exception as error:  # the harness is the spec's code: name it, one line
            methods = ", ".join(d.method for d in draws) or "none"
            raise SpecError(
                f"key `randomness.harness`: {HARNESS_FUNCTION} failed on a step with draws "
                f"[{methods}]: {type(error).__name__}: {error}"
            ) from None


def _named_generator(env: Any, path: str) -> tuple[Any, str]:
    """The object holding the generator `[randomness] generator` names, and its attribute."""
    *parents, last = path.split(".")
    holder = env
    try:
        for part in parents:
            holder = getattr(holder, part)
        current = getattr(holder, last)
    except AttributeError:
        raise SpecError(
            f"key `randomness.generator`: the reference has no attribute `{path}`"
        ) from None
    if not isinstance(current, (*GENERATORS, RecordingGenerator)):
        raise SpecError(
            f"key `randomness.generator`: `{path}` is a {type(current).__name__}, not a "
            "np.random.RandomState or np.random.Generator"
        )
    return holder, last


def _aliases(env: Any, generator: Any) -> list[tuple[Any, str]]:
    """(holder, attribute) for every attribute reachable from the env (its wrappers, their
    attributes and the objects those hold) that is this very generator object."""
    found: list[tuple[Any, str]] = []
    seen: set[int] = set()

    def walk(obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > ALIAS_DEPTH or isinstance(obj, (type, *GENERATORS)):
            return
        seen.add(id(obj))
        attributes = getattr(obj, "__dict__", None)
        if not isinstance(attributes, dict):
            return
        for key, value in list(attributes.items()):
            if value is generator:
                found.append((obj, key))
            elif not isinstance(value, np.ndarray | str | bytes | int | float | bool | None):
                walk(value, depth + 1)

    walk(env, 0)
    return found


def example_seed(state: dict[str, np.ndarray], action: Any) -> int:
    """A seed that is a pure function of an L1 example, so a replay draws the same noise."""
    digest = hashlib.sha256()
    for name in sorted(state):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(state[name]).tobytes())
    digest.update(np.ascontiguousarray(np.asarray(action)).tobytes())
    return int.from_bytes(digest.digest()[:8], "little")


def noise_args(noise: np.ndarray | None) -> dict[str, np.ndarray]:
    """An example's optional `noise` input: absent for deterministic envs, so their
    examples read exactly as before."""
    return {} if noise is None else {"noise": noise}


def play_noise(reference: Any, seeds: list[int], actions: np.ndarray) -> np.ndarray | None:
    """Noise for B envs over T steps, recorded from the reference stepping each env from
    `reset(seed)` with its row of actions; after an episode ends its last noise repeats
    (nothing past an end is compared). None for a deterministic reference."""
    if reference.recorder is None:
        return None
    rows = []
    for seed, row in zip(seeds, actions, strict=True):
        reference.reset(seed)
        noise: list[np.ndarray] = []
        for action in row:
            out = reference.step(action.item() if np.ndim(action) == 0 else action)
            noise.append(out.noise)
            if out.terminated or out.truncated:
                break
        noise += [noise[-1]] * (len(row) - len(noise))
        rows.append(np.stack(noise))
    return np.stack(rows)
