"""Running the verifier for the driver and reducing its reports to named pass/fail checks.

The verifier runs the port in a worker process; nothing here imports generated code. Which
levels a module check and a composed check ask for is one constant each; levels the verifier
does not offer yet are left out rather than failing the run.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from envport import interrupts
from envport.errors import PortError
from envport.gaps import GapKind, gap_lines
from envport.io import JsonCache
from envport.io.profile import Profile
from envport.pipeline.build_errors import compiler_errors
from envport.repair.apply import read_files
from envport.runs.state import COMPOSED, CheckOutcome
from envport.targets.registry import PORT_FILES
from envport.verifiers import verify as verify_module
from envport.verifiers.reporting.divergence import Divergence, VerifyReport
from envport.verifiers.verify import VerifyOptions, verify

# Per-module checks (imports and exports always; L1 properties where the verifier has them).
MODULE_LEVELS = ("l1",)
# Whole-port checks once every module exists.
COMPOSED_LEVELS = ("l2", "l3")
# Divergences per check that go into a repair prompt: enough to see a pattern, not a flood.
MAX_FAILURES = 3
MAX_FAILURE_CHARS = 4000
CHECK_TIMEOUT_S = 120.0
# The check a --strict run fails when a level passed with gaps (envport.gaps).
GAPS_CHECK = "gaps"

log = logging.getLogger("envport.pipeline")


def available(levels: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(level for level in levels if level in verify_module.LEVELS)


@dataclass
class CheckRun:
    scope: str
    outcomes: list[CheckOutcome]
    report: VerifyReport
    cached: bool = False

    @property
    def passed(self) -> bool:
        return all(outcome.passed for outcome in self.outcomes)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_FAILURE_CHARS else text[:MAX_FAILURE_CHARS] + "\n[...]"


def divergence_signature(name: str, divergence: Divergence) -> str:
    """The same bug seen again: the same check, episode, step and fields (values may move)."""
    fields = ",".join(sorted(diff.field for diff in divergence.fields))
    where = f"ep{divergence.episode}/st{divergence.step}"
    return f"{name}|{where}|{fields or divergence.message}"


def _outcomes(scope: str, report: VerifyReport, load_name: str, port: Path) -> list[CheckOutcome]:
    # A build failure goes to the repair as the compiler's errors with their source lines.
    error = report.error and (compiler_errors(report.error, port) or report.error)
    load = CheckOutcome(
        name=load_name,
        scope=scope,
        level="module" if scope != COMPOSED else "load",
        passed=report.error is None,
        failures=[_cut(error)] if error else [],
        signature=f"{load_name}|{report.error}" if report.error else "",
    )
    outcomes = [load]
    for level in report.results:
        # Names are keys of the regression baseline: unique across modules, short when the
        # level's own name already says which module it checks ("l1.physics.dynamics").
        own = scope == COMPOSED or f".{scope}." in f".{level.name}."
        name = level.name if own else f"{level.name}:{scope}"
        first = level.divergences[0] if level.divergences else None
        outcomes.append(
            CheckOutcome(
                name=name,
                scope=scope,
                level=level.level,
                passed=level.passed,
                failures=[_cut(d.text()) for d in level.divergences[:MAX_FAILURES]],
                signature=divergence_signature(name, first) if first else "",
                gaps=level.gaps,
            )
        )
    branches = [g for g in report.gaps if g.kind is GapKind.BRANCH_NOT_EXERCISED]
    if report.coverage is not None:
        # The reference's rules no check reached: not the port's failure, but the run's
        # verdict says so ("verified with gaps"), as for a level's gaps.
        outcomes.append(
            CheckOutcome(name="coverage", scope=scope, level="coverage", passed=True, gaps=branches)
        )
    if report.strict and report.gaps and not report.diverged:
        # --strict: what the checks could not show is a failure to repair, one per gap.
        lines = gap_lines(report.gaps)
        outcomes.append(
            CheckOutcome(
                name=GAPS_CHECK,
                scope=scope,
                level=GAPS_CHECK,
                passed=False,
                failures=[f"{line} (--strict: close this gap)" for line in lines],
                signature=f"{GAPS_CHECK}|{' || '.join(lines)}",
                gaps=report.gaps,
            )
        )
    return outcomes


def _verify(
    run_dir: Path, port: Path, options: VerifyOptions, profile: Profile | None = None
) -> VerifyReport:
    try:
        report = verify(str(run_dir), str(port), options, profile=profile)
    except PortError as error:
        # A worker that cannot even start is the port's failure, not the driver's.
        report = VerifyReport(spec=str(run_dir), port=str(port), passed=False, error=str(error))
    # A check an interrupt cut short says nothing about the port (its workers were stopped
    # half-way): it is neither cached nor journaled, and the step runs again on resume.
    interrupts.check()
    return report


class CheckCache(JsonCache[VerifyReport]):
    """Verifier reports of a step, by what determines them: spec, port files, options.

    A step run again after a kill checks the same port again; serving the report it got the
    first time keeps the next prompt byte-identical (so the response cache answers it) even
    where the verifier is not (hypothesis shrinking is bounded in time), and saves the time.
    Keyed by the step too: a later step checking the same files gets a fresh verdict.
    """

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, VerifyReport, "check cache")
        self.step = 0

    def key(self, run_dir: Path, port: Path, options: VerifyOptions) -> str:
        material = {
            "step": self.step,
            "spec": (run_dir / "envport.toml").read_text(encoding="utf-8"),
            "port": read_files(port, PORT_FILES),
            # Neither changes a verdict: how long to wait, where compiled programs are kept.
            "options": {
                k: v for k, v in vars(options).items() if k not in ("timeout", "compile_cache")
            },
            # Proposed cases are checks too: a new one must not be answered from the cache.
            # By their bytes: a proposal that is not UTF-8 is the check's to refuse, not a
            # crash of every resume.
            "cases": {
                p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in _case_files(options)
            },
        }
        text = json.dumps(material, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _cached_verify(
    cache: CheckCache | None,
    run_dir: Path,
    port: Path,
    options: VerifyOptions,
    profile: Profile | None = None,
) -> tuple[VerifyReport, bool]:
    if cache is None:
        return _verify(run_dir, port, options, profile), False
    key = cache.key(run_dir, port, options)
    report = cache.get(key)
    if report is not None:
        return report, True
    report = _verify(run_dir, port, options, profile)
    cache.put(key, report)
    return report, False


def check_module(
    run_dir: Path, port: Path, target: str, module: str, cache: CheckCache | None = None
) -> CheckRun:
    """Import the modules up to `module` in a worker, check exports and module levels."""
    # A verifier without module levels ignores the level list for a module check; one with
    # them rejects an empty list, so "l3" stands in (module checks never run L3).
    options = VerifyOptions(
        levels=available(MODULE_LEVELS) or ("l3",),
        target=target,
        module=module,
        timeout=CHECK_TIMEOUT_S,
        compile_cache=_compile_cache(run_dir),
    )
    report, cached = _cached_verify(cache, run_dir, port, options)
    return CheckRun(module, _outcomes(module, report, f"module:{module}", port), report, cached)


def _compile_cache(run_dir: Path) -> Path:
    """The run's own JAX compilation caches: every repair is a new port, so a new
    directory; kept with the run (and pruned there), not among the user's other ports'."""
    return run_dir / "cache" / "jax"


def _case_files(options: VerifyOptions) -> list[Path]:
    return sorted(options.cases.glob("*.toml")) if options.cases is not None else []


def check_composed(
    run_dir: Path,
    port: Path,
    target: str,
    cache: CheckCache | None = None,
    strict: bool = False,
    bench_sizes: tuple[int, ...] = (),
    profile: Profile | None = None,
) -> CheckRun:
    """The whole port's check; `profile` watches it as it runs (the run's display)."""
    proposed = run_dir / "proposed_tests"
    options = VerifyOptions(
        levels=available(COMPOSED_LEVELS) or ("l3",),
        target=target,
        timeout=CHECK_TIMEOUT_S,
        # The module checks ran L1 (the last module's on the whole port): a reference rule
        # none of the levels reached is then the verdict's gap, not a silent pass.
        earlier_levels=available(MODULE_LEVELS),
        # The model's proposed cases run beside the harness's checks once there are any.
        cases=proposed if any(proposed.glob("*.toml")) else None,
        strict=strict,
        # The sizes the optimisation will time: l2.sizes steps them, so no speed is kept
        # for a size the checks never stepped.
        bench_sizes=bench_sizes,
        compile_cache=_compile_cache(run_dir),
    )
    report, cached = _cached_verify(cache, run_dir, port, options, profile)
    return CheckRun(COMPOSED, _outcomes(COMPOSED, report, "load", port), report, cached)
