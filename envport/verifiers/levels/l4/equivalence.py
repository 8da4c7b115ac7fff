"""L4 transfer: do policies fare the same on the port as on the reference?

For each of K seeds a policy is trained on the port (in its worker) and one on the
reference, with the same small trainer (tabular Q-learning for discrete observations, the
cross-entropy method over linear policies otherwise; envport.verifiers.draws.trainers). Every one
of the 2K policies is then evaluated on both envs, each env scoring with its own reward,
over the same evaluation start states (the reference's `reset(seed)` states, injected into
the port). The pairs (mean return on the port, on the reference) go to a paired TOST with the
spec's margin: only a difference shown to lie within +-margin passes. Policies trained on the
port are in the sample on purpose: one that exploits a port-only bug scores high on the port
and low on the reference. A reward-scaling bug shows up too, since each env scores itself.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
from gymnasium import spaces

from envport.errors import EnvportError
from envport.serve.ops import L4Evaluate, L4Train, Requester
from envport.spec import L4Spec, PortSpec
from envport.targets.reference import Reference
from envport.verifiers.draws.trainers import TrainPlan, evaluate, train
from envport.verifiers.levels.l4.reference import ReferenceBatch
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.states import stack_states
from envport.verifiers.stats.tost import TostResult, paired_tost

DEFAULT_EPISODES = 2000  # q_learning training episodes
DEFAULT_ITERATIONS = 10  # cem iterations
DEFAULT_MAX_STEPS = 1000
# Start states sent to the worker per training run; the port's episodes cycle through them.
START_POOL = 512
# Keep L4's reset seeds apart from those of L1-L3 and the sampler check, and from each other:
# training run (seed, k) owns a block of a million, evaluation its own range.
TRAIN_SEED_BASE = 5_000_011
EVAL_SEED_BASE = 3_000_000_000


def training_plan(config: L4Spec, reference: Reference) -> TrainPlan:
    obs_space, action_space = reference.observation_space, reference.action_space
    kind = config.trainer
    if kind == "auto":
        kind = "q_learning" if isinstance(obs_space, spaces.Discrete) else "cem"
    max_steps = config.max_steps or reference.max_episode_steps or DEFAULT_MAX_STEPS
    if kind == "q_learning":
        if not (
            isinstance(obs_space, spaces.Discrete) and isinstance(action_space, spaces.Discrete)
        ):
            raise EnvportError(
                "key `levels.l4.trainer`: q_learning needs Discrete observations and actions; "
                'use trainer = "cem"'
            )
        return TrainPlan(
            kind=kind,
            budget=config.budget or DEFAULT_EPISODES,
            max_steps=max_steps,
            n_obs=int(obs_space.n),
            n_actions=int(action_space.n),
        )
    if not isinstance(obs_space, spaces.Box):
        raise EnvportError("key `levels.l4.trainer`: cem needs a Box observation space")
    box = isinstance(action_space, spaces.Box)
    return TrainPlan(
        kind="cem",
        budget=config.budget or DEFAULT_ITERATIONS,
        max_steps=max_steps,
        obs_dim=int(np.prod(obs_space.shape)),
        n_actions=0 if box else int(action_space.n),
        action_dim=int(np.prod(action_space.shape)) if box else 0,
        low=tuple(np.asarray(action_space.low, float).reshape(-1)) if box else (),
        high=tuple(np.asarray(action_space.high, float).reshape(-1)) if box else (),
    )


def _starts(reference: Reference, seeds: list[int]) -> tuple[dict, np.ndarray]:
    """The reference's reset states and first observations for these seeds."""
    states, observations = [], []
    for seed in seeds:
        observations.append(reference.reset(seed))
        states.append(reference.read_state())
    return stack_states(states), np.stack(observations)


def _train_seeds(seed: int, k: int) -> itertools.count:
    return itertools.count(TRAIN_SEED_BASE + (seed * 1_000 + k) * 1_000_003)


def run_l4(
    spec: PortSpec, reference: Reference, worker: Requester, seed: int, replay: str
) -> LevelResult:
    started = time.perf_counter()
    config = spec.levels.l4
    if config.margin is None:
        raise EnvportError(
            "--levels l4 needs `[levels.l4] margin` in the spec: the largest difference in "
            "mean return that still counts as equivalent"
        )
    plan = training_plan(config, reference)
    envs = plan.population if plan.kind == "cem" else plan.envs
    policies, origins = [], []
    for k in range(config.seeds):
        train_seed = seed * 1_000 + k
        pool_seeds = list(itertools.islice(_train_seeds(seed, k), START_POOL))
        starts, start_obs = _starts(reference, pool_seeds)
        answer = worker.request(
            L4Train(plan=plan.to_wire(), seed=train_seed, starts=starts, start_obs=start_obs)
        )
        policies.append(answer["policy"])
        origins.append("port")
        # The pool's seeds first (the port's start states, so a deterministic port and its
        # reference train the same policy), then fresh ones where the port cycles its pool:
        # each reference episode keeps its own reset stream.
        ref_seeds = _train_seeds(seed, k)
        policies.append(train(ReferenceBatch(spec, envs, ref_seeds), plan, train_seed))
        origins.append("reference")
    eval_seeds = [EVAL_SEED_BASE + seed * 100_003 + j for j in range(config.episodes)]
    starts, start_obs = _starts(reference, eval_seeds)
    port_returns = np.asarray(
        worker.request(
            L4Evaluate(
                policies=policies,
                starts=starts,
                start_obs=start_obs,
                max_steps=plan.max_steps,
                seed=seed,
            )
        )["returns"]
    )
    batch = ReferenceBatch(spec, len(eval_seeds), iter(()))
    per_policy = []
    for policy in policies:
        batch.seeds = iter(eval_seeds)  # every policy from the same start states
        per_policy.append(evaluate(batch, policy, plan.max_steps))
    ref_returns = np.stack(per_policy)
    result = paired_tost(
        port_returns.mean(axis=1), ref_returns.mean(axis=1), config.margin, config.alpha
    )
    level = LevelResult(level="l4", mode="transfer", passed=result.equivalent)
    level.episodes = len(policies)
    level.steps_compared = int(port_returns.size + ref_returns.size)
    level.note = _sentence(result, plan, config)
    level.statistics = {
        **result.to_dict(),
        "trainer": plan.kind,
        "budget": plan.budget,
        "seeds": config.seeds,
        "evaluation_episodes": config.episodes,
        "policies": [
            {
                "trained_on": origin,
                "seed": i // 2,
                "port_return": float(p),
                "reference_return": float(r),
            }
            for i, (origin, p, r) in enumerate(
                zip(origins, port_returns.mean(axis=1), ref_returns.mean(axis=1), strict=True)
            )
        ],
    }
    if not result.equivalent:
        level.diverged_episodes = 1
        level.divergences.append(
            Divergence(level="l4", mode="transfer", seed=seed, message=level.note, replay=replay)
        )
    level.seconds = {"total": time.perf_counter() - started}
    return level


def _sentence(result: TostResult, plan: TrainPlan, config: L4Spec) -> str:
    verdict = {
        "equivalent": "equivalent",
        "different": "NOT equivalent: the difference lies outside the margin",
        "not shown equivalent": "NOT shown equivalent (inconclusive: the interval crosses the "
        "margin; more seeds or evaluation episodes would narrow it)",
    }[result.verdict]
    return (
        f"{verdict}: {result.pairs} policies ({plan.kind}, {config.seeds} seeds, each trained on "
        f"port and reference), mean return on port - reference {result.mean_difference:+.4g}, "
        f"{result.ci_level:.0%} CI [{result.ci_low:+.4g}, {result.ci_high:+.4g}] against "
        f"margin +-{result.margin:g}, paired TOST p = {result.p_value:.3g} (alpha "
        f"{result.alpha:g}); power {result.power_equivalence:.2f} to show equivalence at a true "
        f"difference of 0, {result.power_detect_margin:.2f} to detect a difference of the margin"
    )
