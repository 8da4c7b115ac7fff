"""MinAtar SpaceInvaders' observation: six 10x10 boolean planes, [row][column][channel]."""

import jax.numpy as jnp

SIZE = 10
# The game's channel order; the aliens are drawn again on the plane of their direction.
CANNON, ALIEN, ALIEN_LEFT, ALIEN_RIGHT, FRIENDLY_BULLET, ENEMY_BULLET = range(6)


def observe(pos, alien_map, f_bullet_map, e_bullet_map, alien_dir):
    """-> bool[10, 10, 6]: the cannon on the bottom row, the aliens, the aliens again on the
    left plane while they march left (the right plane otherwise), and both bullets."""
    cannon = jnp.zeros((SIZE, SIZE), dtype=bool).at[SIZE - 1, pos].set(True)
    aliens = alien_map != 0
    left = alien_dir < 0
    planes = (
        cannon,
        aliens,
        aliens & left,
        aliens & ~left,
        f_bullet_map != 0,
        e_bullet_map != 0,
    )
    return jnp.stack(planes, axis=-1)
