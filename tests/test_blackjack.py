"""Blackjack-v1, the structured-state example: both known-good ports verify L1-L3 under
both option sets (the registered sab=True, and natural=True), the variant's ports differ
only in their defaults, a mutant's divergence names leaf paths and card names, and every
mutant's edit applies exactly once (the self-check itself: benchmarks/mutation_check.py).

Budgets are cut to keep the module fast: fewer L1 examples and L2 sequences than the specs
ask for, and the sampler tests at a given sample size.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from envport.spec import load_spec
from envport.verifiers.divergence import VerifyReport
from envport.verifiers.selfcheck import (
    Mutant,
    apply_mutant,
    load_mutants,
)
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT

BLACKJACK = ROOT / "examples" / "blackjack"
NATURAL = ROOT / "examples" / "blackjack-natural"
CARD_NAMES = {"ace", *(str(v) for v in range(2, 11))}


def fast_copy(example: Path, destination: Path, samples: int = 1500) -> Path:
    """The example with the sampler tests at `samples` draws per side (the spec computes
    7247 for its stated power; fewer keep the test quick and still see a real difference)."""
    copy = destination / example.name
    shutil.copytree(example, copy, ignore=shutil.ignore_patterns("__pycache__", "replay"))
    spec = copy / "envport.toml"
    text, count = re.subn(r"(power = 0\.95\n)", rf"\g<1>samples = {samples}\n", spec.read_text())
    assert count == 1
    spec.write_text(text)
    return copy


def run(example: Path, port: Path, target: str, **options: Any) -> VerifyReport:
    chosen = VerifyOptions(target=target, **{"examples": 60, "episodes": 400, **options})
    return verify(str(example), str(port), chosen)


@pytest.mark.parametrize("target", ["numpy", "jax"])
@pytest.mark.parametrize("example", [BLACKJACK, NATURAL], ids=["sab", "natural"])
def test_known_good_ports_verify(example: Path, target: str, tmp_path: Path) -> None:
    copy = fast_copy(example, tmp_path)
    report = run(copy, copy / "ports" / target, target)
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}
    names = {level.name for level in report.levels}
    assert {"l1.noise", "l1.cards.dealer_play", "l3.free", "l3.resync"} <= names


def test_the_natural_variant_differs_only_in_its_options() -> None:
    for target in ("jax", "numpy"):
        same = (BLACKJACK / "ports" / target / "cards.py").read_text()
        assert (NATURAL / "ports" / target / "cards.py").read_text() == same
        ours = (BLACKJACK / "ports" / target / "env.py").read_text().splitlines()
        theirs = (NATURAL / "ports" / target / "env.py").read_text().splitlines()
        changed = [a for a, b in zip(ours, theirs, strict=True) if a != b]
        assert changed and all("natural" in line.lower() or "sab" in line for line in changed)
    assert load_spec(NATURAL).reference.kwargs == {"natural": True, "sab": False}
    assert load_spec(BLACKJACK).reference.kwargs == {}


def test_a_divergence_names_the_hands_leaf_path_and_card(tmp_path: Path) -> None:
    overwrite = Mutant(
        id="numpy-add-card-overwrites",
        target="numpy",
        file="cards.py",
        old="cards[rows, lengths[rows]] = np.asarray(new_cards)[rows]",
        new="cards[rows, lengths[rows] - 1] = np.asarray(new_cards)[rows]",
        what="a new card overwrites the last one held",
    )
    port = apply_mutant(overwrite, BLACKJACK / "ports" / "numpy", tmp_path / "port")
    report = run(BLACKJACK, port, "numpy", levels=("l1",), shrink=False)
    probe = next(level for level in report.levels if level.name == "l1.cards.dealer_play")
    assert not probe.passed
    fields = probe.divergences[0].fields
    diff = fields[0]  # e.g. `hand.dealer[1]: expected 10, got 2`
    assert re.fullmatch(r"hand\.(player|dealer)\[\d+\]", diff.field)
    # The card replaced and the card put there, by name.
    assert {diff.expected, diff.actual} <= CARD_NAMES
    assert f"{diff.field}: expected {diff.expected}, got {diff.actual}" in report.text()


def test_mutant_edits_apply_exactly_once(tmp_path: Path) -> None:
    for example in (BLACKJACK, NATURAL):
        mutants = load_mutants(example)
        for mutant in mutants:
            port = example / "ports" / mutant.target
            mutated = apply_mutant(mutant, port, tmp_path / example.name / mutant.id)
            assert mutant.new in (mutated / mutant.file).read_text()
    behaviour = [m for e in (BLACKJACK, NATURAL) for m in load_mutants(e) if not m.equivalent]
    assert len(behaviour) >= 15
