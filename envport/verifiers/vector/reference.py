"""The reference as Gymnasium's own `SyncVectorEnv`: the vector semantics a NumPy port owes.

B reference envs, each with the spec's state access, run by Gymnasium's SyncVectorEnv in
next-step autoreset mode: Gymnasium decides which envs reset, when, and what they return,
so the vector check compares the port with the library's behaviour, not a re-statement of
it. A stochastic env's sub-envs record their draws, and each step's become the port's noise
(envport.targets.randomness), as in every other check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from envport.serve import ops
from envport.spec import PortSpec
from envport.targets.reference import Reference, State
from envport.targets.rule_trace import reference_call
from envport.verifiers.reporting.states import stack_states


class VectorReference:
    def __init__(self, spec: PortSpec, count: int) -> None:
        self.refs = [Reference(spec) for _ in range(count)]
        self.vec = SyncVectorEnv(
            [_returning(ref.env) for ref in self.refs],
            autoreset_mode=AutoresetMode.NEXT_STEP,
        )
        if spec.parallel is not None:
            _reward_per_agent(self.vec, len(spec.parallel.agents))
        # Envs whose episode ended at the last step: Gymnasium resets them at the next.
        self.pending = np.zeros(count, dtype=bool)
        self._noise: list[np.ndarray | None] = [None] * count

    def reset(self, seed: int | None, mask: np.ndarray | None = None) -> np.ndarray:
        """Gymnasium's reset: all envs, or (`options={"reset_mask": mask}`) only some."""
        options = None if mask is None else {"reset_mask": np.asarray(mask, dtype=bool)}
        # SyncVectorEnv leaves VectorEnv's type parameters open: its results are typed here.
        obs: np.ndarray
        with reference_call():
            obs, _ = self.vec.reset(seed=seed, options=options)
        chosen = np.ones(len(self.refs), dtype=bool) if mask is None else np.asarray(mask)
        for ref in np.asarray(self.refs)[chosen]:
            ref.track()  # a seeded reset replaces the sub-env's generator: record the new one
        self.pending[chosen] = False
        return _batched(obs)

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        """Gymnasium's step; last, the noise each stepped env drew (None if deterministic)."""
        recording = self.refs[0].recorder is not None
        befores: list[State | None] = []
        for index, ref in enumerate(self.refs):
            befores.append(None if self.pending[index] or not recording else ref.read_state())
            if recording and ref.recorder is not None:
                ref.recorder.begin()
        obs: np.ndarray
        reward: np.ndarray
        terminated: np.ndarray
        truncated: np.ndarray
        with reference_call():
            obs, reward, terminated, truncated, _ = self.vec.step(actions)
        noise = None
        if recording:
            for index, ref in enumerate(self.refs):
                before = befores[index]
                if before is not None and ref.recorder is not None:
                    action = _row(actions, index)
                    self._noise[index] = ref.recorder.noise(before, action, ref.env)
            # An env that resets at this step takes no step: any valid noise will do.
            filler = next((n for n in self._noise if n is not None), None)
            if filler is not None:
                noise = np.stack([filler if n is None else n for n in self._noise])
        for ended in np.flatnonzero(self.pending):
            self.refs[ended].track()
        self.pending = np.asarray(terminated) | np.asarray(truncated)
        return _batched(obs), np.array(reward), np.array(terminated), np.array(truncated), noise

    def read(self, index: int) -> State:
        return self.refs[index].read_state()

    def write(self, index: int, state: State) -> None:
        ref = self.refs[index]
        ref.write_state({**ref.read_state(), **state})


def _reward_per_agent(vec: SyncVectorEnv, agents: int) -> None:
    """Agents moving at once have a reward each: SyncVectorEnv's buffer of one reward per
    env becomes [B, agents]. Its step writes each env's reward as a row and its autoreset
    sets the row to 0, so Gymnasium still decides every reset and what it returns."""
    rewards = getattr(vec, "_rewards", None)
    if not isinstance(rewards, np.ndarray) or rewards.shape != (vec.num_envs,):
        raise RuntimeError(
            "this Gymnasium's SyncVectorEnv keeps its rewards in another form: l2.vector "
            "cannot hold a reward per agent with it (pin gymnasium 1.3)"
        )
    vec._rewards = np.zeros((vec.num_envs, agents), dtype=np.float64)


def _batched(obs: Any) -> np.ndarray:
    """Observations as [B, ...]: a Tuple space's batch is a tuple of [B] arrays (Blackjack)."""
    if isinstance(obs, tuple):
        return np.stack([np.asarray(part) for part in obs], axis=1)
    return np.array(obs)


def _returning(env: gym.Env) -> Callable[[], gym.Env]:
    """The env maker SyncVectorEnv asks for, handing back an env already made."""
    return lambda: env


def _row(actions: np.ndarray, index: int) -> Any:
    action = np.asarray(actions)[index]
    return action.item() if action.ndim == 0 else action


# The seeding checks' batch: not a multiple of any likely chunking, small enough to be cheap.
BATCH = 7


class ReferenceVector:
    """The reference's SyncVectorEnv answering the port worker's vector requests (its
    states read as the port's are), so the check's calls can be played on the reference too."""

    def __init__(self, spec: PortSpec) -> None:
        self.spec = spec
        self.ref = VectorReference(spec, BATCH)

    def request(self, op: Any) -> dict[str, Any]:
        if isinstance(op, ops.VectorOpen):
            self.ref = VectorReference(self.spec, op.num_envs)
            return {"reset_options": True}
        if isinstance(op, ops.VectorReset):
            return {"obs": self.ref.reset(op.seed, op.mask), "state": self._state()}
        if isinstance(op, ops.VectorLoad):
            for env in range(len(self.ref.refs)):
                self.ref.write(env, {k: np.asarray(v)[env] for k, v in op.states.items()})
            return {}
        if isinstance(op, ops.VectorStep):
            obs, reward, terminated, truncated, _ = self.ref.step(op.actions)
            return dict(
                obs=obs,
                reward=reward,
                terminated=terminated,
                truncated=truncated,
                state=self._state(),
            )
        raise TypeError(f"ReferenceVector cannot answer {type(op).__name__}")

    def _state(self) -> dict[str, np.ndarray]:
        return stack_states([self.ref.read(env) for env in range(len(self.ref.refs))])
