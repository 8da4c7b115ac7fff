"""L3's free-running horizon: compare a chaotic env's free-running steps only so far.

A float32 port of a chaotic float64 reference (Acrobot) leaves the reference's trajectory
exponentially fast whatever its correctness, so past some step a free-running comparison
says nothing about the port. `[levels.l3] free_horizon = N` cuts each episode to its first N
steps for free-running mode; resync, which re-injects the state every step, still compares
every step of every episode.
"""

from __future__ import annotations

from dataclasses import replace

from envport.verifiers.compare import Steps
from envport.verifiers.l3 import ReferenceEpisode


def within_horizon(episodes: list[ReferenceEpisode], horizon: int | None) -> list[ReferenceEpisode]:
    if horizon is None:
        return episodes
    return [_cut(e, horizon) if len(e.actions) > horizon else e for e in episodes]


def _cut(episode: ReferenceEpisode, steps: int) -> ReferenceEpisode:
    done = episode.steps
    assert done is not None
    return replace(
        episode,
        states={name: values[:steps] for name, values in episode.states.items()},
        actions=episode.actions[:steps],
        steps=Steps(
            done.obs[:steps], done.reward[:steps], done.terminated[:steps], done.truncated[:steps]
        ),
        noise=None if episode.noise is None else episode.noise[:steps],
    )
