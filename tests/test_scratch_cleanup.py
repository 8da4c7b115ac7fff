"""Removing a scratch directory changes nothing outside it (issue 27), tried as a non-root
user: as root, permissions never stop a removal, so the chmod that follows a link out
(CPython's CVE-2023-6597 in TemporaryDirectory.cleanup) never happens and CI cannot see it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from envport.errors import EnvportError
from envport.io.scratch import remove_tree
from envport.io.tree import MAX_DEPTH
from envport.pipeline.optimize import snapshot
from envport.repair.apply import read_files

from helpers import ROOT, user_env

NOBODY = 65534

# Run as the unprivileged user: a port's leftovers (a link to a file outside, in a folder
# made unwritable; a link to a folder outside; an unreadable folder), removed first by the
# standard library's cleanup, then by envport's; the outside file's mode after each.
SCRIPT = r"""
import importlib.util, json, os, stat, sys, tempfile
base = sys.argv[1]
spec = importlib.util.spec_from_file_location("scratch", os.path.join(base, "scratch.py"))
scratch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scratch)

def leftovers(root):
    outside = os.path.join(root, "outside")
    os.makedirs(os.path.join(outside, "folder"))
    target = os.path.join(outside, "target.txt")
    with open(target, "w") as f:
        f.write("precious")
    os.chmod(target, 0o600)
    with open(os.path.join(outside, "folder", "kept.txt"), "w") as f:
        f.write("kept")
    tmp = tempfile.TemporaryDirectory(prefix="work-", dir=root)
    locked = os.path.join(tmp.name, "locked")
    os.mkdir(locked)
    os.symlink(target, os.path.join(locked, "link"))
    os.symlink(os.path.join(outside, "folder"), os.path.join(locked, "folder-link"))
    os.chmod(locked, 0o500)
    os.mkdir(os.path.join(tmp.name, "sealed"))
    os.chmod(os.path.join(tmp.name, "sealed"), 0o000)
    return tmp, target, outside

out = {}
for name in ("stdlib", "envport"):
    root = os.path.join(base, name)
    os.mkdir(root)
    tmp, target, outside = leftovers(root)
    if name == "stdlib":
        tmp.cleanup()
    else:
        scratch.remove_tree(tmp.name)
        tmp._finalizer.detach()
    out[name] = {
        "mode": oct(stat.S_IMODE(os.stat(target).st_mode)),
        "gone": not os.path.exists(tmp.name),
        "kept": sorted(os.listdir(os.path.join(outside, "folder"))),
        "text": open(target).read(),
    }
print(json.dumps(out))
"""


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is not installed (util-linux)")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def _python_for_anyone() -> str:
    """A Python any user may run (this test's own may sit under root's home)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.skip("no system python3 for an unprivileged user")


def test_cleanup_as_a_non_root_user_follows_no_link_out() -> None:
    base = tempfile.mkdtemp(prefix="envport-cleanup-test-")
    try:
        shutil.copyfile(ROOT / "envport" / "io" / "scratch.py", Path(base) / "scratch.py")
        (Path(base) / "attack.py").write_text(SCRIPT)
        if os.geteuid() == 0:
            os.chown(base, NOBODY, NOBODY)
        command = [*_unprivileged(), _python_for_anyone(), f"{base}/attack.py", base]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=user_env())
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        # envport's removal: the scratch is gone, nothing outside it changed.
        assert seen["envport"] == {
            "mode": "0o600",
            "gone": True,
            "kept": ["kept.txt"],
            "text": "precious",
        }, seen
        # (The standard library's cleanup on this Python, for the record: 0o700 when
        # vulnerable.)
        print("stdlib cleanup left the outside file at", seen["stdlib"]["mode"])
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", base], check=False, env=user_env())
        shutil.rmtree(base, ignore_errors=True)


def test_the_driver_removes_directories_only_through_the_link_safe_remover() -> None:
    unsafe = re.compile(r"TemporaryDirectory\(|rmtree\(")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "envport").rglob("*.py"))
        if path.name != "scratch.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if unsafe.search(line)
    ]
    assert found == []


def _deep_tree(base: Path, levels: int) -> Path:
    """`base/deep/d/d/...`, `levels` folders down, a file and a link to a file outside at
    each level, the deepest folder read-only; made through directory descriptors, since its
    full path is longer than the system lets a path be."""
    top = base / "deep"
    top.mkdir()
    current = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=current)
            os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=current))
            os.symlink("/etc/hostname", "link", dir_fd=current)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=current)
            os.close(current)
            current = inner
        os.chmod(f"/proc/self/fd/{current}", 0o500)
    finally:
        os.close(current)
    return top


@pytest.fixture
def fast_base(tmp_path: Path) -> Iterator[Path]:
    """A folder on a memory file system when there is one: thousands of folders removed from
    a disk under load take seconds."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        base = Path(tempfile.mkdtemp(prefix="envport-deep-", dir=shm))
        yield base
        subprocess.run(["rm", "-rf", str(base)], check=False, env=user_env())
    else:
        yield tmp_path


def test_a_scratch_folder_3000_levels_deep_is_removed_whole(fast_base: Path) -> None:
    # A port's worker may leave a tree this deep in its scratch: a recursive removal died of
    # RecursionError and left the scratch behind. Removed here by a process allowed 32 open
    # files: one descriptor a level would run out long before the bottom.
    top = _deep_tree(fast_base, 3000)
    remove = (
        "import resource, sys; from envport.io.scratch import remove_tree; "
        "resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32)); remove_tree(sys.argv[1])"
    )
    done = subprocess.run(
        [sys.executable, "-c", remove, str(top)], capture_output=True, text=True, env=user_env()
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert not top.exists() and list(fast_base.iterdir()) == []


def test_a_port_folder_3000_levels_deep_is_one_error_line(fast_base: Path) -> None:
    # Reading the port for the prompt, copying it for a bench: each walked the folder by
    # recursion (rglob, copytree) and ended in a RecursionError traceback.
    port = fast_base / "port"
    port.mkdir()
    (port / "env.py").write_text("x = 1\n")
    _deep_tree(port, 3000)
    for attempt in (
        lambda: read_files(port),
        lambda: snapshot(port, fast_base / "copy"),
    ):
        with pytest.raises(EnvportError) as raised:
            attempt()
        message = str(raised.value)
        assert "\n" not in message and f"more than {MAX_DEPTH} levels deep" in message
    assert not (fast_base / "copy").exists()
    remove_tree(port)
