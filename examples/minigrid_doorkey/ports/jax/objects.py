"""MiniGrid's object codes and what each kind of object allows (minigrid.core.constants and
minigrid.core.world_object), on (type, colour, state) code triples.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax.numpy as jnp

UNSEEN, EMPTY, WALL, FLOOR, DOOR, KEY, BALL, BOX, GOAL, LAVA = range(10)
GREY = 5
OPEN, CLOSED, LOCKED = 0, 1, 2
NOTHING = jnp.array([EMPTY, 0, 0], dtype=jnp.int32)
WALL_CELL = jnp.array([WALL, GREY, 0], dtype=jnp.int32)
# Forward vectors per direction: right, down, left, up.
DIR_TO_VEC = jnp.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=jnp.int32)


def is_empty(cell):
    return cell[..., 0] <= EMPTY


def can_overlap(cell):
    kind = cell[..., 0]
    door_open = (kind == DOOR) & (cell[..., 2] == OPEN)
    return is_empty(cell) | (kind == FLOOR) | (kind == GOAL) | (kind == LAVA) | door_open


def see_behind(cell):
    kind = cell[..., 0]
    return (kind != WALL) & ((kind != DOOR) | (cell[..., 2] == OPEN))


def can_pickup(cell):
    kind = cell[..., 0]
    return (kind == KEY) | (kind == BALL) | (kind == BOX)
