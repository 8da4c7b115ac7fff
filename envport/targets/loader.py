"""Import a port directory as a package, inside a worker process only.

The port's modules import each other relatively (`from .physics import dynamics`), so the
directory is loaded as the package `envport_port` whatever it is called on disk.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from envport.serve.worker import PORT_PACKAGE as PACKAGE


class ContractError(Exception):
    """The port does not have the shape the spec and the backend contract ask for."""


def load_package(port_dir: Path) -> ModuleType:
    init = port_dir / "__init__.py"
    if init.exists():
        spec = importlib.util.spec_from_file_location(
            PACKAGE, init, submodule_search_locations=[str(port_dir)]
        )
        if spec is None or spec.loader is None:
            raise ContractError(f"{init}: not a loadable package")
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
        return package
    # No __init__.py: a bare package whose modules are found in the directory.
    package = ModuleType(PACKAGE)
    package.__path__ = [str(port_dir)]
    package.__spec__ = importlib.machinery.ModuleSpec(PACKAGE, None, is_package=True)
    package.__spec__.submodule_search_locations = [str(port_dir)]
    sys.modules[PACKAGE] = package
    return package


def _import_checked(port_dir: Path, module: dict[str, Any]) -> ModuleType:
    name = module["name"]
    if not (port_dir / f"{name}.py").exists():
        raise ContractError(f"port module `{name}` is missing: expected {port_dir / name}.py")
    imported = importlib.import_module(f"{PACKAGE}.{name}")
    missing = [f for f in module.get("exports", []) if not hasattr(imported, f)]
    if missing:
        raise ContractError(
            f"port module `{name}` does not export {', '.join(f'`{m}`' for m in missing)} "
            "(the spec's interface contract)"
        )
    return imported


def import_modules(port_dir: Path, modules: list[dict[str, Any]], entry: str) -> ModuleType:
    """Import the spec's modules in dependency order, check their exports, return the entry.

    For a port being generated module by module: each must be the file the spec names."""
    load_package(port_dir)
    names = [module["name"] for module in modules] or [entry]
    for module in modules or [{"name": entry, "exports": []}]:
        _import_checked(port_dir, module)
    if entry not in names:
        raise ContractError(f"entry module `{entry}` is not among the spec's modules")
    return importlib.import_module(f"{PACKAGE}.{entry}")


def import_port(
    port_dir: Path, modules: list[dict[str, Any]], entry: str
) -> tuple[ModuleType, list[str]]:
    """A whole port: its entry module, and the spec's other modules it has no file for.

    A port that exports the backend contract from its entry is a port, however it is split:
    a one-file bridge to a third-party env has no `physics.py`. The spec's modules it does
    have are imported and their exports checked; those it lacks only mean that their L1
    probes cannot run, which the caller reports. The entry of a port split otherwise owes
    the backend's contract (checked when it is loaded as a backend), not the spec's list of
    what its `entry` module exports beside other modules."""
    load_package(port_dir)
    listed = modules or [{"name": entry, "exports": []}]
    if entry not in [module["name"] for module in listed]:
        raise ContractError(f"entry module `{entry}` is not among the spec's modules")
    absent = [
        module["name"]
        for module in listed
        if module["name"] != entry and not (port_dir / f"{module['name']}.py").exists()
    ]
    for module in listed:
        if module["name"] in absent:
            continue
        if absent and module["name"] == entry:
            module = {"name": entry, "exports": []}
        _import_checked(port_dir, module)
    return importlib.import_module(f"{PACKAGE}.{entry}"), absent


def require(module: ModuleType, names: list[str], contract: str) -> None:
    missing = [name for name in names if not callable(getattr(module, name, None))]
    if missing:
        listed = ", ".join(f"`{name}`" for name in missing)
        raise ContractError(f"port entry `{module.__name__}` lacks {listed} ({contract} contract)")
