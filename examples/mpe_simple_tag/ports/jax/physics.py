"""MPE's world step for one world of simple_tag, 3 adversaries and a runner (4 agents) and
2 obstacles (mpe2's `mpe2._mpe_utils.core`), in float32.

The reference adds contact forces pair by pair over its entities (agents, then obstacles;
`World.apply_environment_force`, b > a: +force to a, -force to b, an obstacle never moved).
The force on a from b is minus the force on b from a, so agent i's total is the sum over
every other entity j of the force j puts on it: computed here on the whole agents-by-entities
table at once, equal to the reference's up to float rounding.
"""

import jax.numpy as jnp

DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
MASS = 1.0
AGENTS = 4  # the adversaries, then the runner (agent_0)
# Scenario.make_world's per-agent constants, adversaries first, then the obstacles' size.
AGENT_SIZE = jnp.array([0.075, 0.075, 0.075, 0.05], jnp.float32)
ACCEL = jnp.array([3.0, 3.0, 3.0, 4.0], jnp.float32)
MAX_SPEED = jnp.array([1.0, 1.0, 1.0, 1.3], jnp.float32)
OBSTACLE_SIZE = 0.2


def action_force(actions):
    """int[4] Discrete actions (0 no-op, 1 -x, 2 +x, 3 -y, 4 +y) -> u float32[4, 2], each
    agent's unit push times its accel (SimpleEnv._set_action)."""
    ux = jnp.where(actions == 1, -1.0, jnp.where(actions == 2, 1.0, 0.0))
    uy = jnp.where(actions == 3, -1.0, jnp.where(actions == 4, 1.0, 0.0))
    return jnp.stack([ux, uy], axis=-1).astype(jnp.float32) * ACCEL[:, None]


def contact_forces(force, pos, obstacles):
    """`force` float32[4, 2] plus the soft contact force every other agent and every
    obstacle puts on each agent."""
    entities = jnp.concatenate([pos, obstacles])
    sizes = jnp.concatenate([AGENT_SIZE, jnp.full(obstacles.shape[0], OBSTACLE_SIZE)])
    delta = pos[:, None, :] - entities[None, :, :]
    dist = jnp.sqrt(jnp.sum(jnp.square(delta), axis=-1))
    dist_min = AGENT_SIZE[:, None] + sizes[None, :]
    k = CONTACT_MARGIN
    penetration = jnp.logaddexp(0.0, -(dist - dist_min) / k) * k
    # An agent's distance to itself is 0: divide by 1 there and drop the term (the
    # reference never pairs an entity with itself). Two distinct entities on one point stay
    # 0/0, NaN, as in the reference (a state the spec does not draw).
    self_pair = jnp.eye(AGENTS, entities.shape[0], dtype=bool)
    safe = jnp.where(self_pair, 1.0, dist)
    pushed = CONTACT_FORCE * delta / safe[..., None] * penetration[..., None]
    pushed = jnp.where(self_pair[..., None], 0.0, pushed)
    return force + jnp.sum(pushed, axis=1)


def integrate(pos, vel, force):
    """One `integrate_state`: p_pos += p_vel * dt with the old velocity, damping, the force,
    then a speed above the agent's max_speed scaled down to it."""
    pos = pos + vel * DT
    vel = vel * (1 - DAMPING)
    vel = vel + (force / MASS) * DT
    speed = jnp.sqrt(jnp.square(vel[:, 0]) + jnp.square(vel[:, 1]))
    over = speed > MAX_SPEED
    capped = vel / jnp.where(over, speed, 1.0)[:, None] * MAX_SPEED[:, None]
    return pos, jnp.where(over[:, None], capped, vel)


def world_step(pos, vel, obstacles, actions):
    force = contact_forces(action_force(actions), pos, obstacles)
    return integrate(pos, vel, force)
