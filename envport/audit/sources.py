"""Find the Python files under the paths a user named, read and parse them, audit each."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Sequence
from pathlib import Path

from envport.audit.analyzer import audit_tree
from envport.audit.model import AuditReport, Finding
from envport.errors import EnvportError

# Directories that hold other people's code or build output, never the code under audit.
SKIPPED_DIRS = frozenset(["__pycache__", "node_modules", "venv", "site-packages"])


def audit_paths(paths: Sequence[str | Path]) -> AuditReport:
    """Audit every `.py` file under `paths` (files are taken as given, directories are
    searched recursively, skipping hidden ones and virtualenvs).

    Raises EnvportError (exit code 2) for a missing path, an unreadable file, or a file
    that does not parse, naming the file and line.
    """
    files = discover(paths)
    findings: list[Finding] = []
    for file in files:
        findings.extend(audit_file(file))
    return AuditReport(files=[str(file) for file in files], findings=findings)


def discover(paths: Sequence[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(_python_files(path))
        elif path.is_file():
            files.append(path)
        else:
            raise EnvportError(f"{path}: no such file or directory")
    # The same file named twice (or a file inside a named directory) is audited once.
    return list(dict.fromkeys(files))


def _python_files(root: Path) -> Iterable[Path]:
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).parts[:-1]
        if any(part.startswith(".") or part in SKIPPED_DIRS for part in relative):
            continue
        if path.is_file():
            yield path


def audit_file(path: Path) -> list[Finding]:
    source = read_source(path)
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as error:
        line = error.lineno or 1
        column = f":{error.offset}" if error.offset else ""
        raise EnvportError(f"{path}:{line}{column}: syntax error: {error.msg}") from None
    except ValueError as error:  # e.g. a null byte in the source
        raise EnvportError(f"{path}: cannot parse: {error}") from None
    return audit_tree(tree, source, str(path))


def read_source(path: Path) -> str:
    """Source text decoded the way Python would (PEP 263 cookie, BOM, else UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise EnvportError(f"{path}: cannot read: {error.strerror}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise EnvportError(f"{path}:{line}: not valid {error.encoding}: {error.reason}") from None
    except (SyntaxError, LookupError) as error:  # a bad or unknown encoding cookie
        raise EnvportError(f"{path}:1: cannot decode source: {error}") from None
