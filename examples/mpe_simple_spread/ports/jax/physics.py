"""MPE's world step for one world of N agents (mpe2's `mpe2._mpe_utils.core`), in float32.

The reference adds contact forces pair by pair (`World.apply_environment_force`, b > a:
+force to a, -force to b). The force on a from b is minus the force on b from a, so agent
i's total is the sum over every other agent j of the force j puts on it: computed here on
the whole N x N table at once (no scatter, which vectorises badly), equal to the
reference's up to float rounding.
"""

import jax.numpy as jnp

DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
ACCEL = 5.0  # SimpleEnv._set_action's sensitivity when an agent's accel is None
MASS = 1.0
AGENT_SIZE = 0.15


def action_force(actions):
    """int[N] Discrete actions (0 no-op, 1 -x, 2 +x, 3 -y, 4 +y) -> u float32[N, 2]."""
    ux = jnp.where(actions == 1, -1.0, jnp.where(actions == 2, 1.0, 0.0))
    uy = jnp.where(actions == 3, -1.0, jnp.where(actions == 4, 1.0, 0.0))
    return jnp.stack([ux, uy], axis=-1).astype(jnp.float32) * ACCEL


def pair_distances(pos):
    """(delta float32[N, N, 2] = pos[i] - pos[j], dist float32[N, N])."""
    delta = pos[:, None, :] - pos[None, :, :]
    return delta, jnp.sqrt(jnp.sum(jnp.square(delta), axis=-1))


def contact_forces(force, pos):
    """`force` float32[N, 2] plus the soft contact force every other agent puts on each
    agent (landmarks do not collide in simple_spread)."""
    count = pos.shape[0]
    delta, dist = pair_distances(pos)
    dist_min = AGENT_SIZE + AGENT_SIZE
    k = CONTACT_MARGIN
    penetration = jnp.logaddexp(0.0, -(dist - dist_min) / k) * k
    # An agent's distance to itself is 0: divide by 1 there and drop the term (the
    # reference never pairs an agent with itself). Two distinct agents on one point stay
    # 0/0, NaN, as in the reference (a state the spec does not draw).
    self_pair = jnp.eye(count, dtype=bool)
    safe = jnp.where(self_pair, 1.0, dist)
    pushed = CONTACT_FORCE * delta / safe[..., None] * penetration[..., None]
    pushed = jnp.where(self_pair[..., None], 0.0, pushed)
    return force + jnp.sum(pushed, axis=1)


def integrate(pos, vel, force):
    """One `integrate_state`: p_pos += p_vel * dt with the old velocity, then damping,
    then the force (no max speed in simple_spread)."""
    pos = pos + vel * DT
    vel = vel * (1 - DAMPING)
    vel = vel + (force / MASS) * DT
    return pos, vel


def world_step(pos, vel, actions):
    force = contact_forces(action_force(actions), pos)
    return integrate(pos, vel, force)
