"""MinAtar SpaceInvaders' observation: six 10x10 boolean planes, [row][column][channel]."""

import numpy as np

SIZE = 10
# The game's channel order; the aliens are drawn again on the plane of their direction.
CANNON, ALIEN, ALIEN_LEFT, ALIEN_RIGHT, FRIENDLY_BULLET, ENEMY_BULLET = range(6)


def observe(pos, alien_map, f_bullet_map, e_bullet_map, alien_dir):
    """-> bool[B, 10, 10, 6]: the cannon on the bottom row, the aliens, the aliens again on
    the left plane while they march left (the right plane otherwise), and both bullets."""
    rows = np.arange(len(pos))
    obs = np.zeros((len(pos), SIZE, SIZE, 6), dtype=bool)
    obs[rows, SIZE - 1, pos, CANNON] = True
    aliens = alien_map != 0
    obs[..., ALIEN] = aliens
    left = (alien_dir < 0)[:, None, None]
    obs[..., ALIEN_LEFT] = aliens & left
    obs[..., ALIEN_RIGHT] = aliens & ~left
    obs[..., FRIENDLY_BULLET] = f_bullet_map != 0
    obs[..., ENEMY_BULLET] = e_bullet_map != 0
    return obs
