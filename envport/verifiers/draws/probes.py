"""L1 probes: how one module function of a port is called, and what the reference says.

A probe file belongs to the spec (harness code, never generated). Each probe has two halves:
`call(port_module, before, action, after)` runs in the worker beside the port; `expect(before,
action, after, transition)` runs in the verifier from one reference transition taken from an
injected state. Probe files import only numpy at top level, so the verifier can load them
without loading the port's framework.

    @probe("physics.dynamics")
    def dynamics(module, before, action, after):
        ...
        return {"physics": next_state}

    @dynamics.expect
    def _(before, action, after, transition):
        return {"physics": after["physics"]}

A probe may also arrange its inputs: `arrange(state, action, pick)` runs in the verifier on
each state the spec's strategy drew, before the reference sees it, and returns the
`(state, action)` to check. It turns a drawn state into the situation the probe is about
(an agent facing a door while carrying something) when the spec's uniform draws would
reach it too rarely. `pick(low, high)` is an integer from low to high inclusive, drawn by
the verifier's search (so seeded and shrunk like any other input). An arranged state the
spec's `state.valid` rules out is not checked.

    @door.arrange
    def _(state, action, pick):
        grid = state["grid"].copy()
        ...
        return {**state, "grid": grid}, action
"""

from __future__ import annotations

import dis
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envport.errors import SpecError
from envport.runs import harness

Outputs = dict[str, Any]


@dataclass
class Probe:
    name: str  # "module.function"
    call: Callable[..., Outputs]
    expect_fn: Callable[..., Outputs] | None = None
    arrange_fn: Callable[..., tuple[dict[str, Any], Any]] | None = None

    @property
    def module(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def reads_after(self) -> bool:
        """Whether `call` uses the reference's next state as an input. When it does not,
        the worker is not sent it: a port could find it in the caller's frame and answer
        with the reference's own result."""
        code = self.call.__code__
        if "after" in code.co_cellvars:
            return True  # read by a function nested in the call
        return any(
            i.opname.startswith("LOAD_") and i.argval == "after"
            for i in dis.get_instructions(self.call)
        )

    def expect(self, fn: Callable[..., Outputs]) -> Callable[..., Outputs]:
        self.expect_fn = fn
        return fn

    def arrange(
        self, fn: Callable[..., tuple[dict[str, Any], Any]]
    ) -> Callable[..., tuple[dict[str, Any], Any]]:
        self.arrange_fn = fn
        return fn


_REGISTRY: dict[str, Probe] = {}


def probe(name: str) -> Callable[[Callable[..., Outputs]], Probe]:
    if name.count(".") != 1:
        raise ValueError(f"probe name {name!r}: expected `module.function`")

    def register(call: Callable[..., Outputs]) -> Probe:
        found = Probe(name, call)
        _REGISTRY[name] = found
        return found

    return register


def load_probes(path: Path, key: str = "targets.*.probes") -> dict[str, Probe]:
    """Import a probe file and return its probes by name."""
    if not path.is_file():
        raise SpecError(f"key `{key}`: probes file {path} does not exist")
    harness.check(path)
    _REGISTRY.clear()
    module_name = f"envport_probes_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"probes file {path} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    found = dict(_REGISTRY)
    missing = [name for name, p in found.items() if p.expect_fn is None]
    if missing:
        raise SpecError(f"probes file {path}: probe `{missing[0]}` has no `expect` half")
    return found
