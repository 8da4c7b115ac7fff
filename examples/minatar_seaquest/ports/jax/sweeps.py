"""Seaquest's walks over its object lists as whole-list updates, for one env under `vmap`:
each object's own move is elementwise over its list, and the few things the game's order
decides are counted instead of walked.

- Who takes what on a square. The game walks a list last slot first, and each walker takes
  the first object left on its square: on one square the walker met r-th takes the r-th
  object there in list order. Friendly bullets are at most four, so every table here is
  `[bullets, list]`, and a bullet's choice among a list is a bit mask of the list's slots:
  lowest bit first in list order, highest first in walk order.
- Divers picked up while there is room: the first `6 - count` candidates in walk order.
- A sub's shots go on the end of the enemy bullets in walk order: laid out last sub first.

Tables `[list, list]` are what this avoids: XLA's CPU fusion recomputes every input of a
table for each of its cells, a whole object's move per cell.

What counting cannot follow is `list.remove` taking an earlier equal twin instead of the
walked object (the game then walks that object once more). Each sweep says when a removal
could have one (`twin`: the removed object's square held another object of its list as
the step began); the step then walks that frame slot by slot (rules.py).
Hand-written known-good port, not model output.
"""

import jax
import jax.numpy as jnp

from .lists import Objects, pack, up_to

SIZE = 10
FULL_CREW = 6
DIVER_MOVE_INTERVAL = 5
ENEMY_SHOT_INTERVAL = 10
BULLETS = 3  # at most this many earlier bullets share a square with one


def _fields(o: Objects):
    r = o.records
    return r[:, 0], r[:, 1], r[:, 2], o.alive


def _step_x(x, right, where):
    """-> (x moved one square its way where `where`, gone off the screen)."""
    moved = jnp.where(where, x + jnp.where(right == 1, 1, -1), x)
    return moved, where & ((moved < 0) | (moved > SIZE - 1))


def _lowest(bits):
    return bits & -bits


def _highest(bits):
    return jnp.where(bits == 0, 0, jnp.left_shift(1, 31 - jax.lax.clz(bits)))


def _nth(bits, n, pick):
    """The n-th (from 0) bit of `bits` in `pick`'s order (`_lowest` or `_highest`), or 0."""
    for r in range(BULLETS):
        bits = jnp.where(n > r, bits & ~pick(bits), bits)
    return jnp.where(n >= 0, pick(bits), 0)


def _slots(bits, width: int):
    """-> bool[width]: the slots set in `bits`."""
    return (jnp.right_shift(bits, jnp.arange(width)) & 1) == 1


def _square(flags, x, y, other: int):
    """-> int32[W]: each flagged object's square as one number, `other` (below every square)
    for the others, so two lists' unflagged objects never meet. Made by
    a reduction, so XLA keeps it in memory: a table over these numbers then compares one
    number a cell, where a table over the fields recomputes the object's move per cell."""
    fields = jnp.stack([jnp.where(flags, x, other), y], axis=1)
    return (fields * jnp.array([1, 16])).sum(axis=1)


def _on(flags, x, y, bx, by):
    """-> bool[bullets, list]: flagged objects on each bullet's square (bx, by)."""
    return flags[None, :] & (x[None, :] == bx[:, None]) & (y[None, :] == by[:, None])


def _ahead(flags, x, y, walked_first: bool):
    """For each bullet, how many flagged bullets on its square come before it: in walk
    order (higher slots) or in list order (lower slots)."""
    width = flags.shape[0]
    slot = jnp.arange(width)
    before = slot[None, :] > slot[:, None] if walked_first else slot[None, :] < slot[:, None]
    same = flags[None, :] & (x[:, None] == x[None, :]) & (y[:, None] == y[None, :])
    return (same & before).sum(axis=1)


def _key(records):
    """-> int32[W]: each record as one number (every field is -1..10, four bits each)."""
    weights = jnp.left_shift(1, 4 * jnp.arange(records.shape[1]))
    return ((records + 1) * weights).sum(axis=1)


def _earlier_twin(o: Objects, removed, new_records):
    """Whether a removed object's record (as the walk left it) equals an earlier one's as
    the step began (a small list: bullets, divers)."""
    width = o.alive.shape[0]
    earlier = jnp.arange(width)[None, :] < jnp.arange(width)[:, None]
    equal = _key(new_records)[:, None] == _key(o.records)[None, :]
    return (removed[:, None] & o.alive[None, :] & earlier & equal).any()


def friendly_bullets(f: Objects, fish: Objects, subs: Objects, reward):
    """Each bullet moves; off the screen it is gone; else it sinks the first fish left on
    its square, or else the first sub (+1, the bullet gone). -> (f, fish, subs, reward, twin)."""
    x, y, right, here = _fields(f)
    x, off = _step_x(x, right, here)
    on = here & ~off
    rank = _ahead(on, x, y, walked_first=True)
    fx, fy, _, _ = _fields(fish)
    fish_there = pack(_on(fish.alive, fx, fy, x, y) & on[:, None])  # [bullets]
    sx, sy, _, _ = _fields(subs)
    subs_there = pack(_on(subs.alive, sx, sy, x, y) & on[:, None])
    sunk_fish = _nth(fish_there, rank, _lowest)
    sunk_sub = _nth(subs_there, rank - jax.lax.population_count(fish_there), _lowest)
    hit = (sunk_fish | sunk_sub) != 0
    records = f.records.at[:, 0].set(x)
    twin = _earlier_twin(f, hit, records)
    fish = fish._replace(alive=fish.alive & ~_slots(_any_bits(sunk_fish), fish.alive.shape[0]))
    subs = subs._replace(alive=subs.alive & ~_slots(_any_bits(sunk_sub), subs.alive.shape[0]))
    f = Objects(records, on & ~hit, f.end)
    return f, fish, subs, reward + hit.sum(dtype=jnp.int32), twin


def _any_bits(bits):
    """The OR of a few bit masks (one per bullet)."""
    out = bits[0]
    for k in range(1, bits.shape[0]):
        out = out | bits[k]
    return out


def rescue(s: dict, divers: Objects):
    """Each diver on the sub (before or after its move) is picked up while fewer than six
    are aboard; the others' timers run, at 0 they move and off the screen are gone.
    -> (divers, twin)."""
    x, y, right, here = _fields(divers)
    timer = divers.records[:, 3]
    at_sub = here & (x == s["sub_x"]) & (y == s["sub_y"])
    moving = here & (timer == 0)
    moved, off = _step_x(x, right, moving)
    arrives = moving & ~off & (moved == s["sub_x"]) & (y == s["sub_y"])
    candidate = at_sub | arrives
    # Candidates the walk meets before each (higher slots): a popcount of the bits above.
    before = jax.lax.population_count(pack(candidate) & ~up_to(here.shape[0]))
    picked = candidate & (s["diver_count"] + before < FULL_CREW)
    # A diver left on the sub's square (no room) moves off it as any other.
    stays = here & ~picked
    x = jnp.where(stays | arrives, moved, x)
    timer = jnp.where(
        moving & (stays | arrives), DIVER_MOVE_INTERVAL, jnp.where(stays, timer - 1, timer)
    )
    records = divers.records.at[:, 0].set(x).at[:, 3].set(timer)
    twin = _earlier_twin(divers, picked, records)
    s["diver_count"] = s["diver_count"] + picked.sum(dtype=jnp.int32)
    return Objects(records, stays & ~off, divers.end), twin


def enemies(s: dict, group: Objects, f: Objects, reward, e_bullets: Objects | None = None):
    """Each enemy (subs with their shots, or fish): on the sub the game ends; at its move
    timer's 0 it moves (the move speed its next wait) and off the screen is gone, on the sub
    ends the game, else is sunk by the first bullet left on its square (+1, both gone). A
    sub's shot timer runs, and at 0 it fires from where it now is, gone or not.
    -> (group, f, reward, e_bullets, twin); the game's end goes to s["terminal"]."""
    x0, y, right, here = _fields(group)
    timer = group.records[:, 3]
    on_sub = here & (x0 == s["sub_x"]) & (y == s["sub_y"])
    moving = here & (timer == 0)
    timer = jnp.where(moving, s["move_speed"], jnp.where(here, timer - 1, timer))
    x, off = _step_x(x0, right, moving)
    on = moving & ~off
    arrives = on & (x == s["sub_x"]) & (y == s["sub_y"])
    s["terminal"] = s["terminal"] | (on_sub | arrives).any()
    bx, by, _, shots = _fields(f)
    # Bullet b is taken by the enemy the walk meets (k+1)-th on its square, k the bullets
    # before b there in list order: each enemy takes the first bullet left.
    meets = _square(on & ~arrives, x, y, other=-1000)
    meeting = pack(meets[None, :] == _square(shots, bx, by, other=-2000)[:, None])
    taker = _nth(meeting, _ahead(shots, bx, by, walked_first=False), _highest)
    sunk = _slots(_any_bits(taker), here.shape[0])
    # A twin of a sunk enemy stood on the bullet's square as the step began.
    twin = ((taker != 0)[:, None] & _on(here, x0, y, bx, by)).any()
    records = group.records.at[:, 0].set(x).at[:, 3].set(timer)
    f = f._replace(alive=shots & (taker == 0))
    reward = reward + (taker != 0).sum(dtype=jnp.int32)
    if e_bullets is not None:
        shot_timer = group.records[:, 4]
        fires = here & (shot_timer == 0)
        shot_timer = jnp.where(
            fires, ENEMY_SHOT_INTERVAL, jnp.where(here, shot_timer - 1, shot_timer)
        )
        records = records.at[:, 4].set(shot_timer)
        e_bullets = _append_shots(e_bullets, fires, records[:, :3])
    return Objects(records, here & ~off & ~sunk, group.end), f, reward, e_bullets, twin


def _append_shots(e: Objects, fires, shots) -> Objects:
    """The subs' shots after every enemy bullet, in walk order (last sub first): one slot
    per sub after the list's own, the last sub's first; compaction closes the gaps."""
    return Objects(
        jnp.concatenate([e.records, shots[::-1]]),
        jnp.concatenate([e.alive, fires[::-1]]),
        e.end,
    )


def enemy_bullets(s: dict, e: Objects) -> Objects:
    """Each enemy bullet: on the sub the game ends; it moves, and off the screen is gone or
    on the sub ends the game. Nothing it does depends on another."""
    x, y, right, here = _fields(e)
    on_sub = here & (x == s["sub_x"]) & (y == s["sub_y"])
    x, off = _step_x(x, right, here)
    arrives = here & ~off & (x == s["sub_x"]) & (y == s["sub_y"])
    s["terminal"] = s["terminal"] | (on_sub | arrives).any()
    return Objects(e.records.at[:, 0].set(x), here & ~off, e.end)
