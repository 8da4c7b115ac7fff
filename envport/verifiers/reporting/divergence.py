"""Divergence reports: what differed, where, and the command that shows it again.

These models are the verifier's output and the repair prompt's input, so they carry
everything a reader (human or model) needs without re-running anything.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field, SkipValidation

from envport.gaps import Gap, GapKind, gap_lines, verdict_word
from envport.verifiers.reporting.branch_report import BranchCoverage
from envport.verifiers.reporting.replay import Replay

# The parts of a verify run timed on their own, in the order they run.
LEVEL_TIMES = ("l1", "l2", "cases", "l3", "l4")


class GridPicture(BaseModel):
    """A grid field whole, reference and port, where the spec declares it a grid: the HTML
    report draws both (envport.report.grids). Self-contained, so a report read back from a
    transcript needs no spec."""

    field: str
    channels: list[str] = Field(default_factory=list)
    codes: dict[str, list[str]] = Field(default_factory=dict)
    expected: list[Any]  # nested [x][y] (or [x][y][channel]) integers
    actual: list[Any]
    marker_expected: list[int] | None = None
    marker_actual: list[int] | None = None
    axes: str = "xy"  # "yx": expected[y][x], rows first
    planes: bool = False  # each channel a 0/1 plane; a cell shows the ones set


class FieldDiff(BaseModel):
    field: str
    expected: Any
    actual: Any
    difference: float | None = None
    atol: float | None = None
    rtol: float | None = None
    # On the first differing component of a grid field: the whole grid on both sides.
    picture: GridPicture | None = None

    def line(self) -> str:
        text = f"{self.field}: expected {_fmt(self.expected)}, got {_fmt(self.actual)}"
        if self.difference is not None:
            text += f" (|diff| {self.difference:.3g}; atol {self.atol:g}, rtol {self.rtol:g})"
        return text


class FieldSeries(BaseModel):
    """One field around an L3 divergence: reference and port values, step by step (plots)."""

    field: str
    first_step: int  # the episode step of the first value
    reference: list[Any]
    port: list[Any]


class Divergence(BaseModel):
    level: str
    mode: str | None = None
    module: str | None = None
    episode: int | None = None
    step: int | None = None
    seed: int | None = None
    reset_seed: int | None = None
    policy: str | None = None
    late_start: int | None = None
    start_state: dict[str, Any] = Field(default_factory=dict)
    action_prefix: list[Any] = Field(default_factory=list)
    fields: list[FieldDiff] = Field(default_factory=list)
    message: str = ""
    replay: str = ""
    # The replay as data, for running it again in-process (the self-check); `replay` is its
    # command line. Not part of the report: a report read back has only the line.
    replay_of: SkipValidation[Replay | None] = Field(default=None, exclude=True, repr=False)
    # L3 only: the episodes (first, last) played in one batch with this one.
    batch: tuple[int, int] | None = None
    # L3 only: the differing fields over the steps up to the divergence (not in text()).
    series: list[FieldSeries] = Field(default_factory=list)

    def replayed_by(self, replay: Replay) -> None:
        self.replay, self.replay_of = replay.command(), replay

    def text(self) -> str:
        where = [f"{self.level.upper()}" + (f" {self.mode}" if self.mode else "")]
        if self.module:
            where.append(f"module {self.module}")
        if self.episode is not None:
            where.append(
                f"episode {self.episode} (policy {self.policy}, reset seed {self.reset_seed})"
            )
        if self.step is not None:
            where.append(f"step {self.step}")
        lines = [", ".join(where) + (f": {self.message}" if self.message else "")]
        if self.late_start is not None:
            lines.append(f"  started with the step counter at {self.late_start}")
        if self.start_state:
            lines.append(f"  start state: {_brief_state(self.start_state)}")
        if self.action_prefix:
            lines.append(f"  actions up to the divergence: {_fmt(self.action_prefix)}")
        lines.extend(f"  {diff.line()}" for diff in self.fields)
        if self.replay:
            lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


class LevelResult(BaseModel):
    level: str
    mode: str | None = None
    passed: bool
    episodes: int = 0
    steps_compared: int = 0
    diverged_episodes: int = 0
    # How the reference's episodes ended: what the level actually exercised.
    endings: dict[str, int] = Field(default_factory=dict)
    divergences: list[Divergence] = Field(default_factory=list)
    seconds: dict[str, float] = Field(default_factory=dict)
    # Statistical checks (the noise sampler's distribution test, L4 transfer): their figures,
    # and the sentence reporting them, which replaces the step counts in the summary.
    statistics: dict[str, Any] = Field(default_factory=dict)
    note: str = ""
    # What this check did not show although it passed (envport.gaps).
    gaps: list[Gap] = Field(default_factory=list)

    @property
    def name(self) -> str:
        return self.level + (f".{self.mode}" if self.mode else "")

    @property
    def unit(self) -> str:
        """What `episodes` counts at this level."""
        if self.name == "l2.batch":
            return "envs, batched and alone"
        units = {"l1": "examples", "l2": "sequences", "l3": "episodes", "reverse": "episodes"}
        return units.get(self.level, "cases")

    def summary(self) -> str:
        if self.note:
            return self.note
        text = f"{self.episodes} {self.unit}, {self.steps_compared} steps compared"
        if self.diverged_episodes:
            text += f", {self.diverged_episodes} diverged"
        if self.endings:
            text += f" (episodes ended: {_fmt(self.endings)})"
        return text

    def failure_message(self) -> str:
        """One line for a CI system's list of failures: how many, and the first one where."""
        if not self.divergences:
            return self.summary()
        first = self.divergences[0]
        if not self.diverged_episodes:
            return first.text().splitlines()[0]
        text = f"{self.diverged_episodes} of {self.episodes} {self.unit} diverged"
        if first.episode is not None and first.step is not None:
            return f"{text}; first at episode {first.episode}, step {first.step}"
        return f"{text}: {first.message}" if first.message else text


# Branches never exercised, listed one a line in the terminal before the rest are counted.
SHOWN_BRANCHES = 8


class VerifyReport(BaseModel):
    spec: str
    port: str
    backend: str | None = None
    # The target whose contract the port was loaded by, and the module of a --module check.
    target: str | None = None
    module: str | None = None
    passed: bool
    error: str | None = None
    levels: list[LevelResult] = Field(default_factory=list)
    # The static review of the port's source (`review.static`), run before any level and
    # kept apart from them (None: not run); a refusal is the report's only check.
    review: LevelResult | None = None
    # Wall time by part: setup, port_load_wait, each level run, total.
    seconds: dict[str, float] = Field(default_factory=dict)
    # What the reader should know about how the port was checked (a port not split into the
    # spec's modules, a replay that needs a whole batch).
    notes: list[str] = Field(default_factory=list)

    # Every gap of the run: the levels' and the checks that did not run (filled by verify).
    gaps: list[Gap] = Field(default_factory=list)
    # --strict: a gap fails the run.
    strict: bool = False
    # Which branches of the reference's own source the levels exercised (None: not measured).
    coverage: BranchCoverage | None = None
    # Where each check's wall time went, by phase, and its requests to the port worker by
    # op (envport.io.profile; docs/verification.md, "Where the time goes").
    profile: dict[str, Any] = Field(default_factory=dict)

    @property
    def results(self) -> list[LevelResult]:
        """Every check's result in the order they ran: the static review, then the levels."""
        return ([self.review] if self.review is not None else []) + self.levels

    @property
    def diverged(self) -> bool:
        return self.error is not None or not all(level.passed for level in self.results)

    def verdict(self) -> str:
        """The closing line: what was checked, the result, and where the time went."""
        word = verdict_word(self.diverged, self.gaps, self.strict)
        if self.module is not None:
            what = f"module {self.module} of the {self.target or 'auto'} port"
        else:
            what = f"backend {self.backend or self.target or 'unknown'}"
        times = [
            f"{name} {self.seconds[name]:.2f} s" for name in LEVEL_TIMES if name in self.seconds
        ]
        times.append(f"total {self.seconds.get('total', 0.0):.2f} s")
        return f"{word}: {what}; {', '.join(times)}"

    # Checks asked for that could not apply to this port (reverse injection: the port cannot
    # load a state), each with the reason: the report says what was not checked.
    not_run: dict[str, str] = Field(default_factory=dict)

    # Problems with the spec that weaken the checks without failing them, one line each.
    warnings: list[str] = Field(default_factory=list)
    # --fail-fast: where it stopped and what it did not run (None: it ran every check).
    stopped_early: str | None = None
    # The port's declared domain (`targets.<name>.domain`): L1 and L2 drew only states
    # meeting these expressions, so the verdict holds on that part of the state space.
    restricted_to: list[str] = Field(default_factory=list)

    def text(self) -> str:
        lines = [f"warn spec: {warning}" for warning in self.warnings]
        if self.restricted_to:
            lines.append(
                "restricted: L1 and L2 drew only states in the port's declared domain, "
                + " and ".join(f"`{e}`" for e in self.restricted_to)
                + "; the reference's states outside it were not checked"
            )
        lines += [f"note: {note}" for note in self.notes]
        if self.coverage is not None:
            lines.append(f"coverage: {self.coverage.summary()}")
            if self.coverage.conditions is not None:
                lines += self.coverage.conditions.lines()
        if self.error:
            lines.append(f"FAIL port: {self.error}")
        for level in self.results:
            status = "pass" if level.passed else "FAIL"
            lines.append(f"{status} {level.name}: {level.summary()}")
            lines.extend(d.text() for d in level.divergences[:1])
        lines.extend(f"n/a  {name}: not run, {why}" for name, why in self.not_run.items())
        if self.stopped_early:
            lines.append(self.stopped_early)  # not the spec's problem: no `warn spec:`
        # Checks that did not run are the n/a lines above; the rest of the gaps follow.
        shown = [gap for gap in self.gaps if gap.kind is not GapKind.NOT_RUN]
        said = gap_lines(shown)
        branches = [line for line in said if GapKind.BRANCH_NOT_EXERCISED.value in line]
        if len(branches) > SHOWN_BRANCHES:
            # The rest are in the JSON, JUnit and HTML reports; a terminal shows the first.
            hidden = set(branches[SHOWN_BRANCHES:])
            said = [line for line in said if line not in hidden]
            said.append(
                f"coverage: and {len(hidden)} more branches never exercised (listed in the "
                "JSON and HTML reports); mark one out of scope with a reason in [coverage]"
            )
        lines.extend(f"{'FAIL' if self.strict else 'gap '} {line}" for line in said)
        return "\n".join(lines)


# A start state's component with more numbers than this is shown by its shape in the text
# (a chess position's 8x8x104 history would bury the differing fields a repair needs); the
# report, the JSON and the replay command keep it whole.
BRIEF_ITEMS = 128


def _brief_state(state: dict[str, Any]) -> str:
    parts = []
    for name, value in state.items():
        shown = _fmt(value)
        if isinstance(value, list):
            try:
                array = np.asarray(value, dtype=float)
            except ValueError:  # ragged: shown whole
                array = None
            if array is not None and array.size > BRIEF_ITEMS:
                shape = " x ".join(map(str, array.shape))
                shown = f"<{shape} array, {np.count_nonzero(array)} nonzero>"
        parts.append(f"{name}: {shown}")
    return "{" + ", ".join(parts) + "}"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}"
    return str(value)
