"""L1 probes for the NumPy MinAtar Seaquest port's module functions (harness code, not
generated).

`call` runs in the worker with the port module, on a batch of one, and the step's noise
(recorded from the game's own RandomState); `expect` reads one reference transition. The
observation is MinAtar's [row][column][channel] planes.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

LISTS = ("f_bullets", "e_bullets", "e_fish", "e_subs", "divers")
SCALARS = ("oxygen", "diver_count", "sub_x", "sub_y", "e_spawn_speed", "e_spawn_timer",
           "d_spawn_timer", "move_speed", "ramp_index", "shot_timer", "last_action",
           "sub_or", "surface", "terminal")  # fmt: skip
UP = 2


def _batch(state):
    """One env's leaves as the port's batch of one (lists [1, capacity, fields])."""
    out = {}
    for name in SCALARS:
        dtype = bool if name in ("sub_or", "surface", "terminal") else np.int64
        out[name] = np.asarray(state[name], dtype=dtype)[None]
    for name in LISTS:
        out[name] = np.asarray(state[name], dtype=np.int64)[None]
        out[f"{name}.length"] = np.asarray(state[f"{name}.length"], dtype=np.int64)[None]
    return out


@probe("rules.transition")
def transition(module, before, action, after, noise):
    state, reward = module.transition(
        _batch(before), np.asarray([action]), np.asarray(noise, dtype=np.float64).reshape(1, 6)
    )
    return {**{name: value[0] for name, value in state.items()}, "reward": reward[0]}


@transition.expect
def _(before, action, after, transition):
    return {**after, "reward": np.float64(transition.reward)}


# ---- surfacing: its rules' inputs, arranged ----
# Drawn states rarely arrive at the surface (the sub one row below it moving up, or on it
# after diving), and play never does with the enemy spawn at its fastest while the move
# speed can still rise (the ramp lowers the move speed first), so the ramp's "spawn speed
# already 1" branch would go unchecked. This probe arranges an arrival: from row 1 moving up
# or on the surface having dived, with any divers aboard (six half the time: the full-crew
# bonus), any oxygen, and the spawn and move speeds near their ends.
def _surfacing(state, action, pick):
    arranged = {**state, "terminal": np.bool_(False), "surface": np.bool_(False)}
    if pick(0, 1):
        arranged["sub_y"], action = np.int64(1), UP
    else:
        arranged["sub_y"] = np.int64(0)
        action = action if action != 4 else 0  # not diving again at once
    arranged["diver_count"] = np.int64(6 if pick(0, 1) else pick(-3, 6))
    arranged["oxygen"] = np.int64(pick(0, 200))
    arranged["e_spawn_speed"] = np.int64(pick(1, 3))
    arranged["move_speed"] = np.int64(pick(2, 5))
    arranged["ramp_index"] = np.int64(pick(0, 19))
    return arranged, action


surfacing = probe("rules.surfacing")(transition.call)
surfacing.expect(transition.expect_fn)
surfacing.arrange(_surfacing)


# ---- a bullet and its targets: the hit rules' inputs, arranged ----
# A friendly bullet meets an enemy on a drawn screen about once in a few dozen draws; this
# probe puts the first friendly bullet one square from a fish or sub (its way or the
# other), the enemy's move timer at 0 or not, so both "bullet hits" and "enemy runs into the
# bullet" are checked with a live sub.
def _bullet_near_enemy(state, action, pick):
    arranged = {**state, "terminal": np.bool_(False)}
    bullets = np.array(state["f_bullets"], dtype=np.int64)
    x, y = pick(1, 8), pick(1, 8)
    bullets[0] = (x, y, pick(0, 1))
    arranged["f_bullets"] = bullets
    arranged["f_bullets.length"] = np.int64(max(1, int(state["f_bullets.length"])))
    name = "e_fish" if pick(0, 1) else "e_subs"
    enemies = np.array(state[name], dtype=np.int64)
    enemies[0, :4] = (x + pick(-1, 1), y, pick(0, 1), pick(0, 1))
    arranged[name] = enemies
    arranged[f"{name}.length"] = np.int64(max(1, int(state[f"{name}.length"])))
    return arranged, action


bullet_near_enemy = probe("rules.bullet_near_enemy")(transition.call)
bullet_near_enemy.expect(transition.expect_fn)
bullet_near_enemy.arrange(_bullet_near_enemy)


# ---- several enemies on one bullet's square: who takes what there, arranged ----
# Drawn screens almost never put two enemies of a list on the square a bullet reaches, so
# the order rules there go unchecked: a bullet sinks the first fish (or sub) on its square
# in list order, and of enemies moving onto a bullet the walk (last slot first) meets the
# last one first. This probe puts the first bullet one square from its target, and two
# enemies of one list either already on the target (still: their timers not at 0) or on
# either side of it, both moving onto it (timers at 0).
def _crowded_square(state, action, pick):
    arranged = {**state, "terminal": np.bool_(False)}
    bullets = np.array(state["f_bullets"], dtype=np.int64)
    x, y, right = pick(2, 7), pick(1, 8), pick(0, 1)
    target = x + (1 if right else -1)
    bullets[0] = (x, y, right)
    arranged["f_bullets"] = bullets
    arranged["f_bullets.length"] = np.int64(max(1, int(state["f_bullets.length"])))
    name = "e_fish" if pick(0, 1) else "e_subs"
    enemies = np.array(state[name], dtype=np.int64)
    if pick(0, 1):  # both on the target, not moving, told apart by direction or timer
        enemies[0, :4] = (target, y, 0, pick(1, 5))
        enemies[1, :4] = (target, y, 1, pick(1, 5))
    else:  # from either side onto the target
        enemies[0, :4] = (target - 1, y, 1, 0)
        enemies[1, :4] = (target + 1, y, 0, 0)
    arranged[name] = enemies
    arranged[f"{name}.length"] = np.int64(max(2, int(state[f"{name}.length"])))
    return arranged, action


crowded_square = probe("rules.crowded_square")(transition.call)
crowded_square.expect(transition.expect_fn)
crowded_square.arrange(_crowded_square)


@probe("view.observe")
def observe(module, before, action, after, noise):
    return {"obs": module.observe(_batch(after))[0]}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
