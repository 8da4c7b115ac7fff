"""Loading a port inside a worker: its adapter chosen and opened behind `PortBackend`.

An adapter wraps a port (a JAX module, a NumPy `VectorEnv`, a Rust crate's C ABI) behind
the same batched calls (port_api.py), so the verifier's levels never ask which backend they
drive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envport.serve.ops import LoadPort
from envport.targets.game_port import JaxGame, NumpyGame, game_target, is_game
from envport.targets.holding import Holder, holder
from envport.targets.loader import ContractError, import_modules, import_port
from envport.targets.registry import AUTO, TARGET_NAMES, TargetName, python_target, target


@dataclass
class Opened:
    """What loading gave: the adapter (None when only modules were imported or a crate only
    built) and the spec's modules the port has no file for."""

    port: Any = None
    absent: list[str] | None = None
    # A crate's built library: its probes call the module functions it exports.
    library: Path | None = None
    # The port's `can_hold` over a batch (holding.py); None: it holds every state.
    holds: Holder | None = None

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
    game = is_game(entry)
    if request.target != AUTO:
        name = request.target
    else:
        name = game_target() if game else python_target(entry)
    adapter = target(name).adapter if name in TARGET_NAMES else None
    if adapter is None:
        raise ContractError(f"target `{name}` cannot be loaded by the Python worker")
    holds = holder(entry, name, game)
    if game:
        # A two-player port: its pgx-style functions in the form the adapter drives.
        shim = JaxGame(entry) if name == TargetName.JAX else NumpyGame(entry)
        return Opened(adapter(shim), absent, holds=holds)  # type: ignore[arg-type]
    return Opened(adapter(entry), absent, holds=holds)
