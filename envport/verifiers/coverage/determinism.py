"""Is the reference deterministic from an injected state? Checked before anything is compared.

Every check but the sampled ones writes a state into the reference, steps it and holds the
port to what comes out. That is sound only if the state the spec names is all the step
depends on. A reference that draws from a generator the state does not carry (MinAtar's
sticky actions and spawns come from the game's own `RandomState`, not `np_random`; a step
calling Python's `random`) answers differently each time from the same state, and a port
would be blamed for the reference's dice ("it needs the other envs of its batch").

So: from a few reset states and the states a few steps on, the same injected state and
action are stepped twice; if anything differs, the run stops with one line naming what
differed and the generators that moved during the step (found on the env, its wrappers and
the objects they hold, and Python's and NumPy's global ones), and how to declare them.

A spec with `[randomness]` declares its draws: both steps then draw the same stream from the
declared generator (`np_random` or the one `randomness.generator` names), as every level
feeds the port those draws, so the reference passes exactly when nothing else moves; one
that also draws from an undeclared generator (the spec named the wrong one) is stopped.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np

from envport.errors import SpecError
from envport.spec import PortSpec
from envport.targets.reference import Reference

STARTS = 6
DEPTH = 4
# How deep into the env's attributes to look for generators (env.env.game.random is 3).
SEARCH_DEPTH = 4
SEED_OFFSET = 4_460_000


def check_reference_determinism(spec: PortSpec, reference: Reference, seed: int) -> None:
    """Raise SpecError when one injected state and action step to two different outcomes."""
    declared = spec.randomness is not None
    rng = np.random.default_rng(seed * 100_003 + SEED_OFFSET)
    try:
        for start in range(STARTS):
            reference.reset(seed * 100_003 + SEED_OFFSET + start)
            for _ in range(DEPTH):
                state = reference.read_state()
                action = _action(reference.action_space, rng)
                generators = dict(_generators(reference.env))
                before = {name: _position(g) for name, g in generators.items()}
                # Each measured step from the injected state, after one step already taken
                # from it: writing keeps the dtype the env's field has at that moment
                # (MountainCar's is float64 after a reset and float32 after a step), so both
                # measured steps must find the env alike. The two steps before take actions
                # of their own: a step that reads what the step before left and the state does
                # not carry (MinAtar's sticky actions repeat the wrapper's `last_action`)
                # answers differently after each.
                warmups = (
                    _action(reference.action_space, rng),
                    _action(reference.action_space, rng),
                )
                draws = int(rng.integers(2**63))
                first, second = (
                    _measured(reference, state, warmup, action, draws) for warmup in warmups
                )
                differing = _difference(first, second)
                if differing is not None:
                    # The declared generator's stream was just replaced: what moved is the rest.
                    moved = [n for n, g in generators.items() if _position(g) != before[n]]
                    raise SpecError(_message(differing, action, moved, declared))
                if first["terminated"] or first["truncated"]:
                    break
    finally:
        reference.reset(seed)


def _measured(
    reference: Reference, state: Any, warmup: Any, action: Any, draws: int
) -> dict[str, Any]:
    reference.write_state(state)
    reference.step(warmup)
    reference.write_state(state)
    reference.reseed_draws(draws)  # the declared generator's same stream (no-op without)
    return _outcome(reference, action)


def _outcome(reference: Reference, action: Any) -> dict[str, Any]:
    out = reference.step(action)
    return {
        "obs": out.obs,
        "reward": out.reward,
        "terminated": out.terminated,
        "truncated": out.truncated,
        **{f"state.{k}": v for k, v in reference.read_state().items()},
    }


def _difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    for key, left in a.items():
        right = b.get(key)
        left_array, right_array = np.asarray(left), np.asarray(right)
        if left_array.shape != right_array.shape:
            return f"{key}: {_show(left)} then {_show(right)}"
        same = left_array == right_array
        if left_array.dtype.kind in "fc":
            same |= np.isnan(left_array) & np.isnan(right_array)
        if not np.all(same):
            if left_array.ndim == 0:
                return f"{key}: {_show(left)} then {_show(right)}"
            # A large array (MinAtar's 10x10x4 planes) is named by its first differing
            # component: its text would be cut before the difference, over several lines.
            index = tuple(int(i) for i in np.argwhere(~same)[0])
            at = f"{key}[{', '.join(map(str, index))}]"
            return f"{at}: {_show(left_array[index])} then {_show(right_array[index])}"
    return None


def _show(value: Any) -> str:
    array = np.asarray(value)
    if array.ndim:
        text = np.array2string(array, threshold=8, precision=6)
    else:  # a numpy scalar or 0-d array as its Python value: `True`, not `np.True_`
        text = repr(value.item() if isinstance(value, np.generic | np.ndarray) else value)
    text = " ".join(text.split())  # one line, whatever the array's rank
    return text if len(text) < 80 else text[:77] + "..."


def _action(space: Any, rng: np.random.Generator) -> Any:
    if hasattr(space, "n"):
        return int(space.start) + int(rng.integers(int(space.n)))
    if hasattr(space, "low") and hasattr(space, "high"):
        low, high = (
            np.asarray(space.low, dtype=np.float64),
            np.asarray(space.high, dtype=np.float64),
        )
        drawn = rng.uniform(np.clip(low, -1e6, 1e6), np.clip(high, -1e6, 1e6))
        return drawn.astype(space.dtype)
    return space.sample()


def _generators(env: Any) -> Iterator[tuple[str, Any]]:
    """(name, generator) for every random generator reachable from the env: its wrappers,
    their attributes and the objects those hold, then Python's and NumPy's global ones."""
    seen: set[int] = set()

    def walk(obj: Any, name: str, depth: int) -> Iterator[tuple[str, Any]]:
        if id(obj) in seen or depth > SEARCH_DEPTH:
            return
        seen.add(id(obj))
        if isinstance(obj, np.random.RandomState | np.random.Generator | random.Random):
            yield name, obj
            return
        attributes = getattr(obj, "__dict__", None)
        if not isinstance(attributes, dict) or isinstance(obj, type):
            return
        for key, value in list(attributes.items()):
            if isinstance(value, np.ndarray | str | bytes | int | float | bool) or value is None:
                continue
            yield from walk(value, f"{name}.{key}", depth + 1)

    yield from walk(env, "env", 0)
    yield "Python's global `random`", random.random.__self__  # type: ignore[attr-defined]
    yield "NumPy's global `np.random`", np.random.mtrand._rand


def _position(generator: Any) -> Any:
    if isinstance(generator, np.random.RandomState):
        _, keys, pos, *_ = generator.get_state(legacy=True)
        return (np.asarray(keys).tobytes(), pos)
    if isinstance(generator, np.random.Generator):
        return repr(generator.bit_generator.state)
    return generator.getstate()


def _message(differing: str, action: Any, moved: list[str], declared: bool = False) -> str:
    carried = (
        "the spec's `[randomness]` does not name" if declared else "the spec's state does not carry"
    )
    if moved:
        where = (
            f"it draws from {', '.join(f'`{m}`' if m.startswith('env') else m for m in moved)}, "
            f"which {carried}"
        )
    else:
        where = (
            "no generator on the env moved, so it reads another source: something the step "
            "before left that the state does not carry (MinAtar's sticky actions repeat the "
            "wrapper's `last_action`), the clock, a file"
        )
    if declared:
        fix = (
            "Name the generator it draws from as `randomness.generator` (an attribute path "
            "from the env, docs/spec.md)"
            if moved
            else "Carry what it reads as a state field or through a `state.read`/`state.write` "
            "bridge"
        )
        return (
            "the reference is not deterministic from an injected state and its declared draws: "
            f"the same state, draws and action {action!r} stepped twice gave {differing}; "
            f"{where}. {fix}, so that the port is not blamed for the reference's dice"
        )
    return (
        "the reference is not deterministic from an injected state: the same state and action "
        f"{action!r} stepped twice gave {differing}; {where}. Declare the draws as explicit "
        "noise (`[randomness]`, docs/spec.md), or carry the generator's state as a state field "
        "or through a `state.read`/`state.write` bridge, so that the port is not blamed for "
        "the reference's dice"
    )
