"""The MPE examples' replay sessions: agents moving at once, translated offline.

Each session's answers are hand-written (labelled so in session.json) and generate the
spec's modules in dependency order; one carries a slip a model is likely to make, the env
module's L1 names it by agent and field, and one repair turns the files into the example's
known-good port. simple_tag -> JAX pads the runner's shorter row in front; simple_spread ->
NumPy damps after adding the force. The fast tests read the sessions; the slow ones run
`envport translate` through the real driver, workers and verifier at cut budgets.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from envport.repair.edits import parse_answer
from envport.repair.search_replace import parse_edit_answer
from envport.spec import load_spec

from helpers import ROOT, check_failures, translated_offline, with_budgets

pytest.importorskip("mpe2")

# (example, target, the module the slip is in, the divergence that names it: agent and field)
# Each session's slip, and the field its divergence names with what the slip makes of the
# reference's value (the example itself is Hypothesis's shrinking's, which a loaded machine
# cuts short: 1.75 -> 1.3125 once, 3 -> 2.25 under load).
SESSIONS = [
    ("mpe_simple_tag", "jax", "scenario", "agent_0.obs[3] (pos.y)", lambda want, got: got == 0),
    (
        "mpe_simple_spread",
        "numpy",
        "physics",
        "agent_0.obs[1] (vel.y)",
        lambda want, got: want != 0 and math.isclose(got, 0.75 * want, rel_tol=1e-6),
    ),
]
IDS = [f"{example}-{target}" for example, target, *_ in SESSIONS]
# Far below the examples' own: the first drawn state of L1 names each slip, and L2 and L3
# only have to pass once on the repaired port.
CUT = {
    "levels.l1": {"examples": 10},
    "levels.l2": {"examples": 3, "steps": 10},
    "levels.l3": {"episodes": 4},
}


def _modules(example: str, target: str) -> list[str]:
    return [m.name for m in load_spec(ROOT / "examples" / example).target(target).modules]


def _generated(session: Path, modules: list[str], tmp_path: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for module in modules:
        text = (session / f"000-generate-{module}.md").read_text()
        files.update(parse_answer(text, tmp_path, [f"{module}.py"]).files)
    return files


@pytest.mark.parametrize("example, target, slipped, named, slip", SESSIONS, ids=IDS)
def test_the_session_is_labelled_and_its_repair_ends_on_the_known_good_port(
    example: str, target: str, slipped: str, named: str, slip: Callable, tmp_path: Path
) -> None:
    """Every answer is hand-written; the generate answers follow the spec's modules in order;
    exactly the slipped module differs from the known-good port before the repair, and the
    repair's edits make all of them equal, so the slow test's verified run stands for it."""
    session = ROOT / "examples" / example / "replay" / target
    entries = json.loads((session / "session.json").read_text())["entries"]
    assert {entry["source"] for entry in entries} == {"hand-written"}
    modules = _modules(example, target)
    generates = [e["module"] for e in entries if e["phase"] == "generate"]
    assert generates == modules
    good = ROOT / "examples" / example / "ports" / target
    known = {f"{m}.py": (good / f"{m}.py").read_text() for m in modules}
    generated = _generated(session, modules, tmp_path)
    assert [path for path in known if generated[path] != known[path]] == [f"{slipped}.py"]
    repair = (session / "001-repair-env.md").read_text()
    assert generated | parse_edit_answer(repair, tmp_path, generated).files == known


@pytest.mark.slow
@pytest.mark.parametrize("example, target, slipped, named, slip", SESSIONS, ids=IDS)
def test_the_mpe_session_translates_offline_with_one_repair(
    example: str, target: str, slipped: str, named: str, slip: Callable, tmp_path: Path
) -> None:
    """The real pipeline on the session: verified at the end, one repair, the divergence that
    asked for it names the planned agent and field, the files the known-good port's."""
    spec = with_budgets(ROOT / "examples" / example, tmp_path / example, CUT)
    run = translated_offline(spec, target, tmp_path / "runs", timeout=600)
    events = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
    asked = [e["purpose"] for e in events if e["event"] == "model_call"]
    repairs = [p for p in asked if p["phase"] == "repair"]
    assert repairs == [{"phase": "repair", "module": "env", "iteration": 1}], asked
    failed = check_failures(run)
    assert failed and all("module env" in f for f in failed), failed
    found = re.search(re.escape(named) + r": expected (\S+), got (\S+)", failed[0])
    assert found and slip(float(found[1]), float(found[2])), failed[0]
    good = ROOT / "examples" / example / "ports" / target
    for module in _modules(example, target):
        assert (run / "port" / f"{module}.py").read_text() == (good / f"{module}.py").read_text()
