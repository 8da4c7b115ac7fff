"""`envport check SPEC --port PORT`: the port's form at load, before any check plays it.

A port that lacks part of its contract (a game port whose `init` holds no
`legal_action_mask`) is otherwise found only by the check that first reads that part,
minutes into a verify. Here the port is read by the static review and loaded in a sandboxed
worker, as verify loads it: the load itself holds the port to its form (a game port's `init`
is called there and its state's fields checked, envport.targets.game_port), and the driver
never imports the port.
"""

from __future__ import annotations

from pathlib import Path

from envport.errors import PortError, SpecError
from envport.serve.client import PortWorker
from envport.spec import PortSpec
from envport.targets.registry import choose_target, port_dir
from envport.verifiers.source_review.check import review_port

# Seconds the worker may take to start and load (a Rust port is built first).
LOAD_TIMEOUT = 300.0


def check_port_form(spec: PortSpec, port: Path, target: str) -> list[str]:
    """One line when the port loads in its contract's form; a SpecError naming `--port`
    and what the port lacks when it does not."""
    if not port.is_dir():
        raise SpecError(f"--port {port}: no such directory")
    chosen = choose_target(spec, port, target)
    found = review_port(port, spec, chosen)
    if found:
        raise SpecError(
            f"--port {port}: the static review refuses {len(found)} thing"
            f"{'s' if len(found) != 1 else ''} in its source, first {found[0].text()}"
        )
    try:
        with PortWorker(timeout=LOAD_TIMEOUT, load=chosen.load(port_dir(spec, port))) as worker:
            answer = worker.receive()
    except PortError as error:
        raise SpecError(f"--port {port}: {' '.join(str(error).split())}") from None
    backend = answer.get("backend", chosen.name) if isinstance(answer, dict) else chosen.name
    return [f"port: {port} loads in a sandboxed worker as {backend}, in its contract's form"]
