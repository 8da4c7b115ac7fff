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
from envport.llm.cache import write_atomically
from envport.llm.retry import DEFAULT_TIMEOUT_S, RetryPolicy
from envport.llm.types import TokenUsage
from envport.spec import ModuleSpec

STATE_FORMAT: Final = "envport-run/1"
COMPOSED = "composed"

Status = Literal["running", "verified", "gave_up", "interrupted", "stopped"]
Phase = Literal["plan", "modules", "composed", "optimize", "done"]
# Batch sizes the optimisation phase benches by default: the paper's range, the largest last
# (the one an optimisation is judged by).
OPTIMIZE_BATCH_SIZES = (32, 512, 8192)


def utc_now() -> datetime:
    return datetime.now(UTC)


class Limits(BaseModel):
    """Budgets of one run. None means no cap."""

    max_iterations: int = Field(default=4, ge=0, description="repairs per module and per level")
    max_usd: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, gt=0)
    max_minutes: float | None = Field(default=60.0, gt=0)
    stuck_after: int = Field(default=3, ge=2, description="same divergence this often = stuck")
    answer_tokens: int = Field(default=8192, gt=0, description="max_tokens of each model call")
    # How each model call is tried: a total deadline per attempt (answer included), and the
    # attempts, the first included. Kept in the run so a resume tries the same way.
    call_timeout_s: float = Field(
        default=DEFAULT_TIMEOUT_S, gt=0, description="seconds per model call attempt"
    )
    call_attempts: int = Field(
        default=RetryPolicy().attempts, ge=1, description="attempts per model call"
    )


class OptimizeSettings(BaseModel):
    """`translate --optimize`: how many rounds, and how each port is benched.

    `rounds` 0 (the default, and what a run from before the phase existed loads as) means
    no optimisation phase.
    """

    rounds: int = Field(default=0, ge=0, description="optimise prompts after L1-L3 pass")
    batch_sizes: list[int] = Field(default_factory=lambda: list(OPTIMIZE_BATCH_SIZES))
    steps: int = Field(default=200, gt=0, description="steps per env in one timed run")
    repeats: int = Field(default=5, gt=0, description="timed runs per port; the best counts")
    min_gain: float = Field(default=0.05, ge=0, description="kept only at >= 1 + min_gain")

    @property
    def largest(self) -> int:
        return max(self.batch_sizes)


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
    target: Literal["jax", "numpy"]
    # Provider-qualified model name (never a key); with base_url it is all resume needs.
    model: str
    base_url: str | None = None
    prompts_dir: str | None = None
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
