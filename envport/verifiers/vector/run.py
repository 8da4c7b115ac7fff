"""One batch size of the vector check (envport.verifiers.vector.check): the calls, driven
on the port's VectorEnv and on Gymnasium's SyncVectorEnv of the reference side by side, and
what each answer must be."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envport.serve import ops
from envport.spec import PortSpec
from envport.structure import canonical
from envport.verifiers.draws.policies import plan_actions
from envport.verifiers.reporting.compare import (
    Steps,
    contract_problems,
    divergent_steps,
    unpadded,
)
from envport.verifiers.reporting.divergence import FieldDiff
from envport.verifiers.reporting.states import field_diffs, stack_states
from envport.verifiers.stats.reset_sample import DrawSupport
from envport.verifiers.vector.reference import VectorReference

# 1, a few, a power of two, primes (no internal chunking divides them), one past 32.
BATCHES = (1, 3, 8, 13, 33)
STEPS = 60
# Late-loaded envs are 1..LATE_SPAN steps from the step limit.
LATE_SPAN = 40
# The first step at which a partial reset may come (when an env is pending an autoreset).
PARTIAL_AT = STEPS // 3
# Envs loaded to end together on the step before PARTIAL_AT (those the batch has).
TOGETHER = (0, 3)
SEED_OFFSET = 6_270_000


class Mismatch(Exception):
    def __init__(self, step: int | None, env: int, message: str, fields: list[FieldDiff]) -> None:
        super().__init__(message)
        self.step, self.env, self.fields = step, env, fields


@dataclass
class Tally:
    env_steps: int = 0
    autoresets: int = 0
    partial: int = 0
    full: int = 0
    endings: dict[str, int] = field(
        default_factory=lambda: {"terminated": 0, "truncated": 0, "both": 0}
    )
    draws_obs: list[np.ndarray] = field(default_factory=list)
    draws_state: list[dict[str, np.ndarray]] = field(default_factory=list)
    # State components whose reset the reference itself keeps from earlier steps (its own
    # reset in the run fell outside what fresh resets give): held to the reference's own
    # reset of the same env, not to the fresh resets' distribution.
    kept: set[str] = field(default_factory=set)


class VectorRun:
    """One batch size, from the first reset to the last step."""

    def __init__(
        self, spec: PortSpec, worker: Any, batch: int, seed: int, support: DrawSupport, tally: Tally
    ) -> None:
        self.spec, self.worker, self.batch = spec, worker, batch
        self.support, self.tally = support, tally
        self.seed = seed * 100_003 + SEED_OFFSET + 1000 * batch
        self.ref = VectorReference(spec, batch)
        space = self.ref.refs[0].action_space
        kinds = ("uniform", "sticky")
        self.actions = np.stack(
            [
                np.asarray(
                    plan_actions(kinds[i % 2], space, seed, SEED_OFFSET + 100 * batch + i, STEPS)
                )
                for i in range(batch)
            ],
            axis=0,
        )
        self.synced = np.ones(batch, dtype=bool)
        self.readable = True
        self.events: list[str] = []
        self.starts: list[dict[str, Any]] = []
        self.last_obs = np.empty(0)

    # ---- the calls ----

    def play(self) -> None:
        opened = self.worker.request(ops.VectorOpen(num_envs=self.batch))
        partial_ok = bool(opened["reset_options"])
        self._full_reset(step=None)
        self._load_starts()
        partial_done = full_done = False
        for t in range(STEPS):
            pending = self.ref.pending.any()
            if partial_ok and not partial_done and t >= PARTIAL_AT and (pending or t >= STEPS // 2):
                self._partial_reset(t)
                partial_done = True
            elif not full_done and t >= 2 * STEPS // 3 and (pending or t >= 5 * STEPS // 6):
                self._full_reset(t)
                full_done = True
            if not self.synced.all() and not self.ref.pending.any():
                self._resync(t)
            self._step(t)

    def _full_reset(self, step: int | None) -> None:
        seed = self.seed + (0 if step is None else 1 + step)
        self.events.append(f"reset(seed={seed})" + ("" if step is None else f" before step {step}"))
        expected = self.ref.reset(seed)
        answer = self.worker.request(ops.VectorReset(seed=seed))
        self.last_obs = np.asarray(answer["obs"])
        self._contract(expected, self.last_obs, step)
        self._adopt_resets(np.arange(self.batch), answer, step, "reset(seed)")
        if step is not None:
            self.tally.full += 1

    def _partial_reset(self, step: int) -> None:
        mask = np.arange(self.batch) % 2 == 0
        pending = np.flatnonzero(self.ref.pending)
        if pending.size:
            mask[pending[0]] = True  # a pending env reset by hand is no longer pending
            if pending.size > 1:
                mask[pending[-1]] = False  # one left pending must still autoreset
        seed = self.seed + 500 + step
        self.events.append(
            f"reset(seed={seed}, reset_mask={mask.astype(int).tolist()}) before step {step}"
        )
        expected = self.ref.reset(seed, mask)
        answer = self.worker.request(ops.VectorReset(seed=seed, mask=mask))
        obs = np.asarray(answer["obs"])
        self._contract(expected, obs, step)
        kept = np.flatnonzero(~mask & self.synced)
        for env in kept:
            # Gymnasium returns, for an env not reset, the observation it last returned (the
            # port's own: an env reset at the last step has the port's reset, not the
            # reference's, which the reference only followed in state).
            # (The padding of agents observing fewer components is not compared.)
            before, after = (unpadded(self.spec, o[env : env + 1])[0] for o in (self.last_obs, obs))
            diffs = _row_diffs(self.spec, before, after, "obs")
            if diffs:
                raise Mismatch(
                    step, int(env), "a partial reset changed an env outside its mask", diffs
                )
            self._compare_state(answer, int(env), step, "after a partial reset that left it out")
        self._adopt_resets(np.flatnonzero(mask), answer, step, "a partial reset (reset_mask)")
        self.last_obs = obs
        self.tally.partial += 1

    def _load_starts(self) -> None:
        """Most envs moved near the step limit. Envs 0 and 3 are put to end on the step
        before the partial reset, all on the same step, so that several envs are
        pending an autoreset when it comes, one inside its mask and one outside (an edge an
        env whose episodes end at staggered steps would never produce by chance); the others
        end at staggered steps."""
        counter = self.spec.state.step_counter
        limit = self.ref.refs[0].max_episode_steps
        late = []
        for env in range(self.batch):
            state = self.ref.read(env)
            if counter and limit and env % 3 != 2:
                steps_left = (
                    PARTIAL_AT if env in TOGETHER else 1 + (7 * env + 3 * self.batch) % LATE_SPAN
                )
                state[counter] = np.asarray(limit - steps_left)
                late.append(env)
            self.ref.write(env, state)
            self.starts.append({k: np.asarray(v).tolist() for k, v in self.ref.read(env).items()})
        self.events.append(f"state load (envs {late} near the step limit)")
        answer = self.worker.request(
            ops.VectorLoad(states=stack_states([self.ref.read(i) for i in range(self.batch)]))
        )
        self.readable = answer["state"] is not None
        self.synced[:] = True
        for env in range(self.batch):
            self._compare_state(answer, env, None, "state load, then state read", free=False)

    def _resync(self, step: int) -> None:
        """No state_to_reference: the port is brought back to the reference by a load."""
        self.events.append(f"state load before step {step} (resynchronise)")
        states = stack_states([self.ref.read(i) for i in range(self.batch)])
        self.worker.request(ops.VectorLoad(states=states))
        self.synced[:] = True

    def _step(self, t: int) -> None:
        actions = self.actions[:, t]
        resetting = self.ref.pending.copy()
        # A deterministic reference hands the port no noise: the port steps while the
        # reference does (a late answer after a Mismatch below is dropped by the next call).
        ahead = self.ref.refs[0].recorder is None
        if ahead:
            self.worker.send(ops.VectorStep(actions=actions, noise=None))
        try:
            obs, reward, terminated, truncated, noise = self.ref.step(actions)
        except Exception as error:  # the reference is trusted, the states it follows are not
            # The reference follows the port's resets: a state no reference reset gives that
            # slipped past the support check (a code within the sample's range, say) can
            # make the reference itself fail. That is the port's divergence, not a crash.
            message = (
                "the reference cannot step from the states the port's resets gave it "
                f"({type(error).__name__}: {error}): the port reset to a state the reference "
                "never reaches"
            )
            raise Mismatch(t, 0, message, []) from None
        if ahead:
            answer = self.worker.receive()
        else:
            answer = self.worker.request(ops.VectorStep(actions=actions, noise=noise))
        got = Steps.of(answer)
        self._contract(obs, got.obs, t, Steps(obs, reward, terminated, truncated), got)
        self.last_obs = got.obs
        for env in np.flatnonzero(resetting):
            self._autoreset(t, int(env), answer, got)
        rows = np.flatnonzero(~resetting & self.synced)
        if rows.size:
            expected = Steps(obs[rows], reward[rows], terminated[rows], truncated[rows])
            actual = Steps(*(part[rows] for part in got.parts()))
            found = divergent_steps(self.spec, expected, actual, True, np.arange(rows.size))
            if found:
                where, diffs = found[0]
                message = "the step differs from Gymnasium's SyncVectorEnv of the reference"
                raise Mismatch(t, int(rows[where]), message, diffs)
            self._compare_states(answer, rows, t, "step, then state read")
        self.tally.env_steps += int(rows.size)
        self.tally.endings["terminated"] += int((terminated & ~truncated).sum())
        self.tally.endings["truncated"] += int((truncated & ~terminated).sum())
        self.tally.endings["both"] += int((terminated & truncated).sum())

    # ---- the judgements ----

    def _autoreset(self, t: int, env: int, answer: dict, got: Steps) -> None:
        flags = (
            ("reward", got.reward[env], 0.0),
            ("terminated", got.terminated[env], False),
            ("truncated", got.truncated[env], False),
        )
        wrong = [
            FieldDiff(field=n, expected=w, actual=np.asarray(v).tolist())
            for n, v, w in flags
            if np.any(np.asarray(v) != w)  # a game's reward: every player's
        ]
        if wrong:
            message = (
                "the episode ended at the last step, so next-step autoreset resets this env now "
                "(reward 0, not terminated, not truncated); the port did not"
            )
            raise Mismatch(t, env, message, wrong)
        self._adopt_resets(np.asarray([env]), answer, t, "the autoreset")
        self.tally.autoresets += 1

    def _adopt_resets(self, envs: np.ndarray, answer: dict, step: int | None, what: str) -> None:
        """Hold each env's fresh reset to the reference's support, keep it as a draw, and make
        the reference follow it (or mark the env unsynchronised when the state is unreadable)."""
        obs = np.asarray(answer["obs"])
        states = answer.get("state")
        for env in envs:
            row = None if states is None else {k: np.asarray(v)[env] for k, v in states.items()}
            # The reference has made the same reset of this env; when it holds the port's
            # history, what its reset kept is the port's to keep too.
            own = self.ref.read(int(env)) if self.synced[env] else None
            outside = self.support.outside(obs[env], row, own)
            if outside:
                raise Mismatch(
                    step, int(env), f"{what} gave a state no reference reset gives", outside
                )
            if own is not None:
                self.tally.kept |= {d.field for d in self.support.outside(obs[env], own)}
            self.tally.draws_obs.append(obs[env])
            if row is not None:
                # Items past a list's length are not state (docs/structured-state.md).
                self.tally.draws_state.append(canonical(self.spec.state, row))
                self.ref.write(int(env), row)
            else:
                self.synced[env] = False

    def _compare_state(
        self, answer: dict, env: int, step: int | None, what: str, free: bool = True
    ) -> None:
        self._compare_states(answer, np.asarray([env]), step, what, free)

    def _compare_states(
        self, answer: dict, envs: np.ndarray, step: int | None, what: str, free: bool = True
    ) -> None:
        """The port's state read of these envs against the reference's, all envs at once;
        the first differing env is then described field by field."""
        states = answer.get("state")
        if states is None or envs.size == 0:
            return
        suspect = _differing_rows(
            self.spec, stack_states([self.ref.read(int(e)) for e in envs]), states, envs, free
        )
        for env in envs[suspect]:
            env = int(env)
            row = {k: np.asarray(v)[env] for k, v in states.items()}
            diffs = field_diffs(self.spec, self.ref.read(env), row, label="state.")
            if free:
                diffs = [d for d in diffs if not _within_free(self.spec, d)]
            if diffs:
                raise Mismatch(step, env, f"{what}: port state differs", diffs)

    def _contract(
        self,
        expected_obs: np.ndarray,
        obs: np.ndarray,
        step: int | None,
        expected: Steps | None = None,
        got: Steps | None = None,
    ) -> None:
        problems = contract_problems(expected_obs, obs)
        if len(obs) != self.batch:
            problems.append(FieldDiff(field="obs.batch", expected=self.batch, actual=len(obs)))
        if expected is not None and got is not None:
            for name in ("reward", "terminated", "truncated"):
                part, want = getattr(got, name), getattr(expected, name)
                # One row per env (and a game's reward one column per player).
                shape = (self.batch, *np.shape(want)[1:])
                if part.shape != shape:
                    problems.append(
                        FieldDiff(
                            field=f"{name}.shape", expected=list(shape), actual=list(part.shape)
                        )
                    )
        if problems:
            raise Mismatch(step, 0, "the VectorEnv's outputs break the contract", problems)


def _differing_rows(
    spec: PortSpec, want: dict[str, np.ndarray], states: dict, envs: np.ndarray, free: bool
) -> np.ndarray:
    """Which rows may differ: a vectorised first pass at each field's tolerance (every row
    when a field is missing, misshapen, or has tolerances per component)."""
    suspect = np.zeros(len(envs), dtype=bool)
    for key, expected in want.items():
        got = np.asarray(states[key])[envs] if key in states else None
        per_component = any(name.startswith(f"{key}[") for name in spec.tolerance)
        if (
            got is None
            or got.shape != expected.shape
            or got.dtype.kind not in "biuf"
            or per_component
        ):
            return np.ones(len(envs), dtype=bool)
        if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
            same = expected == got
        else:
            atol, rtol = spec.tolerance_for(key).bounds(free_running=free)
            same = np.isclose(
                got.astype(np.float64),
                expected.astype(np.float64),
                atol=atol,
                rtol=rtol,
                equal_nan=True,
            )
        suspect |= ~same.reshape(len(envs), -1).all(axis=1)
    return suspect


def _row_diffs(spec: PortSpec, want: np.ndarray, got: np.ndarray, label: str) -> list[FieldDiff]:
    diffs = field_diffs(spec, {label: np.asarray(want)}, {label: np.asarray(got)})
    return [d for d in diffs if not _within_free(spec, d)]


def _within_free(spec: PortSpec, diff: FieldDiff) -> bool:
    if diff.difference is None:
        return False
    name = diff.field.removeprefix("state.")
    atol, rtol = spec.tolerance_for(name).bounds(free_running=True)
    return diff.difference <= atol + rtol * abs(float(diff.expected))
