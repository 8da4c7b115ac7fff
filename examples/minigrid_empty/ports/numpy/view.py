"""The agent's egocentric 7x7 view (MiniGridEnv.gen_obs_grid, Grid.slice, rotate_left,
process_vis, encode) for B envs at once, and the observation: the image flattened, then the
direction.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

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


ROTATIONS = _rotations()


def view_top(agent_pos, agent_dir):
    """[B, 2]: top-left world cell of each unrotated view square (get_view_exts)."""
    x, y = agent_pos[:, 0], agent_pos[:, 1]
    tops = np.stack(
        [
            np.stack([x, y - HALF], -1),
            np.stack([x - HALF, y], -1),
            np.stack([x - VIEW + 1, y - HALF], -1),
            np.stack([x - HALF, y - VIEW + 1], -1),
        ],
        axis=1,
    )
    return tops[np.arange(len(x)), agent_dir]


def view_cells(grid, agent_pos, agent_dir):
    """[B, 7, 7, 3] codes each agent faces, rotated so it looks up from (3, 6); cells off
    the grid are grey walls."""
    world = view_top(agent_pos, agent_dir)[:, None, None, :] + ROTATIONS[agent_dir]
    x, y = world[..., 0], world[..., 1]
    width, height = grid.shape[1], grid.shape[2]
    inside = (x >= 0) & (x < width) & (y >= 0) & (y < height)
    rows = np.arange(grid.shape[0])[:, None, None]
    cells = grid[rows, np.clip(x, 0, width - 1), np.clip(y, 0, height - 1)]
    return np.where(inside[..., None], cells, WALL_CELL)


def visibility(cells):
    """[B, 7, 7] Grid.process_vis from the agent's cell (3, 6): light spreads along each row
    from the bottom up, and one row up, past every cell that does not block the view."""
    clear = see_behind(cells)
    mask = np.zeros(cells.shape[:3], dtype=bool)
    mask[:, HALF, VIEW - 1] = True
    for j in reversed(range(VIEW)):
        for i in range(VIEW - 1):
            go = mask[:, i, j] & clear[:, i, j]
            mask[:, i + 1, j] |= go
            if j > 0:
                mask[:, i + 1, j - 1] |= go
                mask[:, i, j - 1] |= go
        for i in reversed(range(1, VIEW)):
            go = mask[:, i, j] & clear[:, i, j]
            mask[:, i - 1, j] |= go
            if j > 0:
                mask[:, i - 1, j - 1] |= go
                mask[:, i, j - 1] |= go
    return mask


def image(grid, agent_pos, agent_dir, carrying, see_through_walls):
    """uint8[B, 7, 7, 3]: visible cells' codes (an empty cell (1, 0, 0)), unseen ones zeros,
    and what each agent carries in its own cell."""
    cells = view_cells(grid, agent_pos, agent_dir)
    # A room that sees through walls (Empty) shows every cell of the view.
    mask = np.ones(cells.shape[:3], dtype=bool) if see_through_walls else visibility(cells)
    cells = np.where((cells[..., 0] <= 1)[..., None], NOTHING, cells)
    shown = np.where(mask[..., None], cells, 0)
    shown[:, HALF, VIEW - 1] = carrying
    return shown.astype(np.uint8)


def observe(grid, agent_pos, agent_dir, carrying, see_through_walls):
    """uint8[B, 148]: each image in C order, then the direction."""
    picture = image(grid, agent_pos, agent_dir, carrying, see_through_walls)
    flat = picture.reshape(len(picture), -1)
    return np.concatenate([flat, np.asarray(agent_dir, np.uint8)[:, None]], axis=1)
