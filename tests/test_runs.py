"""The run store: state file, journal, git history, frozen and planned specs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.errors import EnvportError
from envport.llm.ledger import CallRecord
from envport.llm.types import Purpose, TokenUsage
from envport.pipeline.plan import PlanError, parse_plan
from envport.runs.history import History
from envport.runs.journal import Journal, Spending, read_events
from envport.runs.layout import RunLock, create_run, new_run_id, open_run
from envport.runs.spec_copy import dumps, write_planned_spec
from envport.runs.state import RunState, load_state, save_state
from envport.spec import ModuleSpec, load_spec

from helpers import CARTPOLE, ROOT, user_env


def make_state(**changes: object) -> RunState:
    base = RunState(
        run_id=new_run_id("cart pole!", "numpy"),
        spec_source=str(CARTPOLE / "envport.toml"),
        spec_name="cartpole",
        target="numpy",
        model="replay:/x",
    )
    return base.model_copy(update=changes)


def test_state_round_trips_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    state = make_state(step=3, notes=["told"])
    path = tmp_path / "run.json"
    save_state(path, state)
    again = load_state(path)
    assert again.step == 3 and again.notes == ["told"]
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert state.run_id.startswith("cart-pole-numpy-")


def test_unreadable_state_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"format": "envport-run/1"}')
    with pytest.raises(EnvportError, match="not a readable run state"):
        load_state(tmp_path / "run.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EnvportError, match="not an envport run"):
        open_run(tmp_path / "empty")
    with pytest.raises(EnvportError, match="no such run directory"):
        open_run(tmp_path / "nowhere")


def test_journal_skips_a_torn_last_line_and_sums_paid_calls(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    journal = Journal(path)
    usage = TokenUsage(input_tokens=10, output_tokens=5)
    call = CallRecord(
        purpose=Purpose(phase="generate", module="env"),
        model="openai:gpt-4o",
        served_by="gpt-4o",
        usage=usage,
        cost_usd=0.5,
        stop_reason="end",
    )
    journal.model_call(call)
    journal.model_call(call.model_copy(update={"cost_usd": 0.0, "cached": True}))
    with path.open("a") as handle:
        handle.write('{"event": "model_call", "cost_usd": 9')  # killed mid-write
    events = list(read_events(path))
    assert [e.event for e in events] == ["model_call", "model_call"]
    spending = Spending.from_journal(path)
    assert (spending.paid_calls, spending.cached_calls) == (1, 1)
    assert spending.cost_usd == 0.5 and spending.usage.total == 15


def test_create_run_lays_out_the_directory(tmp_path: Path) -> None:
    state = make_state()
    run = create_run(tmp_path / "runs", CARTPOLE / "envport.toml", state)
    assert run.root.parent == (tmp_path / "runs").resolve()
    assert run.spec_file.read_text() == (CARTPOLE / "envport.toml").read_text()
    assert run.port.is_dir() and run.reports.is_dir()
    assert open_run(run.root).load().head == History(run.root).head
    assert History(run.root).log() == ["start cartpole -> numpy"]
    # Harness files the spec names by relative path travel with the frozen copy.
    probes = load_spec(CARTPOLE).target("numpy")
    relative = getattr(probes, "probes", None)
    if relative:
        assert (run.root / relative).is_file()


def test_a_named_harness_files_sibling_modules_travel_with_the_frozen_copy(
    tmp_path: Path,
) -> None:
    # Crafter's probe renders with harness/image.py, which the spec never names: it sits
    # beside the named harness/reference.py. A run without it broke at the pixels module.
    crafter = ROOT / "examples" / "crafter"
    spec_dir = tmp_path / "crafter"
    shutil.copytree(crafter, spec_dir, ignore=shutil.ignore_patterns("ports", "replay"))
    state = make_state(spec_source=str(spec_dir / "envport.toml"), spec_name="crafter")
    run = create_run(tmp_path / "runs", spec_dir / "envport.toml", state)
    image = run.root / "harness" / "image.py"
    assert image.read_text() == (crafter / "harness" / "image.py").read_text()
    manifest = json.loads((run.root / "harness.sha256.json").read_text())
    assert "harness/image.py" in manifest and "probes/jax.py" in manifest
    assert image.stat().st_mode & 0o222 == 0  # read-only, as every frozen file


def test_one_process_drives_a_run_and_a_dead_ones_lock_is_taken_over(tmp_path: Path) -> None:
    lock = RunLock(tmp_path)
    lock.acquire()
    with pytest.raises(EnvportError, match=f"process {os.getpid()} is driving this run"):
        RunLock(tmp_path).acquire()
    lock.release()
    assert not (tmp_path / "run.lock").exists()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True, env=user_env())  # fmt: skip
    (tmp_path / "run.lock").write_text(dead.stdout.strip())
    RunLock(tmp_path).acquire()
    assert (tmp_path / "run.lock").read_text() == str(os.getpid())


# A process that takes the run lock when told, says what happened, and lets go when told.
LOCKER = """
import sys
from pathlib import Path
from envport.errors import EnvportError
from envport.runs.layout import RunLock
lock = RunLock(Path(sys.argv[1]))
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "take":
        try:
            lock.acquire()
            print("got", flush=True)
        except EnvportError as error:
            print("busy", error, flush=True)
    elif line.strip() == "drop":
        lock.release()
        print("dropped", flush=True)
"""


def lockers(root: Path, count: int) -> list[subprocess.Popen]:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", LOCKER, str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=user_env(),
        )
        for _ in range(count)
    ]
    for process in processes:
        assert process.stdout.readline().strip() == "ready"  # type: ignore[union-attr]
    return processes


def tell(process: subprocess.Popen, word: str) -> str:
    process.stdin.write(word + "\n")  # type: ignore[union-attr]
    process.stdin.flush()  # type: ignore[union-attr]
    return process.stdout.readline().strip()  # type: ignore[union-attr]


def test_processes_racing_for_the_run_lock_get_it_one_at_a_time(tmp_path: Path) -> None:
    processes = lockers(tmp_path, 4)
    try:
        for _ in range(5):
            for process in processes:  # all told at once: they race
                process.stdin.write("take\n")  # type: ignore[union-attr]
                process.stdin.flush()  # type: ignore[union-attr]
            answers = [p.stdout.readline().strip() for p in processes]  # type: ignore[union-attr]
            winners = [p for p, answer in zip(processes, answers, strict=True) if answer == "got"]
            assert len(winners) == 1, answers
            busy = [a for a in answers if a != "got"]
            assert all(f"process {winners[0].pid} is driving this run" in a for a in busy), busy
            assert tell(winners[0], "drop") == "dropped"
            assert not (tmp_path / "run.lock").exists()
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_a_lock_whose_file_is_still_empty_is_held(tmp_path: Path) -> None:
    """The moment between creating the lock file and writing the PID into it: the lock is
    the kernel's, so a reader finding no PID does not take it for a dead process's."""
    (holder,) = lockers(tmp_path, 1)
    try:
        assert tell(holder, "take") == "got"
        (tmp_path / "run.lock").write_text("")
        with pytest.raises(EnvportError, match="another process is driving this run"):
            RunLock(tmp_path).acquire()
        holder.kill()  # however its holder ends, the kernel lets go of the lock at once
        holder.wait()
        lock = RunLock(tmp_path)
        lock.acquire()
        assert (tmp_path / "run.lock").read_text() == str(os.getpid())
        lock.release()
    finally:
        holder.kill()
        holder.wait()


def test_history_commit_revert_and_reset(tmp_path: Path) -> None:
    run = create_run(tmp_path, CARTPOLE / "envport.toml", make_state())
    history = History(run.root)
    start = history.head
    (run.port / "env.py").write_text("A = 1\n")
    history.commit("generate env iter 0: module:env pass")
    (run.port / "env.py").write_text("A = 2\n")
    history.commit("repair env iter 1: breaks module:physics -> reverted")
    history.revert_head("revert repair env iter 1")
    assert (run.port / "env.py").read_text() == "A = 1\n"
    assert history.log()[0] == "revert repair env iter 1"
    # A killed step leaves strays and half-written files; reset removes both.
    (run.port / "env.py").write_text("half")
    (run.port / "stray.py").write_text("x")
    (run.port / "__pycache__").mkdir()
    (run.root / "run.json").write_text("{}")  # bookkeeping is not history: kept
    history.reset(start)
    assert not run.port.exists() or not any(run.port.iterdir())
    assert (run.root / "run.json").read_text() == "{}"


def test_planned_spec_is_valid_toml_that_loads_back(tmp_path: Path) -> None:
    shutil.copyfile(CARTPOLE / "envport.toml", tmp_path / "envport.toml")
    spec = load_spec(tmp_path)
    modules = [
        ModuleSpec(name="dynamics", exports=["step_physics"]),
        ModuleSpec(
            name="env", exports=["VectorEnv", "state_from_reference"], depends_on=["dynamics"]
        ),
    ]
    write_planned_spec(tmp_path / "envport.toml", spec, "numpy", "env", modules)
    planned = load_spec(tmp_path)
    assert planned.target("numpy").modules == modules
    assert planned.target("jax") == spec.target("jax")
    assert planned.model_dump(exclude={"targets"}) == spec.model_dump(exclude={"targets"})
    assert (tmp_path / "envport.toml").read_text().startswith("# Frozen spec")


def test_toml_writer_escapes_strings() -> None:
    import tomllib

    data = {"name": 'quote " and \\ and \n', "nested": {"a-b": [1, 2.5, True]}, "x": None}
    assert tomllib.loads(dumps(data)) == {k: v for k, v in data.items() if v is not None}


# --- plans ------------------------------------------------------------------------------------

PLAN = """Two modules.

```toml
entry = "env"
modules = [
  {{ name = "physics", exports = ["dynamics"] }},
  {{ name = "env", exports = [{exports}], depends_on = [{deps}] }},
]
```
"""


ENTRY_EXPORTS = '"VectorEnv", "state_from_reference", "state_to_reference"'


def plan_text(exports: str = ENTRY_EXPORTS, deps: str = '"physics"') -> str:
    return PLAN.format(exports=exports, deps=deps)


def test_a_valid_plan_parses() -> None:
    plan = parse_plan(plan_text(), "numpy")
    assert [m.name for m in plan.modules] == ["physics", "env"] and plan.entry == "env"


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        (plan_text(deps='"later"'), "not listed before it"),
        (plan_text(deps='"env"'), "depends on itself"),
        (plan_text(exports='"VectorEnv"'), "must export `state_from_reference`"),
        (plan_text(exports='"VectorEnv", "state_from_reference"'), "`state_to_reference`"),
        (plan_text(exports=f"{ENTRY_EXPORTS}, " + '"dynamics"'), "one module must"),
        ("no plan here", "no fenced `toml` block"),
        ("```toml\nmodules = [\n```", "does not parse"),
    ],
)
def test_invalid_plans_say_why(text: str, complaint: str) -> None:
    with pytest.raises(PlanError, match=complaint):
        parse_plan(text, "numpy")


def test_plan_in_json_is_accepted() -> None:
    body = {
        "entry": "env",
        "modules": [
            {"name": "env", "exports": ["VectorEnv", "state_from_reference", "state_to_reference"]}
        ],
    }
    plan = parse_plan(f"```json\n{json.dumps(body)}\n```", "numpy")
    assert plan.modules[0].name == "env"
