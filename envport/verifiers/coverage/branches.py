"""Branch coverage of the reference's own source: which of its rules the checks exercised.

Passing every check says nothing about a rule no check reached (a Breakout port without the
brick refill passes every level whose play never clears the board). So `verify` traces the
reference's own files with coverage.py while the levels run, one coverage context per level,
and counts the branches of the reference's functions the run entered: per level, in total,
and each branch never taken with its file, line and source. A missed branch is a gap in the
verdict unless the spec's `[coverage] out_of_scope` names it with a reason; rendering
branches are out of scope by default (rendering is not part of the transition).

The reference is the user's trusted code and runs in this process and in L3's reference
workers, so tracing it is tracing trusted code: a port's code is never measured here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import coverage
from coverage.python import PythonFileReporter

from envport.spec import OutOfScope, PortSpec
from envport.targets import rule_trace
from envport.verifiers.coverage import settling
from envport.verifiers.reporting.branch_report import Branch, BranchCoverage, SourceLine

# The context of the determinism preflight: it steps the reference but compares no port, so
# its branches count as entered, never as covered.
SETUP = "setup"
# Branch lines out of scope unless a spec says otherwise: rendering is not the transition.
RENDERING = re.compile(r"\brender(_mode)?\b|\.render\(")
RENDERING_WHY = "rendering, not part of the transition (envport's default)"
# coverage.py's warnings a measure of the reference never needs on a user's terminal.
QUIET = ["no-data-collected", "module-not-measured", "module-not-imported", "trace-changed"]
T = TypeVar("T")
Arc = tuple[int, int]


def reference_files(spec: PortSpec, env: Any) -> list[str]:
    """The reference's own source files: the modules `reference.sources` lists and the env
    class's module, never the spec's harness files (a bridge is not the reference's rules)."""
    files: list[str] = []
    for name in spec.reference.sources:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # `envport check` and the prompt's sources say so; coverage just skips it
        files.append(_source_file(module))
    files.append(_source_file(type(getattr(env, "unwrapped", env))))
    harness = _harness_files(spec)
    return [file for file in dict.fromkeys(files) if file and file not in harness]


def _harness_files(spec: PortSpec) -> set[str]:
    named = [spec.reference.entry, spec.state.read or "", spec.state.write or ""]
    if spec.randomness is not None:
        named.append(spec.randomness.harness)
    paths = [name.partition(":")[0] for name in named]
    return {str(spec.harness_file(path).resolve()) for path in paths if path.endswith(".py")}


def _source_file(thing: Any) -> str:
    try:
        found = inspect.getsourcefile(thing)
    except TypeError:
        return ""
    return str(Path(found).resolve()) if found else ""


def shown_name(file: str) -> str:
    """`gymnasium/envs/classic_control/cartpole.py`: the path below its sys.path entry."""
    path = Path(file)
    best = path.name
    for entry in sys.path:
        try:
            relative = path.relative_to(Path(entry or ".").resolve())
        except ValueError:
            continue
        if len(str(relative)) < len(best) or best == path.name:
            best = str(relative)
    return best


@dataclass
class Measure:
    """coverage.py tracing the reference's files, one context per level."""

    files: list[str]
    env: Any = None  # the reference env whose settings decide some branches (coverage/settling.py)
    not_measured: list[str] = field(default_factory=list)
    remote: list[tuple[str, dict[str, list[Arc]]]] = field(default_factory=list)
    running: bool = False
    tracer: Any = None
    context: str = ""  # the level being measured

    def __post_init__(self) -> None:
        # config_file=False: a user's .coveragerc must not change what envport measures.
        self.cov = coverage.Coverage(
            branch=True, data_file=None, include=self.files, config_file=False
        )
        # A level that never stepped the reference (a replay of proposed cases) measured
        # nothing: the report says so in numbers, not in coverage.py's warning on stderr.
        self.cov.set_option("run:disable_warnings", QUIET)

    @classmethod
    def of(cls, spec: PortSpec, env: Any) -> Measure | None:
        """A measure of this reference, or None when coverage is off or already tracing
        this process (envport run under `coverage run`: a second tracer would replace it)."""
        if not spec.coverage.enabled or coverage.Coverage.current() is not None:
            return None
        files = reference_files(spec, env)
        return cls(files, getattr(env, "unwrapped", env)) if files else None

    def start(self, level: str) -> None:
        """Start coverage.py, then take its tracer off this thread: it traces only inside
        reference calls (envport.targets.rule_trace), and no other thread at all."""
        global _current
        self.cov.start()
        self.running = True
        self.cov.switch_context(level)
        self.context = level
        _current = self
        self.tracer = sys.gettrace()
        sys.settrace(None)
        threading.settrace(None)
        rule_trace.install(self.tracer)

    def level(self, name: str) -> None:
        if self.running:
            self.cov.switch_context(name)
            self.context = name

    def stop(self) -> None:
        global _current
        if self.running:
            _current = None
            rule_trace.uninstall()
            sys.settrace(self.tracer)  # coverage.py stops the tracer it started
            self.cov.stop()
            self.running = False

    def add(self, level: str, arcs: dict[str, list[Arc]]) -> None:
        """Arcs a reference worker measured while playing this level's episodes."""
        self.remote.append((level, arcs))

    def executed(self) -> dict[str, set[Arc]]:
        """Every arc taken so far, in any level (the exploration's measure of novelty)."""
        data = self.cov.get_data()
        data.set_query_contexts(None)
        taken = {file: set(data.arcs(file) or []) for file in self.files}
        for _, arcs in self.remote:
            for file, found in arcs.items():
                taken.setdefault(file, set()).update(map(tuple, found))  # type: ignore[arg-type]
        return taken


# The measure running in this process, for work that replays what it once measured
# (draws/reached.py's play kept on disk).
_current: Measure | None = None


def current() -> Measure | None:
    """The measure tracing the reference in this process now, if one is."""
    return _current


def taken_since(before: dict[str, set[Arc]], after: dict[str, set[Arc]]) -> dict[str, list[Arc]]:
    """The arcs `after` holds that `before` did not, by file."""
    new = {file: found - before.get(file, set()) for file, found in after.items()}
    return {file: sorted(arcs) for file, arcs in new.items() if arcs}


def measured(files: list[str], play: Callable[[], T]) -> tuple[T, dict[str, list[Arc]]]:
    """`play()` traced (a reference worker's chunk of L3 episodes) and the arcs it took."""
    if coverage.Coverage.current() is not None:
        return play(), {}
    measure = Measure(files)
    measure.start("l3")
    try:
        result = play()
    finally:
        measure.stop()
    data = measure.cov.get_data()
    return result, {file: sorted(data.arcs(file) or []) for file in files}


def analyse(measure: Measure, spec: PortSpec) -> BranchCoverage:
    """Per level and in total, the branch exits taken in the functions the run entered."""
    data = measure.cov.get_data()
    contexts = sorted(c for c in data.measured_contexts() if c and c != SETUP)
    contexts += [level for level, _ in measure.remote if level not in contexts]
    result = BranchCoverage(files=[shown_name(f) for f in measure.files])
    result.not_measured = list(measure.not_measured)
    levels: dict[str, int] = {}
    scopes = list(spec.coverage.out_of_scope)
    # A state field's attribute is state even where only `__init__` assigns it in code.
    state_names = {path.rsplit(".", 1)[-1] for path in spec.state.fields.values()}
    branch_lines: list[tuple[str, str]] = []
    for file in measure.files:
        reporter = PythonFileReporter(file, coverage=measure.cov)
        by_level = {c: _arcs(data, reporter, file, measure, [c]) for c in contexts}
        taken: set[Arc] = set().union(*by_level.values()) if by_level else set()
        entered = taken | _arcs(data, reporter, file, measure, [SETUP])
        name = shown_name(file)
        lines = reporter.source().splitlines()
        tree = ast.parse(reporter.source())
        spans = _functions(tree)
        scoped: set[Arc] = _in_scope(reporter, spans, entered)
        headers = _headers(tree, lines)
        branch_lines += [
            (name, headers.get(a) or lines[a - 1].strip()) for a in {arc[0] for arc in scoped}
        ]
        missed: dict[int, list[Arc]] = {}
        for arc in sorted(scoped - taken):
            missed.setdefault(arc[0], []).append(arc)
        for number, arcs in missed.items():
            source = lines[number - 1].strip() if number <= len(lines) else ""
            never = _never(reporter, arcs, scoped, taken)
            branch = Branch(file=name, line=number, source=source, never=never)
            settings = settling.decided_by_settings(tree, number, never, measure.env, state_names)
            header = headers.get(number) or source
            branch.out_of_scope = _why_out_of_scope(scopes, name, header, settings)
            if branch.out_of_scope is None:
                result.missed.append(branch)
            else:
                # The whole line leaves the count: its taken exits are no rule either.
                result.excluded.append(branch)
                scoped = {arc for arc in scoped if arc[0] != number}
        for level, took in by_level.items():
            levels[level] = levels.get(level, 0) + len(took & scoped)
        result.total += len(scoped)
        result.covered += len(taken & scoped)
        result.sources[name] = _marked(lines, spans, entered, scoped, taken)
    result.levels = {name: levels[name] for name in _ordered(levels)}
    # An entry naming a branch line in scope is no stale entry, whether its exits were
    # missed (then it excludes the line) or all taken.
    result.stale = [
        f"`{scope.line}`" + (f" in {scope.file}" if scope.file else "")
        for scope in scopes
        if not any(_matches(scope, name, source) for name, source in branch_lines)
    ]
    return result


LEVEL_ORDER = ("l1", "l2", "cases", "l3", "explore", "l4", "reverse")


def _ordered(levels: Iterable[str]) -> list[str]:
    known = [name for name in LEVEL_ORDER if name in levels]
    return known + sorted(set(levels) - set(known))


def _arcs(
    data: coverage.CoverageData,
    reporter: PythonFileReporter,
    file: str,
    measure: Measure,
    contexts: list[str],
) -> set[Arc]:
    data.set_query_contexts([f"^{re.escape(c)}$" for c in contexts])
    found = set(data.arcs(file) or [])
    data.set_query_contexts(None)
    for level, arcs in measure.remote:
        if level in contexts:
            found.update(tuple(arc) for arc in arcs.get(file, []))  # type: ignore[misc]
    return set(reporter.translate_arcs(found))


def _functions(tree: ast.Module) -> list[tuple[int, int]]:
    """Each function's line span, innermost last when nested; an env class's `__init__`
    (a class defining `step`) is left out: building the env (SyncVectorEnv does, in L2) is
    configuration, not the transition."""
    constructors = {
        id(method)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and any(_named(n, "step") for n in node.body)
        for method in node.body
        if _named(method, "__init__")
    }
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and id(node) not in constructors
    ]
    return sorted(spans, key=lambda span: (span[0], -span[1]))


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name


def _in_scope(
    reporter: PythonFileReporter, spans: list[tuple[int, int]], entered: set[Arc]
) -> set[Arc]:
    """The branch exits of the functions any level entered: a function no check ever
    called (rendering, `close`, what only `__init__` runs) is not a rule of the step."""
    run = {line for arc in entered for line in arc if line > 0}
    ran = [span for span in spans if any(span[0] <= line <= span[1] for line in run)]
    exits = reporter.exit_counts()
    branches = {line for line, count in exits.items() if count > 1}
    scoped = set()
    for arc in reporter.arcs():
        line = arc[0]
        if line not in branches:
            continue
        inner = [span for span in spans if span[0] <= line <= span[1]]
        if inner and inner[-1] in ran:
            scoped.add(arc)
    return scoped


def _never(reporter: PythonFileReporter, arcs: list[Arc], scoped: set[Arc], taken: set[Arc]) -> str:
    """What the missed exits of one branch line mean, in the words a reader checks."""
    line = arcs[0][0]
    if not any(arc[0] == line for arc in scoped & taken):
        return "never run"
    said = []
    for start, end in arcs:
        words = reporter.missing_arc_description(start, end)
        if "was never true" in words:
            said.append("never true")
        elif "was always true" in words:
            said.append("never false")
        else:
            said.append(words.split(" because ", 1)[-1] if " because " in words else words)
    return "; ".join(dict.fromkeys(said))


def _matches(scope: OutOfScope, name: str, source: str) -> bool:
    return scope.line in source and (scope.file is None or name.endswith(scope.file))


def _headers(tree: ast.AST, lines: list[str]) -> dict[int, str]:
    """Each branch's whole condition where it spans lines (`if (` then the tests below it),
    by its first line: an `out_of_scope` entry can name the test rather than that line."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While):
            end = node.test.end_lineno or node.lineno
            if end > node.lineno:
                found[node.lineno] = " ".join(line.strip() for line in lines[node.lineno - 1 : end])
    return found


def _why_out_of_scope(
    scopes: list[OutOfScope], name: str, source: str, settings: str | None
) -> str | None:
    for scope in scopes:
        if _matches(scope, name, source):
            return scope.why
    if RENDERING.search(source):
        return RENDERING_WHY
    return settings


def _marked(
    lines: list[str],
    spans: list[tuple[int, int]],
    entered: set[Arc],
    scoped: set[Arc],
    taken: set[Arc],
) -> list[SourceLine]:
    """The lines of the functions the run entered, each marked for the HTML report."""
    run = {line for arc in entered for line in arc if line > 0}
    shown: set[int] = set()
    for start, end in (span for span in spans if any(span[0] <= n <= span[1] for n in run)):
        shown.update(range(start, end + 1))
    partial = {arc[0] for arc in scoped - taken}
    marked = []
    for number in sorted(shown):
        if number > len(lines):
            continue
        mark = ""
        if number in partial:
            mark = "missed" if number not in run else "partial"
        elif number in run:
            mark = "run"
        marked.append(SourceLine(number=number, text=lines[number - 1], mark=mark))
    return marked
