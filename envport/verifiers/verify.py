"""`envport verify`: run the levels on a port someone hands us and say whether it matches."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from envport.errors import EnvportError, PortError
from envport.serve.client import PortWorker
from envport.spec import PortSpec, load_spec, spec_path
from envport.verifiers import l3
from envport.verifiers.divergence import VerifyReport
from envport.verifiers.reference import Reference

LEVELS = ("l3",)


@dataclass
class VerifyOptions:
    levels: tuple[str, ...] = ("l3",)
    target: str = "auto"
    episodes: int | None = None
    steps: int | None = None
    mode: str | None = None
    seed: int = 0
    only_episode: int | None = None
    timeout: float = 120.0
    # Check one module of a port being generated: import the modules up to it (in the
    # spec's dependency order), check their exports, and run its module-level checks.
    module: str | None = None


def _replay_template(
    spec_arg: str, port: Path, options: VerifyOptions, episodes: int, steps: int
) -> str:
    """A command that re-runs exactly one episode; `{mode}` and `{episode}` are filled later."""
    words = ["envport", "verify", spec_arg, "--port", str(port), "--levels", "l3"]
    if options.target != "auto":
        words += ["--target", options.target]
    words += ["--seed", str(options.seed), "--episodes", str(episodes), "--steps", str(steps)]
    return shlex.join(words) + " --mode {mode} --episode {episode}"


def port_target(spec: PortSpec, port: Path, requested: str) -> tuple[str, list[dict], str]:
    """Which target's module list applies, as plain data for the worker."""
    if requested != "auto":
        names = [requested]
    else:
        names = list(spec.targets)
        # A port directory named after its backend settles an ambiguous spec.
        if port.name in spec.targets:
            names = [port.name]
    chosen = names[0] if len(names) == 1 else "auto"
    target = spec.target(chosen) if chosen != "auto" else spec.target("")
    modules = [m.model_dump() for m in target.modules]
    return chosen, modules, target.entry


def verify(spec_arg: str, port_arg: str, options: VerifyOptions) -> VerifyReport:
    started = time.perf_counter()
    spec = load_spec(spec_arg)
    port = Path(port_arg)
    if not port.is_dir():
        raise EnvportError(
            f"{port}: no such port directory; pass --port DIR holding the port's modules"
        )
    unknown = [level for level in options.levels if level not in LEVELS]
    if unknown:
        raise EnvportError(
            f"--levels: unknown level {unknown[0]!r}; available: {', '.join(LEVELS)}"
        )
    config = spec.levels.l3
    l3_options = l3.L3Options(
        episodes=options.episodes or config.episodes,
        steps=options.steps or config.steps,
        mode=options.mode or config.mode,
        seed=options.seed,
        only_episode=options.only_episode,
    )
    if (
        l3_options.only_episode is not None
        and not 0 <= l3_options.only_episode < l3_options.episodes
    ):
        raise EnvportError(
            f"--episode {l3_options.only_episode}: expected 0..{l3_options.episodes - 1}"
        )
    target, modules, entry = port_target(spec, port, options.target)
    report = VerifyReport(spec=str(spec_path(spec_arg)), port=str(port), passed=False)
    if options.module is not None:
        return _verify_module(report, port, modules, entry, target, options, started)
    load = {"port_dir": str(port.resolve()), "modules": modules, "entry": entry, "target": target}
    # The worker imports the port (and JAX) while the reference plays its episodes.
    with PortWorker(timeout=options.timeout, load=load) as worker:
        reference = Reference(spec)
        report.seconds["setup"] = time.perf_counter() - started
        ref_started = time.perf_counter()
        episodes = l3.play_reference(reference, spec, l3_options)
        report.seconds["reference"] = time.perf_counter() - ref_started
        try:
            load_started = time.perf_counter()
            report.backend = worker.receive()["backend"]
            # Worker start-up and port import not hidden behind the reference's episodes.
            report.seconds["port_load_wait"] = time.perf_counter() - load_started
            replay = _replay_template(
                spec_arg, port, options, l3_options.episodes, l3_options.steps
            )
            modes = ["free", "resync"] if l3_options.mode == "both" else [l3_options.mode]
            for mode in modes:
                request = (
                    l3.free_request(episodes) if mode == "free" else l3.resync_request(episodes)
                )
                port_started = time.perf_counter()
                result = worker.request("rollout" if mode == "free" else "step_batch", **request)
                level = l3.judge(spec, episodes, result, mode, l3_options, replay)
                level.seconds["port_request"] = time.perf_counter() - port_started
                report.levels.append(level)
        except PortError as error:
            report.error = str(error)
    report.passed = report.error is None and all(level.passed for level in report.levels)
    report.seconds["total"] = time.perf_counter() - started
    return report


def _verify_module(
    report: VerifyReport,
    port: Path,
    modules: list[dict],
    entry: str,
    target: str,
    options: VerifyOptions,
    started: float,
) -> VerifyReport:
    names = [m["name"] for m in modules]
    if options.module not in names:
        raise EnvportError(
            f"--module {options.module!r}: not a module of target `{target}`; "
            f"the spec lists {', '.join(names) or 'none'}"
        )
    prefix = modules[: names.index(options.module) + 1]
    load = {
        "port_dir": str(port.resolve()),
        "modules": prefix,
        "entry": entry,
        "target": target,
        "only_modules": True,
    }
    with PortWorker(timeout=options.timeout, load=load) as worker:
        try:
            worker.receive()
        except PortError as error:
            report.error = str(error)
    report.passed = report.error is None
    report.seconds["total"] = time.perf_counter() - started
    return report
