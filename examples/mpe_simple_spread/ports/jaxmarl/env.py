"""JaxMARL's own simple_spread (`SimpleSpreadMPE`, jaxmarl 0.2.0) as a port in envport's JAX
contract for agents moving at once: a bridge, not a port of our own, so that envport verifies
JaxMARL's hand-written MPE against mpe2 itself.

Everything a step does is JaxMARL's: `reset` is its `reset`, `step` its `step_env` (its step
without the autoreset, which the contract leaves to the caller). The bridge translates
conventions only, never behaviour:
- the joint action int[3] becomes JaxMARL's dict keyed by agent name (`agent_0`..`agent_2`,
  the same names and order as mpe2's `possible_agents`), each a Discrete(5) id in the same
  encoding as mpe2's (0 no-op, 1 -x, 2 +x, 3 -y, 4 +y);
- JaxMARL's observation and reward dicts are stacked in that order;
- JaxMARL has one `done` flag per step and nothing in simple_spread ends an episode but its
  step limit, so its `done` is reported as `truncated` (`terminated` always False);
- envport's state (each entity's arrays) is JaxMARL's `State` (agents then landmarks in one
  `p_pos` and `p_vel`, the landmarks at rest, `c` for agents only, `step` the cycle count).
"""

import jax.numpy as jnp
from jaxmarl.environments.mpe.simple_spread import SimpleSpreadMPE, State

AGENTS = 3
LANDMARKS = 3
# mpe2's defaults (the spec's kwargs): N=3, local_ratio 0.5, max_cycles 25, discrete.
ENV = SimpleSpreadMPE(num_agents=AGENTS, num_landmarks=LANDMARKS, local_ratio=0.5, max_steps=25)


def default_params():
    # The settings live on JaxMARL's env object; the contract's params carry nothing.
    return ()


def _stack(per_agent):
    return jnp.stack([per_agent[name] for name in ENV.agents])


def reset(key, params):
    obs, state = ENV.reset(key)
    return _stack(obs), state


def step(key, state, action, params):
    actions = jnp.asarray(action).reshape(AGENTS)
    joint = {name: actions[i] for i, name in enumerate(ENV.agents)}
    obs, state, reward, dones, _ = ENV.step_env(key, state, joint)
    return _stack(obs), state, _stack(reward), jnp.bool_(False), dones["__all__"], {}


def _pair(ref, name):
    return jnp.asarray(ref[name], dtype=jnp.float32)


def state_from_reference(ref) -> State:
    agents = [f"agent_{i}" for i in range(AGENTS)]
    landmarks = [f"landmark_{j}" for j in range(LANDMARKS)]
    p_pos = jnp.stack([_pair(ref, f"p_pos.{e}") for e in agents + landmarks])
    agent_vel = jnp.stack([_pair(ref, f"p_vel.{a}") for a in agents])
    p_vel = jnp.concatenate([agent_vel, jnp.zeros((LANDMARKS, 2), jnp.float32)])
    return State(
        p_pos=p_pos,
        p_vel=p_vel,
        c=jnp.stack([_pair(ref, f"c.{a}") for a in agents]),
        done=jnp.bool_(False),
        step=jnp.asarray(ref["steps"], dtype=jnp.int32),
    )


def state_to_reference(state: State):
    out = {}
    for i in range(AGENTS):
        out[f"p_pos.agent_{i}"] = state.p_pos[i]
        out[f"p_vel.agent_{i}"] = state.p_vel[i]
        out[f"c.agent_{i}"] = state.c[i]
    for j in range(LANDMARKS):
        out[f"p_pos.landmark_{j}"] = state.p_pos[AGENTS + j]
    out["steps"] = state.step
    return out
