"""What a translate run is told: one model, filled from the command line and BATCH.toml alike.

Every setting has one name. A limit's field name is its BATCH.toml key, and its flag is the
same name with dashes (`budget_usd`, `--budget-usd`); `budget_*` caps the whole run, `call_*`
and `answer_tokens` shape each model call. The names used before stay readable where users
or old files may have them: a run.json's `max_usd`, `max_tokens` and `call_timeout_s`, a
batch file's `run_usd` (docs/design.md, Runs).

The fields of `Limits` a user set are the ones given (`model_fields_set`): on resume only
they replace the run's own, and only a given budget revives a run that gave up. That is why
options travel as `model_dump_json(exclude_unset=True)`: the child of a batch gets exactly
what the batch file said, never the defaults in its place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from envport.llm.retry import DEFAULT_TIMEOUT_S, RetryPolicy

# Batch sizes the optimisation phase benches by default: the paper's range, the largest last
# (the one an optimisation is judged by).
OPTIMIZE_BATCH_SIZES = (32, 512, 8192)
DEFAULT_OPTIMIZE_ROUNDS = 3
# Limits that are budgets: raising one is what continues a run that gave up. How calls are
# tried (`call_*`) is a setting, not a budget.
BUDGETS = frozenset({"max_iterations", "budget_usd", "budget_tokens", "max_minutes", "stuck_after"})


class Limits(BaseModel):
    """Budgets of one run and how its model calls are made. None means no cap."""

    max_iterations: int = Field(default=4, ge=0, description="repairs per module and per level")
    budget_usd: float | None = Field(
        default=None,
        gt=0,
        validation_alias=AliasChoices("budget_usd", "max_usd"),
        description="dollar cap of the whole run",
    )
    budget_tokens: int | None = Field(
        default=None,
        gt=0,
        validation_alias=AliasChoices("budget_tokens", "max_tokens"),
        description="token cap of the whole run (input and output of every call)",
    )
    max_minutes: float | None = Field(default=60.0, gt=0, description="wall-time cap")
    stuck_after: int = Field(default=3, ge=2, description="same divergence this often = stuck")
    answer_tokens: int = Field(
        default=8192, gt=0, description="max_tokens of each model call (a per-call cap)"
    )
    # How each model call is tried: a total deadline per attempt (answer included), and the
    # attempts, the first included. Kept in the run so a resume tries the same way.
    call_timeout: float = Field(
        default=DEFAULT_TIMEOUT_S,
        gt=0,
        validation_alias=AliasChoices("call_timeout", "call_timeout_s"),
        description="seconds per model call attempt",
    )
    call_attempts: int = Field(
        default=RetryPolicy().attempts, ge=1, description="attempts per model call"
    )

    def given(self) -> dict[str, Any]:
        """The limits a user set, by name."""
        return self.model_dump(exclude_unset=True)

    def gives_budget(self) -> bool:
        """Whether a budget was given (what continues a run that gave up)."""
        return bool(self.model_fields_set & BUDGETS)

    def over(self, base: Limits) -> Limits:
        """`base` with the limits given here in place of its own."""
        return base.model_copy(update=self.given())


class OptimizeSettings(BaseModel):
    """`translate --optimize`: how many rounds, and how each port is benched.

    `rounds` 0 (the default, and what a run from before the phase existed loads as) means
    no optimisation phase. The flags and batch keys are `optimize_rounds` and `bench_*`
    (`OPTIMIZE_KEYS`): outside this model the names say which phase they belong to.
    """

    rounds: int = Field(default=0, ge=0, description="optimise prompts after L1-L3 pass")
    batch_sizes: list[int] = Field(default_factory=lambda: list(OPTIMIZE_BATCH_SIZES))
    steps: int = Field(default=200, gt=0, description="steps per env in one timed run")
    repeats: int = Field(default=5, gt=0, description="timed runs per port; the best counts")
    min_gain: float = Field(default=0.05, ge=0, description="kept only at >= 1 + min_gain")

    @field_validator("batch_sizes")
    @classmethod
    def _ascending(cls, sizes: list[int]) -> list[int]:
        # Ascending, so the largest (the one an optimisation is judged by) is benched last.
        if not sizes or min(sizes) < 1:
            raise ValueError("expected one or more batch sizes, each 1 or more")
        return sorted(set(sizes))

    @property
    def largest(self) -> int:
        return max(self.batch_sizes)


# The flat name (flag, batch key) of each optimisation setting -> its field above.
OPTIMIZE_KEYS = {
    "optimize_rounds": "rounds",
    "bench_batch_sizes": "batch_sizes",
    "bench_steps": "steps",
    "bench_repeats": "repeats",
}


def optimize_settings(enabled: bool, given: dict[str, Any]) -> OptimizeSettings:
    """The optimisation phase from `optimize` and the flat keys given (by OPTIMIZE_KEYS
    name, None for not given); the caller has refused keys given without `optimize`."""
    if not enabled:
        return OptimizeSettings()
    values = {OPTIMIZE_KEYS[key]: value for key, value in given.items() if value is not None}
    values.setdefault("rounds", DEFAULT_OPTIMIZE_ROUNDS)
    return OptimizeSettings.model_validate(values)


class TranslateOptions(BaseModel):
    """`envport translate`: a new run of a spec on a target with a model."""

    model_config = ConfigDict(extra="forbid")

    command: Literal["translate"] = "translate"
    spec: str = Field(description="envport.toml or the directory holding it")
    target: str
    model: str | None = None
    base_url: str | None = None
    out: Path = Path("runs")
    run_id: str | None = None
    prompts: str | None = Field(default=None, description="directory of .j2 overrides")
    limits: Limits = Field(default_factory=Limits)
    optimize: OptimizeSettings = Field(default_factory=OptimizeSettings)
    # A check that passed but did not show everything (envport.gaps) fails the run's checks.
    strict: bool = False


class ResumeOptions(BaseModel):
    """`envport resume`: continue a run, with the limits given in place of its own."""

    model_config = ConfigDict(extra="forbid")

    command: Literal["resume"] = "resume"
    run: str = Field(description="the run directory")
    base_url: str | None = None
    limits: Limits = Field(default_factory=Limits)


RunOptions = TranslateOptions | ResumeOptions
