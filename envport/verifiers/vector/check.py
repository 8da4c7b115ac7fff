"""l2.vector: a NumPy port's VectorEnv against Gymnasium's SyncVectorEnv of the reference.

L1 to L3 step the port from injected states and stop at an episode's end; what happens
around an autoreset is what this check is for. For each batch size B in BATCHES, the port's
VectorEnv (in its worker) and a SyncVectorEnv of B reference envs (next-step autoreset,
envport.verifiers.vector.reference) are driven through the same calls:

1. `reset(seed=s)` on both; every env's reset must be one the reference could draw.
2. One state load so both start alike; about two envs in three are loaded near the step
   limit, each a different distance from it, so envs truncate at different steps while
   others terminate (the mix of endings depends on the env).
3. STEPS steps of per-env actions. An env that ended at the last step must reset at this
   one (reward 0, not terminated, not truncated; its observation and, when readable, its
   state a reset the reference could draw: a constant such as the step counter exactly).
   Every other env's outputs and state must equal the reference's.
4. Once an env is pending, a partial reset, `reset(seed, options={"reset_mask": m})` (if the
   port's reset takes `options`): masked envs reset and leave their pending state behind,
   the others keep theirs (and their last observation); later a full `reset(seed)`.

Resets are random on both sides, so after each one the reference follows the port: the
port's new state (read through `state_to_reference`) is written into the reference's
sub-env, and from there every step compares exactly. A port without `state_to_reference`
is resynchronised the other way, by a state load, once no env is pending, and its envs are
not compared in between. Finally every reset the port made is tested as a sample against
the reference's reset draws (as in l2.reset, with the detectable effect the count allows).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from envport.gaps import Gap, GapKind
from envport.spec import PortSpec
from envport.verifiers.reporting.divergence import Divergence, FieldDiff, LevelResult
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.stats import sample_compare
from envport.verifiers.stats.reset_sample import (
    ALPHA,
    POWER,
    SHIFT,
    DrawSupport,
    ResetSample,
    state_columns,
)
from envport.verifiers.vector import seeding as vector_seeding
from envport.verifiers.vector.run import BATCHES, STEPS, Mismatch, Tally, VectorRun

__all__ = ["BATCHES", "STEPS", "check_vector"]
# The port's resets are tested as a sample once there are this many.
MIN_DRAWS = 20


def check_vector(
    spec: PortSpec, worker: Any, sample: ResetSample, seed: int, replay: str
) -> LevelResult:
    """Each batch size runs against reference envs of its own (VectorReference)."""
    started = time.perf_counter()
    level = LevelResult(level="l2", mode="vector", passed=True, episodes=len(BATCHES))
    support = DrawSupport(spec, sample)
    tally = Tally()
    readable = True
    for batch in BATCHES:
        run = VectorRun(spec, worker, batch, seed, support, tally)
        try:
            run.play()
        except Mismatch as mismatch:
            level.divergences.append(_divergence(run, mismatch, seed, replay))
            break
        readable = readable and run.readable
    if not level.divergences:
        _draws(spec, sample, tally, level, seed, replay)
    if not level.divergences:
        level.divergences.extend(vector_seeding.check_seeding(spec, worker, seed, replay))
    level.passed = not level.divergences
    level.diverged_episodes = len(level.divergences)
    level.steps_compared = tally.env_steps
    level.endings = dict(tally.endings)
    partial = tally.partial > 0
    level.note = (
        f"batches {', '.join(map(str, BATCHES))} x {STEPS} steps against SyncVectorEnv: "
        f"{tally.env_steps} env-steps compared, {tally.autoresets} autoresets, "
        f"{tally.partial} partial and {tally.full} full resets (episodes ended: "
        f"{tally.endings['terminated']} terminated, {tally.endings['truncated']} truncated); "
        "seeded runs reproducible and decided by the seed alone"
        + (
            ""
            if partial or level.divergences
            else "; reset takes no `options`: partial resets not checked"
        )
        + ("" if readable else "; no state_to_reference: states after resets not checked")
    )
    if level.divergences:
        level.note = f"{level.divergences[0].message}"
        return _timed(level, started)
    if not support.judged:
        level.gaps.append(
            Gap(
                check="l2.vector",
                kind=GapKind.NOT_RUN,
                detail=f"each reset is not judged alone: from the spec's {sample.n} reference "
                "resets ([levels.l2] reset_samples), a component's values and range are no "
                "support (a generated world's cell takes values too rare to show); the resets "
                "are compared as one sample",
            )
        )
    if not readable:
        level.gaps.append(
            Gap(
                check="l2.vector",
                kind=GapKind.NO_STATE_READS,
                detail="the port has no `state_to_reference`, so the states its VectorEnv "
                "holds after autoresets and partial resets are not compared",
            )
        )
    return _timed(level, started)


def _timed(level: LevelResult, started: float) -> LevelResult:
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _draws(
    spec: PortSpec, sample: ResetSample, tally: Tally, level: LevelResult, seed: int, replay: str
) -> None:
    """Every reset the port made in the runs, as one sample against the reference's."""
    count = len(tally.draws_obs)
    if count < MIN_DRAWS:
        return
    port = sample_compare.columns("obs", np.stack(tally.draws_obs), spec)
    with_state = len(tally.draws_state) == count
    if with_state:
        # Its summaries too, as the reference's sample has them (l2.reset's components).
        port |= state_columns(spec, stack_states(tally.draws_state))
    reference = sample.columns(spec, with_state)
    for name in tally.kept:  # each reset of it was held to the reference's own instead
        reference.pop(name, None)
        port.pop(name, None)
    exact = spec.levels.l2.reset_samples is None  # as l2.reset's
    verdicts = sample_compare.compare_all(spec, reference, port, ALPHA, SHIFT, POWER, exact)
    level.statistics = {v.name: sample_compare.verdict_fields(v) for v in verdicts}
    for verdict in verdicts:
        if not verdict.passed:
            level.divergences.append(
                Divergence(
                    level="l2",
                    mode="vector",
                    seed=seed,
                    message=(
                        f"the {count} resets the VectorEnv made (seeded, partial and autoresets) "
                        f"draw {verdict.name} from another distribution than the reference: "
                        f"{verdict.problem}"
                    ),
                    fields=[
                        FieldDiff(
                            field=verdict.name, expected=verdict.reference, actual=verdict.port
                        )
                    ],
                    replay=replay,
                )
            )


def _divergence(run: VectorRun, mismatch: Mismatch, seed: int, replay: str) -> Divergence:
    step = mismatch.step
    env = mismatch.env
    start = run.starts[env] if env < len(run.starts) else {}
    actions = run.actions[env, : (step or 0) + 1].tolist() if step is not None else []
    where = f"batch of {run.batch}, env {env}" + (f", step {step}" if step is not None else "")
    return Divergence(
        level="l2",
        mode="vector",
        step=step,
        seed=seed,
        start_state={"batch": run.batch, "env": env, **start},
        action_prefix=actions,
        fields=mismatch.fields,
        message=f"{where}: {mismatch} (after: {'; '.join(run.events[-3:])})",
        replay=replay,
    )
