"""Start states built on the reference: landings on its constants, and endings at the limit.

A threshold rounded in its fifth digit (CartPole's 2.4 written 2.40001) changes the outcome
only when the state *after* the step falls between the two values. Drawing the start state
at the edge is not enough: it must be one step short of it. So `land` solves one float
component of a start state (by bisection on the reference itself) so that the same
component of the next state is a small relative step above or below a constant of the
reference's source (or exactly at it: the two neighbouring start values either side of the
crossing).
L1's landings (levels/l1/landings.py) build their rows this way. `ending_starts` finds
states one step from termination with the step counter one short of the limit, for L2.

Landing exactly on a threshold asks for a decision no float32 port (which the contract
allows) can make the same way: its state rounds to the nearest float32. `unresolved` tells
those cases apart: an output that the reference itself changes when its start state moves
by a few float32 ulps is not held against the port there (the other outputs still are).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.spec import PortSpec
from envport.structure import derived, violated
from envport.targets.reference import Reference, State, Transition, valid_helpers

# A relative step past the constant either way: 2e-6 is inside any rounding of the constant
# in its fifth digit or earlier, and 16 float32 ulps away from it (a float32 port resolves
# it). `land` also takes "above" and "below", the two start values either side of the
# crossing; the checks leave them out, as there the reference's own verdict flips at float32
# resolution and `unresolved` would excuse any port.
KINDS = ("+2e-6", "-2e-6")
# Tries to find the crossing: half of them halve the bracket, enough to reach neighbouring
# floats from any bound of a classic env.
BISECTIONS = 160
# A relative landing is done once the next value is this share of its offset from the
# target: 2e-6 +- 0.2e-6 keeps it over 15 float32 ulps from the constant, and stopping
# there (not at neighbouring floats) takes a third of the reference steps.
SETTLED = 0.1
# How far a port's float32 state may sit from the reference's: a few ulps, relative.
NUDGE_ULPS = 4
PORT_EPS = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class Landing:
    field: str
    index: tuple[int, ...]
    target: float
    kind: str

    def describe(self) -> str:
        where = f"{self.field}[{', '.join(map(str, self.index))}]" if self.index else self.field
        if self.kind in ("above", "below"):
            how = "just reaches" if self.kind == "above" else "stays just below"
        else:
            how = f"lands {self.kind[1:]} (relative) {'above' if self.kind[0] == '+' else 'below'}"
        return f"the next {where} {how} {self.target:.10g}"


def _targets(spec: PortSpec, constants: tuple[float, ...]) -> list[tuple[str, tuple, float]]:
    """Float components and the constants their next value may land on: those within a
    field's width of its bounds (a state can get there in one step)."""
    found = []
    for name, bound in spec.state.bounds.items():
        if bound.integer:
            continue
        low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
        for index in np.ndindex(low.shape):
            lo, hi = float(low[index]), float(high[index])
            width = hi - lo
            found += [(name, index, c) for c in constants if lo - width <= c <= hi + width]
    return found


def landing_choices(spec: PortSpec, constants: tuple[float, ...]) -> list[Landing]:
    return [Landing(*target, kind) for target in _targets(spec, constants) for kind in KINDS]


def _bound(spec: PortSpec, landing: Landing) -> tuple[float, float]:
    bound = spec.state.bounds[landing.field]
    low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
    return float(low[landing.index]), float(high[landing.index])


@dataclass
class Landed:
    state: State  # the start solved for
    # A start whose next value lies about as far on the other side of the constant (for a
    # landing a relative step away): where the two differ, the constant decides something.
    mirror: State | None


def land(
    spec: PortSpec, reference: Reference, state: State, action: Any, landing: Landing, seed: int
) -> Landed | None:
    """`state` with the landing's component solved so that the next state's component is at
    the target as the landing's kind says; None when no start value in the bounds gets there
    (the next value does not cross the target as the start component sweeps its bounds)."""
    lo, hi = bounds = _bound(spec, landing)
    target = landing.target
    # "above" and "below" need the crossing to the last float; a relative landing needs
    # the next value near its offset.
    settled = 0.0
    if landing.kind[0] in "+-":
        # Relative to the target, or to the field's width for a target at zero.
        scale = max(abs(target), 1e-3 * (hi - lo))
        offset = float(landing.kind) * scale
        target += offset
        settled = SETTLED * abs(offset)
    reference.reset(seed)
    start = {k: np.array(v) for k, v in {**reference.read_state(), **state}.items()}
    helpers = valid_helpers(spec)
    tried: list[tuple[float, float]] = []  # (start value, next value), for the mirror

    def distance(value: float) -> float | None:
        """How far past the target the next value lands from this start (None: nowhere)."""
        start[landing.field][landing.index] = value
        # No reset between tries: only the next state is read, which bookkeeping the
        # state fields leave out (CartPole's steps past termination) does not change.
        # Each try is a made-up state: its derived fields follow from the rest (a derived
        # landing field is overwritten, so its sweep lands nowhere).
        reference.write_state(derived(spec.state, start, helpers))
        reference.reseed_draws(seed)
        try:
            reference.step(action)
        except Exception:  # the reference refuses this start: no landing here
            return None
        after = float(np.asarray(reference.read_state()[landing.field])[landing.index])
        if np.isnan(after):
            return None
        tried.append((value, after))
        return after - target

    d_lo, d_hi = distance(lo), distance(hi)
    if d_lo is None or d_hi is None or (d_lo >= 0) == (d_hi >= 0):
        return None
    at_lo = d_lo >= 0
    kept = ""  # the end the last step kept (Illinois: twice running, its weight halves)
    for step in range(BISECTIONS):
        middle = _inside(lo, hi, d_lo, d_hi, secant=step % 2 == 0)
        if middle in (lo, hi):
            break
        d_middle = distance(middle)
        if d_middle is None:
            return None
        if settled and abs(d_middle) <= settled:
            lo = hi = middle
            break
        if (d_middle >= 0) == at_lo:
            lo, d_lo = middle, d_middle
            d_hi, kept = (d_hi / 2 if kept == "hi" else d_hi), "hi"
        else:
            hi, d_hi = middle, d_middle
            d_lo, kept = (d_lo / 2 if kept == "lo" else d_lo), "lo"
    # `lo` and `hi` now straddle the crossing; "below" is the side short of the target.
    short_side = lo if not at_lo else hi
    long_side = hi if not at_lo else lo
    solution = short_side if landing.kind == "below" else long_side

    def placed(value: float) -> State:
        whole = {k: np.array(v) for k, v in start.items()}
        whole[landing.field][landing.index] = value
        whole = derived(spec.state, whole, helpers)
        return {k: np.array(whole[k]) for k in state}

    mirrored = _mirror(tried, solution, target, target - landing.target, bounds)
    return Landed(placed(solution), None if mirrored is None else placed(mirrored))


def _inside(lo: float, hi: float, d_lo: float, d_hi: float, secant: bool) -> float:
    """The next start value to try: where the line through the two ends crosses the target
    (a smooth step gets there in a few tries), every other try the bracket's middle (which
    bounds the tries for any step: the bracket at least halves every two)."""
    middle = lo + (hi - lo) / 2
    if not secant or d_lo == d_hi:
        return middle
    guess = lo - d_lo * (hi - lo) / (d_hi - d_lo)
    return guess if lo < guess < hi and np.isfinite(guess) else middle


def _mirror(
    tried: list[tuple[float, float]],
    solution: float,
    target: float,
    offset: float,
    bounds: tuple[float, float],
) -> float | None:
    """The start value whose next value is about `target - 2 * offset`: a secant through
    the tried point whose next value is nearest twice the offset away."""
    if offset == 0:
        return None
    usable = [(v, a) for v, a in tried if v != solution and a != target]
    if not usable:
        return None
    value, after = min(usable, key=lambda p: abs(np.log(abs(p[1] - target) / abs(2 * offset))))
    slope = (after - target) / (value - solution)
    if slope == 0 or not np.isfinite(slope):
        return None
    return float(np.clip(solution - 2 * offset / slope, *bounds))


def _nudged(state: State, port_eps: float) -> list[State]:
    """The state with each nonzero float component moved up and down by a few port ulps."""
    moved = []
    for name, value in state.items():
        array = np.asarray(value)
        if array.dtype.kind != "f":
            continue
        for index in np.ndindex(array.shape):
            if array[index] == 0:
                continue
            for sign in (1.0, -1.0):
                copy = {k: np.array(v) for k, v in state.items()}
                copy[name][index] = array[index] * (1 + sign * NUDGE_ULPS * port_eps)
                moved.append(copy)
    return moved


def unresolved(
    reference: Reference,
    before: State,
    action: Any,
    reset_seed: int,
    draw_seed: int,
    changed: Callable[[State, Transition, State], set[str]],
) -> set[str]:
    """Outputs the reference itself changes when `before` moves by a few float32 ulps
    (`changed` names them for one moved start, its transition and the state it reached):
    the contract allows a float32 port, and one cannot be held to them here."""
    found: set[str] = set()
    for state in _nudged(before, PORT_EPS):
        reference.reset(reset_seed)
        reference.write_state(state)
        reference.reseed_draws(draw_seed)
        try:
            transition = reference.step(action)
        except Exception:  # a moved start the reference refuses excuses nothing
            continue
        found |= changed(state, transition, reference.read_state())
    return found


def random_state(spec: PortSpec, rng: np.random.Generator) -> State:
    """A state from the bounds; each float component at one of its bounds a third of the
    time (bounds sit next to thresholds), else uniform."""
    state = {}
    for name, bound in spec.state.bounds.items():
        low, high = np.broadcast_arrays(np.asarray(bound.low, float), np.asarray(bound.high, float))
        if bound.integer:
            state[name] = rng.integers(low.astype(np.int64), high.astype(np.int64) + 1)
            continue
        value = rng.uniform(low, high)
        pick = rng.integers(0, 3, size=low.shape)
        state[name] = np.where(pick == 0, low, np.where(pick == 1, high, value))
    return state


def ending_starts(
    spec: PortSpec,
    reference: Reference,
    actions: list[Any],
    seed: int,
    wanted: int = 4,
    budget: int = 2000,
) -> list[tuple[State, Any]]:
    """States one step from termination with the step counter one short of the limit, and
    the action that ends them: that step must report terminated and truncated together.
    Searched on the reference (at most `budget` steps); none if the env never terminates."""
    counter, limit = spec.state.step_counter, reference.max_episode_steps
    if not counter or not limit or not spec.state.bounds or not actions:
        return []
    rng = np.random.default_rng(seed)
    reference.reset(seed)
    base = reference.read_state()
    found: list[tuple[State, Any]] = []
    helpers = valid_helpers(spec)
    for _ in range(budget // len(actions)):
        state = {**base, **random_state(spec, rng), counter: np.asarray(limit - 1)}
        state = derived(spec.state, state, helpers)
        if violated(spec.state, state, helpers) is not None:
            continue  # `state.valid` (and a port's declared domain) rule it out, as any draw
        for action in actions:
            # No reset between tries: termination is a function of the state fields.
            reference.write_state(state)
            try:
                out = reference.step(action)
            except Exception:  # a drawn state the reference cannot step from
                break
            if out.terminated and out.truncated:
                found.append(({k: state[k] for k in [*spec.state.bounds, counter]}, action))
                break
        if len(found) >= wanted:
            break
    reference.reset(seed)
    return found
