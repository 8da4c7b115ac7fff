"""RunState: everything the driver needs to take the next step, saved after every step.

`run.json` is rewritten atomically at the end of each completed step, together with `head`
(the git commit holding the port as that step left it). A process killed in the middle of a
step therefore resumes from a consistent pair: the port is reset to `head` and the step runs
again, rendering the same prompt, which the response cache answers without a new call.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, Field, ValidationError

from envport.errors import EnvportError
from envport.gaps import Gap
from envport.io import write_atomically
from envport.llm.types import TokenUsage
from envport.runs.options import Limits, OptimizeSettings
from envport.spec import ModuleSpec

STATE_FORMAT: Final = "envport-run/1"
COMPOSED = "composed"

Status = Literal["running", "verified", "gave_up", "interrupted", "stopped"]
Phase = Literal["plan", "modules", "composed", "optimize", "done"]


def utc_now() -> datetime:
    return datetime.now(UTC)


class OptimizeAttempt(BaseModel):
    """One optimisation round: what the bench said and whether the edit was kept."""

    round: int
    kept: bool
    why: str
    batch: int  # the largest batch size: SPS there decides
    sps_before: dict[int, float] = Field(default_factory=dict)  # the current port, same session
    sps_after: dict[int, float] = Field(default_factory=dict)  # the candidate (empty: not benched)
    ratio: float | None = None  # sps_after / sps_before at `batch`


class OptimizeProgress(BaseModel):
    rounds_done: int = 0
    # SPS by batch size of the port as it stands (the last kept version), from the latest
    # bench that measured it: what the next optimise prompt shows. Empty: not benched yet.
    sps: dict[int, float] = Field(default_factory=dict)
    start_sps: dict[int, float] = Field(default_factory=dict)  # before any optimisation
    attempts: list[OptimizeAttempt] = Field(default_factory=list)


class CheckOutcome(BaseModel):
    """One named check's latest result: `module:physics`, `l1:physics`, `l3.free`, ..."""

    name: str
    scope: str  # the module it belongs to, or "composed"
    level: str  # "module" (imports and exports), "l1", "l2", "l3", "load", "answer"
    passed: bool
    failures: list[str] = Field(default_factory=list)  # divergence texts, the first few
    signature: str = ""  # what "the same divergence" means for stuck detection
    # What the check did not show although it passed (envport.gaps).
    gaps: list[Gap] = Field(default_factory=list)


class StuckState(BaseModel):
    signature: str = ""
    count: int = 0
    context_added: bool = False


class RunState(BaseModel):
    format: Literal["envport-run/1"] = STATE_FORMAT
    run_id: str
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    # Where the spec came from; the run itself reads its frozen copy, envport.toml.
    spec_source: str
    spec_name: str
    target: Literal["jax", "numpy", "rust"]
    # Provider-qualified model name (never a key); with base_url it is all resume needs.
    model: str
    base_url: str | None = None
    prompts_dir: str | None = None
    # The options it was given (envport.runs.options), a resume's limits in place of their own.
    limits: Limits = Field(default_factory=Limits)

    status: Status = "running"
    reason: str = ""
    phase: Phase = "modules"
    modules: list[ModuleSpec] = Field(default_factory=list)
    entry: str = "env"
    module_index: int = 0
    # Iteration within the current scope: 0 generates a module, 1.. are repairs.
    iteration: int = 0
    composed_checked: bool = False
    level_repairs: dict[str, int] = Field(default_factory=dict)
    # Latest accepted result of every check run so far: the regression guard's baseline.
    results: dict[str, CheckOutcome] = Field(default_factory=dict)
    # What the next repair must fix, and what to tell the model about its last answer.
    open_failures: list[CheckOutcome] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)
    stuck: StuckState = Field(default_factory=StuckState)
    optimize: OptimizeSettings = Field(default_factory=OptimizeSettings)
    # --strict: a check's gaps fail it (the model is asked to close them); without it a
    # verified run lists them in `gaps` and its verdict reads "verified with gaps".
    strict: bool = False
    gaps: list[Gap] = Field(default_factory=list)
    optimization: OptimizeProgress = Field(default_factory=OptimizeProgress)

    step: int = 0  # completed steps
    head: str = ""  # git commit of the port after the last completed step
    usage: TokenUsage = Field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    paid_calls: int = 0
    cached_calls: int = 0
    elapsed_s: float = 0.0
    sessions: int = 0

    @property
    def scope(self) -> str:
        """The module being generated or repaired, "composed", or the phase's name."""
        if self.phase == "modules" and self.module_index < len(self.modules):
            return self.modules[self.module_index].name
        if self.phase == "composed":
            return COMPOSED
        return self.phase

    @property
    def verdict(self) -> str:
        """The status a person reads: a verified run with gaps says so."""
        if self.status == "verified" and self.gaps:
            return "verified with gaps"
        return self.status.replace("_", " ")

    @property
    def replayed(self) -> bool:
        """Answered from a replay session: no model is asked and nothing is paid."""
        return self.model.startswith("replay:")

    def calls_text(self) -> str:
        """The run's model calls as a reader should take them: paid, or replayed for free."""
        count = self.paid_calls
        if self.replayed:
            made = f"{count} model call{'s' if count != 1 else ''} answered from the replay session"
        else:
            made = f"{count} paid model call{'s' if count != 1 else ''}"
        return f"{made} (+{self.cached_calls} from the cache)"

    @property
    def finished(self) -> bool:
        return self.status in ("verified", "gave_up")


def save_state(path: Path, state: RunState) -> None:
    state.updated_at = utc_now()
    write_atomically(path, state.model_dump_json(indent=2) + "\n")


def load_state(path: Path) -> RunState:
    if not path.is_file():
        raise EnvportError(f"{path.parent}: not an envport run (no {path.name})")
    try:
        return RunState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as error:
        first = error.errors()[0] if isinstance(error, ValidationError) else None
        problem = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(error)
        raise EnvportError(f"{path}: not a readable run state ({problem})") from None
