"""The Crafter example's known-good NumPy port verified at a small budget, and a copy of it
with one crafting requirement changed, which the book's start states catch by name.

`envport verify examples/crafter --port examples/crafter/ports/numpy` runs the full budgets.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, with_budgets

pytest.importorskip("crafter")

CRAFTER = ROOT / "examples" / "crafter"
# One short episode of play, the book one action deep (4 x 17 steps), 16 noise samples
# (l1.sampled_step makes a new Crafter world for each, about a second).
BUDGETS = {
    "state.reached": {"episodes": 1, "steps": 60, "depth": 1},
    "randomness": {"samples": 16},
}


def _small(tmp_path: Path) -> Path:
    return with_budgets(CRAFTER, tmp_path / "crafter", BUDGETS)


@pytest.mark.slow
def test_the_known_good_numpy_port_verifies_at_l1(tmp_path: Path) -> None:
    options = VerifyOptions(target="numpy", levels=("l1",), examples=20)
    report = verify(str(_small(tmp_path)), str(CRAFTER / "ports" / "numpy"), options)
    assert report.passed, report.text()


@pytest.mark.slow
def test_a_wood_pickaxe_costing_two_wood_is_named(tmp_path: Path) -> None:
    port = tmp_path / "port"
    shutil.copytree(CRAFTER / "ports" / "numpy", port)
    world = port / "world.py"
    text = world.read_text()
    fair = '"wood_pickaxe": ({"wood": 1}, ("table",)),'
    assert text.count(fair) == 1
    world.write_text(text.replace(fair, '"wood_pickaxe": ({"wood": 2}, ("table",)),'))
    options = VerifyOptions(target="numpy", levels=("l1",), examples=20)
    report = verify(str(_small(tmp_path)), str(port), options)
    assert not report.passed
    # The slip by name and by what it does: the pickaxe takes one wood more than Crafter's.
    # Which example shows it is shrinking's, which load cuts short, so no numbers are fixed.
    found = re.search(r"obs\.inventory\.wood: expected (\d+), got (\d+)", report.text())
    assert found and int(found[2]) == int(found[1]) - 1, report.text()
