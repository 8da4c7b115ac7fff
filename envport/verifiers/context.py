"""One verify run's context: what every check reads (the spec, the port, the options, the
worker, the reference) and where their results go (the report)."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from envport.errors import EnvportError
from envport.serve.client import PortWorker
from envport.serve.ops import LoadPort
from envport.serve.remote import EnvClient
from envport.serve.token import client_token
from envport.spec import PortSpec, load_spec, spec_path
from envport.targets.reference import Reference
from envport.targets.registry import TargetChoice, choose_target, port_dir
from envport.verifiers.coverage.branches import Measure
from envport.verifiers.coverage.conditions import ConditionMeasure
from envport.verifiers.draws.probes import Probe, load_probes
from envport.verifiers.levels.l3.lanes import LaneWorkers
from envport.verifiers.options import L3Options, VerifyOptions, check_options
from envport.verifiers.reporting.compare import Steps
from envport.verifiers.reporting.divergence import VerifyReport
from envport.verifiers.reporting.replay import Kind, Replay, replays

if TYPE_CHECKING:
    from envport.verifiers.stats.reset_sample import ResetSample

Worker = PortWorker | EnvClient


@dataclass
class PlainStarted:
    """The plain interpreter (envport.verifiers.plain) at work on its sample of L3's steps:
    the rows it was given, the reference's answers to them, its own answer as read so far
    from its stdout (complete once `reader` ends)."""

    process: subprocess.Popen[bytes]
    answer: bytearray
    reader: threading.Thread
    rows: np.ndarray
    expected: Steps
    episodes: int


@dataclass
class VerifyContext:
    spec: PortSpec
    spec_file: Path
    port: Path
    options: VerifyOptions
    l3: L3Options
    target: TargetChoice
    load: LoadPort
    # The levels asked for, and those that run on this port (one module: L1; a port driven
    # from its own resets: none of them, the reverse rollouts instead).
    requested: tuple[str, ...]
    levels: tuple[str, ...]
    probes_file: Path | None
    probes: dict[str, Probe]
    replays: dict[Kind, Replay]
    report: VerifyReport
    started: float
    # Set once the processes are up: the port's worker, the reference, the extra L3 lanes.
    worker: Worker = field(init=False)
    reference: Reference = field(init=False)
    lane_workers: LaneWorkers | None = None
    # The reference's reset draws for L2's reset and vector checks, taken before the port
    # is loaded (None where those checks do not apply).
    reset_sample: ResetSample | None = None
    # Branch coverage of the reference's source while the levels run (None: not measured).
    branches: Measure | None = None
    # Condition coverage of the reference's decisions (None: not measured).
    conditions: ConditionMeasure | None = None
    # The plain interpreter, started as soon as the port's backend is known (None: the
    # check does not apply).
    plain: PlainStarted | None = None
    # Parts of a check that --fail-fast left unrun after one of its own parts failed.
    cut_short: list[str] = field(default_factory=list)

    @property
    def whole_port(self) -> bool:
        """The whole port is loaded, not just the modules generated so far."""
        return not self.load.only_modules

    @property
    def backend(self) -> str | None:
        return self.report.backend

    @property
    def at_entry(self) -> bool:
        """The checks of the whole transition apply: the whole port, or its entry module."""
        return self.whole_port and self.options.module in (None, self.target.entry)


def _episode_steps(spec: PortSpec) -> int:
    """L3's steps per episode: the spec's `levels.l3.steps` when it sets them, else as long
    as the reference allows, when its registration says so (a time limit past the default
    500 steps), else 500."""
    l3 = spec.levels.l3
    if "steps" in l3.model_fields_set:
        return l3.steps
    limit = spec.reference.kwargs.get("max_episode_steps")
    prefix, _, name = spec.reference.entry.partition(":")
    if limit is None and prefix == "gymnasium":
        import gymnasium

        try:
            limit = gymnasium.spec(name).max_episode_steps
        except gymnasium.error.Error:
            limit = None  # an unknown id: building the reference says so, with the fix
    return max(l3.steps, int(limit)) if isinstance(limit, int) else l3.steps


def build_context(
    spec_arg: str, port_arg: str, options: VerifyOptions, shown_as: str | None
) -> VerifyContext:
    """Everything settled before a process starts; a bad option is an error here."""
    started = time.perf_counter()
    spec = load_spec(spec_arg)
    spec_file = spec_path(spec_arg)
    given = Path(port_arg)
    # A variant's known-good port is its own files over its base's (envport.variant).
    port = port_dir(spec, given)
    if not port.is_dir():
        raise EnvportError(
            f"{given}: no such port directory; pass --port DIR holding the port's modules"
        )
    config = spec.levels
    l3_options = L3Options(
        episodes=options.episodes or config.l3.episodes,
        steps=options.steps or _episode_steps(spec),
        mode=options.mode or config.l3.mode,
        seed=options.seed,
        only_episode=options.only_episode,
        batch=options.episode_batch,
    )
    check_options(options, l3_options)
    chosen = choose_target(spec, given, options.target)
    # Every check reads tolerances through this spec: the target's own over the spec's.
    spec = spec.for_target(chosen.name)
    domain = spec.target(chosen.name).domain if chosen.name in spec.targets else []
    if domain:
        # The port's narrower domain joins state.valid: every draw of L1 and L2 meets both.
        state = spec.state.model_copy(update={"valid": [*spec.state.valid, *domain]})
        spec = spec.model_copy(update={"state": state})
    levels = options.levels
    load = chosen.load(port, reverse=options.reverse, compile_root=options.compile_cache)
    if options.module is not None:
        names = [m["name"] for m in chosen.modules]
        if options.module not in names:
            raise EnvportError(
                f"--module {options.module!r}: not a module of target `{chosen.name}`; "
                f"the spec lists {', '.join(names) or 'none'}"
            )
        partial = TargetChoice(
            chosen.name, chosen.modules[: names.index(options.module) + 1], chosen.entry
        )
        # Before the entry module exists only the modules so far can be imported.
        load = partial.load(
            port, only_modules=options.module != chosen.entry, compile_root=options.compile_cache
        )
        levels = tuple(level for level in levels if level == "l1")
    requested = levels
    if options.reverse:
        levels = ()  # every level below loads states into the port
    probes_file, probes = _probes(spec, spec_file, chosen.name) if "l1" in levels else (None, {})
    label = shown_as or str(given)
    return VerifyContext(
        spec=spec,
        spec_file=spec_file,
        port=port,
        options=options,
        l3=l3_options,
        target=chosen,
        load=load,
        requested=requested,
        levels=levels,
        probes_file=probes_file,
        probes=probes,
        replays=replays(
            spec_arg, label, options, l3_options.episodes, l3_options.steps, bool(chosen.modules)
        ),
        report=VerifyReport(
            spec=str(spec_file),
            port=label,
            passed=False,
            target=chosen.name,
            module=options.module,
            restricted_to=list(domain),
        ),
        started=started,
    )


def _probes(spec: PortSpec, spec_file: Path, target: str) -> tuple[Path | None, dict[str, Probe]]:
    relative = spec.target(target).probes if target != "auto" else None
    if relative is None:
        return None, {}
    path = spec.harness_file(relative)  # a variant's may be its base's
    return path, load_probes(path, key=f"targets.{target}.probes")


def port_side(options: VerifyOptions, load: LoadPort, probes_file: Path | None = None) -> Worker:
    """A local sandboxed worker, or an `envport serve` process already hosting the port."""
    if options.port_server is not None:
        token = client_token(options.port_server_token_file)
        return EnvClient(options.port_server, timeout=options.timeout, token=token)
    readable = [probes_file] if probes_file is not None else []
    return PortWorker(timeout=options.timeout, load=load, readable=readable)


class Timer:
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
