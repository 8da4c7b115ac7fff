"""The requests a port worker answers, one small type per op.

Each is packed on the wire as the op's name and its fields (`Request`), and the worker
turns them back into the type before it acts (`decode`). An optional field left at None is
not sent at all: a deterministic env's requests carry no `noise`, exactly as before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from envport.serve.wire import Op as WireOp
from envport.serve.wire import Request

States = dict[str, np.ndarray]


@dataclass(frozen=True)
class Op:
    op: ClassVar[WireOp]

    def args(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if not (f.default is None and getattr(self, f.name) is None)
        }

    def request(self, id: int) -> Request:
        return Request(id=id, op=self.op, args=self.args())


@dataclass(frozen=True)
class Ping(Op):
    op = "ping"


@dataclass(frozen=True)
class Describe(Op):
    """What an `envport serve` process hosts (answered by the server, not a worker)."""

    op = "describe"


@dataclass(frozen=True)
class LoadPort(Op):
    """Import (or build) a port in the worker: the one request every port worker starts with."""

    op = "load"
    port_dir: str
    # The target's modules in dependency order, as plain data: [{"name", "exports"}, ...].
    modules: list[dict[str, Any]]
    entry: str
    target: str
    # A port still being generated: import its modules so far, the entry may not exist yet.
    only_modules: bool = False
    # A port that cannot load a state, driven from its own resets (docs/design.md, L3).
    reverse: bool = False
    # The shared cache of built crates (read-only in the worker), and the key the driver
    # computed for this crate; a build worker (`build_only`) compiles and loads nothing.
    build_cache: str | None = None
    build_key: str | None = None
    build_only: bool = False
    # What the spec lets a crate's build use (`targets.rust`): dependencies by name, and
    # build scripts and proc-macros.
    allow_crates: list[str] = field(default_factory=list)
    allow_build_code: bool = False
    # A JAX port's own persistent compilation cache (`compile_cache`): the directory the
    # driver named from the port's content, the one place besides its scratch it writes.
    compile_cache: str | None = None


@dataclass(frozen=True)
class LoadReference(Op):
    """Host the reference env (the user's trusted code) in a reference worker."""

    op = "load_reference"
    spec: str


@dataclass(frozen=True)
class PlayReference(Op):
    op = "play_reference"
    spec: str
    options: dict[str, Any]  # an L3Options as a dict
    indices: list[int]
    # The reference's files to measure branch coverage of while playing (none: no measure).
    measure: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Probe(Op):
    """One module function through its probe on each of a batch of drawn inputs: one round
    trip for all of an L1 check's examples (the worker calls the function per input)."""

    op = "probe"
    probes_file: str
    name: str
    befores: list[States]
    actions: list[Any]
    # The reference's next states: sent only to a probe whose call reads them (an input, as
    # for is_terminated); otherwise they would hand the port the expected answers.
    afters: list[States] | None
    jax: bool = False
    # How many of the first inputs are also called eagerly (JAX: the jit(f) == f check).
    eager_first: int = 0
    noises: list[Any] | None = None


@dataclass(frozen=True)
class Rollout(Op):
    """B episodes free-running from their start states: actions and noise are (B, T, ...)."""

    op = "rollout"
    states: States
    actions: np.ndarray
    noise: np.ndarray | None = None
    pad_to: list[int] | None = None


@dataclass(frozen=True)
class StepBatch(Op):
    """One step of each of B states (resync: every state injected)."""

    op = "step_batch"
    states: States
    actions: np.ndarray
    eager: bool = False
    noise: np.ndarray | None = None
    pad_to: list[int] | None = None
    # Answer also with each env's state after its step, as the reference's fields (`state`,
    # None when the port has no `state_to_reference`): L1 and L3 compare the state a step
    # leaves behind in the same round trip as its outputs.
    read_state: bool = False


@dataclass(frozen=True)
class Holds(Op):
    """Which of a batch of states the port can hold (its optional `can_hold`): answered
    `{"held": bool[B]}`, or `{"held": None}` by a port that holds every state."""

    op = "holds"
    states: States


@dataclass(frozen=True)
class StepTiled(Op):
    """One step of a batch of `len(rows)` envs built in the worker from a few distinct ones:
    env i steps from row `rows[i]` of `states` with that row's action (and noise), and the
    answer holds the outputs of the envs `kept` only. A batch of 8192 chess positions costs
    the wire its 61 distinct states and the kept rows, not 8192 of each (l2.sizes, bench)."""

    op = "step_tiled"
    states: States
    actions: np.ndarray
    rows: np.ndarray
    kept: np.ndarray
    noise: np.ndarray | None = None


@dataclass(frozen=True)
class SessionLoad(Op):
    op = "session_load"
    states: States


@dataclass(frozen=True)
class SessionStep(Op):
    op = "session_step"
    actions: np.ndarray
    noise: np.ndarray | None = None


@dataclass(frozen=True)
class SessionScript(Op):
    """Session loads and steps, run in order in one request: L2's sequences, kept while the
    reference played them, sent at once (a round trip per step costs more than the step)."""

    op = "session_script"
    steps: list[dict[str, Any]]

    @classmethod
    def of(cls, ops: list[Op]) -> SessionScript:
        return cls(steps=[{"op": op.op, "args": op.args()} for op in ops])

    def ops(self) -> list[Op]:
        """The script's requests; a step of another kind is refused (UnknownOp)."""
        kinds: dict[Any, type[Op]] = {SessionLoad.op: SessionLoad, SessionStep.op: SessionStep}
        found = []
        for step in self.steps:
            kind = kinds.get(step.get("op"))
            if kind is None or not isinstance(step.get("args"), dict):
                raise UnknownOp(f"a session script runs session loads and steps, got {step!r:.80}")
            try:
                found.append(kind(**step["args"]))
            except TypeError as error:
                raise UnknownOp(f"`{step['op']}` in a session script: {error}") from None
        return found


@dataclass(frozen=True)
class SessionRead(Op):
    op = "session_read"


@dataclass(frozen=True)
class BatchVsSingle(Op):
    op = "batch_vs_single"
    states: States
    actions: np.ndarray
    noise: np.ndarray | None = None


@dataclass(frozen=True)
class StateApi(Op):
    """The state API's own contract (no aliasing of the caller's arrays), probed in the
    worker with these states and one step of these actions."""

    op = "state_api"
    states: States
    actions: np.ndarray


@dataclass(frozen=True)
class SampleNoise(Op):
    """The port's own noise sampler, for the sampler's two-sample test."""

    op = "sample_noise"
    states: States
    actions: np.ndarray
    seed: int


@dataclass(frozen=True)
class SampleStep(Op):
    """The step users call, drawing its own noise."""

    op = "sample_step"
    states: States
    actions: np.ndarray
    seed: int


@dataclass(frozen=True)
class ResetSamples(Op):
    op = "reset_samples"
    count: int
    seed: int
    chunk: int


@dataclass(frozen=True)
class ResetAfter(Op):
    """The port's reset after each of these states (where an episode ended), read back:
    what it keeps across a reset (envport.targets.carry)."""

    op = "reset_after"
    states: States
    seed: int


@dataclass(frozen=True)
class ReverseReset(Op):
    op = "reverse_reset"
    num_envs: int
    seed: int


@dataclass(frozen=True)
class ReverseRollout(Op):
    op = "reverse_rollout"
    actions: np.ndarray
    noise: np.ndarray | None = None


@dataclass(frozen=True)
class VectorOpen(Op):
    op = "vector_open"
    num_envs: int


@dataclass(frozen=True)
class VectorReset(Op):
    op = "vector_reset"
    seed: int | None = None
    mask: Any = None


@dataclass(frozen=True)
class VectorLoad(Op):
    op = "vector_load"
    states: States


@dataclass(frozen=True)
class VectorStep(Op):
    op = "vector_step"
    actions: np.ndarray
    noise: np.ndarray | None = None


@dataclass(frozen=True)
class L4Train(Op):
    op = "l4_train"
    plan: dict[str, Any]
    seed: int
    starts: States
    start_obs: np.ndarray


@dataclass(frozen=True)
class L4Evaluate(Op):
    op = "l4_evaluate"
    policies: list[dict[str, Any]]
    starts: States
    start_obs: np.ndarray
    max_steps: int
    seed: int


@dataclass(frozen=True)
class Bench(Op):
    """Steps per second of the port, or of an anchor named `gymnax:EnvId` or
    `xminigrid:EnvId` (no port needed)."""

    op = "bench"
    batch: int
    steps: int
    repeats: int
    actions: np.ndarray
    states: States | None = None
    anchor: str | None = None
    seed: int = 0


class Requester(Protocol):
    """What the levels talk to: a local `PortWorker` or an `envport serve` `EnvClient`."""

    def request(self, op: Op, timeout: float | None = None) -> Any: ...


OPS: dict[str, type[Op]] = {
    kind.op: kind
    for kind in (
        Ping,
        Describe,
        LoadPort,
        LoadReference,
        PlayReference,
        Probe,
        Rollout,
        StepBatch,
        Holds,
        StepTiled,
        SessionLoad,
        SessionStep,
        SessionScript,
        SessionRead,
        BatchVsSingle,
        StateApi,
        SampleNoise,
        SampleStep,
        ResetSamples,
        ResetAfter,
        ReverseReset,
        ReverseRollout,
        VectorOpen,
        VectorReset,
        VectorLoad,
        VectorStep,
        L4Train,
        L4Evaluate,
        Bench,
    )
}


class UnknownOp(Exception):
    """A request for an op no worker answers, or with arguments its type does not have."""


def decode(request: Request) -> Op:
    kind = OPS.get(request.op)
    if kind is None:
        raise UnknownOp(f"unknown op {request.op}")
    try:
        return kind(**request.args)
    except TypeError as error:
        raise UnknownOp(f"`{request.op}`: {error}") from None
