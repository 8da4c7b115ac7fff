"""L3 when the port raised: the episode and the step it raised on, found by playing the plan
again in parts, so the failure reads like any L3 divergence (episode, policy, start state,
actions, replay line) rather than one line for the whole run.

A raise fails a chunk's whole request; which episode and which step made it is found by
bisection: the shortest run of the plan's first episodes (played as one batch) that raises,
then the shortest prefix of that episode's steps, each a replay of a few episodes at most.
A raise that shows only beside other episodes is reported with that batch's replay.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from envport.errors import PortRaised
from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.levels.l3 import lanes
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.replay import Replay
from envport.verifiers.reporting.states import port_words, shortest_raising


def raised_level(
    spec: PortSpec,
    options: L3Options,
    replay: Replay,
    port: lanes.Worker,
    reference: Reference,
    error: PortRaised,
) -> LevelResult:
    """The failed L3 result of a run the port raised in, narrowed as far as it replays."""

    def raises(changes: dict[str, Any]) -> PortRaised | None:
        try:
            lanes.run_l3(spec, dataclasses.replace(options, **changes), replay, port, reference)
        except PortRaised as failure:
            return failure
        return None

    level = LevelResult(level="l3", mode=None, passed=False, diverged_episodes=1)
    indices = l3.episode_indices(options)
    first = indices[0]
    count, error = shortest_raising(
        len(indices), error, lambda k: raises(_batch(first, indices[k - 1]))
    )
    episode = indices[count - 1]
    alone = raises(_batch(episode, episode))
    if alone is None:
        # Only beside the episodes before it: the batch is what replays it.
        batch = (first, episode)
        level.divergences = [
            Divergence(
                level="l3",
                episode=episode,
                seed=options.seed,
                batch=batch,
                message=f"{port_words(error)}\n(raised only with episodes {first}-{episode} "
                "played as one batch)",
                replay=replay.at(batch=batch).command(),
            )
        ]
        return level
    level.divergences = [_at_step(spec, options, replay, reference, episode, alone, raises)]
    level.episodes = 1
    return level


def _batch(first: int, last: int) -> dict[str, Any]:
    return {"only_episode": None, "batch": (first, last)}


def _at_step(
    spec: PortSpec,
    options: L3Options,
    replay: Replay,
    reference: Reference,
    episode: int,
    error: PortRaised,
    raises: Callable[[dict[str, Any]], PortRaised | None],
) -> Divergence:
    """The episode's divergence at the step the port raised on: free-running first (as L3
    asks), then resync, each over the shortest prefix of steps that raises."""
    modes = ["free", "resync"] if options.mode == "both" else [options.mode]
    for mode in modes:
        alone: dict[str, Any] = {"only_episode": episode, "batch": None, "mode": mode}
        failure = raises(alone)
        if failure is None:
            continue

        def within(steps: int, alone: dict[str, Any] = alone) -> PortRaised | None:
            return raises({**alone, "steps": steps})

        steps, error = shortest_raising(options.steps, failure, within)
        played = l3.play_reference(
            reference, spec, dataclasses.replace(options, **alone, steps=steps)
        )
        (plan,) = played.plans
        step = min(steps, int(played.lengths[0])) - 1
        start = step if mode == "resync" else 0
        return Divergence(
            level="l3",
            mode=mode,
            episode=episode,
            step=step,
            seed=options.seed,
            reset_seed=plan.reset_seed,
            policy=plan.policy,
            late_start=plan.late_start,
            start_state={k: np.asarray(v).tolist() for k, v in played.state_at(start).items()},
            action_prefix=[np.asarray(a).tolist() for a in played.actions[: step + 1]],
            message=port_words(error),
            replay=replay.at(mode=mode, episode=episode).command(),
        )
    return Divergence(
        level="l3",
        episode=episode,
        seed=options.seed,
        message=port_words(error),
        replay=replay.at(episode=episode).command(),
    )
