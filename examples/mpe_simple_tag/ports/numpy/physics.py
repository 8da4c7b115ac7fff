"""MPE's world step for B worlds of simple_tag: 3 adversaries and a runner (4 agents) and 2
obstacles (mpe2's `mpe2._mpe_utils.core`).

Every operation is the reference's float64 arithmetic in the reference's order, so positions
and velocities match it bit for bit: forces accumulate pair by pair over the entities
(agents, then obstacles) in the order of `World.apply_environment_force`, and
`integrate_state` moves first, then damps, then adds the force, then caps the speed.
"""

import numpy as np

DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
MASS = 1.0
ADVERSARIES = 3
AGENTS = 4  # the adversaries, then the runner (agent_0)
OBSTACLES = 2
# Scenario.make_world's per-agent constants, adversaries first: the runner is smaller,
# pushes harder and runs faster.
AGENT_SIZE = np.array([0.075, 0.075, 0.075, 0.05])
ACCEL = np.array([3.0, 3.0, 3.0, 4.0])
MAX_SPEED = np.array([1.0, 1.0, 1.0, 1.3])
OBSTACLE_SIZE = 0.2


def action_force(actions):
    """int[B, 4] Discrete actions (0 no-op, 1 -x, 2 +x, 3 -y, 4 +y) -> u float64[B, 4, 2],
    each agent's unit push times its accel (SimpleEnv._set_action)."""
    u = np.zeros((*actions.shape, 2))
    u[..., 0] = np.where(actions == 1, -1.0, np.where(actions == 2, 1.0, 0.0))
    u[..., 1] = np.where(actions == 3, -1.0, np.where(actions == 4, 1.0, 0.0))
    return u * ACCEL[:, None]


def _push(pos_a, pos_b, dist_min):
    """World.get_collision_force's soft contact on entity a from entity b (b gets minus it)."""
    delta = pos_a - pos_b
    dist = np.sqrt(np.sum(np.square(delta), axis=-1))
    k = CONTACT_MARGIN
    penetration = np.logaddexp(0, -(dist - dist_min) / k) * k
    return CONTACT_FORCE * delta / dist[:, None] * penetration[:, None]


def contact_forces(force, pos, obstacles):
    """Add the soft contacts to the agents' `force` float64[B, 4, 2]: every pair of agents,
    then each agent against each obstacle (an obstacle does not move, so only the agent is
    pushed; two obstacles push nothing), in the reference's pair order."""
    for a in range(AGENTS):
        for b in range(a + 1, AGENTS):
            pushed = _push(pos[:, a], pos[:, b], AGENT_SIZE[a] + AGENT_SIZE[b])
            force[:, a] = pushed + force[:, a]
            force[:, b] = -pushed + force[:, b]
        for j in range(OBSTACLES):
            pushed = _push(pos[:, a], obstacles[:, j], AGENT_SIZE[a] + OBSTACLE_SIZE)
            force[:, a] = pushed + force[:, a]
    return force


def integrate(pos, vel, force):
    """One `integrate_state`: p_pos += p_vel * dt, damping, the force, then a speed above the
    agent's max_speed scaled down to it. Returns new arrays."""
    pos = pos + vel * DT
    vel = vel * (1 - DAMPING)
    vel = vel + (force / MASS) * DT
    speed = np.sqrt(np.square(vel[..., 0]) + np.square(vel[..., 1]))
    over = speed > MAX_SPEED
    capped = vel / speed[..., None] * MAX_SPEED[:, None]
    vel = np.where(over[..., None], capped, vel)
    return pos, vel


def world_step(pos, vel, obstacles, actions):
    with np.errstate(divide="ignore", invalid="ignore"):  # a still agent's capped speed 0/0
        force = contact_forces(action_force(actions), pos, obstacles)
        return integrate(pos, vel, force)
