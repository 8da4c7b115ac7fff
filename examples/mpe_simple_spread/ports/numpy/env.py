"""mpe2's simple_spread_v3 (N=3, discrete actions, max_cycles 25) as a batched NumPy env:
envport's NumPy contract with joint actions, next-step autoreset.

Hand-written known-good port: a test subject for the verifier, not model output.

A step takes `actions[B, N]`, each agent's Discrete action in `possible_agents` order, and
answers obs float32[B, N, 18], reward float64[B, N], terminated[B], truncated[B].
"""

import numpy as np

from .physics import world_step
from .scenario import observations, rewards

AGENTS = 3
LANDMARKS = 3
MAX_CYCLES = 25
DIM_C = 2


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.pos = np.zeros((num_envs, AGENTS, 2))
        self.vel = np.zeros((num_envs, AGENTS, 2))
        self.comm = np.zeros((num_envs, AGENTS, DIM_C))
        self.landmarks = np.zeros((num_envs, LANDMARKS, 2))
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()

    def _reset_where(self, mask) -> None:
        count = int(mask.sum())
        # reset_world's draws: every agent's position, then every landmark's, U(-1, 1).
        drawn = self.rng.uniform(-1, 1, size=(count, AGENTS + LANDMARKS, 2))
        self.pos[mask] = drawn[:, :AGENTS]
        self.landmarks[mask] = drawn[:, AGENTS:]
        self.vel[mask] = 0.0
        self.comm[mask] = 0.0
        self.steps[mask] = 0
        self.needs_reset[mask] = False

    def _obs(self):
        return observations(self.pos, self.vel, self.comm, self.landmarks)

    def reset(self, seed=None, options=None):
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def step(self, actions):
        actions = np.asarray(actions).reshape(self.num_envs, AGENTS)
        done_before = self.needs_reset.copy()
        self.pos, self.vel = world_step(self.pos, self.vel, actions)
        self.comm = np.zeros_like(self.comm)  # silent agents: update_agent_state zeroes c
        reward = rewards(self.pos, self.landmarks)
        self.steps = self.steps + 1
        truncated = self.steps >= MAX_CYCLES
        terminated = np.zeros(self.num_envs, dtype=bool)
        if done_before.any():
            self._reset_where(done_before)
            truncated[done_before] = False
            reward[done_before] = 0.0
        self.needs_reset = terminated | truncated
        return self._obs(), reward, terminated, truncated, {}

    def set_state(self, states) -> None:
        self.pos = np.array(states["pos"], dtype=np.float64)
        self.vel = np.array(states["vel"], dtype=np.float64)
        self.comm = np.array(states["comm"], dtype=np.float64)
        self.landmarks = np.array(states["landmarks"], dtype=np.float64)
        self.steps = np.array(states["steps"], dtype=np.int64)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {
            "pos": self.pos.copy(),
            "vel": self.vel.copy(),
            "comm": self.comm.copy(),
            "landmarks": self.landmarks.copy(),
            "steps": self.steps.copy(),
        }


def _agent(i):
    return f"agent_{i}"


def state_from_reference(ref):
    return {
        "pos": np.stack([np.asarray(ref[f"p_pos.{_agent(i)}"], np.float64) for i in range(AGENTS)]),
        "vel": np.stack([np.asarray(ref[f"p_vel.{_agent(i)}"], np.float64) for i in range(AGENTS)]),
        "comm": np.stack([np.asarray(ref[f"c.{_agent(i)}"], np.float64) for i in range(AGENTS)]),
        "landmarks": np.stack(
            [np.asarray(ref[f"p_pos.landmark_{j}"], np.float64) for j in range(LANDMARKS)]
        ),
        "steps": np.asarray(ref["steps"], np.int64),
    }


def states_from_reference(refs):
    # The same for B envs at once: the entity axis is the second.
    return {
        "pos": np.stack(
            [np.asarray(refs[f"p_pos.{_agent(i)}"], np.float64) for i in range(AGENTS)], 1
        ),
        "vel": np.stack(
            [np.asarray(refs[f"p_vel.{_agent(i)}"], np.float64) for i in range(AGENTS)], 1
        ),
        "comm": np.stack(
            [np.asarray(refs[f"c.{_agent(i)}"], np.float64) for i in range(AGENTS)], 1
        ),
        "landmarks": np.stack(
            [np.asarray(refs[f"p_pos.landmark_{j}"], np.float64) for j in range(LANDMARKS)], 1
        ),
        "steps": np.asarray(refs["steps"], np.int64),
    }


def state_to_reference(state):
    out = {}
    for i in range(AGENTS):
        out[f"p_pos.{_agent(i)}"] = np.asarray(state["pos"][i], np.float64)
        out[f"p_vel.{_agent(i)}"] = np.asarray(state["vel"][i], np.float64)
        out[f"c.{_agent(i)}"] = np.asarray(state["comm"][i], np.float64)
    for j in range(LANDMARKS):
        out[f"p_pos.landmark_{j}"] = np.asarray(state["landmarks"][j], np.float64)
    out["steps"] = np.asarray(state["steps"], np.int64)
    return out
