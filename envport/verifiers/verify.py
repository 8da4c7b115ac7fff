"""`envport verify`: run the levels on a port someone hands us and say whether it matches."""

from __future__ import annotations

import contextlib
import importlib
import os
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from envport.errors import EnvportError, PortError
from envport.serve.client import PortWorker
from envport.serve.remote import EnvClient
from envport.spec import PortSpec, load_spec, spec_path
from envport.verifiers import cases, l1, l2, l3, l3_lanes
from envport.verifiers.constants import source_constants, threshold_warnings
from envport.verifiers.divergence import VerifyReport
from envport.verifiers.probes import Probe, load_probes
from envport.verifiers.reference import Reference

LEVELS = ("l1", "l2", "l3", "l4")
# L4 trains policies: minutes, not seconds, so it runs only when asked for.
DEFAULT_LEVELS = ("l1", "l2", "l3")


@dataclass
class VerifyOptions:
    levels: tuple[str, ...] = DEFAULT_LEVELS
    target: str = "auto"
    episodes: int | None = None
    steps: int | None = None
    mode: str | None = None
    seed: int = 0
    only_episode: int | None = None
    timeout: float = 120.0
    # Check one module of a port being generated: import the modules up to it (in the
    # spec's dependency order), check their exports, and run its L1 probes.
    module: str | None = None
    examples: int | None = None  # hypothesis examples for L1 and sequences for L2
    # L3 lanes, each a reference player and a port worker (None: one per core for big runs).
    workers: int | None = None
    # Address of an `envport serve --port` process to use instead of a local worker.
    port_server: str | None = None
    # Directory of proposed cases (`*.toml`) to run beside the harness's own checks.
    cases: Path | None = None
    shrink: bool = True  # shrink L1/L2 failures to a minimal example


def port_target(spec: PortSpec, port: Path, requested: str) -> tuple[str, list[dict], str]:
    """Which target's module list applies, as plain data for the worker."""
    if requested != "auto":
        names = [requested]
    else:
        names = list(spec.targets)
        # A port directory named after its backend, or a Rust crate, settles an ambiguous spec.
        if port.name in spec.targets:
            names = [port.name]
        elif (port / "Cargo.toml").is_file() and "rust" in spec.targets:
            names = ["rust"]
    chosen = names[0] if len(names) == 1 else "auto"
    target = spec.target(chosen) if chosen != "auto" else spec.target("")
    modules = [m.model_dump() for m in target.modules]
    return chosen, modules, target.entry


def _base_command(spec_arg: str, port: Path, options: VerifyOptions) -> list[str]:
    words = ["envport", "verify", spec_arg, "--port", str(port)]
    if options.target != "auto":
        words += ["--target", options.target]
    return [*words, "--seed", str(options.seed)]


def _replays(spec_arg: str, port: Path, options: VerifyOptions, l3_options: l3.L3Options) -> dict:
    """Commands that re-run exactly one failing case; fields are filled by each level."""
    base = _base_command(spec_arg, port, options)
    examples = [] if options.examples is None else ["--examples", str(options.examples)]
    if not options.shrink:
        examples.append("--no-shrink")
    l1_words = shlex.join([*base, "--levels", "l1", *examples])
    return {
        "l1": l1_words.replace("{", "{{").replace("}", "}}") + " --module {module}",
        "l2": shlex.join([*base, "--levels", "l2", *examples]),
        "l4": shlex.join([*base, "--levels", "l4"]),
        "cases": shlex.join([*base, "--levels", "l3", "--cases", str(options.cases)])
        + " --episodes 1",
        "l3": shlex.join(
            [
                *base,
                "--levels",
                "l3",
                "--episodes",
                str(l3_options.episodes),
                "--steps",
                str(l3_options.steps),
            ]
        )
        + " --mode {mode} --episode {episode}",
    }


def _check_options(options: VerifyOptions, l3_options: l3.L3Options) -> None:
    unknown = [level for level in options.levels if level not in LEVELS]
    if unknown or not options.levels:
        raise EnvportError(
            f"--levels: unknown level {unknown[0] if unknown else ''!r}; "
            f"available: {', '.join(LEVELS)}"
        )
    episode = l3_options.only_episode
    if episode is not None and not 0 <= episode < l3_options.episodes:
        raise EnvportError(f"--episode {episode}: expected 0..{l3_options.episodes - 1}")


def _probes(spec: PortSpec, spec_file: Path, target: str) -> tuple[Path | None, dict[str, Probe]]:
    relative = spec.target(target).probes if target != "auto" else None
    if relative is None:
        return None, {}
    path = (spec_file.parent / relative).resolve()
    return path, load_probes(path, key=f"targets.{target}.probes")


def verify(spec_arg: str, port_arg: str, options: VerifyOptions) -> VerifyReport:
    started = time.perf_counter()
    spec = load_spec(spec_arg)
    spec_file = spec_path(spec_arg)
    port = Path(port_arg)
    if not port.is_dir():
        raise EnvportError(
            f"{port}: no such port directory; pass --port DIR holding the port's modules"
        )
    config = spec.levels
    l3_options = l3.L3Options(
        episodes=options.episodes or config.l3.episodes,
        steps=options.steps or config.l3.steps,
        mode=options.mode or config.l3.mode,
        seed=options.seed,
        only_episode=options.only_episode,
    )
    _check_options(options, l3_options)
    target, modules, entry = port_target(spec, port, options.target)
    levels = options.levels
    load: dict = {"port_dir": str(port.resolve()), "modules": modules, "entry": entry}
    load["target"] = target
    if options.module is not None:
        names = [m["name"] for m in modules]
        if options.module not in names:
            raise EnvportError(
                f"--module {options.module!r}: not a module of target `{target}`; "
                f"the spec lists {', '.join(names) or 'none'}"
            )
        load["modules"] = modules[: names.index(options.module) + 1]
        # Before the entry module exists only the modules so far can be imported.
        load["only_modules"] = options.module != entry
        levels = tuple(level for level in levels if level == "l1")
    probes_file, probes = _probes(spec, spec_file, target) if "l1" in levels else (None, {})
    replays = _replays(spec_arg, port, options, l3_options)
    report = VerifyReport(spec=str(spec_file), port=str(port), passed=False)
    lanes = reference_workers(options, l3_options) if "l3" in levels else 0
    with contextlib.ExitStack() as stack:
        worker = stack.enter_context(_port_side(options, load))
        lane_workers = None
        if lanes > 1:
            # More lanes: their reference and port workers start now and load in the
            # background while this worker imports the port (and JAX) and L1 and L2 run.
            lane_workers = l3_lanes.LaneWorkers(
                str(spec_file.resolve()), lanes, options.timeout, lambda: _port_side(options, load)
            )
            stack.callback(lane_workers.close)
        reference = Reference(spec)
        report.warnings = threshold_warnings(spec, source_constants(reference.env))
        report.seconds["setup"] = time.perf_counter() - started
        try:
            load_started = time.perf_counter()
            report.backend = worker.receive()["backend"]
            # Worker start-up and port import not hidden behind the reference's episodes.
            report.seconds["port_load_wait"] = time.perf_counter() - load_started
            whole_port = not load.get("only_modules", False)
            if "l1" in levels:
                run = l1.L1Run(
                    spec,
                    reference,
                    worker,
                    report.backend or target,
                    options.examples or config.l1.examples,
                    options.seed,
                    replays["l1"],
                    options.shrink,
                )
                module = options.module
                report.levels += l1.run_l1(
                    run, probes, probes_file, module, entry, whole_port and module in (None, entry)
                )
                if spec.randomness is not None and whole_port and module in (None, entry):
                    # The port's own noise sampler, against the reference's draws.
                    replay = replays["l1"].format(module=entry)
                    noise_check = _statistics("noise_check", "a stochastic env's sampler check")
                    report.levels.append(
                        noise_check.check_sampler(
                            spec, reference, worker, options.seed, replay, entry
                        )
                    )
            if "l2" in levels:
                report.levels += l2.run_l2(
                    spec,
                    reference,
                    worker,
                    report.backend,
                    examples=options.examples or config.l2.examples,
                    seed=options.seed,
                    replay=replays["l2"],
                    shrink=options.shrink,
                )
            if options.cases is not None and whole_port:
                report.levels.append(
                    cases.run_cases(spec, reference, worker, options.cases, replays["cases"])
                )
            if "l3" in levels:
                l3_started = time.perf_counter()
                report.levels += l3_lanes.run_l3(
                    spec, l3_options, replays["l3"], worker, reference, lane_workers
                )
                report.seconds["l3"] = time.perf_counter() - l3_started
            if "l4" in levels and whole_port:
                l4 = _statistics("l4", "--levels l4")
                report.levels.append(
                    l4.run_l4(spec, reference, worker, options.seed, replays["l4"])
                )
        except PortError as error:
            report.error = str(error)
    report.passed = report.error is None and all(level.passed for level in report.levels)
    report.seconds["total"] = time.perf_counter() - started
    return report


def _statistics(module: str, what: str) -> ModuleType:
    """A level built on scipy and statsmodels (the `stats` extra), imported when it runs."""
    try:
        return importlib.import_module(f"envport.verifiers.{module}")
    except ImportError as error:
        raise EnvportError(
            f"{what} needs scipy and statsmodels ({error.name} is missing): "
            "pip install 'envport[stats]'"
        ) from None


def _port_side(options: VerifyOptions, load: dict) -> PortWorker | EnvClient:
    """A local sandboxed worker, or an `envport serve` process already hosting the port."""
    if options.port_server is not None:
        return EnvClient(options.port_server, timeout=options.timeout)
    return PortWorker(timeout=options.timeout, load=load)


# Below this many episodes per lane, starting processes costs more than it saves.
EPISODES_PER_WORKER = 250


def reference_workers(options: VerifyOptions, l3_options: l3.L3Options) -> int:
    if options.workers is not None:
        return options.workers
    if l3_options.only_episode is not None:
        return 1
    return max(1, min(os.cpu_count() or 1, l3_options.episodes // EPISODES_PER_WORKER))
