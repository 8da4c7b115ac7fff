"""The interface every port adapter implements, and loading one inside a worker.

An adapter wraps a port (a JAX module, a NumPy `VectorEnv`, a Rust crate's C ABI) behind
the same batched calls, so the verifier's levels never ask which backend they drive. The
optional parts are capabilities some backends lack: a Rust crate draws no noise of its own
and has no reset, only a NumPy port has a `VectorEnv`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from envport.serve.ops import LoadPort
from envport.targets.loader import ContractError, import_modules, import_port
from envport.targets.registry import AUTO, TARGET_NAMES, TargetName, python_target, target

States = dict[str, np.ndarray]


@runtime_checkable
class PortBackend(Protocol):
    backend: str

    def rollout(
        self,
        states: States,
        actions: np.ndarray,
        noise: np.ndarray | None = None,
        pad_to: Any = None,
    ) -> dict[str, Any]: ...

    def step_batch(
        self,
        states: States,
        actions: np.ndarray,
        eager: bool = False,
        noise: np.ndarray | None = None,
        pad_to: Any = None,
    ) -> dict[str, Any]: ...

    def session_load(self, states: States) -> dict[str, Any]: ...

    def session_step(
        self, actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]: ...

    def session_read(self) -> dict[str, Any] | None: ...

    def batch_vs_single(
        self, states: States, actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]: ...


@runtime_checkable
class OwnRandomness(Protocol):
    """A port that draws its own noise and resets itself (JAX, NumPy)."""

    def sample_noise(self, states: States, actions: np.ndarray, seed: int) -> dict[str, Any]: ...

    def sample_step(self, states: States, actions: np.ndarray, seed: int) -> dict[str, Any]: ...

    def reset_samples(self, count: int, seed: int, chunk: int) -> dict[str, Any]: ...


@runtime_checkable
class StateContract(Protocol):
    """A port whose loaded states are its own objects (JAX, NumPy): the probe that loading
    keeps none of the caller's arrays and reading hands out copies (envport.targets.state_api)."""

    def state_api(self, states: States, actions: np.ndarray) -> dict[str, Any]: ...


@runtime_checkable
class VectorApi(Protocol):
    """A Gymnasium `VectorEnv` driven op by op (NumPy)."""

    def vector_open(self, num_envs: int) -> dict[str, Any]: ...

    def vector_reset(self, seed: int | None = None, mask: Any = None) -> dict[str, Any]: ...

    def vector_load(self, states: States) -> dict[str, Any]: ...

    def vector_step(
        self, actions: np.ndarray, noise: np.ndarray | None = None
    ) -> dict[str, Any]: ...


@runtime_checkable
class ReverseBackend(Protocol):
    """A port that cannot load a state, driven from its own resets (reverse injection)."""

    backend: str

    def reverse_reset(self, num_envs: int, seed: int) -> dict[str, Any]: ...

    def reverse_rollout(self, actions: np.ndarray, noise: np.ndarray | None = None) -> dict: ...


@dataclass
class Opened:
    """What loading gave: the adapter (None when only modules were imported or a crate only
    built) and the spec's modules the port has no file for."""

    port: Any = None
    absent: list[str] | None = None
    # A crate's built library: its probes call the module functions it exports.
    library: Path | None = None

    @property
    def backend(self) -> str | None:
        return None if self.port is None else self.port.backend


def open_port(request: LoadPort, lockdown: Callable[[], None]) -> Opened:
    """Import or build the port a load request names, in the worker. `lockdown` closes the
    sandbox before any of the port's code runs (a crate's after it is compiled)."""
    port_dir = Path(request.port_dir)
    rust = request.target == TargetName.RUST or (
        request.target == AUTO and target(TargetName.RUST).owns(port_dir)
    )
    if rust and request.reverse:
        raise ContractError("reverse injection drives NumPy and JAX ports, not a Rust crate")
    if rust:
        # A Rust port is a crate: built here (compile errors are the load error), then
        # driven through its C ABI. A partial crate is only built.
        from envport.targets.rust_port import load_rust_port

        cache = None if request.build_cache is None else Path(request.build_cache)
        # A partial crate (its entry not written yet) declares only the modules so far.
        partial = [m["name"] for m in request.modules] if request.only_modules else None
        built = load_rust_port(
            port_dir,
            request.only_modules or request.build_only,
            lockdown,
            cache,
            partial,
            request.allow_crates,
            request.allow_build_code,
        )
        return Opened(built.port, library=built.library)
    lockdown()
    if request.only_modules:
        # A port still being generated: its first modules exist, the entry may not.
        import_modules(port_dir, request.modules, request.modules[-1]["name"])
        return Opened()
    entry, absent = import_port(port_dir, request.modules, request.entry)
    if request.reverse:
        from envport.targets.reverse_port import reverse_port

        return Opened(reverse_port(entry, request.target))
    name = python_target(entry) if request.target == AUTO else request.target
    adapter = target(name).adapter if name in TARGET_NAMES else None
    if adapter is None:
        raise ContractError(f"target `{name}` cannot be loaded by the Python worker")
    return Opened(adapter(entry), absent)
