"""Target names, imported by the registry and by the adapters it lists (so neither imports
the other back)."""

from __future__ import annotations

import enum


class TargetName(enum.StrEnum):
    JAX = "jax"
    NUMPY = "numpy"
    RUST = "rust"


TARGET_NAMES = tuple(name.value for name in TargetName)
# `--target auto`: settled from the spec and the port directory, else by the worker.
AUTO = "auto"
TARGET_CHOICES = (AUTO, *TARGET_NAMES)
