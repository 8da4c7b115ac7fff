"""Crafter's hand-written replay sessions (examples/crafter/replay/<target>): every entry
labelled, and the answers a run ends on (each module's last answer) the known-good port
without its label line, file for file, so a session cannot drift from the port the other
tests check. The NumPy session's one slip (the balance spawning on an occupied cell, which
only `l3.resync` names) is the only difference of its first step answer."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from envport.repair.edits import parse_answer

from helpers import ROOT

CRAFTER = ROOT / "examples" / "crafter"
LABEL = '"""Hand-written known-good port: a test subject for the verifier, not model output.\n\n'


def answers(target: str, tmp_path: Path) -> tuple[list[dict], list[dict[str, str]]]:
    folder = CRAFTER / "replay" / target
    entries = json.loads((folder / "session.json").read_text())["entries"]
    files = [parse_answer((folder / e["answer_file"]).read_text(), tmp_path).files for e in entries]
    return entries, files


def known_good(target: str) -> dict[str, str]:
    port = CRAFTER / "ports" / target
    texts = {path.name: path.read_text() for path in sorted(port.glob("*.py"))}
    assert all(text.startswith(LABEL) for text in texts.values())
    return {name: '"""' + text[len(LABEL) :] for name, text in texts.items()}


@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_session_ends_on_the_known_good_port(target: str, tmp_path: Path) -> None:
    entries, files = answers(target, tmp_path)
    assert {entry["source"] for entry in entries} == {"hand-written"}
    # Generated in the spec's module order, each module's answer its one file.
    from envport.spec import load_spec

    order = [m.name for m in load_spec(CRAFTER).target(target).modules]
    generated = [e["module"] for e in entries if e["phase"] == "generate"]
    assert generated == order
    final: dict[str, str] = {}
    for parsed in files:  # in order: a later answer for a file replaces an earlier one
        final |= parsed
    port = known_good(target)
    assert set(final) == set(port)
    for name, text in final.items():
        assert text == port[name], name


def test_the_numpy_session_slips_once_in_the_balance_and_repairs_it(tmp_path: Path) -> None:
    entries, files = answers("numpy", tmp_path)
    (first,) = [
        f
        for e, f in zip(entries, files, strict=True)
        if e["phase"] == "generate" and e["module"] == "step"
    ]
    good = known_good("numpy")["step.py"]
    diff = [
        line
        for line in difflib.unified_diff(good.splitlines(), first["step.py"].splitlines(), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff == [
        "-            if world.thing(pos) is None and distance(player.pos, pos) >= span:",
        "+            if distance(player.pos, pos) >= span:",
    ]
    repairs = {e["module"] for e in entries if e["phase"] == "repair"}
    assert None in repairs  # the composed check's repair is answered
