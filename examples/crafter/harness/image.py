"""Crafter's own image of a state, for the pixels probes' `expect` halves (harness code,
run by the verifier beside the reference, never in the port's worker).

A state drawn or arranged for L1 is written into one reference env kept for the purpose
(harness/reference.py's write_state) and rendered by Crafter's `Env.render`. At night
Crafter's render draws `world.random.uniform(32, 127, (63, 49))`: the probe's `call` makes
those numbers from the state, the same function in its `expect`, and the world's generator
hands them to Crafter's render, so the port, given the same numbers, is held to the pixel.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

LISTS = ("zombies", "skeletons", "cows", "arrows", "plants", "chunks")
_ENV: list[Any] = []


class _Night:
    """The world's generator for one render: its one draw, the night's noise, is `night`."""

    def __init__(self, night: np.ndarray) -> None:
        self.night = night

    def uniform(self, low: float, high: float, size: tuple) -> np.ndarray:
        assert (low, high, tuple(size)) == (32, 127, self.night.shape), (low, high, size)
        return self.night


def _reference() -> Any:
    """harness/reference.py, the module the spec's entry names if already imported."""
    path = Path(__file__).with_name("reference.py")
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == str(path):
            return module
    spec = importlib.util.spec_from_file_location("crafter_harness_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def reference_image(state: dict[str, Any], night: np.ndarray) -> np.ndarray:
    """uint8[64, 64, 3]: Crafter's `Env.render()` of the state (the bridge's leaves), its
    night noise (float64[63, 49], drawn only below half daylight) `night`."""
    reference = _reference()
    if not _ENV:
        env = reference.make()
        env.reset(seed=0)
        _ENV.append(env)
    env = _ENV[0]
    raw = {k: v for k, v in state.items() if not k.endswith(".length")}
    for name in LISTS:
        raw[name] = np.asarray(state[name])[: int(state[f"{name}.length"])].tolist()
    reference.write_state(env, raw)
    game = env.unwrapped.game
    world = game._world
    kept, world.random = world.random, _Night(np.asarray(night, np.float64))
    try:
        return np.asarray(game.render())
    finally:
        world.random = kept


def arranged(state: dict[str, Any], action: Any, pick: Any) -> tuple[dict[str, Any], Any]:
    """Play reaches the night (a third of each 300 steps' day), sleep and a full inventory
    too rarely for 200 draws: a third of the states are put at night (any daylight below
    half), a quarter asleep and a quarter given 1 to 9 of every item (every icon, every
    count's texture), each independently."""
    out = dict(state)
    if pick(0, 2) == 0:
        out["daylight"] = np.float64(pick(0, 499) / 1000)
    if pick(0, 3) == 0:
        out["sleeping"] = np.bool_(True)
    if pick(0, 3) == 0:
        for name in [k for k in state if k.startswith("inventory.")]:
            out[name] = np.int64(pick(1, 9))
    return out, action
