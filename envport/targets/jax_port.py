"""The JAX backend's contract, driven inside a worker.

Contract (gymnax 1.0 functional API, without autoreset so the harness sees terminal steps):
  reset(key, params) -> (obs, state)
  step(key, state, action, params) -> (obs, state, reward, terminated, truncated, info)
  state_from_reference(ref_state: dict[str, Array]) -> state     (must be jax-traceable)
  default_params() -> params                                      (optional; None if absent)
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import require

CONTRACT = ["reset", "step", "state_from_reference"]


class JaxPort:
    backend = "jax"

    def __init__(self, entry: ModuleType) -> None:
        import jax

        require(entry, CONTRACT, "jax")
        self.jax = jax
        self.entry = entry
        self.params = entry.default_params() if hasattr(entry, "default_params") else None
        self._compiled: dict[str, Any] = {}

    def _episode(self, ref_state: Any, actions: Any, keys: Any) -> Any:
        state = self.entry.state_from_reference(ref_state)

        def body(carry: Any, inputs: Any) -> Any:
            action, key = inputs
            obs, nxt, reward, terminated, truncated, _ = self.entry.step(
                key, carry, action, self.params
            )
            return nxt, (obs, reward, terminated, truncated)

        _, out = self.jax.lax.scan(body, state, (actions, keys))
        return out

    def _single(self, ref_state: Any, action: Any, key: Any) -> Any:
        state = self.entry.state_from_reference(ref_state)
        obs, _, reward, terminated, truncated, _ = self.entry.step(key, state, action, self.params)
        return obs, reward, terminated, truncated

    def _batched(self, fn: Any) -> Any:
        jax = self.jax

        def run(states: Any, actions: Any) -> Any:
            # Deterministic envs ignore the key; stochastic ones get noise passed explicitly.
            keys = jax.random.split(jax.random.PRNGKey(0), actions.size)
            keys = keys.reshape(*actions.shape, *keys.shape[1:])
            return jax.vmap(fn)(states, actions, keys)

        return run

    def _run(self, name: str, fn: Any, states: Any, actions: np.ndarray) -> dict[str, Any]:
        jax = self.jax
        signature = (name, actions.shape, tuple((k, v.shape) for k, v in sorted(states.items())))
        compile_s = 0.0
        if signature not in self._compiled:
            started = time.perf_counter()
            self._compiled[signature] = jax.jit(self._batched(fn)).lower(states, actions).compile()
            compile_s = time.perf_counter() - started
        started = time.perf_counter()
        outputs = jax.block_until_ready(self._compiled[signature](states, actions))
        obs, reward, terminated, truncated = (np.asarray(o) for o in outputs)
        return {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "compile_s": compile_s,
            "run_s": time.perf_counter() - started,
        }

    def rollout(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        return self._run("rollout", self._episode, states, actions)

    def step_batch(
        self, states: dict[str, np.ndarray], actions: np.ndarray, eager: bool = False
    ) -> dict[str, Any]:
        if eager:
            # The same step without jit: L1 checks that compiling does not change answers.
            with self.jax.disable_jit():
                outputs = self._batched(self._single)(states, actions)
            obs, reward, terminated, truncated = (np.asarray(o) for o in outputs)
            return {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated}
        return self._run("step", self._single, states, actions)

    # ---- L2: a live session of B envs, and batch-versus-single ----

    def _session_fns(self) -> Any:
        if not hasattr(self, "_session_jit"):
            jax = self.jax
            key = jax.random.PRNGKey(0)

            def step(states: Any, actions: Any) -> Any:
                keys = jax.random.split(key, actions.shape[0])
                obs, nxt, reward, terminated, truncated, _ = jax.vmap(
                    lambda s, a, k: self.entry.step(k, s, a, self.params)
                )(states, actions, keys)
                return nxt, (obs, reward, terminated, truncated)

            self._session_jit = (
                jax.jit(jax.vmap(self.entry.state_from_reference)),
                jax.jit(step),
                jax.jit(jax.vmap(self.entry.state_to_reference))
                if hasattr(self.entry, "state_to_reference")
                else None,
            )
        return self._session_jit

    def session_load(self, states: dict[str, np.ndarray]) -> dict[str, Any]:
        """Load states into a live session; answers with the state read back (one trip)."""
        self.session = self._session_fns()[0](states)
        return {"state": self.session_read()}

    def session_step(self, actions: np.ndarray) -> dict[str, Any]:
        self.session, outputs = self._session_fns()[1](self.session, actions)
        obs, reward, terminated, truncated = (np.asarray(o) for o in outputs)
        return {
            "obs": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "state": self.session_read(),
        }

    def session_read(self) -> dict[str, Any] | None:
        read = self._session_fns()[2]
        if read is None:
            return None
        return {k: np.asarray(v) for k, v in read(self.session).items()}

    def batch_vs_single(self, states: dict[str, np.ndarray], actions: np.ndarray) -> dict[str, Any]:
        batch = self.rollout(states, actions)
        jax = self.jax
        episode = jax.jit(self._episode)
        keys = jax.random.split(jax.random.PRNGKey(0), actions.size)
        keys = keys.reshape(*actions.shape, *keys.shape[1:])
        singles = [
            episode({k: v[i] for k, v in states.items()}, actions[i], keys[i])
            for i in range(actions.shape[0])
        ]
        single = {
            name: np.stack([np.asarray(s[j]) for s in singles])
            for j, name in enumerate(("obs", "reward", "terminated", "truncated"))
        }
        return {"batch": {k: batch[k] for k in single}, "single": single}
