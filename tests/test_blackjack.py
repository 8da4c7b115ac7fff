"""Blackjack-v1, the structured-state example: both known-good ports verify L1-L3 under
both option sets (the registered sab=True, and natural=True: examples/blackjack-natural, a
variant whose ports are blackjack's with its own settings.py), a mutant's divergence names
leaf paths and card names, and every mutant's edit applies exactly once (the self-check
itself: benchmarks/mutation_check.py).

Budgets are cut to keep the module fast: fewer L1 examples and L2 sequences than the specs
ask for, and the sampler tests at a given sample size.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from envport.llm.replay import read_session
from envport.spec import load_spec
from envport.verifiers.reporting.divergence import VerifyReport
from envport.verifiers.selfcheck import (
    Mutant,
    apply_mutant,
    known_good_port,
    load_mutants,
)
from envport.verifiers.verify import VerifyOptions, verify

from helpers import ROOT, check_failures, translated_offline

BLACKJACK = ROOT / "examples" / "blackjack"
NATURAL = ROOT / "examples" / "blackjack-natural"
CARD_NAMES = {"ace", *(str(v) for v in range(2, 11))}
IGNORED = shutil.ignore_patterns("__pycache__", "replay")


def fast_copy(
    example: Path, destination: Path, samples: int = 1500, budgets: dict[str, int] | None = None
) -> Path:
    """The example with the sampler tests at `samples` draws per side (the spec computes
    7247 for its stated power; fewer keep the test quick and still see a real difference),
    and any `budgets` (`l1.examples`, `l3.episodes`, ...) cut in the copy's spec."""
    copy = destination / example.name
    shutil.copytree(example, copy, ignore=IGNORED)
    if example == NATURAL and not (destination / BLACKJACK.name).exists():
        # The variant's `base = "../blackjack"` must find its base beside the copy.
        shutil.copytree(BLACKJACK, destination / BLACKJACK.name, ignore=IGNORED)
    spec = copy / "envport.toml"
    text, count = re.subn(r"(power = 0\.95\n)", rf"\g<1>samples = {samples}\n", spec.read_text())
    assert count == 1
    for name, value in (budgets or {}).items():
        level, key = name.split(".")
        text, count = re.subn(
            rf"(\[levels\.{level}\]\n(?:.*\n)*?{key} = )\d+", rf"\g<1>{value}", text
        )
        assert count == 1, name
    spec.write_text(text)
    return copy


def run(example: Path, port: Path, target: str, **options: Any) -> VerifyReport:
    chosen = VerifyOptions(target=target, **{"examples": 60, "episodes": 400, **options})
    return verify(str(example), str(port), chosen)


# The default tier verifies one structured port (sab, NumPy); the rest are in the full tier.
@pytest.mark.parametrize(
    ("example", "target"),
    [
        pytest.param(BLACKJACK, "numpy", id="sab-numpy"),
        pytest.param(BLACKJACK, "jax", id="sab-jax", marks=pytest.mark.slow),
        pytest.param(NATURAL, "numpy", id="natural-numpy", marks=pytest.mark.slow),
        pytest.param(NATURAL, "jax", id="natural-jax", marks=pytest.mark.slow),
    ],
)
def test_known_good_ports_verify(example: Path, target: str, tmp_path: Path) -> None:
    copy = fast_copy(example, tmp_path)
    report = run(copy, copy / "ports" / target, target)
    assert report.passed, report.text()
    assert {level.level for level in report.levels} == {"l1", "l2", "l3"}
    names = {level.name for level in report.levels}
    assert {"l1.noise", "l1.cards.dealer_play", "l3.free", "l3.resync"} <= names


def test_the_natural_variant_holds_only_its_options() -> None:
    """blackjack-natural keeps one copy of nothing blackjack has: its folder holds its spec,
    its mutants and, per target, the settings.py its base's port reads the kwargs from."""
    own = sorted(p.relative_to(NATURAL).as_posix() for p in NATURAL.rglob("*") if p.is_file())
    assert own == [
        "envport.toml",
        "mutants.toml",
        "ports/jax/settings.py",
        "ports/numpy/settings.py",
    ]
    spec = load_spec(NATURAL)
    assert spec.base == "../blackjack" and spec.folders == (NATURAL, BLACKJACK)
    assert spec.reference.kwargs == {"natural": True, "sab": False}
    assert load_spec(BLACKJACK).reference.kwargs == {}
    # The probes and the noise harness are the base's files, not copies.
    assert spec.harness_file("probes/numpy.py") == BLACKJACK / "probes" / "numpy.py"
    assert spec.harness_file("harness/noise.py") == BLACKJACK / "harness" / "noise.py"
    for target in ("jax", "numpy"):
        composed = known_good_port(NATURAL, target)
        base = BLACKJACK / "ports" / target
        for name in ("cards.py", "env.py"):
            assert (composed / name).read_text() == (base / name).read_text()
        settings = (composed / "settings.py").read_text()
        assert "NATURAL, SAB = True, False" in settings
        assert "NATURAL, SAB = False, True" in (base / "settings.py").read_text()


@pytest.mark.slow
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
            port = known_good_port(example, mutant.target)
            mutated = apply_mutant(mutant, port, tmp_path / example.name / mutant.id)
            assert mutant.new in (mutated / mutant.file).read_text()
    behaviour = [m for e in (BLACKJACK, NATURAL) for m in load_mutants(e) if not m.equivalent]
    assert len(behaviour) >= 15


def test_the_session_is_labelled_hand_written() -> None:
    session = read_session(BLACKJACK / "replay" / "jax")
    assert session.entries and {e.source for e in session.entries} == {"hand-written"}


@pytest.mark.slow
def test_blackjack_translates_to_jax_offline_from_its_replay_session(tmp_path: Path) -> None:
    # The spec's 200 L1 examples: the session's slip needs a drawn hand of two aces, one
    # of them usable (60 examples do not meet one).
    budgets = {"l2.examples": 10, "l3.episodes": 400}
    spec = fast_copy(BLACKJACK, tmp_path, budgets=budgets)
    shutil.copytree(BLACKJACK / "replay", spec / "replay")
    run = translated_offline(spec, "jax", tmp_path / "runs")
    # L1 ran module by module (reports/<module>.json), L2 and L3 on the whole port.
    for module in ("cards", "env"):
        checked = json.loads((run / "reports" / f"{module}.json").read_text())
        assert checked["passed"] and {lv["level"] for lv in checked["levels"]} == {"l1"}
    # The session's first cards module counts every ace as 11; L1's probe of sum_hand,
    # asking the reference's helpers about the same hands, said so; one repair fixed it.
    failures = check_failures(run)
    assert failures and "sum_hand" in failures[0], failures[:1]


# ---- the mutants, in the suite ----
# Every mutant of both examples, each level in turn until one catches it: L1 and L2 at the
# cut budgets above, L3 at the spec's own (the full self-check, every level on every mutant
# and every divergence replayed, is `python benchmarks/mutation_check.py examples/blackjack`:
# over ten minutes).


def caught_by(example: Path, mutant: Mutant, scratch: Path) -> list[str]:
    """The first level whose checks fail on the mutated port (all three for a mutant that
    none catches), as the names of its failing checks, or `load` for a port that fails to
    load."""
    port = apply_mutant(mutant, known_good_port(example, mutant.target), scratch / mutant.id)
    for level in ("l1", "l2", "l3"):
        # What the cheap levels miss at cut budgets (a payout that differs only when a
        # natural meets a dealer's 21) faces L3 at the spec's own episodes.
        budget = {"episodes": None} if level == "l3" else {}
        # The first failing check ends the level: the verdict needs the level that catches.
        report = run(
            example, port, mutant.target, levels=(level,), shrink=False, fail_fast=True, **budget
        )
        if report.error:
            return ["load"]
        failing = [lv.name for lv in report.levels if not lv.passed]
        if failing:
            return failing
    return []


@pytest.fixture(scope="module")
def mutant_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    scratch = tmp_path_factory.mktemp("mutants")
    names, jobs = [], []
    for example in (BLACKJACK, NATURAL):
        copy = fast_copy(example, scratch / "specs")
        for mutant in load_mutants(example):
            names.append(mutant.id if example is BLACKJACK else f"natural/{mutant.id}")
            jobs.append((copy, mutant, scratch / example.name))
    # Mutants are independent: two at a time (spawn, as the self-check does: no forked
    # JAX threads or sockets).
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        verdicts = dict(zip(names, pool.map(caught_by, *zip(*jobs, strict=True)), strict=True))
    for name, found in verdicts.items():
        print(f"{name:44} {','.join(found) or '-'}")
    return verdicts


@pytest.mark.slow
def test_every_behaviour_changing_mutant_is_caught(mutant_verdicts: dict[str, list[str]]) -> None:
    mutants = {m.id: m for m in load_mutants(BLACKJACK)}
    mutants.update({f"natural/{m.id}": m for m in load_mutants(NATURAL)})
    missed = [name for name, m in mutants.items() if not m.equivalent and not mutant_verdicts[name]]
    assert not missed, f"mutants no level caught: {missed}"
    wrongly = {
        n: mutant_verdicts[n] for n, m in mutants.items() if m.equivalent and mutant_verdicts[n]
    }
    assert not wrongly, f"equivalent mutants failed: {wrongly}"
    # Each is caught where mutants.toml says it cannot be missed.
    for name, m in mutants.items():
        levels = {check.split(".")[0] for check in mutant_verdicts[name]}
        assert not levels & set(m.missed_by), (name, levels)
