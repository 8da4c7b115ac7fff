"""The Rust backend: a cdylib crate built offline in the worker and driven through its C ABI."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from envport.serve import crate_cache
from envport.targets.loader import ContractError
from envport.targets.rust_build import build_crate, cache_key, first_errors, source_key
from envport.targets.rust_port import parse_obs_layout, parse_state_layout
from envport.verifiers.selfcheck import check_mutant, load_mutants
from envport.verifiers.verify import VerifyOptions

from helpers import CARTPOLE, run_envport

RUST_PORT = CARTPOLE / "ports" / "rust"
needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")


@pytest.fixture(scope="module", autouse=True)
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One build cache for the module: the known-good crate is compiled once, not per test."""
    cache = tmp_path_factory.mktemp("rust-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ENVPORT_CACHE_DIR", str(cache))
        yield cache


def _copy(tmp_path: Path) -> Path:
    port = tmp_path / "rust"
    shutil.copytree(RUST_PORT, port, ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    return port


@needs_cargo
def test_known_good_rust_port_verifies_at_every_level(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_envport("verify", str(CARTPOLE), "--port", str(RUST_PORT), "--json", str(report))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "backend rust" in done.stdout
    for level in ("l1.transition", "l2.interaction", "l2.batch", "l3.free", "l3.resync"):
        assert f"pass {level}" in done.stdout
    # The build happened in a scratch copy: the port directory is exactly what was written.
    assert not (RUST_PORT / "target").exists() and not (RUST_PORT / "Cargo.lock").exists()


@needs_cargo
def test_compile_error_is_one_line_with_rustc_message(tmp_path: Path) -> None:
    port = _copy(tmp_path)
    lib = port / "src" / "lib.rs"
    lib.write_text(lib.read_text().replace("state[4] + 1.0", "state[4] + one_step"))
    done = run_envport("verify", str(CARTPOLE), "--port", str(port), "--target", "rust")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "cargo build failed" in lines[0]
    assert "src/lib.rs:" in lines[0] and "error[E0425]" in lines[0] and "one_step" in lines[0]


@needs_cargo
def test_a_rust_mutant_is_caught_and_replays() -> None:
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "rust-gravity")
    result = check_mutant(CARTPOLE, mutant, VerifyOptions(levels=("l3",)))
    assert result.caught and result.ok, result
    assert result.first is not None and result.first.fields[0].field.startswith("obs.")
    assert result.replay_matches


@needs_cargo
def test_a_batch_past_one_chunk_losing_its_last_env_is_named_by_env_and_size() -> None:
    """Small batches never reach a second chunk (256 envs): l2.sizes steps batches one past
    each power of two, and names the env and the batch."""
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "rust-odd-tail-dropped")
    result = check_mutant(CARTPOLE, mutant, VerifyOptions(levels=("l2",)))
    assert result.caught and result.ok, result
    assert result.first is not None and result.first.mode == "sizes"
    assert "env 256 of a batch of 257" in result.first.message, result.first.message
    # The row never written reads NaN on every run (an empty buffer's leftovers once made
    # the replay name other fields), so the replay names the same fields.
    obs = [f for f in result.first.fields if f.field.startswith("obs.")]
    assert len(obs) == 4 and all(f.actual != f.actual for f in obs), obs
    assert result.replay_matches


@needs_cargo
def test_build_is_cached_by_source(tmp_path: Path) -> None:
    port = _copy(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    built = build_crate(port, workdir=work)
    assert built == work / crate_cache.BUILT and built.is_file()
    # Stored by the driver under its own key, found again without a build.
    root = tmp_path / "cache"
    stored = crate_cache.store(built, root, cache_key(port))
    assert stored is not None
    assert build_crate(port, root=root, workdir=work) == stored
    # A stored library whose bytes changed is never loaded.
    stored.write_bytes(stored.read_bytes() + b"planted")
    assert crate_cache.cached(root, cache_key(port)) is None
    key = source_key(port)
    physics = port / "src" / "physics.rs"
    physics.write_text(physics.read_text() + "\n// touched\n")
    assert source_key(port) != key


def test_first_errors_keeps_the_compiler_lines() -> None:
    output = "\n".join(
        [
            "   Compiling envport_cartpole v0.1.0 (/tmp/x/crate)",
            "src/lib.rs:55:30: error[E0425]: cannot find value `one` in this scope",
            "src/lib.rs:60:1: warning: unused import",
            "src/physics.rs:3:9: error[E0308]: mismatched types",
            "error: could not compile `envport_cartpole` (lib) due to 2 previous errors",
        ]
    )
    text = first_errors(output)
    assert text.startswith("src/lib.rs:55:30: error[E0425]")
    assert "src/physics.rs:3:9: error[E0308]" in text
    assert "warning" not in text and "could not compile" not in text and "\n" not in text


def test_layout_strings() -> None:
    assert parse_state_layout("physics:4,elapsed_steps:1") == [
        ("physics", 4),
        ("elapsed_steps", 1),
    ]
    dtype, shape = parse_obs_layout("uint8:2x3")
    assert dtype.name == "uint8" and shape == (2, 3)
    for bad in ("physics", "physics:0", "4:physics"):
        with pytest.raises(ContractError, match="envport_state_layout"):
            parse_state_layout(bad)
    with pytest.raises(ContractError, match="envport_obs_layout"):
        parse_obs_layout("complex64:4")


def test_a_crate_without_cargo_toml_is_a_contract_error(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match=r"needs Cargo\.toml"):
        build_crate(tmp_path)
