"""What a port worker does with each request: the program `PortWorker` starts.

`envport.serve.worker` owns the process (sandbox, socket, timeouts); this module owns the
answers: it loads the port through the target registry, calls its adapter, and runs the
verifier's worker-side parts (probes, the reference's L3 episodes, L4's trainers) beside
the port they drive. Everything the port raises goes back as the port's own error text.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from envport import heap
from envport.serve import compile_cache, ops, sandbox
from envport.serve.wire import Request
from envport.serve.worker import PORT_PACKAGE, run_worker
from envport.targets.backend import open_port
from envport.targets.loader import ContractError
from envport.targets.port_api import OwnRandomness, ReverseBackend, StateContract, VectorApi
from envport.verifiers.options import L3Options


def _numpy(outputs: dict[str, Any]) -> dict[str, np.ndarray]:
    if not isinstance(outputs, dict):
        raise ContractError(f"a probe must return a dict of arrays, got {type(outputs).__name__}")
    return {key: np.asarray(value) for key, value in outputs.items()}


class Host:
    def __init__(self) -> None:
        self.port: Any = None
        # The port's `can_hold` over a batch (envport.targets.holding), when it has one.
        self.holds: Any = None
        self.sandbox: dict[str, Any] = {}
        self._reference: Any = None
        self._probes: dict[str, Any] = {}
        self._jitted: dict[tuple[str, str], Any] = {}
        # A Rust port's built library: probes call its module functions through the C ABI.
        self._crate: Any = None

    def load(self, request: ops.LoadPort) -> dict:
        if request.compile_cache is not None:
            # Before the port's code runs: JAX reads and keeps this port's compiled programs
            # in the directory the driver keyed by its files (docs/isolation.md).
            sandbox.allow_writes(Path(request.compile_cache))
            compile_cache.enable(request.compile_cache)
        opened = open_port(request, sandbox.lockdown)
        self.sandbox["processes"] = sandbox.PROCESSES
        if request.build_only:
            # A build worker: the driver takes the library from this scratch directory.
            return {"backend": "rust", "sandbox": self.sandbox}
        self.port = opened.port
        self.holds = opened.holds
        self._crate = None
        if opened.library is not None:
            from envport.targets.rust_port import CrateSymbols

            self._crate = CrateSymbols(opened.library)
        answer: dict[str, Any] = {"backend": opened.backend, "sandbox": self.sandbox}
        if opened.absent is not None:
            answer["absent_modules"] = opened.absent
        return answer

    def probe(self, request: ops.Probe) -> dict:
        """Call one module function through its probe on each input, twice (determinism).
        JAX ports are called compiled, as they run in training, and the first inputs asked
        for once more eagerly: the verifier judges whether jit(f) == f."""
        from envport.verifiers.draws.probes import load_probes

        probes_file, name = request.probes_file, request.name
        if probes_file not in self._probes:
            self._probes[probes_file] = load_probes(Path(probes_file))
        found = self._probes[probes_file][name]
        # A crate's probes get its exported C functions; a Python port's, the module.
        module = self._crate or importlib.import_module(f"{PORT_PACKAGE}.{found.module}")

        def eager(b: dict, a: Any, f: dict | None, n: Any = None) -> Any:
            # A stochastic env's probe also gets the step's noise (docs/design.md, contract 3).
            return found.call(module, b, a, f) if n is None else found.call(module, b, a, f, n)

        call = eager
        if request.jax:
            import jax as jax_module

            key = (probes_file, name)
            if key not in self._jitted:
                self._jitted[key] = jax_module.jit(eager)
            call = self._jitted[key]
        none: list[Any] = [None] * len(request.befores)
        afters: list[Any] = request.afters or none
        noises: list[Any] = request.noises or none
        first, second, eagerly = [], [], []
        for index, (before, action, after, noise) in enumerate(
            zip(request.befores, request.actions, afters, noises, strict=True)
        ):
            first.append(_numpy(call(before, action, after, noise)))
            second.append(_numpy(call(before, action, after, noise)))
            if request.jax and index < request.eager_first:
                eagerly.append(_numpy(eager(before, action, after, noise)))
        return {"first": first, "second": second, "eager": eagerly}

    def load_reference(self, request: ops.LoadReference) -> dict:
        """Host the reference env (trusted code: the user's own) to play L3 episodes."""
        from envport.spec import load_spec
        from envport.targets.reference import Reference

        if self._reference is None or self._reference[0] != request.spec:
            loaded = load_spec(request.spec)
            self._reference = (request.spec, loaded, Reference(loaded))
        return {"sandbox": self.sandbox}

    def play_reference(self, request: ops.PlayReference) -> dict:
        """Play reference episodes for L3, packed."""
        from envport.verifiers.levels.l3 import rollout as l3

        self.load_reference(ops.LoadReference(spec=request.spec))
        _, loaded, reference = self._reference
        options = L3Options(**request.options)
        if not request.measure:
            return l3.play_reference(reference, loaded, options, request.indices).to_wire()
        from envport.verifiers.coverage.branches import measured

        played, arcs = measured(
            request.measure, lambda: l3.play_reference(reference, loaded, options, request.indices)
        )
        return {**played.to_wire(), "arcs": arcs}

    def handle(self, request: Request) -> Any:
        return self.answer(ops.decode(request))

    def answer(self, op: ops.Op) -> Any:
        match op:
            case ops.Ping():
                # The compilation cache's hits and misses: what a warm run saved.
                return {"pid": os.getpid(), "compile_cache": dict(compile_cache.COUNTS)}
            case ops.LoadPort():
                return self.load(op)
            case ops.Probe():
                return self.probe(op)
            case ops.LoadReference():
                return self.load_reference(op)
            case ops.PlayReference():
                return self.play_reference(op)
            case ops.Bench():
                # Steps per second of the port, or of an anchor loaded by name (no port needed).
                from envport.targets.bench.measure import run_bench

                return run_bench(self.port, **op.args())
        port = self.port
        if port is None:
            raise ContractError("no port loaded")
        if self.holds is not None and isinstance(op, _LOADS):
            _refuse_unheld(self.holds, op.states)
        match op:
            case ops.Rollout():
                return port.rollout(**op.args())
            case ops.StepBatch():
                return port.step_batch(**op.args())
            case ops.Holds():
                return {"held": None if self.holds is None else self.holds(op.states)}
            case ops.StepTiled():
                return _tiled_step(port, op)
            case ops.SessionLoad():
                return port.session_load(op.states)
            case ops.SessionStep():
                return port.session_step(**op.args())
            case ops.SessionScript():
                return [self.answer(step) for step in op.ops()]
            case ops.SessionRead():
                return port.session_read()
            case ops.BatchVsSingle():
                return port.batch_vs_single(**op.args())
            case ops.StateApi():
                return _able(port, StateContract, op, "loads no state it owns").state_api(
                    **op.args()
                )
            case ops.ReverseReset() | ops.ReverseRollout():
                return getattr(_able(port, ReverseBackend, op, "no reverse driver"), op.op)(
                    **op.args()
                )
            case ops.SampleNoise() | ops.SampleStep() | ops.ResetSamples():
                # The paths users call: reset, and a stochastic env's step with its own draws.
                able = _able(port, OwnRandomness, op, "draws no noise of its own")
                return getattr(able, op.op)(**op.args())
            case ops.ResetAfter():
                # A reset that follows an episode: what the port keeps across it.
                from envport.targets.carry import reset_after

                able = _able(port, OwnRandomness, op, "has no reset of its own")
                return reset_after(able, op.states, op.seed)
            case ops.VectorOpen() | ops.VectorReset() | ops.VectorLoad() | ops.VectorStep():
                # NumPy's VectorEnv driven op by op (the vector-API check).
                return getattr(_able(port, VectorApi, op, "has no VectorEnv"), op.op)(**op.args())
            case ops.L4Train() | ops.L4Evaluate():
                # L4: the harness's trainer and evaluator run here, beside the port they drive.
                from envport.verifiers.levels.l4 import port as l4_port

                return getattr(l4_port, op.op)(port, **op.args())
        raise ContractError(f"unknown op {op.op}")


# The requests that load the states they carry into the port. The checks drawing states ask
# `holds` first and send only those held; every other state a check loads was reached by the
# reference in play (L3, L2's batches, the noise checks), which a port must hold.
_LOADS = (
    ops.Rollout,
    ops.StepBatch,
    ops.StepTiled,
    ops.SessionLoad,
    ops.BatchVsSingle,
    ops.StateApi,
    ops.VectorLoad,
    ops.SampleNoise,
    ops.SampleStep,
)


def _refuse_unheld(holds: Any, states: dict[str, np.ndarray]) -> None:
    """A state the port's `can_hold` refuses, asked to be loaded, is the port's failure."""
    held = holds(states)
    if not held.all():
        refused = np.flatnonzero(~held)
        raise ContractError(
            f"the port cannot hold {len(refused)} of {len(held)} states the reference reached "
            f"in play (`can_hold` refused row {int(refused[0])}); a port must hold every state "
            "play reaches"
        )


def _tiled_step(port: Any, op: ops.StepTiled) -> dict[str, Any]:
    """The batch of `op.rows` stepped as one, answered for the kept envs only."""
    rows = np.asarray(op.rows)
    answer = port.step_batch(
        states={name: np.take(value, rows, axis=0) for name, value in op.states.items()},
        actions=np.take(op.actions, rows, axis=0),
        noise=None if op.noise is None else np.take(op.noise, rows, axis=0),
    )
    kept = np.asarray(op.kept)
    for name in ("obs", "reward", "terminated", "truncated"):
        # Rows lost or added by the port: said here, before the kept rows are picked.
        count = len(np.asarray(answer[name])) if np.ndim(answer[name]) else 0
        if count != len(rows):
            raise ContractError(f"a batch of {len(rows)} envs answered {count} rows of `{name}`")
        answer[name] = np.asarray(answer[name])[kept]
    return answer


def _able(port: Any, capability: type, op: ops.Op, lacking: str) -> Any:
    if not isinstance(port, capability):
        raise ContractError(f"`{op.op}`: the {port.backend} port {lacking}")
    return port


def main() -> None:
    heap.collect_in_batches()
    run_worker(Host)


if __name__ == "__main__":
    main()
