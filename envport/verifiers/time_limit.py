"""Reverse injection's follow-up: episodes played to the reference's time limit.

A port that cannot load a state (envpool) is compared from its own starts; random play from
there rarely survives to the time limit, so the port's limit would go unchecked. The
reference's own search finds such episodes, and the port plays them from its starts.
"""

from __future__ import annotations

import dataclasses

from envport.verifiers.context import VerifyContext
from envport.verifiers.coverage.endings import ending_gaps
from envport.verifiers.draws import survival
from envport.verifiers.levels import reverse
from envport.verifiers.reporting.divergence import LevelResult

# Episodes played to the time limit when reverse injection's own never reach it.
LIMIT_EPISODES = 4


def to_the_limit(ctx: VerifyContext, found: list[LevelResult]) -> list[LevelResult]:
    """When no episode reached the reference's time limit, episodes the reference finds
    that survive to it (envport.verifiers.draws.survival), played on the port from its own
    starts, so the port's limit is compared too. Deterministic envs only: the search
    replays the reference from loaded states, which a stochastic env's draws would not."""
    limit = ctx.reference.max_episode_steps
    whole = ctx.l3.only_episode is None and ctx.l3.batch is None
    if not whole or limit is None or ctx.spec.randomness is not None:
        return []
    if not ending_gaps(found, limit):
        return []
    options = dataclasses.replace(
        ctx.l3, episodes=min(LIMIT_EPISODES, ctx.l3.episodes), steps=limit
    )
    choose = survival.to_the_limit(ctx.reference, limit, ctx.options.seed)
    levels = reverse.run_reverse(
        ctx.spec, ctx.reference, ctx.worker, options, ctx.replays["reverse"], choose
    )
    kept = []
    for level in levels:
        if level.mode == "states":
            continue  # the endings are the point; states are compared by the main pass
        level.mode = f"{level.mode}@limit"
        # Hundreds of open-loop steps: a port exact to its tolerance (float32) may leave the
        # reference's trajectory before the limit. Only an ending that differs alone is the
        # port's time limit; an episode that drifted first shows nothing about it.
        limit_only = [d for d in level.divergences if {f.field for f in d.fields} == {"truncated"}]
        drifted = len(level.divergences) - len(limit_only)
        level.divergences, level.diverged_episodes = limit_only, len(limit_only)
        level.passed = not limit_only
        for divergence in limit_only:
            divergence.mode = level.mode
        level.note = f"to the time limit: {level.summary()}"
        if drifted:
            level.endings = {}  # the limit was not compared: the gap stays
            level.note += f"; {drifted} episodes left the reference's trajectory first"
        kept.append(level)
    return kept
