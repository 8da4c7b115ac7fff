"""A JAX port's persistent compilation cache: its own directory, keyed by its content,
writable only in its own workers; a second worker of the same port loads what the first
compiled instead of compiling it again."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from envport.serve import compile_cache, jail, ops
from envport.serve.client import PortWorker
from envport.serve.launch import own_writable
from envport.spec import load_spec
from envport.targets.bench.run import port_subject
from envport.targets.registry import load_request

from helpers import CARTPOLE, JAX_PORT, user_env

pytestmark = pytest.mark.skipif(not jail.available(), reason="bubblewrap cannot run here")

# A sibling port's entry, planted by the driver, that an attacker wants to replace.
VICTIM = "jit_step-0123-cache"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(root))
    return root / "jax"


def _port(tmp_path: Path, name: str, extra: str = "") -> Path:
    # Named `jax`, so the spec's target is settled by the directory as for the example.
    port = tmp_path / name / "jax"
    shutil.copytree(JAX_PORT, port, ignore=shutil.ignore_patterns("__pycache__"))
    if extra:
        env = port / "env.py"
        env.write_text(extra + env.read_text())
    return port


def _load(port: Path) -> ops.LoadPort:
    return load_request(load_spec(CARTPOLE), port)


def test_ports_with_other_files_get_other_directories(tmp_path: Path, cache: Path) -> None:
    first = _load(_port(tmp_path, "a")).compile_cache
    same_files = _load(_port(tmp_path, "b")).compile_cache
    edited = _load(_port(tmp_path, "c", "# one more line\n")).compile_cache
    assert first is not None and Path(first).parent == cache
    # The key is the content, not the place: a copy shares its cache, an edit does not.
    assert first == same_files
    assert edited != first


def _sibling(cache: Path) -> Path:
    """Another port's cache directory, holding an entry its port would load."""
    sibling = cache / ("f" * 64)
    sibling.mkdir(parents=True)
    (sibling / VICTIM).write_bytes(b"good")
    return sibling


ATTACK = """
import errno, os, sys
own, sibling = sys.argv[1], sys.argv[2]
results = []
for attempt in (
    lambda: open(os.path.join(sibling, "{victim}"), "wb").write(b"evil"),
    lambda: open(os.path.join(sibling, "planted-cache"), "wb").write(b"evil"),
    lambda: os.mkdir(os.path.join(os.path.dirname(own), "new-port")),
):
    try:
        attempt()
        results.append("written")
    except OSError as error:
        results.append(errno.errorcode.get(error.errno, str(error.errno)))
open(os.path.join(own, "marker"), "w").write(" ".join(results))
""".replace("{victim}", VICTIM)


def test_the_sandbox_lets_a_port_write_only_its_own_cache(tmp_path: Path, cache: Path) -> None:
    """The OS layer alone (a plain script, no audit hook), with the mounts a port's worker
    gets: its own cache directory is writable, a sibling's cannot be reached."""
    load = _load(_port(tmp_path, "a"))
    sibling = _sibling(cache)
    own = Path(str(load.compile_cache))
    script = tmp_path / "attack.py"
    script.write_text(ATTACK)
    command = jail.command_line(
        [sys.executable, str(script), str(own), str(sibling)],
        tmp_path / "scratch",
        readable=[script],
        writable=own_writable(load),
        work_bytes=1 << 20,
    )
    subprocess.run(command, check=True, timeout=60, capture_output=True, env=user_env())
    outcomes = (own / "marker").read_text().split()
    refused = {errno.errorcode[e] for e in (errno.EROFS, errno.EACCES, errno.ENOENT)}
    assert len(outcomes) == 3 and set(outcomes[:2]) <= refused
    # A directory made beside its own lands in the sandbox's private tmpfs (under a test's
    # /tmp) or is refused: either way the host's cache holds only the two ports' folders.
    assert (sibling / VICTIM).read_bytes() == b"good"
    assert sorted(p.name for p in sibling.iterdir()) == [VICTIM]
    assert sorted(p.name for p in cache.iterdir()) == sorted([own.name, sibling.name])


HOSTILE = """
import os as _os
import jax as _jax
_own = _jax.config.jax_compilation_cache_dir
_sibling = _os.path.join(_os.path.dirname(_own), "{sibling}")
_seen = []
for _name in ("{victim}", "planted-cache"):
    try:
        with open(_os.path.join(_sibling, _name), "wb") as _file:
            _file.write(b"evil")
        _seen.append("written")
    except OSError as _error:
        _seen.append(type(_error).__name__)
with open(_os.path.join(_own, "marker"), "w") as _file:
    _file.write(" ".join(_seen))
"""


def test_a_hostile_port_cannot_plant_entries_for_another_port(tmp_path: Path, cache: Path) -> None:
    """The whole worker (sandbox and audit hook): a port whose import writes into another
    port's cache directory loads, and that directory is unchanged."""
    sibling = _sibling(cache)
    hostile = HOSTILE.replace("{sibling}", sibling.name).replace("{victim}", VICTIM)
    load = _load(_port(tmp_path, "a", hostile))
    with PortWorker(timeout=120, load=load) as worker:
        assert worker.receive()["backend"] == "jax"
    own = Path(str(load.compile_cache))
    assert "written" not in (own / "marker").read_text()
    assert (sibling / VICTIM).read_bytes() == b"good"
    assert sorted(p.name for p in sibling.iterdir()) == [VICTIM]


def _step_and_count(load: ops.LoadPort) -> dict[str, int]:
    states = {
        "physics": np.zeros((3, 4), np.float32),
        "elapsed_steps": np.zeros(3, np.int32),
    }
    with PortWorker(timeout=120, load=load) as worker:
        worker.receive()
        worker.request(ops.StepBatch(states=states, actions=np.zeros(3, np.int64)))
        return worker.request(ops.Ping())["compile_cache"]


def test_a_second_worker_of_the_same_port_loads_what_the_first_compiled(
    tmp_path: Path, cache: Path
) -> None:
    load = _load(_port(tmp_path, "a"))
    first = _step_and_count(load)
    entries = sorted(p.name for p in Path(str(load.compile_cache)).iterdir())
    assert first["hits"] == 0 and first["misses"] >= 1 and entries
    second = _step_and_count(load)
    assert second == {"hits": first["misses"], "misses": 0}
    assert sorted(p.name for p in Path(str(load.compile_cache)).iterdir()) == entries


def test_pruning_removes_the_ports_used_longest_ago(tmp_path: Path) -> None:
    root = tmp_path / "jax"
    old, recent, current = (root / name for name in ("old", "recent", "current"))
    for age, directory in enumerate((old, recent)):
        directory.mkdir(parents=True)
        (directory / "entry-cache").write_bytes(b"x" * 1000)
        stamp = 1_000_000 + age
        os.utime(directory, (stamp, stamp))
    # A link planted where a directory would be is neither followed nor counted.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(b"y" * 5000)
    (root / "link").symlink_to(outside)
    compile_cache.prepare(current, limit=1500)
    assert sorted(p.name for p in root.iterdir()) == ["current", "link", "recent"]
    assert (outside / "keep").exists()


def test_a_cache_home_that_cannot_be_written_only_costs_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only or misnamed `ENVPORT_CACHE_DIR` (here a file): the port loads and steps
    as without a cache, instead of the verify failing."""
    home = tmp_path / "not-a-directory"
    home.write_text("")
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(home))
    assert _step_and_count(_load(_port(tmp_path, "a"))) == {"hits": 0, "misses": 0}


def test_bench_compiles_the_port_as_it_compiles_the_anchors(tmp_path: Path, cache: Path) -> None:
    """`envport bench` reports compile time beside uncached anchors: a cached port's
    program read from disk would show as a compile ten times faster than it is."""
    subject = port_subject(load_spec(CARTPOLE), str(_port(tmp_path, "a")), "jax")
    assert subject.load is not None and subject.load.compile_cache is None
