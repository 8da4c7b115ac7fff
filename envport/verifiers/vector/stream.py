"""Resets continue the stream: after `reset(seed=s)`, unseeded resets draw on from the
generator the seeded reset started (the fourth promise of envport.verifiers.vector.seeding).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.serve import ops
from envport.spec import PortSpec
from envport.verifiers.reporting.compare import unpadded
from envport.verifiers.reporting.divergence import Divergence, FieldDiff
from envport.verifiers.vector.differences import differences, divergence, show
from envport.verifiers.vector.reference import BATCH, ReferenceVector

# The stream's seeds: apart from the other seeding runs' (envport.verifiers.vector.seeding).
STREAM_SEED_OFFSET = 7_410_031


# Unseeded resets played after one seeded reset, per kind of reset. Many, because a port may
# draw a full `reset()` from fresh entropy, and one such draw can give back the seeded starts
# by chance (MinAtar Breakout's start has two outcomes per env: 1 in 128 at B = 7).
UNSEEDED_RESETS = 16
# The share of those resets in which the reference must start other envs than the seeded
# reset for a port that never does to fail: an entropy-drawing port whose resets repeat the
# seeded ones that often by chance is rarer than 1 in 4,000, whatever its start distribution.
MOVED_ON_SHARE = 0.75


def _stream(
    spec: PortSpec, target: Any, seed: int, masked: bool
) -> list[dict[str, np.ndarray]] | None:
    """A seeded reset, then unseeded resets that must continue its generator: full resets, or
    partial resets of every env (None where the target has no partial reset)."""
    opened = target.request(ops.VectorOpen(num_envs=BATCH))
    if masked and not opened.get("reset_options"):
        return None
    every = np.ones(BATCH, dtype=bool) if masked else None
    calls = [ops.VectorReset(seed=seed)]
    calls += [ops.VectorReset(seed=None, mask=every) for _ in range(UNSEEDED_RESETS)]
    played = []
    for op in calls:
        answer = target.request(op)
        outputs = {"obs": unpadded(spec, answer["obs"])}
        if answer.get("state") is not None:
            outputs |= {f"state.{k}": np.asarray(v) for k, v in answer["state"].items()}
        played.append(outputs)
    return played


def replays_the_seeded_starts(reference_moved_on: list[bool], port_moved_on: list[bool]) -> bool:
    """Whether the port gives back the seeded reset's envs on every unseeded reset where the
    reference starts others on most of them: a replay, not an unlucky draw."""
    share = sum(reference_moved_on) / max(len(reference_moved_on), 1)
    return share >= MOVED_ON_SHARE and not any(port_moved_on)


def resets_continue_the_stream(
    spec: PortSpec, worker: Any, seed: int, replay: str
) -> list[Divergence]:
    stream_seed = seed * 100_003 + STREAM_SEED_OFFSET
    seeded = f"reset(seed={stream_seed})"
    for masked, call in (
        (False, "reset() without a seed"),
        (True, "reset(options=reset_mask) of every env without a seed"),
    ):
        port = _stream(spec, worker, stream_seed, masked)
        if port is None:
            continue
        reference = _stream(spec, ReferenceVector(spec), stream_seed, masked)
        assert reference is not None  # the reference's SyncVectorEnv takes a reset_mask
        ref_moved = [
            not np.array_equal(out["obs"], reference[0]["obs"], equal_nan=True)
            for out in reference[1:]
        ]
        port_moved = [bool(differences(port[0], out, None)) for out in port[1:]]
        if replays_the_seeded_starts(ref_moved, port_moved):
            return [
                divergence(
                    f"{call} after {seeded} gave back the very envs {seeded} gave, "
                    f"{UNSEEDED_RESETS} times of {UNSEEDED_RESETS}, where the reference's "
                    f"start others {sum(ref_moved)} times: a reset without a seed must draw on "
                    "from the generator the seeded reset started (Gymnasium's SyncVectorEnv "
                    "does), not reseed it with the last seed",
                    [FieldDiff(field="obs[env 0]", expected=f"another start than after {seeded}",
                               actual=show(port[-1]["obs"][0]))],
                    seed,
                    replay,
                )
            ]  # fmt: skip
    return []
