"""The module plan a model proposes when the spec gives none, and its validation.

A plan is accepted only if the driver can build on it: module names are Python identifiers
and unique, each module depends only on modules listed before it (so the list is a
dependency order and the graph is acyclic), the entry module is last, and every name of the
backend contract is exported by exactly one module, the entry (the harness looks them up
there).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass

from pydantic import ValidationError

from envport.repair.edits import EditParseError, extract_block
from envport.spec import ModuleSpec

# What the harness calls on the entry module, per backend (see envport/targets/*_port.py).
CONTRACT: dict[str, tuple[str, ...]] = {
    "jax": ("default_params", "reset", "step", "state_from_reference", "state_to_reference"),
    "numpy": ("VectorEnv", "state_from_reference", "state_to_reference"),
    "rust": (
        "envport_abi_version",
        "envport_state_layout",
        "envport_obs_layout",
        "envport_action_size",
        "envport_step",
    ),
}


# A two-player game's port (envport.targets.game_port), JAX or NumPy alike.
GAME_CONTRACT = ("init", "step", "state_from_reference", "state_to_reference")
# The module a Rust crate's C ABI lives in: the crate root, src/lib.rs.
RUST_ENTRY = "lib"


def contract_exports(target: str, game: bool = False) -> tuple[str, ...]:
    """What the entry module must export for `target` (a game's form when `game`)."""
    return GAME_CONTRACT if game and target != "rust" else CONTRACT[target]


class PlanError(EditParseError):
    """The proposed plan is unusable; the message goes back to the model in the re-ask."""


@dataclass(frozen=True)
class Plan:
    entry: str
    modules: list[ModuleSpec]


def parse_plan(text: str, target: str, game: bool = False) -> Plan:
    body = extract_block(text, ("toml",))
    data: object
    if body is not None:
        try:
            data = tomllib.loads(body)
        except tomllib.TOMLDecodeError as error:
            raise PlanError(f"the toml block does not parse: {error}") from None
    else:
        body = extract_block(text, ("json",))
        if body is None:
            raise PlanError("no fenced `toml` block with `entry` and `modules` was found")
        try:
            data = json.loads(body)
        except ValueError as error:
            raise PlanError(f"the json block does not parse: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("modules"), list):
        raise PlanError("the plan needs a `modules` list")
    try:
        modules = [ModuleSpec.model_validate(item) for item in data["modules"]]
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise PlanError(f"a module entry is invalid: {where}: {first['msg']}") from None
    entry = data.get("entry") or (modules[-1].name if modules else "")
    if not isinstance(entry, str):
        raise PlanError("`entry` must be a module name")
    plan = Plan(entry=entry, modules=modules)
    validate_plan(plan, target, game)
    return plan


def validate_plan(plan: Plan, target: str, game: bool = False) -> None:
    if not plan.modules:
        raise PlanError("the plan has no modules")
    seen: set[str] = set()
    for module in plan.modules:
        if module.name in seen:
            raise PlanError(f"module `{module.name}` is listed twice")
        for dependency in module.depends_on:
            if dependency == module.name:
                raise PlanError(f"module `{module.name}` depends on itself")
            if dependency not in seen:
                raise PlanError(
                    f"module `{module.name}` depends on `{dependency}`, which is not listed "
                    "before it (list modules in dependency order; cycles are not allowed)"
                )
        seen.add(module.name)
    if plan.entry != plan.modules[-1].name:
        raise PlanError(f"the entry module `{plan.entry}` must be the last module listed")
    if target == "rust" and plan.entry != RUST_ENTRY:
        # A crate's root is src/lib.rs: the C ABI is exported from there.
        raise PlanError(f"a Rust crate's entry module is `{RUST_ENTRY}` (src/lib.rs)")
    owners: dict[str, list[str]] = {}
    for module in plan.modules:
        for name in module.exports:
            owners.setdefault(name, []).append(module.name)
    for name, where in owners.items():
        if len(where) > 1:
            raise PlanError(f"`{name}` is exported by {', '.join(where)}; one module must own it")
    for name in contract_exports(target, game):
        if owners.get(name) != [plan.entry]:
            raise PlanError(
                f"the entry module `{plan.entry}` must export `{name}` ({target} backend contract)"
            )
