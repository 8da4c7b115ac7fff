"""L4's small trainers and the episode loop they share, over any batch of envs.

The same code trains and evaluates on the reference (in the verifier) and on the port (in
its worker, envport.verifiers.levels.l4.port), so a difference in the results is the envs', not the
trainers'. Policies are plain data (arrays in a dict) so they cross the wire:

- tabular: {"kind": "tabular", "q": float[n_obs, n_actions]}, greedy in Q (Discrete obs)
- linear:  {"kind": "linear", "weights": float[obs_dim + 1, n_out], "box": bool, "low",
  "high"}: scores x.W (x with a trailing 1); argmax for Discrete actions, clipped for Box

Trainers: tabular Q-learning (epsilon-greedy, B envs updating one table) for discrete
observations, and the cross-entropy method over linear policies for classic control.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

Policy = dict[str, Any]


class BatchEnv(Protocol):
    """B envs stepped together. `restart(rows)` starts each chosen row's next episode and
    returns its first observation; `step` is the transition before any autoreset (rows
    already ended may be stepped: what they return is ignored)."""

    num_envs: int

    def restart(self, rows: np.ndarray) -> np.ndarray: ...

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class TrainPlan:
    """What to train and how long: chosen once by the verifier, sent to the worker as is."""

    kind: str  # "q_learning" or "cem"
    budget: int  # episodes (q_learning) or iterations (cem)
    max_steps: int
    n_obs: int = 0  # q_learning: observation count
    n_actions: int = 0  # Discrete actions; 0 for Box
    obs_dim: int = 0  # cem: observation size
    action_dim: int = 0  # Box actions: size
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    population: int = 32
    elite: int = 6
    envs: int = 16  # q_learning: envs stepped together
    gamma: float = 0.99
    learning_rate: float = 0.1

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> TrainPlan:
        return cls(**{**data, "low": tuple(data["low"]), "high": tuple(data["high"])})


# ---- acting ----


def _features(obs: np.ndarray) -> np.ndarray:
    flat = np.asarray(obs, dtype=np.float64).reshape(len(obs), -1)
    return np.concatenate([flat, np.ones((len(flat), 1))], axis=1)


def act(policy: Policy, obs: np.ndarray) -> np.ndarray:
    """Greedy actions of one policy for a batch of observations."""
    if policy["kind"] == "tabular":
        return np.argmax(np.asarray(policy["q"])[np.asarray(obs, dtype=np.int64)], axis=1)
    return act_linear(np.asarray(policy["weights"])[None], policy, obs)


def act_linear(weights: np.ndarray, policy: Policy, obs: np.ndarray) -> np.ndarray:
    """Linear policies, one per row (`weights` is (B or 1, obs_dim + 1, n_out))."""
    scores = np.einsum(
        "bi,bio->bo", _features(obs), np.broadcast_to(weights, (len(obs), *weights.shape[1:]))
    )
    if not policy["box"]:
        return np.argmax(scores, axis=1)
    return np.clip(scores, policy["low"], policy["high"]).astype(np.float32)


# ---- episodes ----


def run_episodes(env: BatchEnv, choose: Any, max_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """One episode in every row, from `restart`, until each ends or `max_steps` pass.
    `choose(obs) -> actions` for all rows. Returns each row's return and length."""
    rows = np.arange(env.num_envs)
    obs = env.restart(rows)
    returns = np.zeros(env.num_envs)
    lengths = np.zeros(env.num_envs, dtype=np.int64)
    running = np.ones(env.num_envs, dtype=bool)
    for _ in range(max_steps):
        obs, reward, terminated, truncated = env.step(choose(obs))
        returns += np.where(running, reward, 0.0)
        lengths += running
        running &= ~(np.asarray(terminated) | np.asarray(truncated))
        if not running.any():
            break
    return returns, lengths


def evaluate(env: BatchEnv, policy: Policy, max_steps: int) -> np.ndarray:
    """Returns of the greedy policy, one episode per row (rows start where `restart` says)."""
    returns, _ = run_episodes(env, lambda obs: act(policy, obs), max_steps)
    return returns


# ---- trainers ----


def train(env: BatchEnv, plan: TrainPlan, seed: int) -> Policy:
    if plan.kind == "q_learning":
        return q_learning(env, plan, seed)
    if plan.kind == "cem":
        return cem(env, plan, seed)
    raise ValueError(f"unknown trainer {plan.kind!r}")


def q_learning(env: BatchEnv, plan: TrainPlan, seed: int) -> Policy:
    """Tabular Q-learning, epsilon-greedy with epsilon falling from 1 to 0.05 over the
    budget; ties broken at random so an untrained table still explores."""
    rng = np.random.default_rng(seed)
    q = np.zeros((plan.n_obs, plan.n_actions))
    rows = np.arange(env.num_envs)
    obs = np.asarray(env.restart(rows), dtype=np.int64)
    steps = np.zeros(env.num_envs, dtype=np.int64)
    finished = 0
    while finished < plan.budget:
        epsilon = max(0.05, 1.0 - finished / (0.8 * plan.budget))
        noisy = q[obs] + rng.random((len(obs), plan.n_actions)) * 1e-9
        actions = np.where(
            rng.random(len(obs)) < epsilon,
            rng.integers(plan.n_actions, size=len(obs)),
            np.argmax(noisy, axis=1),
        )
        nxt, reward, terminated, truncated = env.step(actions)
        nxt = np.asarray(nxt, dtype=np.int64)
        terminated = np.asarray(terminated)
        target = np.asarray(reward) + plan.gamma * q[nxt].max(axis=1) * ~terminated
        # Rows in order, so two envs updating the same entry both count.
        for row in rows:
            q[obs[row], actions[row]] += plan.learning_rate * (
                target[row] - q[obs[row], actions[row]]
            )
        steps += 1
        ended = terminated | np.asarray(truncated) | (steps >= plan.max_steps)
        finished += int(ended.sum())
        obs = nxt
        if ended.any():
            restarted = rows[ended]
            obs[restarted] = np.asarray(env.restart(restarted), dtype=np.int64)
            steps[restarted] = 0
    return {"kind": "tabular", "q": q}


def cem(env: BatchEnv, plan: TrainPlan, seed: int) -> Policy:
    """The cross-entropy method over linear policies: each iteration samples a population
    (one per env row), runs one episode each, and refits a diagonal Gaussian to the elite."""
    rng = np.random.default_rng(seed)
    n_out = plan.n_actions or plan.action_dim
    shape = (plan.obs_dim + 1, n_out)
    template = _linear(np.zeros(shape), plan)
    mean = np.zeros(int(np.prod(shape)))
    std = np.ones_like(mean)
    for iteration in range(plan.budget):
        population = mean + std * rng.standard_normal((plan.population, mean.size))
        weights = population.reshape(plan.population, *shape)
        returns, _ = run_episodes(
            env, lambda obs, w=weights: act_linear(w, template, obs), plan.max_steps
        )
        elite = population[np.argsort(returns)[-plan.elite :]]
        # Extra variance that fades: keeps the search from collapsing early.
        mean, std = elite.mean(axis=0), elite.std(axis=0) + max(0.0, 0.5 - 0.05 * iteration)
    return _linear(mean.reshape(shape), plan)


def _linear(weights: np.ndarray, plan: TrainPlan) -> Policy:
    return {
        "kind": "linear",
        "weights": weights,
        "box": plan.n_actions == 0,
        "low": np.asarray(plan.low, dtype=np.float64),
        "high": np.asarray(plan.high, dtype=np.float64),
    }
