"""The interface every port adapter implements: the batched calls, and the capabilities
some backends lack (a Rust crate draws no noise of its own and has no reset, only a NumPy
port has a `VectorEnv`, only reverse injection reads start states back).

Apart from backend.py (which opens a port) so that the registry can name the interface its
adapters return without importing the module that imports the registry.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

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
        read_state: bool = False,
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
