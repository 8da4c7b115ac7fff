"""The frozen lake over a batch of B envs in NumPy: the 4x4 map, moves that stop at the
edges, and one transition given the direction actually taken (the slip already decided).

Hand-written known-good port: a test subject for the verifier, not model output.
"""

import numpy as np

MAP = ("SFFF", "FHFH", "FFFH", "HFFG")
NROW, NCOL = 4, 4
FROZEN, HOLE, GOAL = 0, 1, 2
CODES = {"S": FROZEN, "F": FROZEN, "H": HOLE, "G": GOAL}
TILES = np.array([CODES[c] for row in MAP for c in row])
LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3
MAX_STEPS = 100


def move(s: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """One cell in `direction`, staying put at the lake's edge."""
    row, col = s // NCOL, s % NCOL
    col = np.where(direction == LEFT, np.maximum(col - 1, 0), col)
    row = np.where(direction == DOWN, np.minimum(row + 1, NROW - 1), row)
    col = np.where(direction == RIGHT, np.minimum(col + 1, NCOL - 1), col)
    row = np.where(direction == UP, np.maximum(row - 1, 0), row)
    return row * NCOL + col


def slip_direction(actions: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """noise 0, 1, 2: the direction left of the action, the action, the one right of it."""
    return (np.asarray(actions) + np.asarray(noise) - 1) % 4


def transition(s: np.ndarray, direction: np.ndarray):
    """(cells, directions taken) -> (next cells, rewards, terminated), each (B,). A hole or
    the goal is absorbing: the step stays there, with no reward, and says terminated again."""
    s = np.asarray(s, dtype=np.int64)
    ended = TILES[s] != FROZEN
    target = move(s, np.asarray(direction))
    nxt = np.where(ended, s, target)
    reward = np.where(~ended & (TILES[target] == GOAL), 1.0, 0.0)
    terminated = ended | (TILES[target] != FROZEN)
    return nxt, reward, terminated
