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
from typing import TYPE_CHECKING

from envport.errors import EnvportError, PortError
from envport.serve.client import PortWorker
from envport.serve.remote import EnvClient
from envport.spec import PortSpec, load_spec, spec_path
from envport.verifiers import cases, l1, l2, l3, l3_lanes, l3_replay, reverse
from envport.verifiers.constants import source_constants, threshold_warnings
from envport.verifiers.divergence import LevelResult, VerifyReport
from envport.verifiers.probes import Probe, load_probes
from envport.verifiers.reference import Reference

if TYPE_CHECKING:  # imported where it runs: its statistics load scipy
    from envport.verifiers.reset_sample import ResetSample

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
    # `--episode A-B`: L3 episodes A..B played as one batch (a batch-coupled divergence).
    episode_batch: tuple[int, int] | None = None
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
    # The port cannot load a state (envpool, compiled vector envs): start the reference from
    # the port's own start states instead (envport.verifiers.reverse).
    reverse: bool = False


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


def _base_command(spec_arg: str, port: str, options: VerifyOptions) -> list[str]:
    words = ["envport", "verify", spec_arg, "--port", port]
    if options.reverse:
        words.append("--reverse-injection")
    if options.target != "auto":
        words += ["--target", options.target]
    return [*words, "--seed", str(options.seed)]


def _replays(
    spec_arg: str,
    port: str,
    options: VerifyOptions,
    l3_options: l3.L3Options,
    split: bool,
) -> dict:
    """Commands that re-run exactly one failing case; fields are filled by each level.

    `split`: the target lists modules, so an L1 replay can name the one it checks; a spec
    that lists none (a one-module bridge under `--target auto`) has no `--module` to give."""
    base = _base_command(spec_arg, port, options)
    examples = [] if options.examples is None else ["--examples", str(options.examples)]
    if not options.shrink:
        examples.append("--no-shrink")
    l1_words = shlex.join([*base, "--levels", "l1", *examples])
    return {
        "l1": l1_words.replace("{", "{{").replace("}", "}}")
        + (" --module {module}" if split else ""),
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
        # One batched reset starts every episode: a replay runs them all again.
        "reverse": shlex.join(
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
        .replace("{", "{{")
        .replace("}", "}}")
        + " --mode {mode}",
    }


def _check_options(options: VerifyOptions, l3_options: l3.L3Options) -> None:
    unknown = [level for level in options.levels if level not in LEVELS]
    if unknown or not options.levels:
        raise EnvportError(
            f"--levels: unknown level {unknown[0] if unknown else ''!r}; "
            f"available: {', '.join(LEVELS)}"
        )
    last = l3_options.episodes - 1
    episode = l3_options.only_episode
    if episode is not None and not 0 <= episode <= last:
        raise EnvportError(f"--episode {episode}: expected 0..{last}")
    batch = l3_options.batch
    if batch is not None and not 0 <= batch[0] <= batch[1] <= last:
        raise EnvportError(f"--episode {batch[0]}-{batch[1]}: expected A-B within 0..{last}")


def _probes(spec: PortSpec, spec_file: Path, target: str) -> tuple[Path | None, dict[str, Probe]]:
    relative = spec.target(target).probes if target != "auto" else None
    if relative is None:
        return None, {}
    path = (spec_file.parent / relative).resolve()
    return path, load_probes(path, key=f"targets.{target}.probes")


def verify(
    spec_arg: str, port_arg: str, options: VerifyOptions, shown_as: str | None = None
) -> VerifyReport:
    """Check the port in `port_arg`; `shown_as` names it in the report and in replay lines
    when the directory is a stand-in (`RUN@K`, a run's port checked out at iteration K)."""
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
        batch=options.episode_batch,
    )
    _check_options(options, l3_options)
    if options.reverse:
        _check_reverse(options)
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
    requested = levels
    if options.reverse:
        load["reverse"] = True
        levels = ()  # every level below loads states into the port
    probes_file, probes = _probes(spec, spec_file, target) if "l1" in levels else (None, {})
    label = shown_as or str(port)
    replays = _replays(spec_arg, label, options, l3_options, split=bool(modules))
    report = VerifyReport(
        spec=str(spec_file), port=label, passed=False, target=target, module=options.module
    )
    lanes = reference_workers(options, l3_options) if "l3" in levels else 0
    with contextlib.ExitStack() as stack:
        worker = stack.enter_context(_port_side(options, load, probes_file))
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
        whole_port = not load.get("only_modules", False)
        reset_sample = None
        if "l2" in levels and whole_port and target != "rust":
            # The reference's reset draws, taken while the worker is still importing the port.
            from envport.verifiers import reset_sample as reset_draws

            reset_sample = reset_draws.draw(spec, reference, options.seed)
        report.seconds["setup"] = time.perf_counter() - started
        timed = _Timer(report.seconds)
        try:
            load_started = time.perf_counter()
            loaded = worker.receive()
            report.backend = loaded["backend"]
            absent = loaded.get("absent_modules") or []
            if absent:
                probes = {name: p for name, p in probes.items() if p.module not in absent}
                report.notes.append(_unsplit_note(absent, target, entry))
            # Worker start-up and port import not hidden behind the reference's episodes.
            report.seconds["port_load_wait"] = time.perf_counter() - load_started
            if "l1" in levels:
                timed.start("l1")
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
                    if report.backend in ("jax", "numpy"):
                        # And the step users call, which draws its own noise.
                        sampled = _statistics("sampled_step", "a stochastic env's step check")
                        report.levels.append(
                            sampled.check_sampled_step(
                                spec, reference, worker, report.backend, options.seed, replay, entry
                            )
                        )
            if "l2" in levels:
                timed.start("l2")
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
                if reset_sample is not None and report.backend in ("jax", "numpy"):
                    report.levels += _user_paths(
                        spec,
                        worker,
                        report.backend,
                        reset_sample,
                        options.seed,
                        replays["l2"],
                    )
            if options.cases is not None and whole_port and not options.reverse:
                timed.start("cases")
                report.levels.append(
                    cases.run_cases(spec, reference, worker, options.cases, replays["cases"])
                )
            if "l3" in levels:
                timed.start("l3")
                found = l3_lanes.run_l3(
                    spec, l3_options, replays["l3"], worker, reference, lane_workers
                )
                if l3_options.only_episode is None and l3_options.batch is None:
                    # Not a replay itself: each replay line must show its divergence again.
                    l3_replay.confirm_replays(
                        spec, l3_options, replays["l3"], worker, reference, found
                    )
                report.levels += found
            if "l4" in levels and whole_port:
                timed.start("l4")
                l4 = _statistics("l4", "--levels l4")
                report.levels.append(
                    l4.run_l4(spec, reference, worker, options.seed, replays["l4"])
                )
            if options.reverse:
                report.not_run = reverse.not_applicable(
                    requested, options.cases is not None, spec.randomness is not None
                )
                report.levels += reverse.run_reverse(
                    spec, reference, worker, l3_options, replays["reverse"]
                )
        except PortError as error:
            report.error = str(error)
        timed.stop()
    report.passed = report.error is None and all(level.passed for level in report.levels)
    report.seconds["total"] = time.perf_counter() - started
    return report


def _unsplit_note(absent: list[str], target: str, entry: str) -> str:
    files = ", ".join(f"{name}.py" for name in absent)
    return (
        f"the port is not split into the modules target `{target}` lists (no {files}); it "
        f"exports the contract from `{entry}`, so it is checked as a whole and the L1 probes "
        f"of {', '.join(absent)} are not run"
    )


class _Timer:
    """Wall time of each part of a run, into the report's `seconds` under the part's name."""

    def __init__(self, seconds: dict[str, float]) -> None:
        self.seconds = seconds
        self.part: str | None = None
        self.started = 0.0

    def start(self, part: str) -> None:
        self.stop()
        self.part, self.started = part, time.perf_counter()

    def stop(self) -> None:
        if self.part is not None:
            elapsed = time.perf_counter() - self.started
            self.seconds[self.part] = self.seconds.get(self.part, 0.0) + elapsed
            self.part = None


def _check_reverse(options: VerifyOptions) -> None:
    if "l3" not in options.levels:
        raise EnvportError(
            "--reverse-injection runs the rollout checks, which --levels must include (l3)"
        )
    for given, flag, why in (
        (options.module, "--module", "a module's L1 probes take states the port must load"),
        (options.only_episode, "--episode", "every episode starts from one batched reset"),
        (options.port_server, "--port-server", "a served port is driven through state loads"),
    ):
        if given is not None:
            raise EnvportError(f"{flag} does not go with --reverse-injection: {why}")


def _user_paths(
    spec: PortSpec,
    worker: PortWorker | EnvClient,
    backend: str,
    sample: ResetSample,
    seed: int,
    replay: str,
) -> list[LevelResult]:
    """L2's checks of what users call rather than what the harness injects: the port's own
    reset, and (NumPy) its VectorEnv's autoreset and partial resets against Gymnasium's."""
    from envport.verifiers import reset_check, vector_check

    found = [reset_check.check_reset(spec, worker, sample, seed, replay)]
    if backend == "numpy":
        found.append(vector_check.check_vector(spec, worker, sample, seed, replay))
    return found


def _statistics(module: str, what: str) -> ModuleType:
    """A level built on scipy and statsmodels (the `stats` extra), imported when it runs."""
    try:
        return importlib.import_module(f"envport.verifiers.{module}")
    except ImportError as error:
        raise EnvportError(
            f"{what} needs scipy and statsmodels ({error.name} is missing): "
            "pip install 'envport[stats]'"
        ) from None


def _port_side(
    options: VerifyOptions, load: dict, probes_file: Path | None = None
) -> PortWorker | EnvClient:
    """A local sandboxed worker, or an `envport serve` process already hosting the port."""
    if options.port_server is not None:
        return EnvClient(options.port_server, timeout=options.timeout)
    readable = [probes_file] if probes_file is not None else []
    return PortWorker(timeout=options.timeout, load=load, readable=readable)


# Below this many episodes per lane, starting processes costs more than it saves.
EPISODES_PER_WORKER = 250


def reference_workers(options: VerifyOptions, l3_options: l3.L3Options) -> int:
    if options.workers is not None:
        return options.workers
    if l3_options.only_episode is not None or l3_options.batch is not None:
        return 1
    return max(1, min(os.cpu_count() or 1, l3_options.episodes // EPISODES_PER_WORKER))
