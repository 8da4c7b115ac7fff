"""The agent's egocentric 7x7 view (MiniGridEnv.gen_obs_grid, Grid.slice, rotate_left,
process_vis, encode) and the observation: the image flattened, then the direction.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax
import jax.numpy as jnp
import numpy as np

from .objects import EMPTY, NOTHING, WALL_CELL, see_behind

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


def codes(cells):
    """int32[..., 3] -> int32[...]: a cell's (type, colour, state) as one integer, a byte
    each, so the view reads one value per cell rather than three."""
    # A sum, not an or: the bytes do not overlap, and XLA computes a reduction once into
    # memory where it would copy a chain of elementwise ops into every read of the view.
    return jnp.sum(cells << jnp.array([0, 8, 16], dtype=jnp.int32), axis=-1)


def channels(cell_codes):
    """The inverse of `codes`: int32[...] -> int32[..., 3]."""
    return jnp.stack([cell_codes & 0xFF, (cell_codes >> 8) & 0xFF, cell_codes >> 16], axis=-1)


def _view_steps() -> np.ndarray:
    """int[4, 7, 7, 2]: for each direction, each view cell's (dx, dy) from the agent's cell."""
    origin = jnp.zeros(2, dtype=jnp.int32)
    tops = jnp.stack([view_top(origin, d) for d in range(4)])
    return np.asarray(tops[:, None, None, :] + ROTATIONS)


VIEW_STEPS = _view_steps()


def view_codes(grid, agent_pos, agent_dir):
    """int32[7, 7]: the codes of the cells the agent faces, rotated so it looks up from
    (3, 6). The grid is padded with walls as far as the view can reach past its edge, so
    every read is inside it, and read flat: one index per cell, the agent's own plus a
    constant offset per direction, with no bounds test and no index arithmetic per cell."""
    pad = VIEW - 1
    padded = jnp.pad(codes(grid), pad, constant_values=codes(WALL_CELL))
    height = padded.shape[1]
    offsets = jnp.asarray(VIEW_STEPS[..., 0] * height + VIEW_STEPS[..., 1], dtype=jnp.int32)
    here = (agent_pos[0] + pad) * height + agent_pos[1] + pad
    return padded.reshape(-1)[here + offsets[agent_dir]]


def view_cells(grid, agent_pos, agent_dir):
    """The [7, 7, 3] codes the agent faces, rotated so it looks up from (3, 6); cells off
    the grid are grey walls."""
    return channels(view_codes(grid, agent_pos, agent_dir))


ROW = (1 << VIEW) - 1  # a view row as bits: bit i is column i
COLUMN_BITS = jnp.asarray(1 << np.arange(VIEW), dtype=jnp.int32)[:, None]


def _spread_right(lit, clear):
    """Light passes from a lit clear cell to its right neighbour, as far as it can go."""
    for _ in range(VIEW - 1):
        lit = lit | (((lit & clear) << 1) & ROW)
    return lit


def _spread_left(lit, clear):
    for _ in range(VIEW - 1):
        lit = lit | ((lit & clear) >> 1)
    return lit


def _light_row(lit, clear):
    """One row's passes: `lit` the cells the row below lit -> (what the row above starts
    with, this row's visible cells)."""
    # Lit clear cells light the row above: in the left-to-right pass the cell itself and the
    # one after it (columns 0..5), right-to-left the cell and the one before (1..6).
    rightward = _spread_right(lit, clear)
    forward = rightward & clear & (ROW >> 1)
    row = _spread_left(rightward, clear)
    backward = row & clear & (ROW - 1)
    return (forward | (forward << 1) | backward | (backward >> 1)) & ROW, row


def _visible(clear):
    """bool[7, 7] from which cells let light through (bool[7, 7])."""
    clear_rows = jnp.sum(jnp.where(clear, COLUMN_BITS, 0), axis=0)  # [VIEW] rows
    _, rows = jax.lax.scan(_light_row, jnp.int32(1 << HALF), clear_rows, reverse=True)
    return (rows[None, :] & COLUMN_BITS) != 0


def visibility(cells):
    """Grid.process_vis from the agent's cell (3, 6): light spreads along each row from the
    bottom up, left then right, and one row up, past every cell that does not block the view.

    Each row is one integer of 7 bits, so a row's pass is a few shifts, ands and ors on whole
    rows rather than one scatter per cell (which under vmap cost ~85% of the step), and the
    rows are a scan: written out unrolled, XLA fuses the whole chain into the unpacking and
    recomputes it for every one of the 49 cells."""
    return _visible(see_behind(cells))


def image(grid, agent_pos, agent_dir, carrying, see_through_walls):
    """uint8[7, 7, 3]: visible cells' codes (an empty cell (1, 0, 0)), unseen ones zeros,
    and what the agent carries in its own cell. Built on one integer per cell: the fused
    loop XLA writes for the image then does a few operations per byte, not a dozen."""
    cells = view_codes(grid, agent_pos, agent_dir)
    mask = _visible(see_behind(channels(cells))) | see_through_walls
    cells = jnp.where((cells & 0xFF) <= EMPTY, codes(NOTHING), cells)
    shown = jnp.where(mask, cells, 0)
    shown = shown.at[HALF, VIEW - 1].set(codes(carrying))
    return channels(shown).astype(jnp.uint8)


def observe(grid, agent_pos, agent_dir, carrying, see_through_walls):
    """uint8[148]: the image in C order, then the direction."""
    picture = image(grid, agent_pos, agent_dir, carrying, see_through_walls)
    return jnp.concatenate([picture.reshape(-1), jnp.asarray(agent_dir, jnp.uint8)[None]])
