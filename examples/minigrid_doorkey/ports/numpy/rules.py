"""One MiniGrid step (MiniGridEnv.step and the objects' toggle) for B envs at once:
turning, moving, picking up, dropping, toggling, and the reward on reaching the goal.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

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


def turn(agent_dir, actions):
    turned = np.where(actions == LEFT, (agent_dir + 3) % 4, agent_dir)
    return np.where(actions == RIGHT, (agent_dir + 1) % 4, turned)


def toggled(cell, carrying):
    """[B, 3] front cells after `toggle`: a locked door opens only for a key of its colour;
    an unlocked door flips open <-> closed; a box is replaced by its (empty) contents."""
    kind, colour, state = cell[:, 0], cell[:, 1], cell[:, 2]
    has_key = (carrying[:, 0] == KEY) & (carrying[:, 1] == colour)
    door_state = np.where(
        state == LOCKED, np.where(has_key, OPEN, LOCKED), np.where(state == OPEN, 1, OPEN)
    )
    out = cell.copy()
    door = kind == DOOR
    out[door, 2] = door_state[door]
    out[kind == BOX] = NOTHING
    return out


def transition(grid, agent_pos, agent_dir, carrying, step_count, actions, max_steps):
    """B envs' step -> (grid, agent_pos, agent_dir, carrying, step_count, reward float64[B],
    terminated bool[B]); the inputs are not modified."""
    rows = np.arange(len(actions))
    step_count = step_count + 1
    fwd = front_pos(agent_pos, agent_dir)
    cell = grid[rows, fwd[:, 0], fwd[:, 1]]
    kind = cell[:, 0]

    moving = actions == FORWARD
    new_pos = np.where((moving & can_overlap(cell))[:, None], fwd, agent_pos)
    reached = moving & (kind == GOAL)
    terminated = reached | (moving & (kind == LAVA))
    reward = np.where(reached, 1 - 0.9 * (step_count / max_steps), 0.0)

    carrying_nothing = is_empty(carrying)
    picks = (actions == PICKUP) & can_pickup(cell) & carrying_nothing
    drops = (actions == DROP) & is_empty(cell) & ~carrying_nothing
    toggles = actions == TOGGLE

    new_cell = np.where(picks[:, None], NOTHING, cell)
    new_cell = np.where(drops[:, None], carrying, new_cell)
    new_cell = np.where(toggles[:, None], toggled(cell, carrying), new_cell)
    new_carrying = np.where(picks[:, None], cell, np.where(drops[:, None], NOTHING, carrying))
    grid = grid.copy()
    grid[rows, fwd[:, 0], fwd[:, 1]] = new_cell
    return grid, new_pos, turn(agent_dir, actions), new_carrying, step_count, reward, terminated
