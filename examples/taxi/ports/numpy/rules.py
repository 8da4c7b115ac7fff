"""Taxi rules over a batch of B envs in NumPy: the state code, walls, moves, pick-up and
drop-off.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

MAP = [
    "+---------+",
    "|R: | : :G|",
    "| : | : : |",
    "| : : : : |",
    "| | : | : |",
    "|Y| : |B: |",
    "+---------+",
]
STANDS = np.array([(0, 0), (0, 4), (4, 0), (4, 3)])
IN_TAXI = 4
MAX_STEPS = 200
# Read from the map, as the reference does: ":" between two cells is passable, "|" a wall.
CAN_EAST = np.array([[MAP[1 + r][2 * c + 2] == ":" for c in range(5)] for r in range(5)])
CAN_WEST = np.array([[MAP[1 + r][2 * c] == ":" for c in range(5)] for r in range(5)])


def encode(row, col, passenger, destination):
    return ((row * 5 + col) * 5 + passenger) * 4 + destination


def decode(s):
    destination = s % 4
    s = s // 4
    passenger = s % 5
    s = s // 5
    return s // 5, s % 5, passenger, destination


def transition(s: np.ndarray, actions: np.ndarray):
    """s, actions: (B,) ints -> (next s, reward float64, terminated bool), each (B,)."""
    row, col, passenger, destination = decode(np.asarray(s, dtype=np.int64))
    actions = np.asarray(actions)
    at_stand = (STANDS[None, :, 0] == row[:, None]) & (STANDS[None, :, 1] == col[:, None])
    on_stand = at_stand.any(axis=1)
    stand = np.argmax(at_stand, axis=1)
    new_row = np.where(actions == 0, np.minimum(row + 1, 4), row)
    new_row = np.where(actions == 1, np.maximum(row - 1, 0), new_row)
    new_col = np.where((actions == 2) & CAN_EAST[row, col], np.minimum(col + 1, 4), col)
    new_col = np.where((actions == 3) & CAN_WEST[row, col], np.maximum(col - 1, 0), new_col)
    picks = (actions == 4) & (passenger < IN_TAXI) & on_stand & (stand == passenger)
    aboard = passenger == IN_TAXI
    delivers = (actions == 5) & aboard & on_stand & (stand == destination)
    sets_down = (actions == 5) & aboard & on_stand & (stand != destination)
    new_passenger = np.where(picks, IN_TAXI, passenger)
    new_passenger = np.where(delivers | sets_down, stand, new_passenger)
    illegal = ((actions == 4) & ~picks) | ((actions == 5) & ~delivers & ~sets_down)
    reward = np.where(delivers, 20.0, np.where(illegal, -10.0, -1.0))
    return encode(new_row, new_col, new_passenger, destination), reward, delivers
