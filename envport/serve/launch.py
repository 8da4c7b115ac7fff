"""What a worker is started with: the paths its sandbox lets it read and write, its
config and cache homes, its compilation cache, and its limits. Decided by the driver from
the fields it set itself, before the worker exists (envport.serve.client starts it)."""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

from envport.serve import compile_cache
from envport.serve.ops import LoadPort, LoadReference, Op, PlayReference
from envport.serve.sandbox import Limits
from envport.variant import spec_folders


def scratch_homes(scratch: Path) -> dict[str, str]:
    """Config and cache homes inside the worker's scratch, made before it starts. Libraries a
    port imports create their folders on import (envpool makes Matplotlib's under /tmp unless
    MPLCONFIGDIR is set), and the sandbox lets a port write only in its scratch; a variable a
    user's shell happens to hold must not decide whether a port loads."""
    homes = {
        "TMPDIR": scratch,
        "XDG_CONFIG_HOME": scratch / "config",
        "XDG_CACHE_HOME": scratch / "cache",
        "MPLCONFIGDIR": scratch / "config" / "matplotlib",
    }
    for path in homes.values():
        path.mkdir(parents=True, exist_ok=True)
    return {name: str(path) for name, path in homes.items()}


def own_paths(load: Op | None) -> list[Path]:
    """What a worker's first request needs to read, from the fields the driver itself set:
    a port's directory, a reference's spec and the folder of its harness files. Never a
    scan of the request's strings: a module's contract or a plan's text may name any path
    (`/proc/self/cwd`), and naming one must not make it visible."""
    if isinstance(load, LoadPort):
        # The shared build cache is read-only in every worker (`crate_cache`).
        cache = [Path(load.build_cache)] if load.build_cache is not None else []
        return [Path(load.port_dir), *cache]
    if isinstance(load, LoadReference | PlayReference):
        spec = Path(load.spec)
        # The spec's folder and, for a variant, its bases' (envport.variant): the spec file
        # is the driver's own, read here, never the request's text.
        return [spec, *spec_folders(spec)]
    return []


def builds_rust(load: Op | None) -> bool:
    """Whether a worker may compile a crate: only a Rust port's sees the toolchain. (The
    target's names as `envport.targets.names` spells them; that layer is above this one.)"""
    if not isinstance(load, LoadPort):
        return False
    crate = (Path(load.port_dir) / "Cargo.toml").is_file()
    return load.target == "rust" or (load.target == "auto" and crate)


def own_writable(load: Op | None) -> list[Path]:
    """What a worker may change besides its scratch: a JAX port's own compilation cache,
    the directory the driver keyed by that port's files (`with_compile_cache` made it)."""
    if not isinstance(load, LoadPort) or load.build_only or load.compile_cache is None:
        return []
    return [Path(load.compile_cache)]


def with_compile_cache(load: LoadPort) -> LoadPort:
    """The load request with its compilation cache made and the others pruned, or without
    one when the cache home cannot be written (a read-only home in CI): the cache only
    saves time, and a worker told of a directory it cannot write would fail to compile."""
    if load.compile_cache is None or load.build_only:
        return load
    try:
        compile_cache.prepare(Path(load.compile_cache))
    except OSError:
        return dataclasses.replace(load, compile_cache=None)
    return load


def request_limits(timeout: float) -> Limits:
    """The sandbox's default limits, with CPU seconds enough for a request that runs the
    whole `timeout` on every core (JAX does): the wall-clock timeout, not the CPU budget,
    is what a slow request should meet (pgx's chess at B=4096 under `bench --timeout`)."""
    default = Limits()
    cores = os.cpu_count() or 1
    budget = max(default.cpu_seconds_per_request, math.ceil(timeout * cores))
    return default.model_copy(update={"cpu_seconds_per_request": budget})
