"""`envport check SPEC`: a spec tried alone, before any port exists.

Writing a spec by hand for a new env is where a user spends most of the first hour: a state
path that does not resolve, a bridge that drops a field, bounds narrower than the env's own
reset, randomness the state does not carry, a module listed in `sources` that never reaches
the prompt. Each shows up here in seconds, one line each, instead of as a port's failure in
the middle of a run: the spec is loaded, the reference made and reset, its state read,
written back and read again, one step taken and taken again from the same injected state,
and the sources the prompts would carry listed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from envport.errors import EXIT_OK, SpecError
from envport.io.inert import InertConsole
from envport.pipeline.field_meaning import check_descriptions
from envport.pipeline.port_form import check_port_form
from envport.pipeline.sources.reading import read_rules, read_sources, slice_sources
from envport.pipeline.sources.shown import shown_sources
from envport.pipeline.spec_shapes import check_grids, check_harness
from envport.spec import PortSpec, load_spec, spec_path
from envport.structure import derived, summarised, violated
from envport.targets.reference import Reference, valid_helpers
from envport.targets.registry import TARGET_CHOICES
from envport.verifiers.coverage.determinism import check_reference_determinism


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="try a spec alone: make the reference, read, write and step its state, list the "
        "sources the prompts carry (no port needed)",
        description=__doc__,
    )
    p.add_argument("spec", help="envport.toml, or the directory holding it")
    p.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    p.add_argument(
        "--port",
        type=Path,
        help="also load this port in a sandboxed worker and check its form (a game port's "
        "`init` holds every field of the contract)",
    )
    p.add_argument(
        "--target", choices=TARGET_CHOICES, default="auto", help="the port's target (default auto)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = InertConsole(highlight=False)
    for line in check_spec(args.spec, args.seed, args.port, args.target):
        console.print(line, markup=False, soft_wrap=True)
    return EXIT_OK


def _derivation(spec: PortSpec, state: dict[str, Any]) -> list[str]:
    """`state.derive` on the reference's own reset state: a derived field is a function of
    the others that every state play reaches meets, so deriving changes nothing there."""
    if not spec.state.derive:
        return []
    again = derived(spec.state, state, valid_helpers(spec))
    for name, expression in spec.state.derive.items():
        if not _same(state[name], again[name]):
            raise SpecError(
                f"key `state.derive.{name}`: the reference's own reset state holds "
                f"{np.asarray(state[name]).tolist()}, `{expression}` gives "
                f"{np.asarray(again[name]).tolist()}; derive only what every reachable state meets"
            )
    return [f"derive: the reset state meets {', '.join(spec.state.derive)}"]


def _summaries(spec: PortSpec, state: dict[str, Any]) -> list[str]:
    """`state.summaries` of the reference's reset state: each must give a number (a spec
    error here costs a verify the minutes of l2.reset's resets)."""
    if not spec.state.summaries:
        return []
    one = {name: np.asarray(value)[None] for name, value in state.items()}
    values = summarised(spec.state, one, valid_helpers(spec))
    shown = ", ".join(f"{name} {found[0]:g}" for name, found in values.items())
    return [f"summaries of the reset state: {shown}"]


def check_spec(
    spec_arg: str, seed: int = 0, port: Path | None = None, target: str = "auto"
) -> list[str]:
    """The lines `envport check` prints; a SpecError at the first thing that is wrong."""
    spec = load_spec(spec_arg)
    lines = [f"spec {spec_path(spec_arg)}: {spec.name} ({spec.reference.entry})"]
    lines += check_harness(spec)
    reference = Reference(spec)
    reference.reset(seed)
    state = reference.read_state()
    lines.append(f"state: reset(seed={seed}) read as {_shapes(state)}")
    broken = violated(spec.state, state, valid_helpers(spec))
    if broken is not None:
        raise SpecError(
            f"key `state.valid`: the reference's own reset state breaks `{broken}`; "
            "relax the expression"
        )
    lines += _derivation(spec, state)
    lines += _summaries(spec, state)
    reference.write_state(state)
    again = reference.read_state()
    differing = [k for k in state if not _same(state[k], again.get(k))]
    if differing or set(again) != set(state):
        raise SpecError(
            f"key `state`: a state written and read back differs in {differing or 'its fields'}"
            "; the write does not reach what the read reads (check the paths or the bridge)"
        )
    lines.append("state: written into the reference and read back unchanged")
    lines += _bounds(spec, state)
    lines += check_descriptions(spec, state)
    reference.action_space.seed(seed)
    action = reference.action_space.sample()
    out = reference.step(action)
    lines.append(
        f"step: action {np.asarray(action).tolist()} gives obs {_shape(out.obs)}, reward "
        f"{f'{out.reward:g}' if np.ndim(out.reward) == 0 else np.round(out.reward, 6).tolist()}, "
        f"terminated {out.terminated}, truncated {out.truncated}"
    )
    lines += check_grids(spec, state, reference, out.obs)
    check_reference_determinism(spec, reference, seed)
    lines.append(
        "determinism: the same injected state and action step alike"
        + (" (the step's draws are declared in [randomness])" if spec.randomness else "")
    )
    lines += _sources(spec)
    if port is not None:
        lines += check_port_form(spec, port, target)
    lines.append("spec ok: `envport translate` and `envport verify` can use it")
    return lines


def _same(a: Any, b: Any) -> bool:
    left, right = np.asarray(a), np.asarray(b)
    return left.shape == right.shape and bool(
        np.array_equal(left, right, equal_nan=left.dtype.kind in "fc")
    )


def _shape(value: Any) -> str:
    array = np.asarray(value)
    return f"{array.dtype}{list(array.shape)}"


def _shapes(state: dict[str, Any]) -> str:
    return ", ".join(f"{name} {_shape(value)}" for name, value in state.items())


def _bounds(spec: PortSpec, state: dict[str, Any]) -> list[str]:
    """A reset state outside `state.bounds` means L1 and L2 never draw where episodes start."""
    outside = []
    for name, bound in spec.state.bounds.items():
        if name not in state:
            continue
        value = np.asarray(state[name], dtype=np.float64).reshape(-1)
        # A bound is one number, or one per component in C order (a grid's flattened).
        low = np.asarray(bound.low, dtype=np.float64).reshape(-1)
        high = np.asarray(bound.high, dtype=np.float64).reshape(-1)
        if low.size not in (1, value.size) or high.size not in (1, value.size):
            continue
        if np.any(value < low) or np.any(value > high):
            outside.append(name)
    if outside:
        return [
            f"warn bounds: the reset state lies outside state.bounds in {', '.join(outside)}; "
            "L1 and L2 would never draw where its episodes start: widen the bounds"
        ]
    return ["bounds: the reset state lies inside state.bounds"]


def _sources(spec: PortSpec) -> list[str]:
    if read_rules(spec) is not None:
        return [f"sources: none shown (black-box: the rules document {spec.reference.rules})"]
    sources = read_sources(spec)
    sliced = slice_sources(spec, sources)
    # Each module's `shows`: read here so a name that is none stops the check (exit 2).
    shown = [
        f"shows: targets.{target}.modules.{module.name}, "
        + ", ".join(
            f"{s.module} ({s.lines} lines)" for s in shown_sources(sources, module.shows, key)
        )
        for target, table in spec.targets.items()
        for module in table.modules
        if module.shows
        for key in [f"targets.{target}.modules.{module.name}.shows"]
    ]
    lines = [
        f"sources: {source.module}, {source.lines} lines in the prompts"
        + (" (whole)" if source.whole else " (sliced)" if source.cut else "")
        for source in sliced
    ]
    return (
        lines
        + [
            f"warn sources: {source.module} loads a module by a computed name under "
            f"{prefix!r} and reference.sources lists none there: list the ones the env uses, "
            "or no prompt carries their code"
            for source in sliced
            for prefix in source.unlisted
        ]
        + [
            f"warn sources: {source.module} contributes nothing the env's __init__, reset or "
            "step reach (it is shown from its own definitions): drop it from reference.sources, "
            "or list the module the env imports its code from"
            for source in sliced
            if source.unreached
        ]
        + shown
    )
