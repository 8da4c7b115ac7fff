"""The automatic mutation score's pipeline, end to end on one small port file.

cosmic-ray enumerates the mutants of MountainCar's NumPy physics, two chosen ones are applied
to a scratch copy and judged by `envport verify` (L1 only, to stay quick): one is caught by
L1, the other is equivalent and triaged so. The benchmark itself runs every level on samples
of every port (benchmarks/mutation_score.py); this only proves the machinery.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from envport.mutation.generate import enumerate_mutants
from envport.mutation.run import Outcome
from envport.mutation.score import Cache
from envport.mutation.triage import (
    EQUIVALENT,
    MISSED,
    STALE,
    UNTRIAGED,
    TriageError,
    load_triage,
    untriaged_entries,
    verdict,
)

from helpers import ROOT, user_env

MOUNTAINCAR = ROOT / "examples" / "mountaincar"
PORT = MOUNTAINCAR / "ports" / "numpy"
KILLED = "mountaincar/numpy/physics.py:core/NumberReplacer#3"  # MAX_POSITION = -0.4
# `velocity < 0` -> `velocity <= 0` at the inelastic wall: a zero velocity is set to zero.
EQUIVALENT_ID = "mountaincar/numpy/physics.py:core/ReplaceComparisonOperator_Lt_LtE#0"


def _mutants() -> dict:
    return {m.id: m for m in enumerate_mutants(PORT, "physics.py", "mountaincar", "numpy")}


def test_cosmic_ray_enumerates_the_file_and_each_mutant_has_its_diff() -> None:
    mutants = _mutants()
    assert len(mutants) > 100  # every operator at every place it applies
    assert "-MAX_POSITION = 0.6\n+MAX_POSITION = -0.4\n" in mutants[KILLED].diff
    assert "(velocity <= 0)" in mutants[EQUIVALENT_ID].diff


@pytest.mark.slow
def test_the_pipeline_scores_a_killed_and_an_equivalent_mutant(tmp_path: Path) -> None:
    survivors = tmp_path / "survivors.toml"
    survivors.write_text(
        untriaged_entries([_mutants()[EQUIVALENT_ID]]).replace(
            'missed = "TODO: triage (equivalent = \\"reason\\" or missed = \\"why\\")"',
            'equivalent = "a zero velocity set to 0.0 is unchanged"',
        )
    )
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in PORT.glob("*.py")}
    out = tmp_path / "results" / "score.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "mutation_score.py"),
            str(MOUNTAINCAR),
            "--backends",
            "numpy",
            "--mutants",
            f"{KILLED},{EQUIVALENT_ID}",
            "--verify-args",
            "--levels l1 --examples 20",
            "--survivors",
            str(survivors),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=user_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    port = json.loads(out.read_text())["ports"]["mountaincar/numpy"]
    assert port["baseline_passed"] and port["sampled"] == 2
    assert (port["killed"], port["survived"], port["equivalent"]) == (1, 1, 1)
    assert port["kill_rate"] == 1.0 and port["first_level"] == {"l1": 1}
    by_id = {m["id"]: m for m in port["mutants"]}
    assert by_id[KILLED]["status"] == "killed"
    assert by_id[KILLED]["first"].startswith("l1.")
    assert by_id[EQUIVALENT_ID]["triage"] == EQUIVALENT
    assert "100.0%" in done.stdout
    # Mutants are applied to a scratch copy: the checked-in port is untouched.
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in PORT.glob("*.py")}
    assert after == before
    assert (tmp_path / "results" / "mutation_cache" / "mountaincar" / "numpy.jsonl").is_file()

    # Survivors are triaged by hand after a run: --retriage recounts the stored outcomes
    # with the file as it is now, verifying nothing again.
    def retriage(survivors_file: Path) -> tuple[int, dict]:
        command = [sys.executable, str(ROOT / "benchmarks" / "mutation_score.py"), "--retriage"]
        command += ["--survivors", str(survivors_file), "--out", str(out)]
        ran = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=user_env())
        return ran.returncode, json.loads(out.read_text())["ports"]["mountaincar/numpy"]

    code, port = retriage(tmp_path / "none.toml")
    assert code == 1 and (port["equivalent"], port["untriaged"]) == (0, 1)
    assert port["kill_rate"] == 0.5
    code, port = retriage(survivors)
    assert code == 0 and (port["equivalent"], port["untriaged"]) == (1, 0)
    assert port["kill_rate"] == 1.0
    assert {m["id"]: m.get("triage") for m in port["mutants"]}[EQUIVALENT_ID] == EQUIVALENT


def test_triage_entries_round_trip_and_a_changed_diff_is_stale(tmp_path: Path) -> None:
    mutants = _mutants()
    file = tmp_path / "survivors.toml"
    file.write_text(untriaged_entries([mutants[KILLED], mutants[EQUIVALENT_ID]]))
    entries = load_triage(file)
    # A fresh entry counts as missed until someone shows it equivalent.
    assert verdict(mutants[KILLED], entries)[0] == MISSED
    other = next(m for m in mutants.values() if m.id not in entries)
    assert verdict(other, entries)[0] == UNTRIAGED
    moved = type(other)(**{**other.__dict__, "operator": mutants[KILLED].operator})
    moved = type(other)(**{**moved.__dict__, "occurrence": mutants[KILLED].occurrence})
    assert moved.id == KILLED and verdict(moved, entries)[0] == STALE
    file.write_text('[[survivor]]\nid = "x"\ndiff = ""\n')
    with pytest.raises(TriageError, match="exactly one of"):
        load_triage(file)


def test_outcomes_cached_by_one_run_are_read_back_by_the_next(tmp_path: Path) -> None:
    file = tmp_path / "cache" / "port.jsonl"
    Cache(file).add("k1", Outcome("a", "killed", "l1.transition", ["l1.transition"], None, 3.0))
    Cache(file).add("k2", Outcome("b", "survived"))
    known = Cache(file).known
    assert known["k1"].level == "l1" and known["k2"].status == "survived"
