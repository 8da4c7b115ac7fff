"""`envport verify` as a user and a CI job meet it: real subprocesses, real worker, real envs."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import CARTPOLE, JAX_PORT, NUMPY_PORT, run_envport, user_env


@pytest.mark.parametrize("port", [NUMPY_PORT, JAX_PORT], ids=["numpy", "jax"])
def test_known_good_ports_verify(port: Path, tmp_path: Path) -> None:
    report_path, junit_path = tmp_path / "report.json", tmp_path / "junit.xml"
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(port),
        "--json",
        str(report_path),
        "--junit",
        str(junit_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "100 episodes" in done.stdout
    report = json.loads(report_path.read_text())
    assert report["passed"] and report["backend"] == port.name
    names = [f"{lv['level']}.{lv['mode']}" for lv in report["levels"]]
    # The port's own reset, fresh and after play, for both; the VectorEnv's semantics for
    # NumPy, which has one.
    user_paths = ["l2.reset", "l2.state_api", "l2.reset_after_play"] + (
        ["l2.vector"] if port.name == "numpy" else []
    )
    # The port is also imported by a plain interpreter, last (envport.verifiers.plain).
    plain = ["l3.plain"]
    assert names == [
        "l1.physics.dynamics",
        "l1.physics.is_terminated",
        "l1.transition",
        "l1.landings",
        # The port's own reset first: under --fail-fast a wrong one stops L2 in seconds.
        *user_paths,
        "l2.interaction",
        "l2.batch",
        # Batches past a chunk boundary: for ports that batch themselves, not JAX's vmap.
        *(["l2.sizes"] if port.name == "numpy" else []),
        "l3.free",
        "l3.resync",
        "l3.bounds",
        *plain,
    ]
    for level in report["levels"]:
        assert level["passed"] and level["steps_compared"] > 0
    # Every check showed all it can: the verdict is a plain "verified".
    assert report["gaps"] == [] and "verified: backend" in done.stdout
    for level in [lv for lv in report["levels"] if lv["mode"] in ("free", "resync")]:
        assert level["episodes"] == 100
        assert level["steps_compared"] >= 1000
        # Both ways an episode ends were exercised, not only pole falls.
        assert level["endings"].get("terminated", 0) > 0
        assert level["endings"].get("truncated", 0) > 0
    # The levels' cases, the port's load and the static review of its source (not a level).
    assert report["review"]["passed"] and report["review"]["level"] == "review"
    suite = ET.parse(junit_path).getroot()
    assert suite.get("tests") == str(len(names) + 2) and suite.get("failures") == "0"
    assert suite.find("testcase[@name='review.static']") is not None


def _one_line_failure(done, code: int, fragment: str) -> None:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert fragment in lines[0]


def test_missing_spec_file(tmp_path: Path) -> None:
    done = run_envport("verify", str(tmp_path / "nope.toml"), "--port", str(NUMPY_PORT))
    _one_line_failure(done, 2, "no such spec file")


def test_malformed_toml(tmp_path: Path) -> None:
    (tmp_path / "envport.toml").write_text("name = 'x'\n[reference\n")
    done = run_envport("verify", str(tmp_path), "--port", str(NUMPY_PORT))
    _one_line_failure(done, 2, "not valid TOML")


def test_unknown_env_id(tmp_path: Path) -> None:
    text = (CARTPOLE / "envport.toml").read_text().replace("CartPole-v1", "CartPoleX-v9")
    (tmp_path / "envport.toml").write_text(text)
    shutil.copytree(CARTPOLE / "probes", tmp_path / "probes")
    done = run_envport("verify", str(tmp_path), "--port", str(NUMPY_PORT))
    _one_line_failure(done, 2, "unknown Gymnasium env id `CartPoleX-v9`")


def test_missing_port_directory(tmp_path: Path) -> None:
    done = run_envport("verify", str(CARTPOLE), "--port", str(tmp_path / "absent"))
    _one_line_failure(done, 2, "no such port directory")


def test_unknown_flag_is_one_line() -> None:
    done = run_envport("verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--mode", "sideways")
    _one_line_failure(done, 2, "--mode")


def test_port_missing_a_contract_function(numpy_port_copy: Path) -> None:
    env = numpy_port_copy / "env.py"
    env.write_text(env.read_text().replace("def state_from_reference(", "def state_from_ref("))
    done = run_envport("verify", str(CARTPOLE), "--port", str(numpy_port_copy))
    _one_line_failure(done, 1, "does not export `state_from_reference`")


def test_port_raising_at_import(numpy_port_copy: Path) -> None:
    physics = numpy_port_copy / "physics.py"
    physics.write_text(physics.read_text() + "\nraise RuntimeError('bad constant table')\n")
    done = run_envport("verify", str(CARTPOLE), "--port", str(numpy_port_copy))
    _one_line_failure(done, 1, "RuntimeError: bad constant table")


def test_port_sleeping_forever_in_step(numpy_port_copy: Path) -> None:
    env = numpy_port_copy / "env.py"
    env.write_text(
        env.read_text().replace(
            "    def step(self, actions):\n",
            "    def step(self, actions):\n        import time\n\n        time.sleep(10**6)\n",
        )
    )
    started = time.monotonic()
    # `time` is refused by the static review; past it, a hang is one line within the timeout.
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(numpy_port_copy),
        "--no-static-review",
        "--timeout",
        "3",
        timeout=60,
    )
    elapsed = time.monotonic() - started
    _one_line_failure(done, 1, "did not answer `step_batch` within 3 s")
    # The line names the check that was asking, where a hang on a drawn state shows.
    assert "in l1: port did not answer" in done.stderr, done.stderr
    # A hang would run into the 60 s limit above (no tighter bound: load).
    assert elapsed < 55


def test_port_killing_its_worker(numpy_port_copy: Path) -> None:
    env = numpy_port_copy / "env.py"
    env.write_text(
        env.read_text().replace(
            "    def step(self, actions):\n",
            "    def step(self, actions):\n        import os\n\n        os._exit(7)\n",
        )
    )
    # `os._exit` is refused by the static review; past it, a dead worker is one line.
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(numpy_port_copy), "--no-static-review"
    )
    _one_line_failure(done, 1, "port worker died in `step_batch`: exit code 7")


def _gravity_mutant(port: Path) -> None:
    physics = port / "physics.py"
    physics.write_text(physics.read_text().replace("GRAVITY = 9.8", "GRAVITY = 9.9"))


def test_l3_divergence_report_and_replay_command(numpy_port_copy: Path, tmp_path: Path) -> None:
    _gravity_mutant(numpy_port_copy)
    report_path = tmp_path / "first.json"
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(numpy_port_copy),
        "--levels",
        "l3",
        "--json",
        str(report_path),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIVERGED" in done.stdout and "replay: envport verify" in done.stdout
    first = json.loads(report_path.read_text())["levels"][0]["divergences"][0]
    assert first["level"] == "l3" and first["fields"]
    differing = {f["field"] for f in first["fields"]}
    assert differing & {"obs.x_dot", "obs.theta_dot"}
    for diff in first["fields"]:
        assert diff["expected"] != diff["actual"]
    assert len(first["action_prefix"]) == first["step"] + 1

    # The replay command, run as printed, shows exactly that divergence again.
    words = shlex.split(first["replay"])
    assert words[:2] == ["envport", "verify"]
    again_path = tmp_path / "again.json"
    again = run_envport(*words[1:], "--json", str(again_path))
    assert again.returncode == 1
    replayed = json.loads(again_path.read_text())["levels"][0]
    assert replayed["episodes"] == 1
    same = replayed["divergences"][0]
    assert (same["episode"], same["step"], same["fields"]) == (
        first["episode"],
        first["step"],
        first["fields"],
    )


def test_fail_fast_stops_at_the_first_failing_check_and_says_what_did_not_run(
    numpy_port_copy: Path, tmp_path: Path
) -> None:
    _gravity_mutant(numpy_port_copy)
    report_path = tmp_path / "report.json"
    done = run_envport(
        "verify",
        str(CARTPOLE),
        "--port",
        str(numpy_port_copy),
        "--fail-fast",
        "--no-shrink",
        "--json",
        str(report_path),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(report_path.read_text())
    levels = report["levels"]
    assert levels and {level["level"] for level in levels} == {"l1"}, levels
    first = next(level for level in levels if not level["passed"])
    stopped = report["stopped_early"]
    assert stopped.startswith(f"fail-fast: stopped after l1.{first['mode']} failed"), stopped
    assert "l2" in stopped and "l3" in stopped
    # L1 itself ends at its first failing part (each part draws its own states): the parts
    # after it did not run and are named (the gravity slip fails a physics probe first).
    assert levels[-1] == first and first["mode"] != "transition", levels
    assert "l1.transition" in stopped.partition("not run: ")[2], stopped
    # Its own line, not one of the spec's warnings.
    assert stopped in done.stdout.splitlines(), done.stdout
    assert not [w for w in report["warnings"] if "fail-fast" in w], report["warnings"]
    assert "warn spec: fail-fast" not in done.stdout
    # Branches only the levels not run would reach are not called gaps of the reference.
    assert not [gap for gap in report["gaps"] if gap["check"] == "coverage"], report["gaps"]


@pytest.mark.slow
def test_l1_divergence_is_shrunk_and_replays(numpy_port_copy: Path, tmp_path: Path) -> None:
    _gravity_mutant(numpy_port_copy)
    report_path = tmp_path / "first.json"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(numpy_port_copy), "--json", str(report_path)
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(report_path.read_text())
    first_level = report["levels"][0]
    assert (first_level["level"], first_level["mode"]) == ("l1", "physics.dynamics")
    first = first_level["divergences"][0]
    assert first["module"] == "physics"
    # Gravity acts through sin(theta): the shrunk state keeps theta and zeroes what it can.
    physics = first["start_state"]["physics"]
    assert physics[2] != 0.0
    assert sum(1 for value in physics if value == 0.0) >= 2
    assert {f["field"] for f in first["fields"]} & {"physics[1]", "physics[3]"}

    words = shlex.split(first["replay"])
    assert "--module" in words and "physics" in words
    again_path = tmp_path / "again.json"
    again = run_envport(*words[1:], "--json", str(again_path))
    assert again.returncode == 1
    same = json.loads(again_path.read_text())["levels"][0]["divergences"][0]
    assert (same["start_state"], same["fields"]) == (first["start_state"], first["fields"])


def test_console_script_is_installed() -> None:
    script = shutil.which("envport") or str(Path(sys.executable).parent / "envport")
    done = subprocess.run(
        [script, "--help"], capture_output=True, text=True, timeout=60, env=user_env()
    )
    assert done.returncode == 0 and "verify" in done.stdout
    # It describes the tool, not the module that parses its arguments.
    text = " ".join(done.stdout.split())
    assert "Port a reference RL environment" in text and "Command line:" not in text


def test_summary_line_says_what_was_checked_and_where_the_time_went(tmp_path: Path) -> None:
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--levels", "l1,l3",
        "--examples", "10", "--episodes", "10",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("verified: backend numpy; l1 ") and ", l3 " in last, last
    assert "reference 0.00 s" not in last and "total " in last

    module = run_envport(
        "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--target", "numpy",
        "--levels", "l1", "--module", "physics", "--examples", "10",
    )  # fmt: skip
    assert module.returncode == 0, module.stdout + module.stderr
    last = module.stdout.strip().splitlines()[-1]
    assert last.startswith("verified: module physics of the numpy port; l1 "), last
    assert "None" not in module.stdout


def test_junit_message_of_an_l1_failure(numpy_port_copy: Path, tmp_path: Path) -> None:
    _gravity_mutant(numpy_port_copy)
    junit = tmp_path / "junit.xml"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(numpy_port_copy), "--levels", "l1",
        "--examples", "50", "--no-shrink", "--junit", str(junit),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    failures = ET.parse(junit).getroot().findall("./testcase/failure")
    messages = [f.get("message") or "" for f in failures]
    assert messages and all("None" not in m and "episodes" not in m for m in messages), messages
    assert any(
        m.startswith("1 of ") and "examples diverged: physics.dynamics differs" in m
        for m in messages
    ), messages


def test_a_batch_coupled_divergence_replays_with_its_batch(
    numpy_port_copy: Path, tmp_path: Path
) -> None:
    """Every env pushed by the first env's action (the numpy-batch-leak mutant): a free-running
    episode diverges only beside the others of its batch. Its replay line must still show it."""
    physics = numpy_port_copy / "physics.py"
    physics.write_text(
        physics.read_text().replace(
            "np.where(actions == 1, FORCE_MAG, -FORCE_MAG)",
            "np.where(actions[:1] == 1, FORCE_MAG, -FORCE_MAG)",
        )
    )
    first_json = tmp_path / "first.json"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(numpy_port_copy), "--levels", "l3",
        "--mode", "free", "--episodes", "64", "--json", str(first_json),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    first = json.loads(first_json.read_text())["levels"][0]["divergences"][0]
    assert "needs the other envs of its batch" in first["message"]
    words = shlex.split(first["replay"])
    again_json = tmp_path / "again.json"
    again = run_envport(*words[1:], "--json", str(again_json))
    assert again.returncode == 1, again.stdout + again.stderr
    replayed = json.loads(again_json.read_text())["levels"][0]
    same = next(d for d in replayed["divergences"] if d["episode"] == first["episode"])
    assert (same["step"], same["fields"]) == (first["step"], first["fields"])
    assert 1 < replayed["episodes"] < 64  # its batch, not the whole run


def test_verify_leaves_the_directory_it_runs_in_as_it_was(tmp_path: Path) -> None:
    """Hypothesis would keep its caches in ./.hypothesis; they go under envport's cache."""
    here, cache = tmp_path / "work", tmp_path / "cache"
    here.mkdir()
    env = user_env(ENVPORT_CACHE_DIR=str(cache))
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    done = subprocess.run(
        [sys.executable, "-m", "envport", "verify", str(CARTPOLE), "--port", str(NUMPY_PORT),
         "--levels", "l1,l2", "--examples", "5"],
        capture_output=True, text=True, timeout=300, cwd=here, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(here.iterdir()) == []
    # Hypothesis writes only when it has something to keep (a failing example; no longer
    # harvested constants: verifiers/draws/hypo.py), so ask where it would: envport's cache.
    where = subprocess.run(
        [sys.executable, "-c", "from envport.verifiers.draws.hypo import keep_caches_out_of_cwd; "
         "keep_caches_out_of_cwd(); from hypothesis.configuration import storage_directory; "
         "print(storage_directory().path)"],
        capture_output=True, text=True, timeout=120, cwd=here, env=env,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(cache / "hypothesis")
    assert list(here.iterdir()) == []
