"""The spec's text: every inferred value with a comment saying how it was found and how
sure it is (proven by the round trip, measured on reachable states, or a default)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from envport.init.infer import FLOAT_ATOL, FREE_TOL, Inference
from envport.init.stochastic import HARNESS_FILE
from envport.io.toml_text import comment, key, value

MARGIN = 0.1  # float bounds: widened by this share of the reached range on each side


def _outward(x: float, up: bool) -> float:
    """Rounded outward to 4 significant digits, for a readable bound that still holds."""
    if x == 0 or not np.isfinite(x):
        return float(x)
    scale = 10 ** (np.floor(np.log10(abs(x))) - 3)
    rounded = (np.ceil(x / scale) if up else np.floor(x / scale)) * scale
    return float(f"{rounded:.4g}")


def _scalar(v: np.ndarray, integer: bool) -> Any:
    items = [int(x) if integer else float(x) for x in np.ravel(v)]
    return items[0] if np.ndim(v) == 0 else items


def bounds(inf: Inference) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Per field {low, high[, integer]} from the reached states, and how each was set."""
    found: dict[str, dict[str, Any]] = {}
    how: dict[str, str] = {}
    space = inf.env.observation_space
    for name, values in inf.visits.live.items():
        reached = np.stack(values)
        low, high = reached.min(axis=0), reached.max(axis=0)
        if name == inf.counter and inf.limit is not None:
            found[name] = {"low": 0, "high": inf.limit, "integer": True}
            how[name] = "the step counter: 0 to the registry's max_episode_steps"
        elif inf.integer[name]:
            if inf.visits.obs_is.get(name) and isinstance(space, spaces.Discrete):
                first = int(space.start)
                low = np.minimum(low, first)
                high = np.maximum(high, first + int(space.n) - 1)
                how[name] = "the observation itself: every value the observation space declares"
            else:
                how[name] = "the reached range exactly (an integer outside may index past a table)"
            found[name] = {"low": _scalar(low, True), "high": _scalar(high, True), "integer": True}
        else:
            width = np.where(high > low, high - low, np.maximum(np.abs(low), 1.0))
            wide_low = np.vectorize(lambda x: _outward(x, False))(low - MARGIN * width)
            wide_high = np.vectorize(lambda x: _outward(x, True))(high + MARGIN * width)
            how[name] = (
                f"reached {value(_scalar(low, False))} .. {value(_scalar(high, False))}, "
                f"widened by {MARGIN:.0%} of the range per side"
            )
            if inf.visits.obs_is.get(name) and isinstance(space, spaces.Box):
                # The field is the observation: what the observation space declares is
                # reachable in principle (a goal random play never reaches), so it is in.
                declared_low = np.where(np.isfinite(space.low), space.low, np.inf)
                declared_high = np.where(np.isfinite(space.high), space.high, -np.inf)
                wide_low = np.minimum(wide_low, declared_low)
                wide_high = np.maximum(wide_high, declared_high)
                wide_low = np.vectorize(lambda x: _outward(x, False))(wide_low)
                wide_high = np.vectorize(lambda x: _outward(x, True))(wide_high)
                how[name] += ", joined with the observation space's finite bounds"
            found[name] = {"low": _scalar(wide_low, False), "high": _scalar(wide_high, False)}
    return found, how


def _tolerances(inf: Inference) -> list[str]:
    free = FREE_TOL
    floaty = {"atol": FLOAT_ATOL, "rtol": FLOAT_ATOL, "free_atol": free, "free_rtol": free}
    exact = {"atol": 0.0, "rtol": 0.0}
    lines = []
    if inf.obs_float:
        lines.append(f"obs = {value(floaty)}")
    integral = all(float(r).is_integer() for r in inf.visits.rewards)
    lines.append(f"reward = {value(exact if integral else floaty)}")
    for name, integer in inf.integer.items():
        lines.append(f"{key(name)} = {value(exact if integer else floaty)}")
    return lines


def render(inf: Inference, targets: list[str]) -> str:
    e, d, v = inf.entry, inf.discovery, inf.visits
    cls = type(inf.env.unwrapped).__name__
    out: list[str] = []
    out.append(
        comment(
            f"{e.entry}: a spec inferred by `envport init` in {inf.seconds:.1f} s. Each part "
            "says how it was found and how sure it is; edit what is wrong and run "
            "`envport verify` again."
        )
    )
    out.append(f"name = {value(e.name)}\n")
    out.append(f"description = {value(f'{cls} from {e.entry}, inferred by envport init.')}\n\n")
    out.append(
        comment(
            f"The module defining {cls}, then the modules of its own package that its `step` "
            "uses (the source's imports, followed; code reached only from `render` is left "
            "out). Sure for what `step` names; a module reached by other means is missed."
        )
    )
    out.append("[reference]\n")
    out.append(f"entry = {value(e.entry)}\n")
    if e.kwargs:
        out.append(f"kwargs = {value(e.kwargs)}\n")
    out.append(f"sources = {value(inf.sources)}\n\n")
    trip = inf.round_trip
    out.append(
        comment(
            "State: the attributes of the env, its wrappers and the game objects of its own "
            "package they hold (followed 3 deep) that `step` reads (before "
            f"writing them) and that differ between the {d.states} states of {d.episodes} "
            "episodes it stepped from; the field is the attribute's name (`state` is called "
            "`physics`). Proven complete by a round trip: state read from one env and written "
            f"into a fresh one (reset with another seed) gave identical transitions (obs, "
            f"reward, terminated, truncated, next state) from {trip.starts} start states, "
            f"{trip.transitions} transitions."
        )
    )
    for name, change in trip.retyped.items():
        out.append(
            comment(
                f"Note: `{name}` is {change}; the levels write states into a reset env, which "
                "keeps its own type, so the reference may step a written state in the other "
                "precision (the round trip gave the fresh env the source's types)."
            )
        )
    if d.constants:
        shown = ", ".join(f"`{p}`" for p in d.constants[:10])
        more = f" and {len(d.constants) - 10} more" if len(d.constants) > 10 else ""
        out.append(
            comment(
                f"Not state: constants `step` reads but never changes ({shown}{more}): they "
                "are the reference's, set by its kwargs, and the port is written for them."
            )
        )
    unread = [p for p in d.unread if "np_random" not in p]
    if unread:
        out.append(
            comment(
                f"Not state: {', '.join(f'`{p}`' for p in unread)} change but `step` never "
                "reads them (rendering or bookkeeping)."
            )
        )
    out.append("[state]\n")
    out.append(f"fields = {value(inf.fields)}\n")
    if inf.counter:
        out.append(f"step_counter = {value(inf.counter)}\n")
    found, how = bounds(inf)
    kinds = ", ".join(f"{n} {k}" for k, n in v.episodes.items())
    out.append(
        "\n"
        + comment(
            f"Bounds from reachable states, not guesses: per component, the min and max over "
            f"the {v.states} states that {sum(v.episodes.values())} episodes ({kinds}; sticky "
            "repeats the last action with probability 0.8, biased favours one action 90% of "
            "the time or drives a box action bang-bang) stepped from."
        )
    )
    out.append("[state.bounds]\n")
    for name, b in found.items():
        out.append(f"# {name}: {how[name]}\n{key(name)} = {value(b)}\n")
    out.append("\n")
    out.append(_descriptions(inf))
    if inf.reset is not None:
        out.append(comment(inf.reset.words()))
        out.append("\n")
    if inf.randomness is not None:
        r = inf.randomness
        out.append(
            comment(
                f"`step` draws from np_random ({', '.join(r.methods)}) and its outcome depends "
                "on the draw (the same state and action, stepped with other generators, gave "
                f"other outcomes). Its transition table `P[{r.field}][a]` lists up to "
                f"{r.categories} outcomes with probabilities {r.probabilities}: the noise is the "
                f"index of the outcome taken, mapped by {HARNESS_FILE} (written beside this spec)."
            )
        )
        out.append("[randomness]\n")
        out.append(f'noise = "categorical"\ncategories = {r.categories}\n')
        out.append(f"harness = {value(HARNESS_FILE)}\n\n")
    elif v.draws:
        out.append(
            comment(
                "`step` draws from np_random, but its outcome never depended on the draws (the "
                "same state and action with other generators gave the same transition): no "
                "[randomness]."
            )
        )
        out.append("\n")
    if inf.obs_names:
        out.append(comment(f"Observation names: {inf.obs_how}."))
        out.append(f"[observation]\nnames = {value(inf.obs_names)}\n\n")
    out.append(
        comment(
            "Targets list no modules: `envport translate` plans them (its plan phase), and no "
            "probes: L1 checks the whole transition."
        )
    )
    for target in targets:
        out.append(f'[targets.{target}]\nentry = "env"\n\n')
    out.append(
        comment(
            "Tolerances by dtype: float fields as a float32 port of a float64 reference "
            f"(atol = rtol = {FLOAT_ATOL:g}, free-running {FREE_TOL:g}); integer fields, and a "
            "reward that was always a whole number, exactly."
        )
    )
    out.append("[tolerance]\n" + "\n".join(_tolerances(inf)) + "\n\n")
    out.append(_levels(inf))
    return "".join(out)


def _descriptions(inf: Inference) -> str:
    """`[state.describe]`: each field's meaning as the reference's source gives it, with
    where it was read; the fields it says nothing of are named for the user to describe."""
    silent = [name for name in inf.fields if name not in inf.meanings]
    left = (
        f" Nothing in the source says what {', '.join(f'`{n}`' for n in silent)} "
        f"{'holds' if len(silent) == 1 else 'hold'}: add a line for "
        f"{'it' if len(silent) == 1 else 'each'} (codes, the value meaning none, units, order)."
        if silent
        else ""
    )
    head = (
        "What each field's values mean, shown to the model beside the field: inferred from "
        "the reference's own source (a comment on the attribute's assignment, the docstring's "
        "observation table, the observation space), never guessed; check each."
    )
    if not inf.meanings:
        return comment(head + left) + "\n"
    out = [comment(head + left), "[state.describe]\n"]
    for name, meaning in inf.meanings.items():
        out.append(comment(f"{name}: inferred from {meaning.source}"))
        out.append(f"{key(name)} = {value(meaning.text)}\n")
    return "".join(out) + "\n"


def _levels(inf: Inference) -> str:
    out = ["[levels.l1]\nexamples = 200\n\n[levels.l2]\nexamples = 40\nsteps = 25\n"]
    out.append("batch = [1, 7, 33]\n\n")
    limit = (
        f"L3 plays episodes of the registry's max_episode_steps ({inf.limit}) steps."
        if inf.limit or inf.natural is None
        else inf.natural.words()
    )
    out.append(comment(limit))
    out.append(f'[levels.l3]\nepisodes = 100\nsteps = {inf.steps}\nmode = "both"\n')
    chaos = inf.chaos
    if chaos is not None and chaos.first is not None:
        out.append(
            comment(
                f"Chaos: of {chaos.episodes} pairs of free-running reference runs (float64 "
                f"against float32-rounded state, same actions), {chaos.parted} parted beyond "
                f"{FREE_TOL:g}, the first after {chaos.first} steps: free-running is compared "
                f"for the first {inf.free_horizon} steps (half, rounded down to tens); resync "
                "compares every step."
            )
        )
        out.append(f"free_horizon = {inf.free_horizon}\n")
    elif chaos is not None:
        out.append(
            comment(
                f"No chaos seen: {chaos.episodes} pairs of free-running reference runs (float64 "
                f"against float32-rounded state) stayed within {FREE_TOL:g} to the end."
            )
        )
    return "".join(out)
