"""The budgets and settings of levels L1, L2 and L4 in a spec's `[levels]` (L3's, which
name the spec's policies, stay in envport.spec beside them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Strict(BaseModel):
    # A typo in a key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)


class L1Spec(_Strict):
    examples: int = Field(default=200, gt=0, description="hypothesis examples per check")
    # Start states solved so the next state lands on (or just past) a constant of the
    # reference's source: this many per constant, state component and kind; 0: none.
    landings: int = Field(default=2, ge=0)
    # A two-player game's `l1.endings`: games the reference plays for positions near their
    # end (a slow reference, chess's, plays fewer); 0: none.
    endings: int = Field(default=36, ge=0)


class L2Spec(_Strict):
    examples: int = Field(default=40, gt=0, description="hypothesis sequences")
    steps: int = Field(default=25, gt=0, description="rules per sequence at most")
    # Batch sizes for the batch-equals-singles check: odd on purpose, so a port that works
    # in chunks (of 4, 8, 256 envs) meets a partial last chunk, and 1 meets its smallest.
    batch: list[int] = Field(default_factory=lambda: [1, 7, 33], min_length=1)
    # l2.reset's n per side, instead of the design's (a 1,000-reset pilot, then thousands):
    # for a reference whose reset is slow (a generated world, a second each). The report
    # says what this n can detect.
    reset_samples: int | None = Field(default=None, ge=20, description="l2.reset: n per side")

    @field_validator("batch", mode="before")
    @classmethod
    def _sizes(cls, value: Any) -> Any:
        return [value] if isinstance(value, int) else value

    @field_validator("batch")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(size < 1 for size in value):
            raise ValueError("expected batch sizes >= 1")
        return value


class L4Spec(_Strict):
    """Policy transfer: policies trained on the port and on the reference, each evaluated on
    both; equivalent only if a paired TOST shows the difference is within `margin`."""

    margin: float | None = Field(
        default=None, gt=0, description="equivalence margin, in the env's return units"
    )
    seeds: int = Field(default=5, ge=2, description="K: training seeds per env")
    episodes: int = Field(default=20, gt=0, description="evaluation episodes per policy and env")
    trainer: Literal["auto", "q_learning", "cem"] = "auto"
    budget: int | None = Field(
        default=None, gt=0, description="training episodes (q_learning) or iterations (cem)"
    )
    max_steps: int | None = Field(default=None, gt=0, description="steps per episode at most")
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
