"""MPE's world step for B worlds of N agents and N landmarks (mpe2's `mpe2._mpe_utils.core`).

Every operation is the reference's float64 arithmetic in the reference's order, so positions
and velocities match it bit for bit: forces accumulate pair by pair in the order of
`World.apply_environment_force`, and `integrate_state` moves first, then damps, then adds the
force.
"""

import numpy as np

DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
ACCEL = 5.0  # SimpleEnv._set_action's sensitivity when an agent's accel is None
MASS = 1.0
AGENT_SIZE = 0.15


def action_force(actions):
    """int[B, N] Discrete actions (0 no-op, 1 -x, 2 +x, 3 -y, 4 +y) -> u float64[B, N, 2]."""
    u = np.zeros((*actions.shape, 2))
    u[..., 0] = np.where(actions == 1, -1.0, np.where(actions == 2, 1.0, 0.0))
    u[..., 1] = np.where(actions == 3, -1.0, np.where(actions == 4, 1.0, 0.0))
    return u * ACCEL


def contact_forces(force, pos):
    """Add the soft contact forces between every pair of agents (landmarks do not collide)
    to `force` float64[B, N, 2], pair by pair as the reference does."""
    count = pos.shape[1]
    for a in range(count):
        for b in range(a + 1, count):
            delta = pos[:, a] - pos[:, b]
            dist = np.sqrt(np.sum(np.square(delta), axis=-1))
            dist_min = AGENT_SIZE + AGENT_SIZE
            k = CONTACT_MARGIN
            penetration = np.logaddexp(0, -(dist - dist_min) / k) * k
            pushed = CONTACT_FORCE * delta / dist[:, None] * penetration[:, None]
            force[:, a] = pushed + force[:, a]
            force[:, b] = -pushed + force[:, b]
    return force


def integrate(pos, vel, force):
    """One `integrate_state`: p_pos += p_vel * dt, then damping, then the force (no max
    speed in simple_spread). Returns new arrays."""
    pos = pos + vel * DT
    vel = vel * (1 - DAMPING)
    vel = vel + (force / MASS) * DT
    return pos, vel


def world_step(pos, vel, actions):
    force = contact_forces(action_force(actions), pos)
    return integrate(pos, vel, force)
