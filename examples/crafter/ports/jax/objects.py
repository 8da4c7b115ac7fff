"""Hand-written known-good port: a test subject for the verifier, not model output.

The noise's layout and the update of one creature, arrow or plant (objects.py's Cow,
Zombie, Skeleton, Arrow, Plant). Each kind's rule is worked out for the slot whatever its
kind (under `vmap` a switch on the kind would run every branch anyway, each returning the
whole world, maps included): each gives where the object ends up and what it does to
others, and `update_object` keeps the one of the slot's kind and writes it back once."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .world import (
    AREA,
    ARROW,
    ARROW_WALKABLE,
    COW,
    DIRECTIONS,
    FURNACE,
    PATH,
    PLAYER,
    SKELETON,
    TABLE,
    UPDATE_RADIUS,
    WALKABLE,
    ZOMBIE,
    World,
    add_key,
    add_object,
    at,
    chunk_of,
    distance,
    has,
    inside,
    is_free,
    read,
    set_cell,
    toward,
    write,
)

# The noise: a row per drawing site, each that site's draws in the order its code makes
# them (the player, then each zombie, skeleton and cow by its place in its kind's list,
# then each chunk's balance of each kind), flattened.
WIDTH = {"player": 1, "zombies": 3, "skeletons": 6, "cows": 2, "balance": 2}
COUNT = {"player": 1, "zombies": 96, "skeletons": 56, "cows": 88, "balance": 36 * 3}
OFFSET: dict[str, int] = {}
_at = 0
for _site, _width in WIDTH.items():
    OFFSET[_site] = _at
    _at += _width * COUNT[_site]
NOISE = _at
WIDEST = max(WIDTH.values())
# Each kind's first row and width (arrows and plants draw nothing: row 0, unread).
_ROW0 = jnp.array([OFFSET["zombies"], OFFSET["skeletons"], OFFSET["cows"], 0, 0], jnp.int32)
_ROWW = jnp.array([WIDTH["zombies"], WIDTH["skeletons"], WIDTH["cows"], 0, 0], jnp.int32)


def pick(u, n) -> jax.Array:
    """randint(0, n) from its number in [0, 1)."""
    return jnp.minimum(jnp.floor(u * n).astype(jnp.int32), n - 1)


def _direction(u) -> tuple[jax.Array, jax.Array]:
    d = DIRECTIONS[pick(u, 4)]
    return d[0], d[1]


def row(noise, kind, site) -> jax.Array:
    """The slot's site's numbers (WIDEST of them; a narrower row's tail is unread)."""
    return jax.lax.dynamic_slice(noise, (_ROW0[kind] + site * _ROWW[kind],), (WIDEST,))


def _cow(u):
    """-> (wants to move, dx, dy)."""
    dx, dy = _direction(u[1])
    return u[0] < 0.5, dx, dy


def _zombie(u, x, y, px, py):
    near = distance(x, y, px, py) <= 8
    chase = near & (u[0] < 0.9)
    tx, ty = toward(x, y, px, py, u[1] < 0.8)
    rx, ry = _direction(jnp.where(near, u[1], u[0]))
    return jnp.bool_(True), jnp.where(chase, tx, rx), jnp.where(chase, ty, ry)


def _skeleton(w: World, u, x, y):
    """-> (wants to move, dx, dy, shoots): flee when within 3 (done if the cell was free),
    else shoot within 5 half the time, else close in within 8, else wander."""
    d = distance(x, y, w.player_x, w.player_y)
    close = d <= 3
    ax, ay = toward(x, y, w.player_x, w.player_y, u[0] < 0.6)
    fled = close & is_free(w, x - ax, y - ay, WALKABLE)
    k = close.astype(jnp.int32)  # the numbers drawn so far
    shoot = (d <= 5) & (u[k] < 0.5)
    k = k + (d <= 5).astype(jnp.int32)
    chase = ~shoot & (d <= 8) & (u[k] < 0.3)
    cx, cy = toward(x, y, w.player_x, w.player_y, u[k + 1] < 0.6)
    k = k + (~shoot & (d <= 8)).astype(jnp.int32)
    wander = ~shoot & ~chase & (u[k] < 0.2)
    rx, ry = _direction(u[k + 1])
    dx = jnp.where(fled, -ax, jnp.where(chase, cx, rx))
    dy = jnp.where(fled, -ay, jnp.where(chase, cy, ry))
    return fled | chase | wander, dx, dy, ~fled & shoot


def _arrow(w: World, s, x, y):
    """-> (hits: the code of what is ahead, or 0; stops: into a cell it cannot fly)."""
    tx, ty = x + read(w.fx, s), y + read(w.fy, s)
    material, code = at(w, tx, ty)
    stops = (code == 0) & ~has(ARROW_WALKABLE, material)
    return code, stops, tx, ty, material


def _plant_bitten(w: World, x, y) -> jax.Array:
    """A zombie, skeleton or cow on a cell beside the plant."""
    bitten = jnp.bool_(False)
    for i in range(4):
        _, code = at(w, x + DIRECTIONS[i, 0], y + DIRECTIONS[i, 1])
        other = jnp.clip(code - 1, 0, w.kind.shape[0] - 1)
        creature = (code > 0) & (code != PLAYER) & (read(w.kind, other) <= COW)
        bitten = bitten | creature
    return bitten


def update_object(w: World, s, noise, on=True) -> World:
    """The update of the object in slot s, when `on` and it is within reach of the player
    (each write is masked by it: a slot passed with `on` false is left as it was)."""
    kind, x, y, health = read(w.kind, s), read(w.x, s), read(w.y, s), read(w.health, s)
    alive, counter, fx, fy = read(w.alive, s), read(w.counter, s), read(w.fx, s), read(w.fy, s)
    active = on & alive & (distance(x, y, w.player_x, w.player_y) < UPDATE_RADIUS)
    u = row(noise, kind, read(w.site, s))
    creature = kind <= COW
    removed = creature & (health <= 0)

    cow_go, cow_dx, cow_dy = _cow(u)
    zom_go, zom_dx, zom_dy = _zombie(u, x, y, w.player_x, w.player_y)
    ske_go, ske_dx, ske_dy, shoots = _skeleton(w, u, x, y)
    hit, stops, tx, ty, ahead = _arrow(w, s, x, y)
    go = jnp.select([kind == COW, kind == ZOMBIE, kind == SKELETON, kind == ARROW],
                    [cow_go, zom_go, ske_go, (hit == 0) & ~stops], False)  # fmt: skip
    dx = jnp.select([kind == COW, kind == ZOMBIE, kind == SKELETON], [cow_dx, zom_dx, ske_dx],
                    fx)  # fmt: skip
    dy = jnp.select([kind == COW, kind == ZOMBIE, kind == SKELETON], [cow_dy, zom_dy, ske_dy],
                    fy)  # fmt: skip
    walk = jnp.where(kind == ARROW, ARROW_WALKABLE, WALKABLE)
    arrow_gone = (kind == ARROW) & ((hit != 0) | stops)
    removed = active & (removed | arrow_gone)
    moves = active & go & is_free(w, x + dx, y + dy, walk) & ~removed
    nx, ny = jnp.where(moves, x + dx, x), jnp.where(moves, y + dy, y)

    # Plants grow and are bitten by a creature beside them; dead ones go.
    plant = active & (kind == 4)
    bitten = plant & _plant_bitten(w, x, y)
    health = jnp.where(bitten, jnp.maximum(health - 1, 0), health)
    removed = removed | (plant & (health <= 0))
    grown = read(w.grown, s) + plant.astype(jnp.int32)

    # A zombie beside the player after its move hits it, or cools down.
    zombie = active & (kind == ZOMBIE)
    beside = zombie & (distance(nx, ny, w.player_x, w.player_y) <= 1)
    cooling = beside & (counter > 0)
    strikes = beside & ~cooling
    damage = jnp.where(strikes, jnp.where(w.sleeping, 7, 2), 0)
    counter = jnp.where(cooling, counter - 1, jnp.where(strikes, 5, counter))
    # A skeleton reloads each update and shoots the way of the player when loaded.
    skeleton = active & (kind == SKELETON)
    counter = jnp.where(skeleton, jnp.maximum(counter - 1, 0), counter)
    sx, sy = toward(x, y, w.player_x, w.player_y)
    ax, ay = x + sx, y + sy
    fires = skeleton & shoots & (counter == 0) & ((sx != 0) | (sy != 0))
    fires = fires & is_free(w, ax, ay, ARROW_WALKABLE)
    counter = jnp.where(fires, 4, counter)

    w = w._replace(
        x=write(w.x, s, nx), y=write(w.y, s, ny), health=write(w.health, s, health),
        counter=write(w.counter, s, counter), grown=write(w.grown, s, grown),
        alive=write(w.alive, s, alive & ~removed),
    )  # fmt: skip
    w = add_key(w, nx, ny, moves & (chunk_of(nx, ny) != chunk_of(x, y)))
    w = _arrow_lands(w, s, active & (kind == ARROW), hit, stops, tx, ty, ahead)
    inv = w.inventory
    w = w._replace(inventory=inv.at[0].set(jnp.maximum(inv[0] - damage, 0)))
    return add_object(w, fires, ARROW, ax, ay, fx=sx, fy=sy)


def _arrow_lands(w: World, s, arrow, hit, stops, tx, ty, ahead) -> World:
    """What an arrow hits loses 2 health; a table or furnace it flies into becomes path."""
    on_player = arrow & (hit == PLAYER)
    on_object = arrow & (hit != 0) & (hit != PLAYER)
    other = jnp.clip(hit - 1, 0, w.health.shape[0] - 1)
    struck = read(w.health, other)
    health = write(w.health, other, jnp.where(on_object, jnp.maximum(struck - 2, 0), struck))
    inv = w.inventory.at[0].set(jnp.where(on_player, jnp.maximum(w.inventory[0] - 2, 0),
                                          w.inventory[0]))  # fmt: skip
    breaks = arrow & stops & inside(tx, ty) & ((ahead == TABLE) | (ahead == FURNACE))
    w = w._replace(health=health, inventory=inv)
    if w.broke is None:
        return w._replace(mat=set_cell(w.mat, tx, ty, PATH, breaks))
    broke = write(w.broke, jnp.where(breaks, s, w.broke.shape[0]), tx * AREA + ty)
    return w._replace(broke=broke)
