"""MinAtar Seaquest's rules on a batch: sticky actions, the spawns, the player's move or
shot, then each object list in the game's order (friendly bullets, divers, enemy subs,
enemy bullets, fish, each walked from its last object to its first as the game's
`reversed` loops do), the timers, oxygen and surfacing with its difficulty ramp.

Rows run 0 (the surface) to 9 (the gauges); the sub stays on rows 0..8. Records are
`[x, y, right, ...]` with the direction 0/1. Hand-written known-good port, not model output.
"""

import numpy as np

from .lists import Objects

SIZE = 10
STICKY = 0.1  # MinAtar's default sticky_action_prob
MAX_OXYGEN = 200
DIVER_SPAWN = 30
SHOT_COOL_DOWN = 5
ENEMY_SHOT_INTERVAL = 10
DIVER_MOVE_INTERVAL = 5
FULL_CREW = 6
# Capacities of the lists (the spec's, with why).
CAPACITY = {"f_bullets": 3, "e_bullets": 12, "e_fish": 12, "e_subs": 12, "divers": 4}
FIELDS = {"f_bullets": 3, "e_bullets": 3, "e_fish": 4, "e_subs": 5, "divers": 4}
NOOP, LEFT, UP, RIGHT, DOWN, FIRE = 0, 1, 2, 3, 4, 5
# The wrapper looks an action up in its minimal action set (all six), a Python list, so
# -1..-6 are accepted and count from its end; indexing this array does the same.
ACTION_SET = np.array([NOOP, LEFT, UP, RIGHT, DOWN, FIRE])


def sticky(actions, last_action, draw):
    """-> the action taken: the last one when the sticky draw is below STICKY."""
    return np.where(draw < STICKY, last_action, ACTION_SET[np.asarray(actions)])


def row_of(u):
    """A row 1..8 from a number in [0, 1): randint(low=1, high=9) as a fraction."""
    return 1 + np.floor(u * 8).astype(np.int64)


def spawn_enemy(s, fish, subs, due, noise):
    """`_spawn_enemy` where `due`: a sub (noise[:, 2] < 1/3) or fish entering on row
    `row_of(noise[:, 3])` from the left moving right (noise[:, 1] < 1/2) or from the right,
    unless an enemy on that row moves the other way."""
    lr = (noise[:, 1] < 0.5).astype(np.int64)
    is_sub = noise[:, 2] < 1 / 3
    y = row_of(noise[:, 3])
    x = np.where(lr == 1, 0, SIZE - 1)

    def against(objects):
        r = objects.records
        return (objects.alive & (r[:, :, 1] == y[:, None]) & (r[:, :, 2] != lr[:, None])).any(1)

    go = due & ~against(subs) & ~against(fish)
    speed = s["move_speed"]
    subs.append(go & is_sub, np.stack([x, y, lr, speed, np.full_like(x, ENEMY_SHOT_INTERVAL)], 1))
    fish.append(go & ~is_sub, np.stack([x, y, lr, speed], 1))


def spawn_diver(divers, due, noise):
    lr = (noise[:, 4] < 0.5).astype(np.int64)
    x = np.where(lr == 1, 0, SIZE - 1)
    divers.append(
        due, np.stack([x, row_of(noise[:, 5]), lr, np.full_like(x, DIVER_MOVE_INTERVAL)], 1)
    )


def player(s, f_bullets, action, live):
    """The action: fire (when the shot timer is 0) appends a bullet at the sub, facing its
    way; left and right turn the sub and move it, up and down move it (rows 0..8)."""
    fire = live & (action == FIRE) & (s["shot_timer"] == 0)
    f_bullets.append(fire, np.stack([s["sub_x"], s["sub_y"], s["sub_or"].astype(np.int64)], 1))
    s["shot_timer"] = np.where(fire, SHOT_COOL_DOWN, s["shot_timer"])
    left, right = live & (action == LEFT), live & (action == RIGHT)
    s["sub_x"] = np.where(left, np.maximum(0, s["sub_x"] - 1), s["sub_x"])
    s["sub_x"] = np.where(right, np.minimum(SIZE - 1, s["sub_x"] + 1), s["sub_x"])
    s["sub_or"] = np.where(left, False, np.where(right, True, s["sub_or"]))
    s["sub_y"] = np.where(live & (action == UP), np.maximum(0, s["sub_y"] - 1), s["sub_y"])
    s["sub_y"] = np.where(live & (action == DOWN), np.minimum(8, s["sub_y"] + 1), s["sub_y"])


def _advance(record, where):
    """Moves the records [B, F] in `where` one square their way; -> (moved, off screen)."""
    step = np.where(record[:, 2] == 1, 1, -1)
    x = np.where(where, record[:, 0] + step, record[:, 0])
    record[:, 0] = x
    return where & ((x < 0) | (x > SIZE - 1))


def _walk(objects, body):
    """The game's `for item in reversed(list)`: each slot, last first, and once more while a
    removal by value took an earlier twin instead of the walked object (see Objects.remove)."""
    for i in reversed(range(objects.width)):
        gate = objects.alive[:, i].copy()  # the walk reads the mask as the slot began
        while gate.any():
            gate = body(i, gate)


def _at_sub(record, s):
    return (record[:, 0] == s["sub_x"]) & (record[:, 1] == s["sub_y"])


def friendly_bullets(f_bullets, fish, subs, reward):
    """Each bullet, last first, moves; off screen it is gone, else it sinks the first fish on
    its square, or else the first sub (+1 each, the bullet gone)."""

    def body(i, here):
        record = f_bullets.records[:, i]
        off = _advance(record, here)
        f_bullets.kill(off, np.full(len(off), i))
        on = here & ~off
        hit_fish, which = fish.first_at(record[:, 0], record[:, 1])
        hit_fish &= on
        fish.kill(hit_fish, which)
        hit_sub, which = subs.first_at(record[:, 0], record[:, 1])
        hit_sub &= on & ~hit_fish
        subs.kill(hit_sub, which)
        reward[:] += hit_fish | hit_sub
        return f_bullets.remove(hit_fish | hit_sub, i, record)

    _walk(f_bullets, body)


def rescue(s, divers):
    """Each diver, last first: on the sub's square with room aboard (fewer than six) it is
    picked up; else, when its timer is 0, it moves (and may be picked up there or leave)."""

    def body(i, here):
        record = divers.records[:, i]
        room = s["diver_count"] < FULL_CREW
        picked = here & _at_sub(record, s) & room
        rest = here & ~picked
        moving = rest & (record[:, 3] == 0)
        timer = np.where(rest, record[:, 3] - 1, record[:, 3])
        record[:, 3] = np.where(moving, DIVER_MOVE_INTERVAL, timer)
        off = _advance(record, moving)
        picked_after = moving & ~off & _at_sub(record, s) & room
        divers.kill(off, np.full(len(here), i))
        s["diver_count"] = s["diver_count"] + (picked | picked_after)
        return divers.remove(picked | picked_after, i, record)

    _walk(divers, body)


def enemies(s, objects, f_bullets, reward, e_bullets=None):
    """Each enemy (subs with their bullets, or fish), last first: touching the sub ends the
    game; when its move timer is 0 it moves (the move speed is its next wait) and is gone off
    screen, ends the game on the sub, or is sunk by the first bullet on its square (+1). A
    sub's shot timer runs too, and at 0 it fires from where it now is, gone or not."""

    def body(i, here):
        record = objects.records[:, i]
        s["terminal"] |= here & _at_sub(record, s)
        moving = here & (record[:, 3] == 0)
        timer = np.where(here, record[:, 3] - 1, record[:, 3])
        record[:, 3] = np.where(moving, s["move_speed"], timer)
        off = _advance(record, moving)
        on = moving & ~off
        s["terminal"] |= on & _at_sub(record, s)
        shot, which = f_bullets.first_at(record[:, 0], record[:, 1])
        shot &= on & ~_at_sub(record, s)
        f_bullets.kill(shot, which)
        objects.kill(off, np.full(len(here), i))
        again = objects.remove(shot, i, record)
        reward[:] += shot
        if e_bullets is not None:
            fires = here & (record[:, 4] == 0)
            timer = np.where(here, record[:, 4] - 1, record[:, 4])
            record[:, 4] = np.where(fires, ENEMY_SHOT_INTERVAL, timer)
            e_bullets.append(fires, record[:, :3].copy())
        return again

    _walk(objects, body)


def enemy_bullets(s, e_bullets):
    """Each enemy bullet, last first: on the sub it ends the game, then it moves, and is
    gone off screen or ends the game on the sub."""
    for i in reversed(range(e_bullets.width)):
        here = e_bullets.alive[:, i].copy()  # the walk reads the mask as the slot began
        record = e_bullets.records[:, i]
        s["terminal"] |= here & _at_sub(record, s)
        off = _advance(record, here)
        s["terminal"] |= here & ~off & _at_sub(record, s)
        e_bullets.kill(off, np.full(len(here), i))


def timers_and_surface(s, live, reward):
    """The spawn and shot timers run down; oxygen out ends the game; below the surface
    oxygen drops; arriving at the surface with no diver ends the game, with some it refills
    the oxygen, drops one diver (all six, for 10 per tenth of oxygen left, then one more),
    and steps the difficulty ramp while there is a speed left to raise."""
    for name in ("e_spawn_timer", "d_spawn_timer", "shot_timer"):
        s[name] = np.where(live & (s[name] > 0), s[name] - 1, s[name])
    s["terminal"] |= live & (s["oxygen"] <= 0)
    below = live & (s["sub_y"] > 0)
    s["oxygen"] = np.where(below, s["oxygen"] - 1, s["oxygen"])
    s["surface"] = np.where(below, False, s["surface"])
    arriving = live & (s["sub_y"] == 0) & ~s["surface"]
    s["terminal"] |= arriving & (s["diver_count"] == 0)
    surfacing = arriving & (s["diver_count"] != 0)
    full = surfacing & (s["diver_count"] == FULL_CREW)
    reward += np.where(full, s["oxygen"] * 10 // MAX_OXYGEN, 0)
    s["surface"] = s["surface"] | surfacing
    s["diver_count"] = np.where(full, 0, s["diver_count"]) - surfacing
    s["oxygen"] = np.where(surfacing, MAX_OXYGEN, s["oxygen"])
    ramps = surfacing & ((s["e_spawn_speed"] > 1) | (s["move_speed"] > 2))
    faster = ramps & (s["move_speed"] > 2) & (s["ramp_index"] % 2 == 1)
    s["move_speed"] = s["move_speed"] - faster
    s["e_spawn_speed"] = s["e_spawn_speed"] - (ramps & (s["e_spawn_speed"] > 1))
    s["ramp_index"] = s["ramp_index"] + ramps


def transition(state, actions, noise):
    """One frame, MinAtar's Environment.act then Env.act, on a dict of [B, ...] arrays (the
    state's fields; a list as `name` [B, capacity, fields] and `name.length` [B]). Inputs
    unmodified. -> (next state dict, reward float64[B]). A terminal env keeps its state (but
    its last action, which the wrapper sets first) and earns 0."""
    s = {name: np.array(value) for name, value in state.items()}
    live = ~s["terminal"]
    action = sticky(actions, s["last_action"], noise[:, 0])
    s["last_action"] = action
    reward = np.zeros(len(live), dtype=np.int64)
    # Room for what a step appends: a spawn, a shot, and one bullet per sub.
    room = {"f_bullets": 1, "e_fish": 1, "e_subs": 1, "divers": 1}
    room["e_bullets"] = CAPACITY["e_subs"] + 1
    # A terminal env's objects are not walked (its lists are put back as given below).
    lists = {n: Objects(s[n], s[f"{n}.length"] * live, room[n]) for n in CAPACITY}
    fish, subs = lists["e_fish"], lists["e_subs"]

    enemy_due = live & (s["e_spawn_timer"] == 0)
    spawn_enemy(s, fish, subs, enemy_due, noise)
    s["e_spawn_timer"] = np.where(enemy_due, s["e_spawn_speed"], s["e_spawn_timer"])
    diver_due = live & (s["d_spawn_timer"] == 0)
    spawn_diver(lists["divers"], diver_due, noise)
    s["d_spawn_timer"] = np.where(diver_due, DIVER_SPAWN, s["d_spawn_timer"])

    player(s, lists["f_bullets"], action, live)
    friendly_bullets(lists["f_bullets"], fish, subs, reward)
    rescue(s, lists["divers"])
    enemies(s, subs, lists["f_bullets"], reward, lists["e_bullets"])
    enemy_bullets(s, lists["e_bullets"])
    enemies(s, fish, lists["f_bullets"], reward)
    timers_and_surface(s, live, reward)

    for name, objects in lists.items():
        records, length = objects.compact(CAPACITY[name])
        s[name] = np.where(live[:, None, None], records, state[name])
        s[f"{name}.length"] = np.where(live, length, state[f"{name}.length"])
    return s, np.where(live, reward, 0).astype(np.float64)
