"""L4 on the port's side: the harness's trainer and evaluator, run in the port's worker.

Imported by the worker only (it drives port code). Every episode starts from a reference
state the verifier sends (state injection, docs/design.md, contract 2), so the port's own reset
distribution never enters the comparison; from there the port's own step and, for a
stochastic env, its own noise sampler decide everything.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.targets.loader import ContractError
from envport.targets.registry import TargetName
from envport.verifiers.draws.trainers import TrainPlan, evaluate, train


class _Pool:
    """Start states handed out in order, cycling: episode i starts from entry i mod N."""

    def __init__(self, starts: dict[str, np.ndarray], start_obs: np.ndarray) -> None:
        self.starts = starts
        self.obs = np.asarray(start_obs)
        self.size = len(self.obs)
        self.next = 0

    def take(self, count: int) -> np.ndarray:
        index = (self.next + np.arange(count)) % self.size
        self.next += count
        return index


class NumpyBatch:
    def __init__(self, port: Any, num_envs: int, pool: _Pool, seed: int) -> None:
        self.num_envs = num_envs
        self.pool = pool
        entry = port.entry
        per_env = [
            entry.state_from_reference({k: v[i] for k, v in pool.starts.items()})
            for i in range(pool.size)
        ]
        self.pool_states = {k: np.stack([s[k] for s in per_env]) for k in per_env[0]}
        self.env = entry.VectorEnv(num_envs=num_envs)
        self.env.reset(seed=seed)  # seeds the port's own noise sampler

    def restart(self, rows: np.ndarray) -> np.ndarray:
        index = self.pool.take(len(rows))
        state = {k: np.array(v) for k, v in self.env.get_state().items()}
        for name, values in self.pool_states.items():
            state[name][rows] = values[index]
        self.env.set_state(state)
        return self.pool.obs[index]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        obs, reward, terminated, truncated, _ = self.env.step(actions)
        return np.array(obs), np.array(reward), np.array(terminated), np.array(truncated)


class JaxBatch:
    def __init__(self, port: Any, num_envs: int, pool: _Pool, seed: int) -> None:
        jax = port.jax
        self.jax = jax
        self.num_envs = num_envs
        self.pool = pool
        entry, params = port.entry, port.params
        self.pool_states = jax.jit(jax.vmap(entry.state_from_reference))(pool.starts)
        first = np.zeros(num_envs, dtype=np.int64)
        self.state = jax.tree_util.tree_map(lambda p: p[first], self.pool_states)
        self.key = jax.random.PRNGKey(seed)

        def load(state: Any, source: Any, mask: Any) -> Any:
            def pick(old: Any, pool_values: Any) -> Any:
                new = pool_values[source]
                where = mask.reshape(mask.shape + (1,) * (old.ndim - 1))
                return jax.numpy.where(where, new, old)

            return jax.tree_util.tree_map(pick, state, self.pool_states)

        def step(state: Any, actions: Any, key: Any) -> Any:
            keys = jax.random.split(key, num_envs)
            obs, nxt, reward, terminated, truncated, _ = jax.vmap(
                lambda s, a, k: entry.step(k, s, a, params)
            )(state, actions, keys)
            return nxt, (obs, reward, terminated, truncated)

        self._load = jax.jit(load)
        self._step = jax.jit(step)

    def restart(self, rows: np.ndarray) -> np.ndarray:
        index = self.pool.take(len(rows))
        source = np.zeros(self.num_envs, dtype=np.int64)
        source[rows] = index
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[rows] = True
        self.state = self._load(self.state, source, mask)
        return self.pool.obs[index]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        self.key, key = self.jax.random.split(self.key)
        self.state, (obs, reward, terminated, truncated) = self._step(
            self.state, np.asarray(actions), key
        )
        return np.asarray(obs), np.asarray(reward), np.asarray(terminated), np.asarray(truncated)


def _batch(port: Any, num_envs: int, pool: _Pool, seed: int) -> NumpyBatch | JaxBatch:
    if port.backend == TargetName.NUMPY:
        return NumpyBatch(port, num_envs, pool, seed)
    if port.backend == TargetName.JAX:
        return JaxBatch(port, num_envs, pool, seed)
    raise ContractError(f"L4 trains on NumPy and JAX ports, not `{port.backend}`")


def l4_train(
    port: Any, plan: dict[str, Any], seed: int, starts: dict, start_obs: np.ndarray
) -> dict[str, Any]:
    """Train one policy on the port from the given start states."""
    chosen = TrainPlan.from_wire(plan)
    envs = chosen.population if chosen.kind == "cem" else chosen.envs
    env = _batch(port, envs, _Pool(starts, start_obs), seed)
    return {"policy": train(env, chosen, seed)}


def l4_evaluate(
    port: Any,
    policies: list[dict[str, Any]],
    starts: dict,
    start_obs: np.ndarray,
    max_steps: int,
    seed: int,
) -> dict[str, Any]:
    """Each policy's returns on the port, one episode per start state (its row)."""
    returns = []
    for index, policy in enumerate(policies):
        pool = _Pool(starts, start_obs)
        env = _batch(port, pool.size, pool, seed * 7_919 + index)
        returns.append(evaluate(env, policy, max_steps))
    return {"returns": np.stack(returns)}
