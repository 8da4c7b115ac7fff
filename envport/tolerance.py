"""How closely a port's numbers must meet the reference's: the spec's `[tolerance]` and a
target's own `[targets.<name>.tolerance]`, which overrides it field by field (a float32 JAX
port cannot meet the bit-identity a float64 NumPy port states)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# Default tolerances: a float32 port of a float64 reference (docs/design.md, contract 4).
DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5


class Tolerance(BaseModel):
    # A typo in a key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)

    atol: float = Field(default=DEFAULT_ATOL, ge=0)
    rtol: float = Field(default=DEFAULT_RTOL, ge=0)
    # Free-running rollouts let float error accumulate; the spec bounds it separately.
    free_atol: float | None = Field(default=None, ge=0)
    free_rtol: float | None = Field(default=None, ge=0)

    def bounds(self, free_running: bool) -> tuple[float, float]:
        if free_running:
            return (
                self.atol if self.free_atol is None else self.free_atol,
                self.rtol if self.free_rtol is None else self.free_rtol,
            )
        return self.atol, self.rtol


def overridden(spec: dict[str, Tolerance], target: dict[str, Tolerance]) -> dict[str, Tolerance]:
    """The spec's tolerances with a target's laid over them: each field the target names
    takes the bounds the target writes (`atol`, `free_atol`, ...) and keeps the spec's for
    the bounds it leaves out; the other fields keep the spec's."""
    merged = dict(spec)
    for field, own in target.items():
        written = own.model_dump(include=own.model_fields_set)
        merged[field] = spec[field].model_copy(update=written) if field in spec else own
    return merged
