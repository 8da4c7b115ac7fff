"""A run's port as it was at one iteration: `RUN@K`, checked out from the run's git history.

`RUN/port` holds the port as the run left it, so a divergence that iteration K found (and a
later repair fixed) no longer shows there. A replay of iteration K runs the port of the
commit K made (the files its checks ran on), or, for a step that committed nothing (the
first whole-port check), the commit before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import git

from envport.errors import EnvportError
from envport.io.scratch import scratch as scratch_dir
from envport.runs.events import (
    ITERATION_EVENTS,
    CheckEvent,
    CommitEvent,
    iteration_range,
    read_events,
)
from envport.runs.layout import RunDir, open_run

_AT = re.compile(r"^(?P<run>.+)@(?P<step>\d+)$")
# A replay line's `--port <run root>/port`, as the driver's checks wrote it.
_REPLAY_PORT = re.compile(r"(--port )(\S+)/port(?=\s|$|\")")


def split_at(port_arg: str) -> tuple[str, int] | None:
    """`RUN@K` as (RUN, K); None for anything else (a directory named so included)."""
    match = _AT.match(port_arg)
    if match is None or Path(port_arg).is_dir():
        return None
    return match["run"], int(match["step"])


def commit_at(run: RunDir, step: int) -> str:
    """The commit holding the port that iteration `step`'s checks ran on."""
    events = list(read_events(run.transcript))
    commits = [e for e in events if isinstance(e, CommitEvent)]
    steps = [e.step for e in events if isinstance(e, ITERATION_EVENTS)]
    if step > max(steps, default=0):
        raise EnvportError(
            f"{run.root}@{step}: no such iteration (this run has {iteration_range(events)})"
        )
    mine = [e for e in commits if e.step == step]
    if mine:
        return mine[0].sha  # the attempt, before any revert of it
    earlier = [e for e in commits if e.step < step]
    if earlier:
        return earlier[-1].sha
    repo = git.Repo(run.root)
    return repo.git.rev_list("--max-parents=0", "HEAD").split()[0]


def _check_out(run: RunDir, sha: str, into: Path) -> None:
    tree = git.Repo(run.root).commit(sha).tree
    into.mkdir(parents=True, exist_ok=True)
    try:
        port = tree / "port"
    except KeyError:
        return  # nothing generated yet at that commit
    if not isinstance(port, git.Tree):
        return  # "port" is a file there, not the directory of a generated port
    for item in port.traverse():
        if not isinstance(item, git.Blob):
            continue
        target = into / Path(item.path).relative_to("port")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.data_stream.read())


@contextmanager
def port_at(port_arg: str) -> Iterator[tuple[Path, str | None]]:
    """The port directory `--port` names, and a note when it is `RUN@K`: the port of
    iteration K, checked out into a temporary directory that lives as long as the block."""
    at = split_at(port_arg)
    if at is None:
        yield Path(port_arg), None
        return
    run_arg, step = at
    run = open_run(run_arg)
    sha = commit_at(run, step)
    with scratch_dir("envport-port-at-") as scratch:
        port = Path(scratch) / "port"
        _check_out(run, sha, port)
        note = (
            f"--port {port_arg}: the port as it was at iteration {step} of the run "
            f"(commit {sha[:10]}), checked out from its git history into {port}"
        )
        yield port, note


def replays_at(text: str, run: RunDir, step: int, shown_as: str) -> str:
    """Replay lines in `text` that run this run's `port/` rewritten to run the port of
    iteration `step` (`--port RUN@K`); other ports are left alone."""

    def rewrite(match: re.Match[str]) -> str:
        if Path(match[2]).name != run.root.name:
            return match[0]
        return f"{match[1]}{shown_as}@{step}"

    return _REPLAY_PORT.sub(rewrite, text)


def pin_replays(checks: list[CheckEvent], run: RunDir, step: int, shown_as: str) -> bool:
    """Point the replay lines of iteration `step`'s journaled checks at the port as it was
    then (`--port RUN@K`), in place; True if any line changed."""
    changed = False

    def pinned(text: str) -> str:
        nonlocal changed
        new = replays_at(text, run, step, shown_as)
        changed = changed or new != text
        return new

    for check in checks:
        for outcome in check.outcomes:
            outcome.failures = [pinned(f) for f in outcome.failures]
        for level in check.levels:
            for divergence in level.get("divergences") or []:
                if divergence.get("replay"):
                    divergence["replay"] = pinned(str(divergence["replay"]))
    return changed


def pinned_note(shown_as: str, step: int) -> str:
    return (
        f"replay lines run the port as it was at iteration {step} (--port {shown_as}@{step}, "
        f"checked out from the run's git history); {shown_as}/port holds the port as the run "
        "left it"
    )
