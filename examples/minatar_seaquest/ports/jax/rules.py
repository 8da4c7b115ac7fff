"""MinAtar Seaquest's rules for one env in JAX: sticky actions, the spawns, the player's
move or shot, then each object list in the game's order (friendly bullets, divers, enemy
subs, enemy bullets, fish, each walked from its last slot to its first as the game's
`reversed` loops do), the timers, oxygen and surfacing with its difficulty ramp.

Rows run 0 (the surface) to 9 (the gauges); the sub stays on rows 0..8. Records are
`[x, y, right, ...]` with the direction 0/1. Each walk over a list's slots is one compiled
loop (`_walk`): the exact frame, which the step runs only where its whole-list updates
cannot follow the game (a removal that may take an earlier twin). The spawns and the
player append through `add`: `lists.append` for the walks, `lists.push` for the others.
Hand-written known-good port, not model output.
"""

import jax
import jax.numpy as jnp

from .lists import Objects, append, first_at, kill, put, remove

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
ACTION_SET = jnp.array([NOOP, LEFT, UP, RIGHT, DOWN, FIRE], dtype=jnp.int32)


def sticky(action, last_action, draw):
    """-> the action taken: the last one when the sticky draw is below STICKY."""
    return jnp.where(draw < STICKY, last_action, ACTION_SET[action])


def row_of(u):
    """A row 1..8 from a number in [0, 1): randint(low=1, high=9) as a fraction."""
    return 1 + jnp.floor(u * 8).astype(jnp.int32)


def _i(*values):
    return jnp.stack([jnp.asarray(v, jnp.int32) for v in values])


def spawn_enemy(move_speed, fish: Objects, subs: Objects, due, noise, add=append):
    """`_spawn_enemy` when `due`: a sub (noise[2] < 1/3) or fish entering on row
    `row_of(noise[3])` from the left moving right (noise[1] < 1/2) or from the right,
    unless an enemy on that row moves the other way. -> (fish, subs)."""
    lr = (noise[1] < 0.5).astype(jnp.int32)
    is_sub = noise[2] < 1 / 3
    y = row_of(noise[3])
    x = jnp.where(lr == 1, 0, SIZE - 1)

    def against(o: Objects):
        return (o.alive & (o.records[:, 1] == y) & (o.records[:, 2] != lr)).any()

    go = due & ~against(subs) & ~against(fish)
    subs = add(subs, go & is_sub, _i(x, y, lr, move_speed, ENEMY_SHOT_INTERVAL))
    fish = add(fish, go & ~is_sub, _i(x, y, lr, move_speed))
    return fish, subs


def spawn_diver(divers: Objects, due, noise, add=append) -> Objects:
    lr = (noise[4] < 0.5).astype(jnp.int32)
    x = jnp.where(lr == 1, 0, SIZE - 1)
    return add(divers, due, _i(x, row_of(noise[5]), lr, DIVER_MOVE_INTERVAL))


def player(s: dict, f_bullets: Objects, action, add=append):
    """The action: fire (when the shot timer is 0) appends a bullet at the sub, facing its
    way; left and right turn the sub and move it, up and down move it (rows 0..8)."""
    fire = (action == FIRE) & (s["shot_timer"] == 0)
    f_bullets = add(f_bullets, fire, _i(s["sub_x"], s["sub_y"], s["sub_or"]))
    s["shot_timer"] = jnp.where(fire, SHOT_COOL_DOWN, s["shot_timer"])
    left, right = action == LEFT, action == RIGHT
    s["sub_x"] = jnp.where(left, jnp.maximum(0, s["sub_x"] - 1), s["sub_x"])
    s["sub_x"] = jnp.where(right, jnp.minimum(SIZE - 1, s["sub_x"] + 1), s["sub_x"])
    s["sub_or"] = jnp.where(left, False, jnp.where(right, True, s["sub_or"]))
    s["sub_y"] = jnp.where(action == UP, jnp.maximum(0, s["sub_y"] - 1), s["sub_y"])
    s["sub_y"] = jnp.where(action == DOWN, jnp.minimum(8, s["sub_y"] + 1), s["sub_y"])
    return f_bullets


def _advance(record, where):
    """-> (record moved one square its way when `where`, off screen)."""
    x = jnp.where(where, record[0] + jnp.where(record[2] == 1, 1, -1), record[0])
    return record.at[0].set(x), where & ((x < 0) | (x > SIZE - 1))


def _at_sub(record, s):
    return (record[0] == s["sub_x"]) & (record[1] == s["sub_y"])


# How often one slot is walked: once, and once more when a removal by value took an
# earlier twin instead (lists.remove). A third walk (three equal objects in one frame)
# is not modelled.
WALKS = 2


def _walk(carry, body, walks: int = WALKS):
    """The game's `for item in reversed(list)`, last slot first, as one compiled loop over
    the slots used so far (the walked list, carry[0], gains none during its own walk; under
    vmap the loop runs as long as the batch's longest list): `body(carry, i, here) -> (carry,
    again)` walks slot i, and walks it again when it says so. `here` is slot i's alive flag
    as the slot began."""
    end = carry[0].end

    def slot(k, carry):
        i = end - 1 - k
        here = carry[0].alive[i]
        for _ in range(walks):
            carry, here = body(carry, i, here)
        return carry

    return jax.lax.fori_loop(0, end, slot, carry)


def friendly_bullets(f_bullets: Objects, fish: Objects, subs: Objects, reward):
    """Each bullet, last first, moves; off screen it is gone, else it sinks the first fish on
    its square, or else the first sub (+1 each, the bullet gone)."""

    def body(carry, i, here):
        f_bullets, fish, subs, reward = carry
        record, off = _advance(f_bullets.records[i], here)
        on = here & ~off
        hit_fish, which = first_at(fish, record[0], record[1])
        hit_fish &= on
        fish = kill(fish, hit_fish, which)
        hit_sub, which = first_at(subs, record[0], record[1])
        hit_sub &= on & ~hit_fish
        subs = kill(subs, hit_sub, which)
        f_bullets = kill(put(f_bullets, i, record), off, i)
        f_bullets, again = remove(f_bullets, hit_fish | hit_sub, i, record)
        reward += (hit_fish | hit_sub).astype(jnp.int32)
        return (f_bullets, fish, subs, reward), again

    return _walk((f_bullets, fish, subs, reward), body)


def rescue(s: dict, divers: Objects) -> Objects:
    """Each diver, last first: on the sub's square with room aboard (fewer than six) it is
    picked up; else, when its timer is 0, it moves (and may be picked up there or leave)."""

    def body(carry, i, here):
        divers, count = carry
        record = divers.records[i]
        room = count < FULL_CREW
        picked = here & _at_sub(record, s) & room
        rest = here & ~picked
        moving = rest & (record[3] == 0)
        timer = jnp.where(moving, DIVER_MOVE_INTERVAL, jnp.where(rest, record[3] - 1, record[3]))
        record, off = _advance(record.at[3].set(timer), moving)
        picked_after = moving & ~off & _at_sub(record, s) & room
        divers = kill(put(divers, i, record), off, i)
        count = count + (picked | picked_after).astype(jnp.int32)
        divers, again = remove(divers, picked | picked_after, i, record)
        return (divers, count), again

    divers, s["diver_count"] = _walk((divers, s["diver_count"]), body)
    return divers


def enemies(s: dict, group: Objects, f_bullets: Objects, reward, e_bullets=None):
    """Each enemy (subs with their bullets, or fish), last first: touching the sub ends the
    game; when its move timer is 0 it moves (the move speed is its next wait) and is gone off
    screen, ends the game on the sub, or is sunk by the first bullet on its square (+1). A
    sub's shot timer runs too, and at 0 it fires from where it now is, gone or not."""
    fires_bullets = e_bullets is not None

    def body(carry, i, here):
        group, f_bullets, reward, terminal, e_bullets = carry
        record = group.records[i]
        terminal = terminal | (here & _at_sub(record, s))
        moving = here & (record[3] == 0)
        timer = jnp.where(moving, s["move_speed"], jnp.where(here, record[3] - 1, record[3]))
        record, off = _advance(record.at[3].set(timer), moving)
        on = moving & ~off
        terminal = terminal | (on & _at_sub(record, s))
        shot, which = first_at(f_bullets, record[0], record[1])
        shot &= on & ~_at_sub(record, s)
        f_bullets = kill(f_bullets, shot, which)
        reward += shot.astype(jnp.int32)
        group = kill(put(group, i, record), off, i)
        group, again = remove(group, shot, i, record)
        if fires_bullets:
            fires = here & (record[4] == 0)
            shot_timer = jnp.where(
                fires, ENEMY_SHOT_INTERVAL, jnp.where(here, record[4] - 1, record[4])
            )
            record = record.at[4].set(shot_timer)
            group = put(group, i, record)
            e_bullets = append(e_bullets, fires, record[:3])
        return (group, f_bullets, reward, terminal, e_bullets), again

    carry = (group, f_bullets, reward, s["terminal"], e_bullets)
    group, f_bullets, reward, s["terminal"], e_bullets = _walk(carry, body)
    return group, f_bullets, reward, e_bullets


def enemy_bullets(s: dict, e_bullets: Objects) -> Objects:
    """Each enemy bullet, last first: on the sub it ends the game, then it moves, and is
    gone off screen or ends the game on the sub."""

    def body(carry, i, here):
        e_bullets, terminal = carry
        record = e_bullets.records[i]
        terminal = terminal | (here & _at_sub(record, s))
        record, off = _advance(record, here)
        terminal = terminal | (here & ~off & _at_sub(record, s))
        e_bullets = kill(put(e_bullets, i, record), off, i)
        return (e_bullets, terminal), jnp.bool_(False)

    # Only going off screen removes an enemy bullet, and nothing off screen has a twin.
    e_bullets, s["terminal"] = _walk((e_bullets, s["terminal"]), body, walks=1)
    return e_bullets


def timers_and_surface(s: dict, reward):
    """The spawn and shot timers run down; oxygen out ends the game; below the surface
    oxygen drops; arriving at the surface with no diver ends the game, with some it refills
    the oxygen, drops one diver (all six, for 10 per tenth of oxygen left, then one more),
    and steps the difficulty ramp while there is a speed left to raise."""
    for name in ("e_spawn_timer", "d_spawn_timer", "shot_timer"):
        s[name] = s[name] - (s[name] > 0).astype(jnp.int32)
    s["terminal"] = s["terminal"] | (s["oxygen"] <= 0)
    below = s["sub_y"] > 0
    s["oxygen"] = s["oxygen"] - below.astype(jnp.int32)
    s["surface"] = s["surface"] & ~below
    arriving = ~below & ~s["surface"]
    s["terminal"] = s["terminal"] | (arriving & (s["diver_count"] == 0))
    surfacing = arriving & (s["diver_count"] != 0)
    full = surfacing & (s["diver_count"] == FULL_CREW)
    reward += jnp.where(full, s["oxygen"] * 10 // MAX_OXYGEN, 0)
    s["surface"] = s["surface"] | surfacing
    s["diver_count"] = jnp.where(full, 0, s["diver_count"]) - surfacing.astype(jnp.int32)
    s["oxygen"] = jnp.where(surfacing, MAX_OXYGEN, s["oxygen"])
    ramps = surfacing & ((s["e_spawn_speed"] > 1) | (s["move_speed"] > 2))
    faster = ramps & (s["move_speed"] > 2) & (s["ramp_index"] % 2 == 1)
    s["move_speed"] = s["move_speed"] - faster.astype(jnp.int32)
    s["e_spawn_speed"] = s["e_spawn_speed"] - (ramps & (s["e_spawn_speed"] > 1)).astype(jnp.int32)
    s["ramp_index"] = s["ramp_index"] + ramps.astype(jnp.int32)
    return reward
