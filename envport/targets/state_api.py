"""The state API's own contract, probed inside the worker: loading a state must not keep the
caller's arrays, and reading one must hand out copies.

A user who snapshots a state (`s = env.get_state()`), loads one (`env.set_state(s)`) or
bridges one (`state_from_reference(ref)`) and then keeps using those arrays expects them to
be theirs. A port that keeps them (or hands out its own) passes every comparison of states
and steps, and corrupts the user's snapshot on the next step. So the probe does what such a
user does: change the arrays after loading, step, and compare with a clean run; keep a
snapshot, step, and see whether it moved. Runs in the worker (the arrays it changes are the
ones the port saw), and answers only the problems it found, as sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

States = dict[str, np.ndarray]


def copied(tree: Any) -> Any:
    """A deep copy of a state's arrays (dicts, tuples and lists of arrays)."""
    if isinstance(tree, Mapping):
        return {k: copied(v) for k, v in tree.items()}
    if isinstance(tree, tuple | list):
        return [copied(v) for v in tree]
    return np.array(tree, copy=True)


def scribble(tree: Any) -> None:
    """Change every writable array of `tree` in place, as a caller reusing its buffers would."""
    if isinstance(tree, Mapping):
        tree = list(tree.values())
    if isinstance(tree, tuple | list):
        for value in tree:
            scribble(value)
        return
    if isinstance(tree, np.ndarray) and tree.flags.writeable and tree.size:
        if tree.dtype.kind == "b":
            np.logical_not(tree, out=tree)
        elif tree.dtype.kind in "iu":
            tree += 1
        elif tree.dtype.kind in "fc":
            tree += 0.75


def changed(before: Any, after: Any) -> list[str]:
    """The fields (dotted paths; "" for the value itself) where `after` differs from `before`."""
    if isinstance(before, Mapping):
        found = []
        for key in before:
            subs = changed(before[key], after[key]) if key in after else [""]
            found += [f"{key}.{sub}" if sub else str(key) for sub in subs]
        return found
    if isinstance(before, tuple | list):
        found = []
        for index, (a, b) in enumerate(zip(before, after, strict=False)):
            found += [f"{index}.{sub}" if sub else str(index) for sub in changed(a, b)]
        return found
    a, b = np.asarray(before), np.asarray(after)
    same = a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return [] if same else [""]


def _names(paths: list[str]) -> str:
    return ", ".join(f"`{p}`" for p in paths[:4] if p) or "the whole state"


def outputs_differ(clean: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    return [name for name in clean if changed(clean[name], other[name])]


def probe_bridge(
    bridge: Callable[[States], Any],
    states: States,
    name: str,
    leaves: Callable[[Any], Any] = lambda state: state,
) -> list[str]:
    """`bridge` (state_from_reference) on one env's arrays, which are then changed: the
    state it answered (read through `leaves`) must not change with them."""
    problems = []
    for row in range(len(next(iter(states.values())))):
        given = {k: np.array(v[row], copy=True) for k, v in states.items()}
        answer = bridge(given)
        kept = copied(leaves(answer))
        scribble(given)
        moved = changed(kept, leaves(answer))
        if moved:
            problems.append(
                f"`{name}` keeps the caller's arrays: changing the dict passed to it (env {row}) "
                f"changed the state it had answered (field {_names(moved)}); copy the inputs"
            )
            break
    return problems


def _step(env: Any, actions: np.ndarray) -> dict[str, Any]:
    names = ("obs", "reward", "terminated", "truncated")
    return dict(zip(names, tuple(env.step(actions))[:4], strict=True))


def probe_vector_env(make: Callable[[], Any], bridged: States, actions: np.ndarray) -> list[str]:
    """A VectorEnv's `set_state` and `get_state` against a user who keeps using the arrays:
    a clean run, then a run whose loaded arrays are changed after `set_state`, then a
    snapshot kept over a step."""
    clean_env = make()
    clean_env.set_state(copied(bridged))
    clean = copied(_step(clean_env, actions))
    problems = []
    given = copied(bridged)
    env = make()
    env.set_state(given)
    scribble(given)
    after = _step(env, actions)
    differ = outputs_differ(clean, after)
    if differ:
        problems.append(
            "`VectorEnv.set_state` keeps the caller's arrays: changing the dict after loading "
            f"it changed the next step's {', '.join(differ)}; copy what set_state is given"
        )
    given = copied(bridged)
    kept = copied(given)
    env = make()
    env.set_state(given)
    env.step(actions)
    moved = changed(kept, given)
    if moved:
        problems.append(
            "`VectorEnv.step` wrote into the arrays passed to `set_state` (field "
            f"{_names(moved)}): a snapshot the caller loaded changed under it; copy them"
        )
    env = make()
    env.set_state(copied(bridged))
    snapshot = env.get_state()
    kept = copied(snapshot)
    env.step(actions)
    moved = changed(kept, snapshot)
    if moved:
        problems.append(
            "`VectorEnv.get_state` returns the env's own arrays: a step after it changed the "
            f"snapshot (field {_names(moved)}); return copies"
        )
    return problems
