"""L2 state API check: loading a state keeps none of the caller's arrays, and a state read
hands out copies (the probe itself runs in the worker: envport.targets.state_api).

The states are the reference's, a few steps into episodes from seeded resets, so they are
states the port must accept; the step after loading is one sticky-policy action each.
"""

from __future__ import annotations

import time

import numpy as np

from envport.serve.ops import Requester, StateApi
from envport.targets.reference import Reference
from envport.verifiers.draws.policies import Planner
from envport.verifiers.reporting.divergence import Divergence, LevelResult

ENVS = 3
# Steps into each episode before its state is taken (fewer where the episode ends first).
WARM_UP = 3


def reference_states(reference: Reference, seed: int, planner: Planner) -> dict[str, np.ndarray]:
    states = []
    for index in range(ENVS):
        reference.reset(seed * 1000 + index)
        state = reference.read_state()
        for action in planner.actions("sticky", reference.action_space, index, WARM_UP):
            out = reference.step(action)
            if out.terminated or out.truncated:
                break
            state = reference.read_state()
        states.append(state)
    return {k: np.stack([np.asarray(s[k]) for s in states]) for k in states[0]}


def check_state_api(reference: Reference, worker: Requester, seed: int, replay: str) -> LevelResult:
    started = time.perf_counter()
    planner = Planner(seed)
    states = reference_states(reference, seed, planner)
    space = reference.action_space
    actions = np.stack(
        [np.asarray(next(iter(planner.actions("sticky", space, i, 1)))) for i in range(ENVS)]
    )
    problems = worker.request(StateApi(states=states, actions=actions))["problems"]
    level = LevelResult(level="l2", mode="state_api", passed=not problems, episodes=ENVS)
    level.diverged_episodes = len(problems)
    # One step per env from the loaded state, against the same step from a clean load.
    level.steps_compared = ENVS
    level.divergences = [
        Divergence(level="l2", mode="state_api", seed=seed, message=problem, replay=replay)
        for problem in problems
    ]
    level.note = (
        f"{ENVS} reference states loaded, changed by the caller after loading, stepped: "
        + ("the port keeps none of the caller's arrays" if not problems else problems[0])
    )
    level.seconds = {"total": time.perf_counter() - started}
    return level
