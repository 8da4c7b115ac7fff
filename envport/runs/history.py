"""The run's git history: one commit per iteration, so `git log -p` reads like the repair log.

The repository is the run directory itself. It tracks the port, the frozen spec and the
proposed tests; the journal, run state, cache and reports are ignored (they change outside
iterations, and the cache holds whole model answers already kept in the journal).
"""

from __future__ import annotations

from pathlib import Path

import git

from envport.errors import EnvportError

GITIGNORE = """\
# Written by envport: the run's own bookkeeping is not part of the port's history.
/run.json
/run.lock
/transcript.jsonl
/cache/
/reports/
__pycache__/
*.tmp
"""
# Paths a reset may clean: what a step writes and a kill can leave half-done.
STEP_PATHS = ("port", "proposed_tests")


class History:
    def __init__(self, run_dir: Path) -> None:
        try:
            self.repo = git.Repo(run_dir)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise EnvportError(f"{run_dir}: the run has no git history") from None

    @classmethod
    def create(cls, run_dir: Path) -> History:
        repo = git.Repo.init(run_dir)
        with repo.config_writer() as config:
            # Local identity and no signing or hooks: commits must work on any machine.
            config.set_value("user", "name", "envport")
            config.set_value("user", "email", "envport@localhost")
            config.set_value("commit", "gpgsign", "false")
            config.set_value("core", "hooksPath", "/dev/null")
        (run_dir / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
        return cls(run_dir)

    @property
    def head(self) -> str:
        return self.repo.head.commit.hexsha

    def commit(self, message: str) -> str:
        """Commit everything tracked as it is now (empty commits allowed: one per iteration)."""
        self.repo.git.add("--all", ".")
        self.repo.git.commit("--allow-empty", "--no-verify", "-q", "-m", message)
        return self.head

    def revert_head(self, message: str) -> str:
        """A commit undoing the last one, so the rejected attempt stays visible in the log."""
        self.repo.git.revert("--no-commit", "HEAD")
        return self.commit(message)

    def reset(self, commit: str) -> None:
        """Put the step's paths back exactly as `commit` has them, dropping strays.

        Called when a session starts, when no other envport works on this run: a lock file
        then is what a killed `git commit` left behind.
        """
        git_dir = Path(self.repo.git_dir)
        for lock in ("index.lock", "HEAD.lock"):
            (git_dir / lock).unlink(missing_ok=True)
        self.repo.git.reset("--hard", "-q", commit)
        self.repo.git.clean("-fdxq", "--", *STEP_PATHS)

    def log(self) -> list[str]:
        return [_text(c.message).strip() for c in self.repo.iter_commits()]


def _text(message: str | bytes) -> str:
    """A commit message as text: GitPython gives bytes when the commit's encoding is unknown."""
    return message if isinstance(message, str) else message.decode("utf-8", errors="replace")
