"""The agent's egocentric 7x7 view (MiniGridEnv.gen_obs_grid, Grid.slice, rotate_left,
process_vis, encode) and the observation: the image flattened, then the direction.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax.numpy as jnp
import numpy as np

from .objects import NOTHING, WALL_CELL, see_behind

VIEW = 7
HALF = VIEW // 2


def _rotations() -> np.ndarray:
    """For each direction d, view cell (a, b) -> the slice cell it shows, after rotating the
    slice left d + 1 times (rotate_left: new[a, b] = old[VIEW - 1 - b, a])."""
    index = np.stack(np.meshgrid(np.arange(VIEW), np.arange(VIEW), indexing="ij"), axis=-1)
    tables = []
    current = index
    for _ in range(4):
        current = np.rot90(current, k=-1, axes=(0, 1))
        tables.append(current.copy())
    return np.stack(tables)  # [4, VIEW, VIEW, 2]


ROTATIONS = jnp.asarray(_rotations(), dtype=jnp.int32)


def view_top(agent_pos, agent_dir):
    """Top-left world cell of the unrotated view square (get_view_exts)."""
    x, y = agent_pos[0], agent_pos[1]
    tops = jnp.array(
        [
            [x, y - HALF],
            [x - HALF, y],
            [x - VIEW + 1, y - HALF],
            [x - HALF, y - VIEW + 1],
        ]
    )
    return tops[agent_dir]


def view_cells(grid, agent_pos, agent_dir):
    """The [7, 7, 3] codes the agent faces, rotated so it looks up from (3, 6); cells off
    the grid are grey walls."""
    world = view_top(agent_pos, agent_dir) + ROTATIONS[agent_dir]  # [VIEW, VIEW, 2]
    x, y = world[..., 0], world[..., 1]
    inside = (x >= 0) & (x < grid.shape[0]) & (y >= 0) & (y < grid.shape[1])
    cells = grid[jnp.clip(x, 0, grid.shape[0] - 1), jnp.clip(y, 0, grid.shape[1] - 1)]
    return jnp.where(inside[..., None], cells, WALL_CELL)


def visibility(cells):
    """Grid.process_vis from the agent's cell (3, 6): light spreads along each row from the
    bottom up, and one row up, past every cell that does not block the view."""
    clear = see_behind(cells)
    mask = jnp.zeros((VIEW, VIEW), dtype=bool).at[HALF, VIEW - 1].set(True)
    for j in reversed(range(VIEW)):
        for i in range(VIEW - 1):
            go = mask[i, j] & clear[i, j]
            mask = mask.at[i + 1, j].set(mask[i + 1, j] | go)
            if j > 0:
                mask = mask.at[i + 1, j - 1].set(mask[i + 1, j - 1] | go)
                mask = mask.at[i, j - 1].set(mask[i, j - 1] | go)
        for i in reversed(range(1, VIEW)):
            go = mask[i, j] & clear[i, j]
            mask = mask.at[i - 1, j].set(mask[i - 1, j] | go)
            if j > 0:
                mask = mask.at[i - 1, j - 1].set(mask[i - 1, j - 1] | go)
                mask = mask.at[i, j - 1].set(mask[i, j - 1] | go)
    return mask


def image(grid, agent_pos, agent_dir, carrying, see_through_walls):
    """uint8[7, 7, 3]: visible cells' codes (an empty cell (1, 0, 0)), unseen ones zeros,
    and what the agent carries in its own cell."""
    cells = view_cells(grid, agent_pos, agent_dir)
    mask = visibility(cells) | see_through_walls
    empty = cells[..., 0] <= 1
    cells = jnp.where(empty[..., None], NOTHING, cells)
    shown = jnp.where(mask[..., None], cells, 0)
    shown = shown.at[HALF, VIEW - 1].set(carrying)
    return shown.astype(jnp.uint8)


def observe(grid, agent_pos, agent_dir, carrying, see_through_walls):
    """uint8[148]: the image in C order, then the direction."""
    picture = image(grid, agent_pos, agent_dir, carrying, see_through_walls)
    return jnp.concatenate([picture.reshape(-1), jnp.asarray(agent_dir, jnp.uint8)[None]])
