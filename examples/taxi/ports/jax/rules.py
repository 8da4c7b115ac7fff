"""Taxi rules in JAX: the state code, walls, moves, pick-up and drop-off.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import jax.numpy as jnp

# The four stands: R(ed), G(reen), Y(ellow), B(lue) as (row, col).
STAND_ROWS = jnp.array([0, 0, 4, 4])
STAND_COLS = jnp.array([0, 4, 0, 3])
# Whether a taxi at (row, col) may drive east / west: the map's walls ("|") between columns.
CAN_EAST = jnp.array(
    [
        [True, False, True, True, False],
        [True, False, True, True, False],
        [True, True, True, True, False],
        [False, True, False, True, False],
        [False, True, False, True, False],
    ]
)
CAN_WEST = jnp.array(
    [
        [False, True, False, True, True],
        [False, True, False, True, True],
        [False, True, True, True, True],
        [False, False, True, False, True],
        [False, False, True, False, True],
    ]
)
IN_TAXI = 4


def encode(row, col, passenger, destination):
    return ((row * 5 + col) * 5 + passenger) * 4 + destination


def decode(s):
    destination = s % 4
    s = s // 4
    passenger = s % 5
    s = s // 5
    return s // 5, s % 5, passenger, destination


def transition(s, action):
    """(state, action) -> (next state, reward, terminated), as the reference's table has it."""
    row, col, passenger, destination = decode(s)
    at_stand = (row == STAND_ROWS) & (col == STAND_COLS)
    stand = jnp.argmax(at_stand)
    on_stand = at_stand.any()
    new_row = jnp.where(action == 0, jnp.minimum(row + 1, 4), row)
    new_row = jnp.where(action == 1, jnp.maximum(row - 1, 0), new_row)
    new_col = jnp.where((action == 2) & CAN_EAST[row, col], jnp.minimum(col + 1, 4), col)
    new_col = jnp.where((action == 3) & CAN_WEST[row, col], jnp.maximum(col - 1, 0), new_col)
    # Pick-up: only where the waiting passenger stands.
    picks = (action == 4) & (passenger < IN_TAXI) & on_stand & (stand == passenger)
    # Drop-off: at the destination ends the ride; at another stand sets the passenger down.
    aboard = passenger == IN_TAXI
    delivers = (action == 5) & aboard & on_stand & (stand == destination)
    sets_down = (action == 5) & aboard & on_stand & (stand != destination)
    new_passenger = jnp.where(picks, IN_TAXI, passenger)
    new_passenger = jnp.where(delivers | sets_down, stand, new_passenger)
    illegal = ((action == 4) & ~picks) | ((action == 5) & ~delivers & ~sets_down)
    reward = jnp.where(delivers, 20.0, jnp.where(illegal, -10.0, -1.0))
    return encode(new_row, new_col, new_passenger, destination), reward, delivers
