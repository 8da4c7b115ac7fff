"""Which ways of ending an episode a verify run exercised, and the gap when the reference
can end an episode in a way no played episode reached.

An episode ends `terminated` (the env's own rule), `truncated` (its time limit) or `both`
(the step that terminates is also the limit's). A port whose time limit is wrong passes
every check that never plays to the limit: envpool's 200-step CartPole-v0 behind a
500-step CartPole-v1 spec verifies when every episode terminates after about 16 steps. So
the run says what it exercised, and a kind the reference can produce that no rollout
reached is a gap (envport.gaps): a warning, a failure under --strict.
"""

from __future__ import annotations

from envport.gaps import Gap, GapKind
from envport.verifiers.reporting.divergence import LevelResult

# The levels that play whole episodes: their endings are what the run exercised.
ROLLOUT_LEVELS = ("l3", "reverse")


def exercised(levels: list[LevelResult]) -> dict[str, int]:
    """How the rollouts' episodes ended, summed over the rollout levels (each level plays
    the same episodes in another mode: the largest count of each kind, not the sum)."""
    found: dict[str, int] = {}
    for level in levels:
        if level.level in ROLLOUT_LEVELS:
            for kind, count in level.endings.items():
                found[kind] = max(found.get(kind, 0), count)
    return found


def ending_gaps(levels: list[LevelResult], time_limit: int | None) -> list[Gap]:
    """A gap for the reference's time limit when no rollout played an episode to it."""
    rollouts = [level for level in levels if level.level in ROLLOUT_LEVELS and level.endings]
    if time_limit is None or not rollouts:
        return []
    ended = exercised(rollouts)
    if ended.get("truncated") or ended.get("both"):
        return []
    names = ", ".join(dict.fromkeys(level.name for level in rollouts))
    counts = ", ".join(f"{count} {kind}" for kind, count in ended.items())
    return [
        Gap(
            check=rollouts[0].level,
            kind=GapKind.ENDING_NOT_REACHED,
            detail=(
                f"the reference truncates at its time limit (step {time_limit}) but no "
                f"episode of {names} reached it ({counts}): the port's time limit is not "
                "checked; play longer episodes (--steps) or a policy that survives"
            ),
        )
    ]
