"""Make every L3 replay line show its divergence again, or say why it cannot.

A replay line plays one episode alone. A port whose envs leak into one another in a batch
(every env pushed by the first env's action, say) diverges only beside the other envs of
the chunk it was played in, so its one-episode replay would pass. Each reported divergence
is therefore played again as its line says, on the same worker; one that does not show
alone is played with its whole batch, and its line becomes that batch's replay. One that
shows neither way is reported as not reproducible.
"""

from __future__ import annotations

import dataclasses

from envport.spec import PortSpec
from envport.targets.reference import Reference
from envport.verifiers.levels.l3 import lanes as l3_lanes
from envport.verifiers.levels.l3.lanes import Worker
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.replay import Replay


def _same(found: list[LevelResult], wanted: Divergence) -> bool:
    """The replay showed this divergence: the same episode, step and differing fields."""
    fields = sorted(diff.field for diff in wanted.fields)
    return any(
        d.episode == wanted.episode
        and d.step == wanted.step
        and sorted(diff.field for diff in d.fields) == fields
        for level in found
        for d in level.divergences
    )


def _own(found: list[LevelResult], episode: int) -> Divergence | None:
    """The episode's first divergence in a replay's results, if it diverged at all."""
    return next((d for level in found for d in level.divergences if d.episode == episode), None)


def confirm_replays(
    spec: PortSpec,
    options: L3Options,
    template: Replay,
    worker: Worker,
    reference: Reference,
    levels: list[LevelResult],
) -> None:
    """Play each reported L3 divergence again as its replay line would; fix the line (or
    say it cannot be replayed) where the episode alone does not show it."""
    for level in levels:
        if level.level != "l3" or level.mode is None:
            continue
        batches: dict[tuple[int, int], list[LevelResult]] = {}
        for divergence in level.divergences:
            if divergence.episode is None or divergence.step is None:
                continue
            alone = dataclasses.replace(
                options, mode=level.mode, only_episode=divergence.episode, batch=None
            )
            played_alone = l3_lanes.run_l3(spec, alone, template, worker, reference)
            if _same(played_alone, divergence):
                continue
            own = _own(played_alone, divergence.episode)
            if own is not None:
                # Alone it diverges too (elsewhere, or in other fields): the env's own fault,
                # which its replay line shows; not one that needs the batch.
                divergence.message += (
                    f"; played alone (its replay), episode {divergence.episode} diverges too, "
                    f"at step {own.step} ({', '.join(d.field for d in own.fields[:3])}): the "
                    "fault is in the env itself, not in the other envs of its batch"
                )
                continue
            batch = divergence.batch
            if batch is not None and batch[0] != batch[1]:
                if batch not in batches:
                    together = dataclasses.replace(
                        options, mode=level.mode, only_episode=None, batch=batch
                    )
                    batches[batch] = l3_lanes.run_l3(spec, together, template, worker, reference)
                if _same(batches[batch], divergence):
                    divergence.replayed_by(template.at(mode=level.mode, batch=batch))
                    divergence.message += (
                        f"; played alone, episode {divergence.episode} does not show this: it "
                        f"needs the other envs of its batch (episodes {batch[0]}-{batch[1]}, "
                        "stepped together), which the replay plays"
                    )
                    continue
            divergence.message += (
                "; its replay (the episode alone, and with its batch) did not show it again: "
                "the port answers differently from one run to the next"
            )
