"""`envport bench` end to end on tiny workloads: structure and sanity, never speed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import CARTPOLE, JAX_PORT, NUMPY_PORT, ROOT, run_envport, user_env

QUICK = ["--steps", "20", "--repeats", "1", "--sync-envs", "4"]


def _bench(*args: str) -> tuple[int, str, str]:
    done = run_envport("bench", str(CARTPOLE), *args)
    return done.returncode, done.stdout, done.stderr


def test_bench_numpy_port_with_gymnax_anchor(tmp_path: Path) -> None:
    results, figure = tmp_path / "sps.json", tmp_path / "sps.png"
    code, out, err = _bench(
        "--port",
        str(NUMPY_PORT),
        "--batch-sizes",
        "8,32",
        "--anchor",
        "gymnax:CartPole-v1",
        "--json",
        str(results),
        "--plot",
        str(figure),
        *QUICK,
    )
    assert code == 0, out + err
    assert "numpy port" in out and "gymnax:CartPole-v1" in out
    report = json.loads(results.read_text())
    assert report["batch_sizes"] == [8, 32] and report["machine"]["cpus"] >= 1
    rows = {(row["name"], row["batch"]): row for row in report["rows"]}
    expected = {
        ("gymnasium", 1),
        ("gymnasium SyncVectorEnv", 4),
        ("numpy port", 8),
        ("numpy port", 32),
        ("gymnax:CartPole-v1", 8),
        ("gymnax:CartPole-v1", 32),
    }
    assert set(rows) == expected
    for row in rows.values():
        assert row["sps"] > 0 and row["sps"] == max(row["sps_runs"])
    anchor = rows[("gymnax:CartPole-v1", 32)]
    assert anchor["kind"] == "anchor" and anchor["compile_s"] > 0
    assert set(anchor["loops"]) == {"scan", "python"} and anchor["loop"] in anchor["loops"]
    assert rows[("numpy port", 8)]["kind"] == "port"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Progress on stderr, a line per part as it is measured, in order; stdout is the table.
    said = [line for line in err.splitlines() if line.startswith("bench: ")]
    assert [line.split(" in ")[0] for line in said] == [
        "bench: the reference",
        "bench: batch 8",
        "bench: batch 32",
    ], err
    assert "numpy port" in said[1] and "gymnax:CartPole-v1" in said[1] and "bench:" not in out


def test_bench_jax_port_reports_compile_time_apart(tmp_path: Path) -> None:
    results = tmp_path / "sps.json"
    code, out, err = _bench(
        "--port", str(JAX_PORT), "--batch-sizes", "16", "--json", str(results), *QUICK
    )
    assert code == 0, out + err
    row = next(r for r in json.loads(results.read_text())["rows"] if r["name"] == "jax port")
    assert row["backend"] == "jax" and row["sps"] > 0 and row["compile_s"] > 0


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_bench_rust_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path / "cache"))
    results = tmp_path / "sps.json"
    code, out, err = _bench(
        "--port",
        str(CARTPOLE / "ports" / "rust"),
        "--batch-sizes",
        "16,600",
        "--json",
        str(results),
        *QUICK,
    )
    assert code == 0, out + err
    rows = [r for r in json.loads(results.read_text())["rows"] if r["name"] == "rust port"]
    assert [r["batch"] for r in rows] == [16, 600]  # 600 envs take the threaded path
    assert all(r["sps"] > 0 for r in rows)


def _one_line(code: int, err: str, status: int, fragment: str) -> None:
    assert code == status, err
    # Progress lines (`bench: the reference in 0.4 s`) come before a failure; the failure
    # itself is one line.
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("bench: ")]
    assert len(lines) == 1 and fragment in lines[0], err
    assert "Traceback" not in err


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    code, _, err = _bench("--port", str(NUMPY_PORT), "--batch-sizes", "32,0")
    _one_line(code, err, 2, "--batch-sizes")
    code, _, err = _bench("--port", str(NUMPY_PORT), "--anchor", "brax:ant", *QUICK)
    _one_line(code, err, 2, "expected gymnax:EnvId, xminigrid:EnvId, pgx:EnvId or bridge:")
    code, _, err = _bench("--port", str(tmp_path / "absent"))
    _one_line(code, err, 2, "no such port directory")
    code, _, err = _bench("--port", str(NUMPY_PORT), "--anchor", f"bridge:{tmp_path}/absent")
    _one_line(code, err, 2, f"--anchor bridge:{tmp_path}/absent: no such port directory")
    # A bridge of another example would load with this spec and time another env.
    other = ROOT / "examples" / "taxi" / "ports" / "numpy"
    code, _, err = _bench("--port", str(NUMPY_PORT), "--anchor", f"bridge:{other}")
    _one_line(code, err, 2, "not a bridge of this spec")


def test_a_bridge_port_is_timed_as_an_anchor(tmp_path: Path) -> None:
    """A third-party package with no anchor class (JaxMARL) is timed by its bridge, a port
    directory in envport's contract: `--anchor bridge:DIR` loads it in a worker of its own
    under its own target (here gymnax's CartPole bridge, JAX, beside the NumPy port) and
    names its rows by the anchor. Refused as an unknown anchor form before bridges were."""
    results = tmp_path / "sps.json"
    bridge = f"bridge:{CARTPOLE / 'ports' / 'gymnax'}"
    code, out, err = _bench(
        "--port", str(NUMPY_PORT), "--batch-sizes", "8", "--anchor", bridge,
        "--json", str(results), *QUICK,
    )  # fmt: skip
    assert code == 0, out + err
    rows = {row["name"]: row for row in json.loads(results.read_text())["rows"]}
    assert rows[bridge]["kind"] == "anchor" and rows[bridge]["backend"] == "jax"
    assert rows[bridge]["sps"] > 0 and rows["numpy port"]["backend"] == "numpy"


def test_a_broken_port_fails_the_bench(tmp_path: Path) -> None:
    port = tmp_path / "numpy"
    shutil.copytree(NUMPY_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    (port / "env.py").write_text("def broken(:\n")
    code, _, err = _bench("--port", str(port), "--batch-sizes", "8", *QUICK)
    _one_line(code, err, 1, "port failed in `load`")


def test_an_anchor_that_cannot_be_imported_is_not_called_the_port(tmp_path: Path) -> None:
    """gymnax 1.0.1 on an install without `six`: its import fails. That is the anchor's
    failure, the user's choice of yardstick, not the port's."""
    broken = tmp_path / "site" / "gymnax"
    broken.mkdir(parents=True)
    # What gymnax 1.0.1 does on an install that lacks the package it never declared.
    (broken / "__init__.py").write_text("import six_is_not_installed_here  # noqa\n")
    env = user_env(PYTHONPATH=str(broken.parent))
    done = subprocess.run(
        [sys.executable, "-m", "envport", "bench", str(CARTPOLE), "--port", str(NUMPY_PORT),
         "--batch-sizes", "8", "--anchor", "gymnax:CartPole-v1", *QUICK],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    _one_line(done.returncode, done.stderr, 2, "anchor failed in `bench`")
    failure = [line for line in done.stderr.splitlines() if line.startswith("envport: ")]
    assert failure[0].startswith("envport: --anchor gymnax:CartPole-v1: anchor failed in `bench`")
    assert "six_is_not_installed_here" in failure[0] and "port failed" not in failure[0]


def test_subjects_take_turns_in_an_order_that_flips_every_round() -> None:
    from envport.targets.bench.run import take_turns

    calls: list[int] = []

    def run(index: int) -> str:
        calls.append(index)
        return f"{index}@{len(calls)}"

    answers = take_turns(3, 4, run)
    assert calls == [0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0]
    # Each subject's answers, in the order of its rounds.
    assert answers[0] == ["0@1", "0@6", "0@7", "0@12"]
    assert answers[2] == ["2@3", "2@4", "2@9", "2@10"]


MINIGRID_EMPTY = ROOT / "examples" / "minigrid_empty"


@pytest.mark.slow
def test_bench_structured_example_with_xminigrid_anchor(tmp_path: Path) -> None:
    """MiniGrid: a harness-file reference with a structured state, its JAX port, and
    xminigrid's closest env as the anchor, all in one report."""
    results = tmp_path / "sps.json"
    done = run_envport(
        "bench", str(MINIGRID_EMPTY), "--port", str(MINIGRID_EMPTY / "ports" / "jax"),
        "--batch-sizes", "8", "--anchor", "xminigrid:MiniGrid-Empty-8x8",
        "--json", str(results), *QUICK,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(r["name"], r["batch"]): r for r in json.loads(results.read_text())["rows"]}
    assert set(rows) == {
        ("reference", 1),
        ("reference SyncVectorEnv", 4),
        ("jax port", 8),
        ("xminigrid:MiniGrid-Empty-8x8", 8),
    }
    assert all(row["sps"] > 0 for row in rows.values())
    anchor = rows[("xminigrid:MiniGrid-Empty-8x8", 8)]
    assert anchor["kind"] == "anchor" and anchor["backend"] == "xminigrid"
    assert anchor["compile_s"] > 0 and set(anchor["loops"]) == {"scan", "python"}
    assert "xminigrid:MiniGrid-Empty-8x8" in done.stdout


def test_an_unknown_xminigrid_env_is_the_anchors_failure() -> None:
    code, _, err = _bench(
        "--port", str(NUMPY_PORT), "--batch-sizes", "8", "--anchor", "xminigrid:CartPole-v1",
        *QUICK,
    )  # fmt: skip
    _one_line(code, err, 2, "--anchor xminigrid:CartPole-v1: anchor failed in `bench`")
    assert "has no env 'CartPole-v1'" in err and "MiniGrid-Empty-8x8" in err
    assert "port failed" not in err


BREAKOUT = ROOT / "examples" / "minatar_breakout"


@pytest.mark.slow
def test_bench_minatar_with_pgx_and_gymnax_anchors_in_one_run(tmp_path: Path) -> None:
    """MinAtar Breakout's JAX port beside two anchors timed in the same run (`--anchor`
    repeated): pgx takes the reference's minimal-action-set codes as they are."""
    pytest.importorskip("pgx")
    results = tmp_path / "sps.json"
    done = run_envport(
        "bench", str(BREAKOUT), "--port", str(BREAKOUT / "ports" / "jax"), "--batch-sizes", "8",
        "--anchor", "pgx:minatar-breakout", "--anchor", "gymnax:Breakout-MinAtar",
        "--json", str(results), *QUICK,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(results.read_text())
    rows = {(r["name"], r["batch"]): r for r in report["rows"]}
    assert {("jax port", 8), ("pgx:minatar-breakout", 8), ("gymnax:Breakout-MinAtar", 8)} <= set(
        rows
    )
    pgx_row = rows[("pgx:minatar-breakout", 8)]
    assert pgx_row["kind"] == "anchor" and pgx_row["backend"] == "pgx"
    assert pgx_row["sps"] > 0 and pgx_row["compile_s"] > 0
    assert report["machine"]["pgx"].startswith("2.")
    assert "pgx:minatar-breakout" in done.stdout and "gymnax:Breakout-MinAtar" in done.stdout


def test_an_unknown_pgx_env_is_the_anchors_failure() -> None:
    pytest.importorskip("pgx")
    code, _, err = _bench(
        "--port", str(NUMPY_PORT), "--batch-sizes", "8", "--anchor", "pgx:cartpole", *QUICK
    )  # fmt: skip
    _one_line(code, err, 2, "--anchor pgx:cartpole: anchor failed in `bench`")
    assert "pgx has no env 'cartpole'" in err and "minatar-breakout" in err


def _rendered(rows: list[tuple[str, str, int, float]]) -> str:
    from envport.targets.bench.report import BenchReport, BenchRow, console, table

    report = BenchReport(
        spec="examples/minigrid_doorkey/envport.toml", created="now", steps=10, repeats=1,
        batch_sizes=[4096],
        rows=[BenchRow(name=n, kind=k, backend="jax", batch=b, sps=s, steps=10)  # type: ignore[arg-type]
              for n, k, b, s in rows],
    )  # fmt: skip
    out = console()
    with out.capture() as captured:
        out.print(table(report))
    return captured.get()


def test_ratios_keep_the_digits_that_tell_half_from_one() -> None:
    """0.50x and 0.57x once rendered as "0x" and "1x": a port half as fast as its anchor
    looked like parity."""
    text = _rendered([
        ("reference", "reference", 1, 1000.0),
        ("jax port", "port", 4096, 402_000.0),
        ("xminigrid:MiniGrid-DoorKey-5x5", "anchor", 4096, 852_000.0),
    ])  # fmt: skip
    assert "402x" in text and "852x" in text  # best / 1 env, whole numbers above 10
    assert "/ anchor at B=4096" in text
    port_line = next(line for line in text.splitlines() if "jax port" in line)
    assert "0.47x" in port_line and "1.00x" not in port_line
    anchor_line = next(line for line in text.splitlines() if "xminigrid:" in line)
    assert "1.00x" in anchor_line


def test_with_several_anchors_the_port_is_held_to_the_fastest() -> None:
    text = _rendered([
        ("jax port", "port", 4096, 600_000.0),
        ("gymnax:Breakout-MinAtar", "anchor", 4096, 300_000.0),
        ("pgx:minatar-breakout", "anchor", 4096, 1_200_000.0),
    ])  # fmt: skip
    assert "/ fastest anchor (pgx:minatar-breakout) at B=4096" in text.replace("\n", " ")
    port_line = next(line for line in text.splitlines() if "jax port" in line)
    assert "0.50x" in port_line and "2.00x" not in port_line


def test_a_ratio_below_one_is_not_rounded_away() -> None:
    from envport.targets.bench.report import ratio

    assert [ratio(v) for v in (0.5, 0.57, 2.378, 12.4, 0.004)] == [
        "0.50x", "0.57x", "2.38x", "12x", "4.0e-03x",
    ]  # fmt: skip
