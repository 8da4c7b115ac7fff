"""Seeding of a NumPy port's VectorEnv: what Gymnasium promises about `reset(seed=...)`.

The vector check (envport.verifiers.vector.check) makes the reference follow every reset the
port draws, so it sees whether a reset is one the reference could give, not whether the
port's generator is driven the way Gymnasium's is. Users rely on three things a SyncVectorEnv
of the reference does, and this check drives the port alone through each:

1. Reproducible runs: two fresh VectorEnvs given the same calls (a seeded reset, steps with
   autoresets, a partial reset without a seed, which continues the generator) return the
   same outputs, bit for bit. A port that draws from fresh entropy anywhere after a seeded
   reset fails. (A full `reset()` without a seed is left out: many vector envs start from
   fresh entropy there, and nothing a user seeds depends on it.)
2. A seeded reset depends on the seed alone: `reset(seed=s)`, and the masked envs of
   `reset(seed=s, options={"reset_mask": m})`, give the same envs whatever came before.
3. The seed matters: where the reference's own resets under two seeds differ, the port's do
   too (a generator seeded with a constant fails); and where the reference's outputs after a
   seeded partial reset differ under two seeds (its resets, or the draws of the steps that
   follow, as in a slippery lake with a fixed start), the port's differ too (a partial reset
   that ignores its seed fails).
4. Resets continue the stream: after `reset(seed=s)`, `reset()`s and partial resets of every
   env without a seed draw on from the generator the seeded reset started, so where the
   reference's start other envs than `reset(seed=s)` gave on most of 16 such resets, the
   port's must not give back the same ones on all 16 (a port that reseeds from the last seed
   on every reset replays the same starts forever). One reset is not enough: a port may draw
   a full `reset()` from fresh entropy, which gives back a low-entropy start by chance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.serve import ops
from envport.spec import PortSpec, StateSpec
from envport.structure import canonical
from envport.verifiers.draws.policies import plan_actions
from envport.verifiers.reporting.compare import unpadded
from envport.verifiers.reporting.divergence import Divergence, FieldDiff
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.vector.differences import differences as _differences
from envport.verifiers.vector.differences import divergence as _divergence
from envport.verifiers.vector.reference import BATCH, ReferenceVector, VectorReference
from envport.verifiers.vector.stream import resets_continue_the_stream

# Steps between the calls; the late-loaded envs end within the first stretch.
STRETCH = 6
OUTPUTS = ("obs", "reward", "terminated", "truncated")
SEED_OFFSET = 7_410_000


@dataclass
class Trace:
    """The port's answers of one run, by call; `seeded` names the calls a seed alone decides
    (with the envs it decides)."""

    calls: list[str] = field(default_factory=list)
    answers: list[dict[str, np.ndarray]] = field(default_factory=list)
    seeded: dict[int, np.ndarray] = field(default_factory=dict)
    # The answers from the seeded partial reset up to the seeded full reset.
    after_partial: range = range(0)
    state_spec: StateSpec | None = None
    # For the padding of agents observing fewer components, which is not compared.
    spec: PortSpec | None = None

    def add(self, call: str, answer: dict[str, Any], envs: np.ndarray | None = None) -> None:
        kept = {k: np.asarray(answer[k]) for k in OUTPUTS if k in answer}
        if "obs" in kept and self.spec is not None:
            kept["obs"] = unpadded(self.spec, kept["obs"])
        state = answer.get("state")
        if state is not None:
            # Items past a list's length are not state (docs/structured-state.md).
            state = canonical(self.state_spec, state) if self.state_spec else state
            kept |= {f"state.{k}": np.asarray(v) for k, v in state.items()}
        if envs is not None:
            self.seeded[len(self.answers)] = envs
        self.calls.append(call)
        self.answers.append(kept)


class SeedingRun:
    """One run of the port's VectorEnv: the calls of the check, in order."""

    def __init__(
        self, spec: PortSpec, worker: Any, seed: int, history: int, partial_seed: int = 1
    ) -> None:
        self.spec, self.worker = spec, worker
        self.seed = seed * 100_003 + SEED_OFFSET
        self.partial_seed = self.seed + partial_seed
        ref = VectorReference(spec, BATCH)
        ref.reset(self.seed + history)
        self.starts = _late_starts(spec, ref)
        space = ref.refs[0].action_space
        self.actions = np.stack(
            [
                np.asarray(
                    plan_actions("uniform", space, seed + history, SEED_OFFSET + i, 5 * STRETCH)
                )
                for i in range(BATCH)
            ]
        )
        self.trace = Trace(state_spec=spec.state, spec=spec)
        self.t = 0

    def play(self, history_seed: int) -> Trace:
        """`history_seed` seeds the first reset: runs that share it must agree everywhere."""
        opened = self.worker.request(ops.VectorOpen(num_envs=BATCH))
        partial_ok = bool(opened["reset_options"])
        everyone = np.arange(BATCH)
        self._reset(f"reset(seed={history_seed})", None, seed=history_seed)
        self.trace.add("state load", self.worker.request(ops.VectorLoad(states=self.starts)))
        self._steps()
        if partial_ok:
            self._reset("reset(options=reset_mask) without a seed", None, mask=everyone % 2 == 0)
            self._steps()
        if partial_ok:
            mask = everyone % 3 == 1
            begin = len(self.trace.answers)
            self._reset(
                f"reset(seed={self.partial_seed}, options=reset_mask)",
                np.flatnonzero(mask),
                seed=self.partial_seed,
                mask=mask,
            )
            self._steps()
            self._steps()
            self.trace.after_partial = range(begin, len(self.trace.answers))
        self._reset(f"reset(seed={self.seed + 2})", everyone, seed=self.seed + 2)
        self._steps()
        return self.trace

    def _reset(
        self, call: str, decided: np.ndarray | None, seed: int | None = None, mask: Any = None
    ) -> None:
        self.trace.add(call, self.worker.request(ops.VectorReset(seed=seed, mask=mask)), decided)

    def _steps(self) -> None:
        for _ in range(STRETCH):
            answer = self.worker.request(ops.VectorStep(actions=self.actions[:, self.t]))
            self.trace.add(f"step {self.t}", answer)
            self.t += 1


def check_seeding(spec: PortSpec, worker: Any, seed: int, replay: str) -> list[Divergence]:
    """The three promises, in order; the first broken one is reported."""
    first = SeedingRun(spec, worker, seed, history=0).play(history_seed=seed + 11)
    again = SeedingRun(spec, worker, seed, history=0).play(history_seed=seed + 11)
    found = _first_difference(first, again, range(len(first.answers)))
    if found is not None:
        index, diffs = found
        return [
            _divergence(
                "the same calls on two fresh VectorEnvs gave different outputs: after a seeded "
                "reset the port must draw only from its seeded generator (a reset without a "
                "seed, a partial reset and an autoreset continue it), as Gymnasium's "
                f"SyncVectorEnv does; first difference at {first.calls[index]} "
                f"(calls before it: {'; '.join(first.calls[max(0, index - 3) : index])})",
                diffs,
                seed,
                replay,
            )
        ]
    other = SeedingRun(spec, worker, seed, history=1).play(history_seed=seed + 12)
    kept: set[str] | None = None
    for index, envs in first.seeded.items():
        diffs = _differences(first.answers[index], other.answers[index], envs)
        if diffs and kept is None:
            kept = _history_kept(spec, seed, first.seeded)
        diffs = [d for d in diffs if d.field.partition("[")[0] not in (kept or set())]
        if diffs:
            return [
                _divergence(
                    f"{first.calls[index]} gave other envs {envs.tolist()} after another "
                    "history: a seeded reset must depend on the seed alone (Gymnasium's "
                    "SyncVectorEnv reseeds every env it resets)",
                    diffs,
                    seed,
                    replay,
                )
            ]
    return (
        _partial_seed_matters(spec, worker, seed, first, replay)
        or _seed_matters(spec, worker, seed, replay)
        or resets_continue_the_stream(spec, worker, seed, replay)
    )


def _partial_seed_matters(
    spec: PortSpec, worker: Any, seed: int, first: Trace, replay: str
) -> list[Divergence]:
    """The port's outputs after `reset(seed=s, options=reset_mask)` under another s must
    differ where the reference's own do (the reference played through the same calls)."""
    window = first.after_partial
    if not window:
        return []
    shifted = SeedingRun(spec, worker, seed, history=0, partial_seed=7).play(seed + 11)
    if _first_difference(first, shifted, window) is not None:
        return []
    reference = [
        SeedingRun(spec, ReferenceVector(spec), seed, history=0, partial_seed=p).play(seed + 11)
        for p in (1, 7)
    ]
    if _first_difference(reference[0], reference[1], window) is None:
        return []  # the seed of a partial reset decides nothing the reference shows
    call = first.calls[window.start]
    return [
        _divergence(
            f"{call} and the same call under another seed gave the same outputs, up to the next "
            "seeded reset, where the reference's differ: the port ignores the seed of a partial "
            "reset (Gymnasium's SyncVectorEnv reseeds the envs it resets)",
            [FieldDiff(field="calls compared", expected="some output differs", actual="none")],
            seed,
            replay,
        )
    ]


def _history_kept(spec: PortSpec, seed: int, seeded: dict[int, np.ndarray]) -> set[str]:
    """The outputs the reference's own seeded resets carry over from an earlier history
    (MinAtar keeps the sticky `last_action` across resets): the same two runs played on its
    SyncVectorEnv. A port that keeps them too keeps what the reference keeps."""
    runs = [
        SeedingRun(spec, ReferenceVector(spec), seed, history=h).play(history_seed=seed + 11 + h)
        for h in (0, 1)
    ]
    kept: set[str] = set()
    for index, envs in seeded.items():
        if index < min(len(r.answers) for r in runs):
            diffs = _differences(runs[0].answers[index], runs[1].answers[index], envs)
            kept |= {d.field.partition("[")[0] for d in diffs}
    return kept


def _seed_matters(spec: PortSpec, worker: Any, seed: int, replay: str) -> list[Divergence]:
    seeds = (seed * 100_003 + SEED_OFFSET + 21, seed * 100_003 + SEED_OFFSET + 22)
    ref = VectorReference(spec, BATCH)
    reference = [ref.reset(s) for s in seeds]
    if np.array_equal(reference[0], reference[1], equal_nan=True):
        return []  # a deterministic reset: the seed decides nothing
    worker.request(ops.VectorOpen(num_envs=BATCH))
    port = [unpadded(spec, worker.request(ops.VectorReset(seed=s))["obs"]) for s in seeds]
    if not np.array_equal(port[0], port[1], equal_nan=True):
        return []
    return [
        _divergence(
            f"reset(seed={seeds[0]}) and reset(seed={seeds[1]}) gave the same observations, "
            "where the reference's differ: the port's generator ignores the seed",
            [FieldDiff(field="obs[0]", expected=reference[0][0], actual=port[1][0])],
            seed,
            replay,
        )
    ]


def _late_starts(spec: PortSpec, ref: VectorReference) -> dict[str, np.ndarray]:
    """The reference's reset states, most envs moved near the step limit, so that envs end
    (and autoreset) at different steps within the first stretch."""
    counter = spec.state.step_counter
    limit = ref.refs[0].max_episode_steps
    states = []
    for env in range(BATCH):
        state = ref.read(env)
        if counter and limit and env % 3 != 2:
            state[counter] = np.asarray(limit - 1 - env % STRETCH)
        states.append(state)
    return stack_states(states)


def _first_difference(a: Trace, b: Trace, indices: range) -> tuple[int, list[FieldDiff]] | None:
    for index in indices:
        if index >= len(b.answers):
            return index, [FieldDiff(field="calls", expected=len(a.answers), actual=len(b.answers))]
        diffs = _differences(a.answers[index], b.answers[index], None)
        if diffs:
            return index, diffs
    return None
