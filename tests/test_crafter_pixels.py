"""Crafter's image as a port module (examples/crafter/ports/*/pixels.py): the L1 probe
`pixels.render` (examples/crafter/probes/) renders each drawn state with Crafter's own
renderer, its night noise fixed alike on both sides, and compares pixel for pixel; each of
the image's mutants (examples/crafter/mutants.toml, `*-pixels-*`: a wrong texture, an alpha
ignored, the night's noise at the wrong daylight) is caught there by the pixels it changes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, with_budgets

pytest.importorskip("crafter")

CRAFTER = ROOT / "examples" / "crafter"
# The states drawn from one short episode of play and the book one action deep; the probe
# arranges night, sleep and a full inventory in a part of them (harness/image.py).
BUDGETS = {
    "state.reached": {"episodes": 1, "steps": 60, "depth": 1},
    "randomness": {"samples": 16},
    "coverage": {"enabled": "false"},
}
PIXELS_MUTANTS = [m.id for m in load_mutants(CRAFTER) if "-pixels-" in m.id]


def test_every_target_has_its_pixels_mutants() -> None:
    assert {m.split("-")[0] for m in PIXELS_MUTANTS} >= {"numpy"}
    assert len(PIXELS_MUTANTS) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("mutant_id", PIXELS_MUTANTS)
def test_a_slip_in_the_image_is_caught_by_its_pixels(mutant_id: str, tmp_path: Path) -> None:
    mutant = next(m for m in load_mutants(CRAFTER) if m.id == mutant_id)
    port = apply_mutant(mutant, CRAFTER / "ports" / mutant.target, tmp_path / "port")
    spec = with_budgets(CRAFTER, tmp_path / "crafter", BUDGETS)
    options = VerifyOptions(
        target=mutant.target, levels=("l1",), module="pixels", examples=30, fail_fast=True
    )
    report = verify(str(spec), str(port), options)
    assert not report.passed, report.text()
    # Named by the pixel: `image[y, x, channel]: expected a, got b`.
    assert "l1.pixels.render" in report.text() and "image[" in report.text(), report.text()
