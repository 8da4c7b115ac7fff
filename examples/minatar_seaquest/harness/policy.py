"""A policy that lives long in Seaquest (harness code, for L3 and l3.explore): random play
runs out of oxygen or surfaces without a diver within a few dozen frames, before a single
diver is rescued, so surfacing with divers, the full-crew bonus and the difficulty ramp
would never be seen. This one steps off squares an enemy or bullet can reach next, fetches
divers, surfaces when it carries some and its oxygen runs low (or it carries six), fires at
enemies on its row, and otherwise wanders.
"""

import numpy as np

# The minimal action set: no-op, left, up, right, down, fire, as (dx, dy).
MOVES = [(0, 0), (-1, 0), (0, -1), (1, 0), (0, 1), (0, 0)]
FIRE = 5


def _items(state, name):
    """A list field's objects: the leaves' items in use (or the list itself)."""
    items = np.asarray(state[name]).reshape(
        -1, np.shape(state[name])[-1] if np.ndim(state[name]) > 1 else 1
    )
    length = state.get(f"{name}.length")
    return items[: int(length)] if length is not None else items


def _danger(state, x, y):
    """Whether an enemy, its bullet, or a friendly target that kills is on or next to (x, y)
    on its way."""
    for name in ("e_fish", "e_subs", "e_bullets"):
        for item in _items(state, name):
            if len(item) < 3 or item[1] != y:
                continue
            step = 1 if item[2] else -1
            if item[0] == x or item[0] + step == x or item[0] + 2 * step == x:
                return True
    return False


def act(state, rng):
    px, py = int(state["sub_x"]), int(state["sub_y"])
    divers, oxygen = int(state["diver_count"]), int(state["oxygen"])
    if divers > 0 and (oxygen < 70 or divers >= 6):
        goal = (px, 0)
    else:
        found = [d for d in _items(state, "divers") if len(d) >= 2]
        if found and divers < 6:
            d = min(found, key=lambda d: abs(d[0] - px) + abs(d[1] - py))
            goal = (int(d[0]), int(d[1]))
        else:
            goal = (int(rng.integers(0, 10)), int(rng.integers(2, 8)))
    safe = []
    for action, (dx, dy) in enumerate(MOVES):
        x, y = min(max(px + dx, 0), 9), min(max(py + dy, 0), 8)
        if y == 0 and py > 0 and divers == 0:
            continue  # surfacing with no diver ends the game
        if y > 0 and _danger(state, x, y):
            continue
        safe.append((abs(goal[0] - x) + abs(goal[1] - y), action))
    if not safe:
        return int(rng.integers(0, 6))
    ahead = [
        e
        for name in ("e_fish", "e_subs")
        for e in _items(state, name)
        if len(e) >= 2 and e[1] == py and ((e[0] > px) == bool(state["sub_or"]))
    ]
    if ahead and int(state["shot_timer"]) == 0 and any(a == 0 for _, a in safe):
        return FIRE
    best = min(d for d, _ in safe)
    choices = [a for d, a in safe if d == best]
    if rng.random() < 0.1:
        choices = [a for _, a in safe]
    return int(rng.choice(choices))
