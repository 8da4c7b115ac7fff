"""One MiniGrid step (MiniGridEnv.step and the objects' toggle): turning, moving, picking
up, dropping, toggling, and the reward on reaching the goal.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax.numpy as jnp

from .objects import (
    BOX,
    DIR_TO_VEC,
    DOOR,
    GOAL,
    KEY,
    LAVA,
    LOCKED,
    NOTHING,
    OPEN,
    can_overlap,
    can_pickup,
    is_empty,
)

LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, DONE = range(7)


def front_pos(agent_pos, agent_dir):
    return agent_pos + DIR_TO_VEC[agent_dir]


def turn(agent_dir, action):
    left, right = (agent_dir + 3) % 4, (agent_dir + 1) % 4
    return jnp.where(action == LEFT, left, jnp.where(action == RIGHT, right, agent_dir))


def toggled(cell, carrying):
    """The front cell after `toggle`: a locked door opens only for a key of its colour; an
    unlocked door flips open <-> closed; a box is replaced by its (empty) contents."""
    kind, colour, state = cell[0], cell[1], cell[2]
    has_key = (carrying[0] == KEY) & (carrying[1] == colour)
    door_state = jnp.where(
        state == LOCKED, jnp.where(has_key, OPEN, LOCKED), jnp.where(state == OPEN, 1, OPEN)
    )
    door = jnp.array([kind, colour, 0], dtype=cell.dtype).at[2].set(door_state)
    return jnp.where(kind == DOOR, door, jnp.where(kind == BOX, NOTHING.astype(cell.dtype), cell))


def transition(grid, agent_pos, agent_dir, carrying, step_count, action, max_steps):
    """-> (grid, agent_pos, agent_dir, carrying, step_count, reward float32, terminated)."""
    step_count = step_count + 1
    fwd = front_pos(agent_pos, agent_dir)
    cell = grid[fwd[0], fwd[1]]
    kind = cell[0]

    moving = action == FORWARD
    new_pos = jnp.where(moving & can_overlap(cell), fwd, agent_pos)
    reached = moving & (kind == GOAL)
    terminated = reached | (moving & (kind == LAVA))
    reward = jnp.where(reached, 1.0 - 0.9 * (step_count / max_steps), 0.0).astype(jnp.float32)

    carrying_nothing = is_empty(carrying)
    picks = (action == PICKUP) & can_pickup(cell) & carrying_nothing
    drops = (action == DROP) & is_empty(cell) & ~carrying_nothing
    toggles = action == TOGGLE

    new_cell = jnp.where(picks, NOTHING.astype(cell.dtype), cell)
    new_cell = jnp.where(drops, carrying, new_cell)
    new_cell = jnp.where(toggles, toggled(cell, carrying), new_cell)
    new_carrying = jnp.where(picks, cell, jnp.where(drops, NOTHING.astype(cell.dtype), carrying))
    grid = grid.at[fwd[0], fwd[1]].set(new_cell)
    return (
        grid,
        new_pos,
        turn(agent_dir, action),
        new_carrying,
        step_count,
        reward,
        terminated,
    )
