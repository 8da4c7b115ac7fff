"""A worker process that hosts one port and answers requests over ZMQ.

Started by `PortWorker`; never imported by the verifier. Everything the port raises is sent
back as the port's own error text, so a broken port is a failed check, not a dead verifier.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import zmq

from envport.serve import sandbox
from envport.serve.wire import ZERO_COPY_BYTES, Request, Response, pack, unpack_request
from envport.targets.loader import PACKAGE, ContractError, import_modules, import_port


def _numpy(outputs: dict[str, Any]) -> dict[str, np.ndarray]:
    if not isinstance(outputs, dict):
        raise ContractError(f"a probe must return a dict of arrays, got {type(outputs).__name__}")
    return {key: np.asarray(value) for key, value in outputs.items()}


VECTOR_OPS = ("vector_open", "vector_reset", "vector_load", "vector_step")


class Host:
    def __init__(self) -> None:
        self.port: Any = None
        self.sandbox: dict[str, Any] = {}
        self._reference: Any = None
        self._probes: dict[str, Any] = {}
        self._jitted: dict[tuple[str, str], Any] = {}

    def load(
        self,
        port_dir: str,
        modules: list[dict[str, Any]],
        entry: str,
        target: str,
        only_modules: bool = False,
        reverse: bool = False,
    ) -> dict:
        rust = target == "rust" or (target == "auto" and (Path(port_dir) / "Cargo.toml").is_file())
        if rust and reverse:
            raise ContractError("reverse injection drives NumPy and JAX ports, not a Rust crate")
        if rust:
            # A Rust port is a crate: built here (compile errors are the load error), then
            # driven through its C ABI. A partial crate is only built.
            from envport.targets.rust_port import load_rust_port

            self.port = load_rust_port(
                Path(port_dir), build_only=only_modules, before_load=sandbox.lockdown
            )
            return {
                "backend": None if only_modules else self.port.backend,
                "sandbox": self.sandbox,
            }
        sandbox.lockdown()
        if only_modules:
            # A port still being generated: its first modules exist, the entry may not.
            import_modules(Path(port_dir), modules, modules[-1]["name"])
            return {"backend": None, "sandbox": self.sandbox}
        entry_module, absent = import_port(Path(port_dir), modules, entry)
        if reverse:
            # A port that cannot load a state: driven from its own resets.
            from envport.targets.reverse_port import reverse_port

            self.port = reverse_port(entry_module, target)
            return {"backend": self.port.backend, "sandbox": self.sandbox}
        if target == "auto":
            target = "numpy" if hasattr(entry_module, "VectorEnv") else "jax"
        if target == "numpy":
            from envport.targets.numpy_port import NumpyPort

            self.port = NumpyPort(entry_module)
        elif target == "jax":
            from envport.targets.jax_port import JaxPort

            self.port = JaxPort(entry_module)
        else:
            raise ContractError(f"target `{target}` cannot be loaded by the Python worker")
        return {"backend": self.port.backend, "sandbox": self.sandbox, "absent_modules": absent}

    def probe(
        self,
        probes_file: str,
        name: str,
        before: dict,
        action: Any,
        after: dict,
        jax: bool = False,
        check_jit: bool = False,
        noise: Any = None,
    ) -> dict:
        """Call one module function through its probe, twice (determinism). JAX ports are
        called compiled, as they run in training, and, when asked, once more eagerly: the
        verifier judges whether jit(f) == f."""
        from envport.verifiers.probes import load_probes

        if probes_file not in self._probes:
            self._probes[probes_file] = load_probes(Path(probes_file))
        found = self._probes[probes_file][name]
        module = importlib.import_module(f"{PACKAGE}.{found.module}")

        def eager(b: dict, a: Any, f: dict, n: Any = None) -> Any:
            # A stochastic env's probe also gets the step's noise (docs/design.md, contract 3).
            return found.call(module, b, a, f) if n is None else found.call(module, b, a, f, n)

        call = eager
        if jax:
            import jax as jax_module

            key = (probes_file, name)
            if key not in self._jitted:
                self._jitted[key] = jax_module.jit(eager)
            call = self._jitted[key]
        result = {
            "first": _numpy(call(before, action, after, noise)),
            "second": _numpy(call(before, action, after, noise)),
        }
        if jax and check_jit:
            result["eager"] = _numpy(eager(before, action, after, noise))
        return result

    def load_reference(self, spec: str) -> dict:
        """Host the reference env (trusted code: the user's own) to play L3 episodes."""
        from envport.spec import load_spec
        from envport.verifiers.reference import Reference

        if self._reference is None or self._reference[0] != spec:
            loaded = load_spec(spec)
            self._reference = (spec, loaded, Reference(loaded))
        return {"sandbox": self.sandbox}

    def play_reference(self, spec: str, options: dict[str, Any], indices: list[int]) -> dict:
        """Play reference episodes for L3, packed."""
        from envport.verifiers import l3

        self.load_reference(spec)
        _, loaded, reference = self._reference
        return l3.play_reference(reference, loaded, l3.L3Options(**options), indices).to_wire()

    def handle(self, request: Request) -> Any:
        if request.op == "ping":
            return {"pid": os.getpid()}
        if request.op == "load":
            return self.load(**request.args)
        if request.op == "probe":
            return self.probe(**request.args)
        if request.op == "load_reference":
            return self.load_reference(**request.args)
        if request.op == "play_reference":
            return self.play_reference(**request.args)
        if request.op == "bench":
            # Steps per second of the port, or of an anchor loaded by name (no port needed).
            from envport.targets.bench import run_bench

            return run_bench(self.port, **request.args)
        if self.port is None:
            raise ContractError("no port loaded")
        if request.op == "rollout":
            return self.port.rollout(**request.args)
        if request.op in ("step_batch", "session_load", "session_step", "session_read"):
            return getattr(self.port, request.op)(**request.args)
        if request.op == "batch_vs_single":
            return self.port.batch_vs_single(**request.args)
        if request.op in ("reverse_reset", "reverse_rollout"):
            return getattr(self.port, request.op)(**request.args)
        if request.op == "sample_noise":
            return self.port.sample_noise(**request.args)
        if request.op in ("reset_samples", "sample_step"):
            # The paths users call: reset, and a stochastic env's step with its own draws.
            return getattr(self.port, request.op)(**request.args)
        if request.op in VECTOR_OPS:
            # NumPy's VectorEnv driven op by op (the vector-API check): no other backend has one.
            if not hasattr(self.port, request.op):
                raise ContractError(
                    f"`{request.op}`: the {self.port.backend} port has no VectorEnv"
                )
            return getattr(self.port, request.op)(**request.args)
        if request.op in ("l4_train", "l4_evaluate"):
            # L4: the harness's trainer and evaluator run here, beside the port they drive.
            from envport.verifiers import l4_port

            return getattr(l4_port, request.op)(self.port, **request.args)
        raise ContractError(f"unknown op {request.op}")


def _port_frames(error: BaseException) -> str:
    """The traceback lines that point into the port, which is what a repair needs."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if f"/{PACKAGE}" in f.filename or "/ports/" in f.filename]
    return "".join(traceback.format_list(inside or frames[-3:]))


def _exit_with_parent(parent: int) -> None:
    # A worker whose verifier died must not live on holding a CPU.
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def _answer(host: Host, request: Request) -> Response:
    try:
        return Response(id=request.id, ok=True, result=host.handle(request))
    except BaseException as error:  # the port's failure is data to report, not a crash
        return Response(
            id=request.id,
            ok=False,
            error=f"{type(error).__name__}: {error}".strip(),
            detail=_port_frames(error),
        )


def _send(socket: zmq.Socket, message: bytes) -> None:
    socket.send(message, copy=len(message) < ZERO_COPY_BYTES)


def serve(
    address: str,
    preload: dict[str, Any] | None = None,
    limits: sandbox.Limits | None = None,
    preload_op: str = "load",
    parent: int | None = None,
) -> None:
    _exit_with_parent(parent if parent is not None else os.getppid())
    applied = sandbox.apply_process_limits(limits or sandbox.Limits())
    sandbox.install_guard([Path.cwd()])
    budget = (limits or sandbox.Limits()).cpu_seconds_per_request
    context = zmq.Context()
    socket = context.socket(zmq.PAIR)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.connect(address)
    host = Host()
    host.sandbox = {"network": applied.network, "memory_bytes": applied.memory_bytes}
    if preload is not None:
        with sandbox.cpu_budget(budget):
            answer = _answer(host, Request(id=1, op=preload_op, args=preload))
        _send(socket, pack(answer))
    while True:
        request = unpack_request(socket.recv())
        if request.op == "shutdown":
            socket.send(pack(Response(id=request.id, ok=True)))
            break
        with sandbox.cpu_budget(budget):
            answer = _answer(host, request)
        _send(socket, pack(answer))
    socket.close()
    context.term()
    # Nothing is left to save: skip interpreter teardown (slow with JAX loaded).
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description="envport port worker (started by envport)")
    parser.add_argument("--address", required=True)
    # The starter's pid, given rather than read: a worker whose starter died before it ran
    # would otherwise take init for its parent and live on.
    parser.add_argument("--parent", type=int)
    parser.add_argument("--load", help="JSON arguments of a load request to run at start-up")
    parser.add_argument("--preload-op", default="load", help="the op --load's arguments are for")
    parser.add_argument("--limits", help="JSON sandbox limits")
    args = parser.parse_args()
    limits = sandbox.Limits.model_validate_json(args.limits) if args.limits else None
    serve(
        args.address,
        json.loads(args.load) if args.load else None,
        limits,
        args.preload_op,
        args.parent,
    )


if __name__ == "__main__":
    main()
