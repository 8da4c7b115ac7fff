"""Joining a Ray cluster (or starting a local one) for `--executor ray`.

Ray is an optional extra: nothing here imports it at module level, so the default local
executors never load it, and a missing Ray is one line and exit 2, not a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
from types import ModuleType

from envport.errors import EnvportError

EXECUTORS = ("local", "ray")
# Where `--address` is read from when the flag is not given (Ray's own variable).
ADDRESS_VARIABLE = "RAY_ADDRESS"
# How long joining waits for a cluster's head to answer at all: Ray itself retries for
# minutes on an address where nothing listens.
REACH_TIMEOUT_S = 10.0
_HOST_PORT = re.compile(r"^(?P<host>[^:/]+|\[[^\]]+\]):(?P<port>\d+)$")


def add_executor_options(parser: argparse.ArgumentParser, what: str) -> None:
    """`--executor` and `--address`, shared by `verify` and `batch`."""
    parser.add_argument(
        "--executor",
        choices=list(EXECUTORS),
        default="local",
        help=f"where {what} run: this machine (default) or Ray tasks (needs envport[ray])",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help=f"with --executor ray: the Ray cluster to join (default ${ADDRESS_VARIABLE}, else "
        "a local Ray started on this machine)",
    )


def require_ray() -> ModuleType:
    """The `ray` module, or the usage error that says how to get it."""
    try:
        import ray
    except ImportError:
        raise EnvportError(
            "--executor ray needs Ray, which is not installed here: "
            "pip install 'envport[ray]' (or drop --executor ray to run locally)"
        ) from None
    return ray


def connect(address: str | None = None) -> ModuleType:
    """Join the cluster at `address` (or $RAY_ADDRESS); with neither, start a local Ray on
    this machine's cores. Already connected (a test's or a notebook's `ray.init`): kept."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    address = address or os.environ.get(ADDRESS_VARIABLE) or None
    if address is not None:
        _reach(address)
    try:
        ray.init(
            # "local": a new instance, never a cluster someone left running with `ray start`.
            address=address or "local",
            include_dashboard=False,
            logging_level=logging.WARNING,
            # The workers' own prints are not the driver's output (a port's never reaches
            # here anyway: it runs in a sandboxed worker of its own).
            log_to_driver=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = address or "a local Ray instance"
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise EnvportError(
            f"--executor ray: cannot join {where}: {first} (check --address or ${ADDRESS_VARIABLE})"
        ) from None
    return ray


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs the cluster offers now (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _reach(address: str) -> None:
    """A head at `host:port` that does not accept a connection is one line now, not Ray's
    minutes of retries (other forms, such as ray:// client addresses, are left to Ray)."""
    found = _HOST_PORT.match(address)
    if found is None:
        return
    host, port = found["host"].strip("[]"), int(found["port"])
    try:
        socket.create_connection((host, port), timeout=REACH_TIMEOUT_S).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise EnvportError(
            f"--executor ray: no Ray cluster answers at {address} ({reason}); start one with "
            f"`ray start --head` or fix --address / ${ADDRESS_VARIABLE}"
        ) from None
