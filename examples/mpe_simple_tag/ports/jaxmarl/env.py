"""JaxMARL's own simple_tag (`SimpleTagMPE`, jaxmarl 0.2.0) as a port in envport's JAX
contract for agents moving at once: a bridge, not a port of our own, so that envport verifies
JaxMARL's hand-written MPE against mpe2 itself.

Everything a step does is JaxMARL's: `reset` is its `reset`, `step` its `step_env` (its step
without the autoreset, which the contract leaves to the caller). The bridge translates
conventions only, never behaviour:
- the joint action int[4] becomes JaxMARL's dict keyed by agent name (`adversary_0`..
  `adversary_2`, then the runner `agent_0`: mpe2's `possible_agents` order, and JaxMARL's),
  each a Discrete(5) id in mpe2's encoding (0 no-op, 1 -x, 2 +x, 3 -y, 4 +y);
- JaxMARL's observation dict is stacked in that order, the runner's 14 components padded
  with zeros to the adversaries' 16 (envport's layout, `[parallel] observation_sizes`);
  its reward dict stacked the same way;
- JaxMARL has one `done` flag per step and nothing in simple_tag ends an episode but its
  step limit, so its `done` is reported as `truncated` (`terminated` always False);
- envport's state (each entity's arrays) is JaxMARL's `State` (agents then obstacles in one
  `p_pos` and `p_vel`, the obstacles at rest, `c` for agents only, `step` the cycle count).
"""

import jax.numpy as jnp
from jaxmarl.environments.mpe.simple_tag import SimpleTagMPE, State

NAMES = ("adversary_0", "adversary_1", "adversary_2", "agent_0")
OBSTACLES = 2
WIDEST = 16
# mpe2's defaults (the spec's kwargs): 1 runner, 3 adversaries, 2 obstacles, 25 cycles.
ENV = SimpleTagMPE(num_good_agents=1, num_adversaries=3, num_obs=OBSTACLES, max_steps=25)


def default_params():
    # The settings live on JaxMARL's env object; the contract's params carry nothing.
    return ()


def _observations(per_agent):
    rows = [per_agent[name] for name in NAMES]
    return jnp.stack([jnp.pad(row, (0, WIDEST - row.shape[0])) for row in rows])


def _rewards(per_agent):
    return jnp.stack([jnp.asarray(per_agent[name], jnp.float32) for name in NAMES])


def reset(key, params):
    obs, state = ENV.reset(key)
    return _observations(obs), state


def step(key, state, action, params):
    actions = jnp.asarray(action).reshape(len(NAMES))
    joint = {name: actions[i] for i, name in enumerate(NAMES)}
    obs, state, reward, dones, _ = ENV.step_env(key, state, joint)
    return _observations(obs), state, _rewards(reward), jnp.bool_(False), dones["__all__"], {}


def _pair(ref, name):
    return jnp.asarray(ref[name], dtype=jnp.float32)


def state_from_reference(ref) -> State:
    obstacles = [f"landmark_{j}" for j in range(OBSTACLES)]
    p_pos = jnp.stack([_pair(ref, f"p_pos.{e}") for e in (*NAMES, *obstacles)])
    agent_vel = jnp.stack([_pair(ref, f"p_vel.{a}") for a in NAMES])
    p_vel = jnp.concatenate([agent_vel, jnp.zeros((OBSTACLES, 2), jnp.float32)])
    return State(
        p_pos=p_pos,
        p_vel=p_vel,
        c=jnp.stack([_pair(ref, f"c.{a}") for a in NAMES]),
        done=jnp.bool_(False),
        step=jnp.asarray(ref["steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    out = {}
    for i, name in enumerate(NAMES):
        out[f"p_pos.{name}"] = state.p_pos[i]
        out[f"p_vel.{name}"] = state.p_vel[i]
        out[f"c.{name}"] = state.c[i]
    for j in range(OBSTACLES):
        out[f"p_pos.landmark_{j}"] = state.p_pos[len(NAMES) + j]
    out["steps"] = state.step
    return out
