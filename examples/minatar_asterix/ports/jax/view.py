"""MinAtar Asterix's observation for one env: four 10x10 boolean planes, [row][column][channel]."""

import jax.numpy as jnp

from .rules import SIZE, SLOT_ROWS

PLAYER, ENEMY, TRAIL, GOLD = 0, 1, 2, 3


def observe(player_x, player_y, taken, x, right, gold):
    """-> bool[10, 10, 4]: the player, enemies, gold, and the square behind each object."""
    obs = jnp.zeros((SIZE, SIZE, 4), dtype=bool)
    obs = obs.at[player_y, player_x, PLAYER].set(True)
    channel = jnp.where(gold, GOLD, ENEMY)
    # A free slot writes nowhere: its row index goes past the screen and is dropped.
    rows = jnp.where(taken, SLOT_ROWS, SIZE)
    obs = obs.at[rows, x, channel].set(True, mode="drop")
    behind = x - jnp.where(right, 1, -1)
    seen = taken & (behind >= 0) & (behind <= SIZE - 1)
    obs = obs.at[jnp.where(seen, SLOT_ROWS, SIZE), jnp.clip(behind, 0, SIZE - 1), TRAIL].set(
        True, mode="drop"
    )
    return obs
