"""The proof that the inferred fields are the whole state: a state read from one env and
written into a fresh env (reset with another seed) gives identical transitions.

Both envs are built as the verifier builds them and read and written through its own
harness (envport.targets.reference.Reference), so what is proven here is what the levels
will do. Randomness is not state: the fresh env's generator is set to the source's before
the two step, so a stochastic step draws the same numbers in both (the levels handle draws
through `[randomness]`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.init.errors import InitError
from envport.init.policies import Policy
from envport.init.state import same, snapshot
from envport.init.watch import bookkeeping, generators, objects
from envport.targets.randomness import RecordingGenerator
from envport.targets.reference import Reference, State


@dataclass
class RoundTrip:
    starts: int
    transitions: int
    # Fields whose type differs between a reset env and a stepped one (Acrobot's state is
    # float32 after reset, float64 after step): the harness keeps the type it finds.
    retyped: dict[str, str] = field(default_factory=dict)


def _kind(value: Any) -> str:
    return str(value.dtype) if isinstance(value, np.ndarray) else type(value).__name__


def align_types(source: Reference, target: Reference, retyped: dict[str, str]) -> None:
    """Give the fresh env's field attributes the source's types before the harness
    writes the values: the write keeps the type it finds (a reset env's), and a float64
    step of float32 values is not the float32 step the source takes."""
    for name, path in source.spec.state.fields.items():
        *parents, attr = path.split(".")
        a, b = source.env, target.env
        for part in parents:
            a, b = getattr(a, part), getattr(b, part)
        mine, theirs = getattr(a, attr), getattr(b, attr)
        if type(mine) is not type(theirs) or _kind(mine) != _kind(theirs):
            retyped.setdefault(name, f"{_kind(theirs)} after reset, {_kind(mine)} later")
            setattr(b, attr, copy.deepcopy(mine))


def share_draws(source: Reference, target: Reference) -> None:
    """The fresh env draws what the source will draw (through a recording proxy too), from
    np_random and from any generator of the game's own (copied in place: the game may hold
    it under several names)."""
    theirs = dict(generators(target.env))
    for path, mine in generators(source.env):
        other = theirs.get(path)
        if isinstance(mine, np.random.RandomState) and isinstance(other, np.random.RandomState):
            other.set_state(mine.get_state())
        elif isinstance(mine, np.random.Generator) and isinstance(other, np.random.Generator):
            other.bit_generator.state = mine.bit_generator.state
    a, b = source.env.unwrapped, target.env.unwrapped
    generator = getattr(a, "_np_random", None)
    if isinstance(generator, RecordingGenerator):
        generator = generator.inner
    if not isinstance(generator, np.random.Generator):
        return
    copy_of = np.random.Generator(type(generator.bit_generator)())
    copy_of.bit_generator.state = generator.bit_generator.state
    proxy = getattr(b, "_np_random", None)
    if isinstance(proxy, RecordingGenerator):
        proxy.inner = copy_of
    else:
        b._np_random = copy_of


def _states_equal(a: State, b: State) -> str | None:
    for name in a:
        if not np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind == "f"):
            return name
    return None


def _culprit(source: Reference, target: Reference, fields: set[str]) -> str | None:
    """An attribute, not a field, whose value differs between the two envs: the base env's
    first (a wrapper's flags, such as the env checker's, differ in any fresh env)."""
    pairs = list(zip(objects(source.env), objects(target.env), strict=False))
    for (prefix, a), (_, b) in reversed(pairs):
        for name, value in vars(a).items():
            path = f"{prefix}{name}"
            if path in fields or "np_random" in name or bookkeeping(a, name):
                continue
            if not same(snapshot(value), snapshot(vars(b).get(name))):
                return path
    return None


def prove(
    source: Reference, target: Reference, policy: Policy, starts: int, steps: int, depth: int
) -> RoundTrip:
    """`starts` start states, each `0..depth` steps into an episode of `source`, then up to
    `steps` transitions compared exactly (obs, reward, terminated, truncated, next state)."""
    rng = np.random.default_rng(20261124)
    paths = set(source.spec.state.fields.values())
    transitions = 0
    retyped: dict[str, str] = {}
    for start in range(starts):
        source.reset(seed=start)
        for _ in range(int(rng.integers(0, depth + 1))):
            out = source.step(policy(rng))
            if out.terminated or out.truncated:
                source.reset(seed=None)
        target.reset(seed=10_000 + start)
        try:
            align_types(source, target, retyped)
            target.write_state(source.read_state())
        except Exception as error:  # the reference's own code refused the value
            raise InitError(
                f"writing the inferred state failed ({type(error).__name__}: {error}): write a "
                "bridge (`[state] read`/`write` = `package.module:function`)"
            ) from None
        # What the write left different: the suspect if the transitions then differ.
        culprit = _culprit(source, target, paths)
        share_draws(source, target)
        for step in range(steps):
            action = policy(rng)
            a = source.step(action)
            try:
                b = target.step(action)
            except Exception as error:
                raise _failure(
                    culprit, f"stepping a written state raised {type(error).__name__}: {error}"
                ) from None
            transitions += 1
            what = _differs(a, b) or _states_equal(source.read_state(), target.read_state())
            if what is not None:
                culprit = culprit or _culprit(source, target, paths)
                raise _failure(culprit, f"`{what}` differed {step + 1} steps after a written state")
            if a.terminated or a.truncated:
                break
    return RoundTrip(starts, transitions, retyped)


def _differs(a: Any, b: Any) -> str | None:
    if not same(a.obs, b.obs):
        return "obs"
    for name in ("reward", "terminated", "truncated"):
        if not same(getattr(a, name), getattr(b, name)):
            return name
    return None


def _failure(culprit: str | None, what: str) -> InitError:
    if culprit is None:
        return InitError(
            f"round trip failed: {what}, and no attribute explains it: the state is not plain "
            "attributes; write a bridge (`[state] read`/`write` = `package.module:function`)"
        )
    return InitError(
        f"round trip failed: {what}; attribute `{culprit}` differs and is not a state field: "
        "add it to `[state] fields` if it is numeric, else write a bridge "
        "(`[state] read`/`write` = `package.module:function`) that carries it"
    )
