"""Crafter's own image of a state, for the pixels probes' `expect` halves (harness code,
run by the verifier beside the reference, never in the port's worker).

A state drawn or arranged for L1 is written into one reference env kept for the purpose
(harness/reference.py's write_state) and rendered by Crafter's `Env.render`. At night
Crafter's render draws `world.random.uniform(32, 127, (63, 49))`: the world's generator is
set to `night_seed(state)` first, so the port, given the same numbers, is held to the pixel.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

LISTS = ("zombies", "skeletons", "cows", "arrows", "plants", "chunks")
_ENV: list[Any] = []


def night_seed(state: dict[str, Any]) -> int:
    """The seed of a state's night noise: any function of the state both sides compute."""
    return int(state["step"]) * 7919 + int(np.asarray(state["player_pos"]).sum())


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


def reference_image(state: dict[str, Any]) -> np.ndarray:
    """uint8[64, 64, 3]: Crafter's `Env.render()` of the state (the bridge's leaves)."""
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
    game._world.random = np.random.RandomState(night_seed(state))
    return np.asarray(game.render())


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
