"""`envport translate --target rust`: a crate generated module by module, built by cargo.

The end-to-end test runs the real command line on CartPole's hand-written replay session
(one behaviour bug caught by an L1 probe through the C ABI, one compile error caught by
cargo, each repaired) with real cargo builds; the others check the pieces without cargo.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envport.pipeline.build_errors import compiler_errors
from envport.pipeline.plan import PlanError, parse_plan
from envport.repair.edits import EditParseError, parse_answer
from envport.targets.registry import target
from envport.targets.rust_build import partial_lib

from helpers import CARTPOLE, run_envport

SESSION = CARTPOLE / "replay" / "rust"
RUST_FILES = target("rust").port_files
needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")


def _events(run: Path) -> list[dict]:
    lines = (run / "transcript.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _prompt(events: list[dict], phase: str, module: str) -> str:
    found = [
        e
        for e in events
        if e["event"] == "prompt" and e["purpose"]["phase"] == phase
        if e["purpose"]["module"] == module
    ]
    assert len(found) == 1, f"{phase} {module}: {len(found)} prompts"
    return "\n".join(message["text"] for message in found[0]["messages"])


@pytest.mark.slow
@needs_cargo
def test_translate_cartpole_to_rust_offline_repairs_a_compile_error_and_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh build cache: every crate of the run is compiled by cargo here.
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    done = run_envport(
        "translate",
        str(CARTPOLE),
        "--target",
        "rust",
        "--model",
        f"replay:{SESSION}",
        "--out",
        str(tmp_path / "runs"),
        "--run-id",
        "rust",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified (cartpole -> rust" in done.stdout
    run = tmp_path / "runs" / "rust"
    events = _events(run)

    # The behaviour bug: the force's sign, found by the physics probe through the C ABI of
    # the partial crate, and fed to the physics repair.
    physics = _prompt(events, "repair", "physics")
    assert "physics.dynamics differs from the reference" in physics
    assert "physics[1]: expected -0.195121951, got 0.195121951" in physics
    # The compile error: cargo's error with its file:line and the source line, fed to the
    # lib repair.
    lib = _prompt(events, "repair", "lib")
    assert "cargo build failed" in lib
    assert "src/lib.rs:66:22: error[E0308]: mismatched types: expected `f32`, found `f64`" in lib
    assert "66 |                 *o = *s;" in lib
    # The generate prompts are the Rust target's: its notes, its files, its code fences.
    generate = _prompt(events, "generate", "lib")
    assert "`src/lib.rs`" in generate and "`Cargo.toml`" in generate
    assert "````rust" in generate

    checks = [e for e in events if e["event"] == "check"]
    failed = [o["name"] for e in checks for o in e["outcomes"] if not o["passed"]]
    assert failed == ["l1.physics.dynamics", "module:lib"]
    assert checks[-1]["scope"] == "composed" and checks[-1]["passed"]
    report = json.loads((run / "reports" / "verify.json").read_text())
    assert report["passed"] and {"l2", "l3"} <= {level["level"] for level in report["levels"]}

    port = run / "port"
    assert sorted(p.relative_to(port).as_posix() for p in port.rglob("*") if p.is_file()) == [
        "Cargo.toml",
        "src/lib.rs",
        "src/physics.rs",
    ]
    assert "*o = *s as f32;" in (port / "src" / "lib.rs").read_text()
    assert "if action == 1.0 { FORCE_MAG }" in (port / "src" / "physics.rs").read_text()
    # The physics repair's proposed case ran in the composed check, against the reference.
    assert (run / "proposed_tests" / "physics-01-push_right.toml").is_file()
    assert any(o["name"] == "cases.proposed" and o["passed"] for o in checks[-1]["outcomes"])


def test_the_rust_session_is_labelled_hand_written() -> None:
    session = json.loads((SESSION / "session.json").read_text())
    assert session["entries"]
    for entry in session["entries"]:
        assert entry["source"] == "hand-written"
        assert (SESSION / entry["answer_file"]).is_file()


def test_a_build_failure_becomes_one_block_per_error_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("fn a() {}\nfn b() { let x: f32 = 1.0f64; }\n")
    error = (
        "port failed in `load`: BuildError: cargo build failed: src/lib.rs:2:23: "
        "error[E0308]: mismatched types: expected `f32`, found `f64`; "
        "src/gone.rs:9:1: error[E0425]: cannot find value `y`; and 2 more"
    )
    text = compiler_errors(error, tmp_path)
    assert text is not None
    blocks = text.split("\n\n")
    assert blocks[0] == "port failed in `load`: BuildError: cargo build failed:"
    assert blocks[1].splitlines() == [
        "src/lib.rs:2:23: error[E0308]: mismatched types: expected `f32`, found `f64`",
        "2 | fn b() { let x: f32 = 1.0f64; }",
        "  |                       ^",
    ]
    # A file the port does not have gets no source line, and no path outside is read.
    assert blocks[2] == "src/gone.rs:9:1: error[E0425]: cannot find value `y`"
    assert blocks[3] == "(and 2 more errors)"
    assert compiler_errors("port failed in `load`: ImportError: x", tmp_path) is None
    outside = "cargo build failed: ../../etc/passwd.rs:1:1: error: x"
    assert (
        compiler_errors(outside, tmp_path)
        == "cargo build failed:\n\n../../etc/passwd.rs:1:1: error: x"
    )


def test_a_rust_answer_writes_rust_files_only(tmp_path: Path) -> None:
    answer = (
        "### File: src/physics.rs\n```rust\npub fn f() {}\n```\n\n"
        '### File: Cargo.toml\n```toml\n[package]\nname = "x"\n```\n'
    )
    parsed = parse_answer(answer, tmp_path, ["src/physics.rs"], RUST_FILES)
    assert set(parsed.files) == {"src/physics.rs", "Cargo.toml"}
    with pytest.raises(EditParseError, match=r"\.rs, Cargo\.toml"):
        parse_answer("### File: env.py\n```python\nx = 1\n```\n", tmp_path, [], RUST_FILES)
    # A lone untitled rust block is the one file asked for.
    lone = parse_answer("```rust\npub fn f() {}\n```\n", tmp_path, ["src/lib.rs"], RUST_FILES)
    assert set(lone.files) == {"src/lib.rs"}
    # A Python port's answer still may not write Rust files.
    with pytest.raises(EditParseError, match="not a port file"):
        parse_answer(answer, tmp_path, [])


def test_a_partial_crate_declares_only_the_modules_so_far() -> None:
    assert partial_lib(["physics", "rules"]) == (
        "#![allow(dead_code, unused_imports)]\npub mod physics;\npub mod rules;\n"
    )


def test_a_rust_plan_must_end_in_the_crate_root() -> None:
    contract = '"envport_abi_version", "envport_state_layout", "envport_obs_layout", '
    contract += '"envport_action_size", "envport_step"'
    answer = (
        '```toml\nentry = "{entry}"\nmodules = [\n'
        '  {{ name = "physics", exports = ["dynamics"] }},\n'
        '  {{ name = "{entry}", exports = [{contract}], depends_on = ["physics"] }},\n]\n```\n'
    )
    plan = parse_plan(answer.format(entry="lib", contract=contract), "rust")
    assert plan.entry == "lib" and [m.name for m in plan.modules] == ["physics", "lib"]
    with pytest.raises(PlanError, match=r"entry module is `lib` \(src/lib\.rs\)"):
        parse_plan(answer.format(entry="env", contract=contract), "rust")
