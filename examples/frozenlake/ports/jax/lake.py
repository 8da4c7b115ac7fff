"""The frozen lake in JAX: the 4x4 map, moves that stop at the edges, and one transition
given the direction actually taken (the slip already decided).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax.numpy as jnp

MAP = ("SFFF", "FHFH", "FFFH", "HFFG")
NROW, NCOL = 4, 4
FROZEN, HOLE, GOAL = 0, 1, 2
CODES = {"S": FROZEN, "F": FROZEN, "H": HOLE, "G": GOAL}
TILES = jnp.array([CODES[c] for row in MAP for c in row])
LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3


def move(s, direction):
    """One cell in `direction`, staying put at the lake's edge."""
    row, col = s // NCOL, s % NCOL
    col = jnp.where(direction == LEFT, jnp.maximum(col - 1, 0), col)
    row = jnp.where(direction == DOWN, jnp.minimum(row + 1, NROW - 1), row)
    col = jnp.where(direction == RIGHT, jnp.minimum(col + 1, NCOL - 1), col)
    row = jnp.where(direction == UP, jnp.maximum(row - 1, 0), row)
    return row * NCOL + col


def slip_direction(action, noise):
    """noise 0, 1, 2: the direction left of the action, the action, the one right of it."""
    return (action + noise - 1) % 4


def transition(s, direction):
    """(cell, direction taken) -> (next cell, reward, terminated). A hole or the goal is
    absorbing: the step stays there, with no reward, and says terminated again."""
    ended = TILES[s] != FROZEN
    target = move(s, direction)
    nxt = jnp.where(ended, s, target)
    reward = jnp.where(~ended & (TILES[target] == GOAL), 1.0, 0.0)
    terminated = ended | (TILES[target] != FROZEN)
    return nxt, reward, terminated
