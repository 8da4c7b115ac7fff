"""Time the reference here and ports and anchors in workers, batch size by batch size.

The reference is the user's trusted code and runs in this process (one env, and Gymnasium's
SyncVectorEnv); every port and anchor runs in its own worker, and the workers take turns at
each batch size, so a burst of load from elsewhere on a shared machine falls on all of them
rather than on whichever happened to run last.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from envport.errors import EnvportError, PortError
from envport.serve.client import PortWorker
from envport.serve.ops import Bench, LoadPort
from envport.spec import PortSpec, load_spec, spec_path
from envport.targets.bench.anchors import ANCHOR_USAGE, anchor_kind, bridge_dir
from envport.targets.bench.measure import best_of
from envport.targets.bench.report import BenchReport, BenchRow, machine
from envport.targets.reference import Reference, make_env
from envport.targets.registry import TARGET_NAMES, load_request, target

Answer = TypeVar("Answer")
# The port's step at one batch size checked before that size is timed: a line naming the
# first env and field that differ from the reference, or None. Given by the command (the
# comparison is the verifier's, a layer above this package).
SizeCheck = Callable[[PortWorker, int], str | None]

DEFAULT_BATCH_SIZES = (32, 128, 512, 2048, 8192)
# Distinct action rows cycled over the steps: random enough, and small on the wire.
ACTION_POOL = 32
# Reference start states a Rust port's envs restart from.
START_STATES = 256
# The single reference env runs this many times `steps` transitions per timed run.
REFERENCE_FACTOR = 20


@dataclass
class BenchOptions:
    batch_sizes: tuple[int, ...] = DEFAULT_BATCH_SIZES
    steps: int = 1000
    repeats: int = 3
    sync_envs: int = 32
    timeout: float = 600.0
    seed: int = 0


@dataclass
class Subject:
    """One implementation timed in a worker: a port (its load request) or an anchor (by
    name, or a bridge: a load request and the anchor's name)."""

    kind: str  # "port" or "anchor"
    load: LoadPort | None = None
    anchor: str | None = None
    bridge: str | None = None


def port_subject(spec: PortSpec, port_arg: str, target: str) -> Subject:
    port = Path(port_arg)
    if not port.is_dir():
        raise EnvportError(f"{port}: no such port directory; pass --port DIR holding the port")
    # Without its compilation cache: the compile column is what compiling costs, as the
    # anchors beside it (never cached) pay it, not what reading a cached program costs.
    load = dataclasses.replace(load_request(spec, port, target), compile_cache=None)
    return Subject(kind="port", load=load)


def anchor_subject(spec: PortSpec, name: str) -> Subject:
    directory = bridge_dir(name)
    if directory is not None:
        if not Path(directory).is_dir():
            raise EnvportError(
                f"--anchor {name}: no such port directory; name the bridge's directory "
                "(bridge:examples/<example>/ports/<package>)"
            )
        # A bridge verifies one env against this spec's reference: one of another example
        # would be loaded with the wrong spec and time another env.
        where = Path(directory).resolve()
        if spec.folders and not any(where.is_relative_to(f.resolve()) for f in spec.folders):
            raise EnvportError(
                f"--anchor {name}: not a bridge of this spec (its directory is outside "
                f"{spec.folders[0]}); name a port directory of this example"
            )
        # The bridge's target is its own directory's (a JAX bridge beside a NumPy port), and
        # uncached as the port is, so the compile columns compare.
        load = dataclasses.replace(load_request(spec, Path(directory)), compile_cache=None)
        return Subject(kind="anchor", load=load, bridge=name)
    if anchor_kind(name) is None:
        raise EnvportError(f"--anchor {name!r}: {ANCHOR_USAGE}")
    return Subject(kind="anchor", anchor=name)


def samples(space: Any, count: int, seed: int) -> np.ndarray:
    """`count` actions drawn from `space` in one vectorised draw."""
    from gymnasium.vector.utils import batch_space

    batched = batch_space(space, count)
    batched.seed(seed)
    return np.asarray(batched.sample())


def action_pool(space: Any, batch: int, seed: int) -> np.ndarray:
    drawn = samples(space, ACTION_POOL * batch, seed)
    return drawn.reshape(ACTION_POOL, batch, *drawn.shape[1:])


def needs_start_states(loads: Sequence[LoadPort | None]) -> bool:
    """Whether any port loaded by these requests restarts its envs from reference start
    states (a Rust port: its ABI has no reset; a target left to the port to settle may be
    one). An anchor's (None here) never does: making them costs a reset each, minutes of a
    generated world's (Crafter's 256 resets, four minutes of a bench that timed none)."""
    for load in loads:
        if load is None:
            continue
        if load.target not in TARGET_NAMES or target(load.target).bench_needs_start_states:
            return True
    return False


def start_states(reference: Reference, count: int) -> dict[str, np.ndarray]:
    states = []
    for seed in range(count):
        reference.reset(seed)
        states.append(reference.read_state())
    return {name: np.stack([s[name] for s in states]) for name in states[0]}


def reference_rows(spec: PortSpec, options: BenchOptions) -> list[BenchRow]:
    """The reference as users meet it: one env from `make`, and a SyncVectorEnv of a few."""
    import gymnasium as gym

    reference = Reference(spec)
    env = reference.env
    gymnasium = spec.reference.entry.startswith("gymnasium:")
    name = "gymnasium" if gymnasium else "reference"
    # A harness `make` (MiniGrid's, wrapped to present its observation as an array) is still
    # a Gymnasium env, and SyncVectorEnv is how its users batch it.
    vectorisable = isinstance(env, gym.Env)
    transitions = REFERENCE_FACTOR * options.steps
    drawn = samples(env.action_space, transitions, options.seed)
    # Python scalars for a Discrete space, as a user's loop would pass them.
    actions = drawn.tolist() if drawn.ndim == 1 else list(drawn)

    def single() -> None:
        env.reset(seed=options.seed)
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()

    rows = [
        BenchRow(
            name=name,
            kind="reference",
            backend="gymnasium" if gymnasium else "python",
            batch=1,
            steps=transitions,
            **best_of(single, 1, transitions, options.repeats),
        )
    ]
    if vectorisable:
        rows.append(_sync_row(spec, options, f"{name} SyncVectorEnv"))
    env.close()
    return rows


def _sync_row(spec: PortSpec, options: BenchOptions, name: str) -> BenchRow:
    from gymnasium.vector import SyncVectorEnv

    count = options.sync_envs
    envs = SyncVectorEnv([lambda: make_env(spec) for _ in range(count)])
    steps = max(1, REFERENCE_FACTOR * options.steps // count)
    pool = action_pool(envs.single_action_space, count, options.seed)
    envs.reset(seed=options.seed)

    def run() -> None:
        for t in range(steps):
            envs.step(pool[t % len(pool)])

    timed = best_of(run, count, steps, options.repeats)
    envs.close()
    return BenchRow(
        name=name,
        kind="reference",
        backend="gymnasium",
        batch=count,
        steps=steps,
        **timed,
    )


def take_turns(count: int, repeats: int, run: Callable[[int], Answer]) -> list[list[Answer]]:
    """`repeats` rounds of one timed run per subject, the order flipped every round (A B,
    B A, ...): a burst of load from elsewhere on a shared machine hits the subjects alike,
    and none always runs first. Every comparison of speeds (bench, optimise) times this way.
    """
    answers: list[list[Answer]] = [[] for _ in range(count)]
    order = list(range(count))
    for repeat in range(repeats):
        for index in order if repeat % 2 == 0 else order[::-1]:
            answers[index].append(run(index))
    return answers


def worker_rows(
    spec: PortSpec,
    subjects: list[Subject],
    options: BenchOptions,
    check: SizeCheck | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> list[BenchRow]:
    """Every subject at every batch size; JIT compile and Rust build apart.

    At each batch size the port's one step is first `check`ed; a port that diverges there
    gets a row saying so instead of a speed, and is not timed at that size. Then the
    subjects take turns one timed run at a time (`take_turns`), and each keeps its best run;
    `progress` is told each batch size as it is measured.
    """
    reference = Reference(spec)
    loads = [s.load if s.kind == "port" else None for s in subjects]
    states = None
    if needs_start_states(loads):
        states = start_states(reference, min(START_STATES, max(options.batch_sizes)))
    rows: list[BenchRow] = []
    with ExitStack() as stack:
        workers = [
            stack.enter_context(PortWorker(timeout=options.timeout, load=s.load, role=s.kind))
            for s in subjects
        ]
        labels = [
            _label(subject, worker) for subject, worker in zip(subjects, workers, strict=True)
        ]
        for batch in options.batch_sizes:
            started = time.perf_counter()
            timed = list(range(len(subjects)))
            if check is not None:
                for index, (subject, worker) in enumerate(zip(subjects, workers, strict=True)):
                    found = check(worker, batch) if subject.kind == "port" else None
                    if found is not None:
                        name, backend = labels[index]
                        rows.append(_diverged(subject, name, backend, batch, options, found))
                        timed.remove(index)
            actions = action_pool(reference.action_space, batch, options.seed)
            answers = take_turns(
                len(timed),
                options.repeats,
                functools.partial(_turn, subjects, workers, timed, batch, actions, states, options),
            )
            measured = [
                _row(subjects[index], *labels[index], batch, options.steps, mine)
                for index, mine in zip(timed, answers, strict=True)
            ]
            rows += measured
            speeds = ", ".join(f"{row.name} {row.sps:,.0f} steps/s" for row in measured)
            progress(f"batch {batch} in {time.perf_counter() - started:.1f} s: {speeds}")
    return rows


def _turn(
    subjects: list[Subject],
    workers: list[PortWorker],
    timed: list[int],
    batch: int,
    actions: np.ndarray,
    states: dict[str, np.ndarray] | None,
    options: BenchOptions,
    turn: int,
) -> dict[str, Any]:
    index = timed[turn]
    return _bench(subjects[index], workers[index], batch, actions, states, options)


def _diverged(
    subject: Subject, name: str, backend: str, batch: int, options: BenchOptions, found: str
) -> BenchRow:
    """The row of a size the port steps unlike the reference: no speed, what differs."""
    return BenchRow(
        name=name,
        kind=subject.kind,  # type: ignore[arg-type]
        backend=backend,
        batch=batch,
        steps=options.steps,
        sps=0.0,
        diverged=found,
    )


def _row(
    subject: Subject, name: str, backend: str, batch: int, steps: int, answers: list[dict]
) -> BenchRow:
    """One row from a subject's one-run answers: the loop with the best run, and its runs."""
    runs: dict[str, list[float]] = {}
    for answer in answers:
        for loop, sps in answer["loops"].items():
            runs.setdefault(loop, []).append(sps)
    best = max(runs, key=lambda loop: max(runs[loop]))
    return BenchRow(
        name=name,
        kind=subject.kind,  # type: ignore[arg-type]
        backend=backend,
        batch=batch,
        steps=steps,
        sps=max(runs[best]),
        sps_runs=runs[best],
        compile_s=answers[0]["compiles"][best],
        loop=best,
        loops={loop: max(values) for loop, values in runs.items()},
    )


def _label(subject: Subject, worker: PortWorker) -> tuple[str, str]:
    if subject.anchor is not None:
        return subject.anchor, subject.anchor.partition(":")[0]
    if subject.bridge is not None:
        try:
            backend = worker.receive()["backend"]
        except PortError as error:
            raise EnvportError(f"--anchor {subject.bridge}: {error}") from None
        return subject.bridge, backend
    backend = worker.receive()["backend"]  # the load answer: a broken port stops here
    return f"{backend} port", backend


def _bench(
    subject: Subject,
    worker: PortWorker,
    batch: int,
    actions: np.ndarray,
    states: dict[str, np.ndarray] | None,
    options: BenchOptions,
) -> dict[str, Any]:
    try:
        return worker.request(
            Bench(
                batch=batch,
                steps=options.steps,
                repeats=1,
                actions=actions,
                states=states,
                anchor=subject.anchor,
                seed=options.seed,
            )
        )
    except PortError as error:
        if subject.kind == "anchor":
            # The anchor is the user's choice of yardstick, not the thing being checked.
            raise EnvportError(f"--anchor {subject.anchor or subject.bridge}: {error}") from None
        raise


def new_report(spec_arg: str, options: BenchOptions) -> BenchReport:
    return BenchReport(
        spec=str(spec_path(spec_arg)),
        created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        machine=machine(),
        steps=options.steps,
        repeats=options.repeats,
        batch_sizes=list(options.batch_sizes),
    )


def run_bench(
    spec_arg: str,
    port_arg: str,
    options: BenchOptions,
    target: str = "auto",
    anchors: Sequence[str] = (),
    check: SizeCheck | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> BenchReport:
    """The reference, the port and (optionally) anchors, in one report: ratios between
    implementations mean something only when they are measured in one run. With `check`,
    no speed is reported at a size where the port's step differs from the reference's;
    `progress` is told each part as it is measured (minutes at big batch sizes)."""
    spec = load_spec(spec_arg)
    subjects = [port_subject(spec, port_arg, target)]
    for name in dict.fromkeys(anchors):  # each named once, in the order given
        subjects.append(anchor_subject(spec, name))
    report = new_report(spec_arg, options)
    # The reference first, while no worker is busy importing.
    started = time.perf_counter()
    report.rows += reference_rows(spec, options)
    progress(f"the reference in {time.perf_counter() - started:.1f} s")
    report.rows += worker_rows(spec, subjects, options, check, progress)
    return report
