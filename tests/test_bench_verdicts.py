"""benchmarks/sps_jax.py --verdicts prints each bridge anchor's verdict beside its speed:
every divergence a failing check names (the proposed cases are one each), its first field."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from helpers import ROOT


def _sps_jax() -> ModuleType:
    found = importlib.util.spec_from_file_location("sps_jax", ROOT / "benchmarks" / "sps_jax.py")
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def test_a_verdict_names_each_difference_once() -> None:
    sps = _sps_jax()
    food = {"fields": [{"field": "obs.inventory.food", "expected": 7, "actual": 3}]}
    reward = {"fields": [{"field": "reward", "expected": -0.7, "actual": 0.3}]}
    cut = "(100%), above the ceiling of 25% (`levels.unheld_ceiling`): too few compared"
    held = {"message": f"the port could not hold 200 of 200 drawn states {cut}"}
    report = {
        "levels": [
            {"level": "l1", "mode": "transition", "passed": False, "divergences": [held]},
            {"level": "l2", "mode": "reset", "passed": True, "divergences": []},
            {"level": "cases", "mode": "proposed", "passed": False,
             "divergences": [food, reward, food]},
            {"level": "l3", "mode": None, "passed": False, "divergences": []},
        ]
    }  # fmt: skip
    failing = sps.failing_checks(report)
    assert failing == [
        "l1.transition: the port could not hold 200 of 200 drawn states",
        "cases.proposed: obs.inventory.food: expected 7, got 3",
        "cases.proposed: reward: expected -0.7, got 0.3",
        "l3",
    ]
    found = {"command": "", "passed": False, "failing": failing[1:2], "gaps": []}
    assert sps.verdict_line(found) == (
        "DIVERGED: cases.proposed: obs.inventory.food: expected 7, got 3"
    )
    assert sps._difference({"message": "episode ended early"}) == "episode ended early"


def test_a_verified_bridge_says_its_gaps() -> None:
    sps = _sps_jax()
    found = {"command": "", "passed": True, "failing": [], "gaps": ["l3.plain: not stepped"]}
    assert sps.verdict_line(found) == "verified with gaps (l3.plain: not stepped)"
    assert sps.verdict_line({"error": ["no such port"]}) == "no verdict: no such port"
