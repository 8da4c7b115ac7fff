"""mpe2's simple_tag_v3 (1 runner, 3 adversaries, 2 obstacles, discrete actions, max_cycles
25) as a batched NumPy env: envport's NumPy contract with joint actions, next-step autoreset.

Hand-written known-good port: a test subject for the verifier, not model output.

A step takes `actions[B, 4]`, each agent's Discrete action in `possible_agents` order
(adversary_0, adversary_1, adversary_2, agent_0), and answers obs float32[B, 4, 16] (the
runner's 14 components, then padding), reward float64[B, 4], terminated[B], truncated[B].
"""

import numpy as np

from .physics import ADVERSARIES, AGENTS, OBSTACLES, world_step
from .scenario import observations, rewards

MAX_CYCLES = 25
DIM_C = 2
NAMES = [f"adversary_{i}" for i in range(ADVERSARIES)] + ["agent_0"]


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.pos = np.zeros((num_envs, AGENTS, 2))
        self.vel = np.zeros((num_envs, AGENTS, 2))
        self.comm = np.zeros((num_envs, AGENTS, DIM_C))
        self.obstacles = np.zeros((num_envs, OBSTACLES, 2))
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.needs_reset = np.zeros(num_envs, dtype=bool)
        self.rng = np.random.default_rng()

    def _reset_where(self, mask) -> None:
        count = int(mask.sum())
        # reset_world's draws: every agent's position U(-1, 1), then every obstacle's
        # U(-0.9, 0.9).
        self.pos[mask] = self.rng.uniform(-1, 1, size=(count, AGENTS, 2))
        self.obstacles[mask] = self.rng.uniform(-0.9, 0.9, size=(count, OBSTACLES, 2))
        self.vel[mask] = 0.0
        self.comm[mask] = 0.0
        self.steps[mask] = 0
        self.needs_reset[mask] = False

    def _obs(self):
        return observations(self.pos, self.vel, self.obstacles)

    def reset(self, seed=None, options=None):
        mask = None if options is None else options.get("reset_mask")
        if seed is not None or mask is None:
            self.rng = np.random.default_rng(seed)
        self._reset_where(np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask))
        return self._obs(), {}

    def step(self, actions):
        actions = np.asarray(actions).reshape(self.num_envs, AGENTS)
        done_before = self.needs_reset.copy()
        self.pos, self.vel = world_step(self.pos, self.vel, self.obstacles, actions)
        self.comm = np.zeros_like(self.comm)  # silent agents: update_agent_state zeroes c
        reward = rewards(self.pos)
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
        self.obstacles = np.array(states["obstacles"], dtype=np.float64)
        self.steps = np.array(states["steps"], dtype=np.int64)
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)

    def get_state(self):
        return {
            "pos": self.pos.copy(),
            "vel": self.vel.copy(),
            "comm": self.comm.copy(),
            "obstacles": self.obstacles.copy(),
            "steps": self.steps.copy(),
        }


def _entities(ref, kind, names, axis):
    return np.stack([np.asarray(ref[f"{kind}.{name}"], np.float64) for name in names], axis)


def _obstacle_names():
    return [f"landmark_{j}" for j in range(OBSTACLES)]


def state_from_reference(ref):
    return {
        "pos": _entities(ref, "p_pos", NAMES, 0),
        "vel": _entities(ref, "p_vel", NAMES, 0),
        "comm": _entities(ref, "c", NAMES, 0),
        "obstacles": _entities(ref, "p_pos", _obstacle_names(), 0),
        "steps": np.asarray(ref["steps"], np.int64),
    }


def states_from_reference(refs):
    # The same for B envs at once: the entity axis is the second.
    return {
        "pos": _entities(refs, "p_pos", NAMES, 1),
        "vel": _entities(refs, "p_vel", NAMES, 1),
        "comm": _entities(refs, "c", NAMES, 1),
        "obstacles": _entities(refs, "p_pos", _obstacle_names(), 1),
        "steps": np.asarray(refs["steps"], np.int64),
    }


def state_to_reference(state):
    out = {}
    for i, name in enumerate(NAMES):
        out[f"p_pos.{name}"] = np.asarray(state["pos"][i], np.float64)
        out[f"p_vel.{name}"] = np.asarray(state["vel"][i], np.float64)
        out[f"c.{name}"] = np.asarray(state["comm"][i], np.float64)
    for j, name in enumerate(_obstacle_names()):
        out[f"p_pos.{name}"] = np.asarray(state["obstacles"][j], np.float64)
    out["steps"] = np.asarray(state["steps"], np.int64)
    return out
