"""A policy that lives long in Asterix (harness code, for L3 and l3.explore): random play
meets an enemy within about a hundred frames, before the difficulty ramp has stepped even
once, so the ramp's rules would be seen in one episode of sixty. This one steps off any
square an enemy can reach next and otherwise wanders, so its episodes run into the ramp.
"""

import numpy as np

# The minimal action set: no-op, left, up, right, down, as (dx, dy).
MOVES = [(0, 0), (-1, 0), (0, -1), (1, 0), (0, 1)]


def _danger(state, x, y):
    """Whether an enemy is on, or one move from, square (x, y)."""
    taken = np.asarray(state["slot_taken"], dtype=bool)
    gold = np.asarray(state["slot_gold"], dtype=bool)
    ex = np.asarray(state["slot_x"])
    rows = np.arange(1, 9)
    right = np.asarray(state["slot_right"], dtype=bool)
    near = taken & ~gold & (rows == y) & (np.abs(ex + np.where(right, 1, -1) - x) <= 1)
    here = taken & ~gold & (rows == y) & (ex == x)
    return bool((near | here).any())


def act(state, rng):
    px, py = int(state["player_x"]), int(state["player_y"])
    safe = []
    for action, (dx, dy) in enumerate(MOVES):
        x, y = min(max(px + dx, 0), 9), min(max(py + dy, 1), 8)
        if not _danger(state, x, y):
            safe.append(action)
    choices = safe or list(range(len(MOVES)))
    return int(rng.choice(choices))
