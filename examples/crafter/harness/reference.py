"""Crafter as the harness sees it (harness code, beside the spec).

`make` builds `crafter.Env` at its defaults (a 64x64 world, a 9x9 view of which the image
shows 9x7 cells of map, 64x64 pixels, 10,000 steps) behind Gymnasium's API: Crafter's old
4-tuple `done` splits into `terminated` (health down to 0) and `truncated` (the length
reached alive). The observation is the semantic view the agent's image shows, as ids
(docs/spec: `[observation.grid]`): the 9x7 cells around the player, `obs[x][y]`, each the
material's id (1 water .. 12 furnace) or the id of the object standing there (13 player,
14 cow, 15 zombie, 16 skeleton, 17 arrow, 18 plant; Crafter's `SemanticView` numbering),
0 off the map; then the 16 inventory counts in Crafter's item order. Pixels are not compared.
An action outside Discrete(17) is refused (Crafter would read -1 as Python's last index).

Three things make the reference's draws declarable (harness/noise.py); the first two
change nothing it does, the third fixes what Crafter leaves to memory addresses:
- Crafter's objects each keep the world's generator as `self.random`, taken when they are
  made; the recorder replaces `world.random` after a reset and between L1's examples, so
  `Object.random` is made to read `world.random` at each draw.
- Each draw a step makes in the game (an object's update, a chunk's balance) is logged
  with its site (`draw_sites`): which object, by kind and place in its list at the start
  of the step, or which chunk and kind. The render's night noise draws unlogged, last.
- A chunk's objects are a Python `set`, whose order (object ids, memory addresses) picks
  the victim of a despawn; here a chunk's set iterates in the world's list order. The
  victim stays uniform among the chunk's creatures of the kind, as in Crafter.

A reset to a (seed, episode) met before writes back the world Crafter made for it (the
generator takes about a second a world), with the generator's state after it.

The state (`read_state`/`write_state`): the material map, the player, the objects as one
list per kind, each record starting with `order`, its place among the world's objects
(Crafter updates them in that one list's order, across kinds), the chunk keys in the
order Crafter's dict holds them (the order chunks are balanced in; a chunk no object ever
entered has none and is never balanced), the step counter, daylight and the unlocked set.
"""

from __future__ import annotations

import collections
import types
from typing import Any, ClassVar

import crafter
import gymnasium
import numpy as np
from crafter import constants, objects

AREA = 64
CHUNK = 12
CHUNKS_PER_SIDE = -(-AREA // CHUNK)
VIEW = (9, 7)
MATERIALS = list(constants.materials)
ITEMS = list(constants.items)
ACHIEVEMENTS = list(constants.achievements)
# Each kind's list and the record after `order, x, y`.
KINDS = {
    "zombies": (objects.Zombie, ("health", "cooldown")),
    "skeletons": (objects.Skeleton, ("health", "reload")),
    "cows": (objects.Cow, ("health",)),
    "arrows": (objects.Arrow, ("facing_x", "facing_y")),
    "plants": (objects.Plant, ("health", "grown")),
}
KIND_OF = {cls: name for name, (cls, _) in KINDS.items()}
# The balance's kinds, in the order `Env._balance_chunk` balances them.
BALANCED = {objects.Zombie: 0, objects.Skeleton: 1, objects.Cow: 2}
COUNTERS = ("_hunger", "_thirst", "_fatigue", "_recover")


class _Sited:
    """The world's generator, logging the site of each draw made through it."""

    def __init__(self, inner: Any, log: list, site: tuple) -> None:
        self._inner, self._log, self._site = inner, log, site

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)

        def logged(*args: Any, **kwargs: Any) -> Any:
            self._log.append(self._site)
            return method(*args, **kwargs)

        return logged


def _object_random(obj: Any) -> Any:
    world = obj.world
    log = getattr(world, "draw_sites", None)
    site = getattr(world, "site_of", {}).get(id(obj))
    if log is None or site is None:
        return world.random
    return _Sited(world.random, log, site)


# Read at each draw; `Object.__init__`'s `self.random = world.random` is ignored.
objects.Object.random = property(_object_random, lambda obj, value: None)


class _ListOrdered(set):
    """A chunk's objects, iterated in the world's list order (not by memory address)."""

    def __init__(self, world: Any) -> None:
        super().__init__()
        self._world = world

    def __iter__(self):  # type: ignore[no-untyped-def]
        index = self._world._obj_map
        return iter(sorted(set.__iter__(self), key=lambda obj: int(index[tuple(obj.pos)])))


def _fresh_chunks(world: Any) -> collections.defaultdict:
    return collections.defaultdict(lambda: _ListOrdered(world))


def _reset_world(world: Any, seed: Any = None) -> None:
    type(world).reset(world, seed=seed)
    world._chunks = _fresh_chunks(world)


def chunk_index(key: tuple) -> int:
    xmin, _, ymin, _ = key
    return (xmin // CHUNK) * CHUNKS_PER_SIDE + ymin // CHUNK


def chunk_key(index: int) -> tuple:
    x, y = divmod(int(index), CHUNKS_PER_SIDE)
    xmin, ymin = x * CHUNK, y * CHUNK
    return (xmin, min(xmin + CHUNK, AREA), ymin, min(ymin + CHUNK, AREA))


class _Game(crafter.Env):
    """crafter.Env, logging the site of each balance draw."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._world.reset = types.MethodType(_reset_world, self._world)
        self._world.draw_sites = []
        self._world.site_of = {}

    def _balance_object(self, chunk, objs, cls, *rest):  # type: ignore[no-untyped-def]
        world = self._world
        inner = world.random
        site = ("balance", chunk_index(chunk), BALANCED[cls])
        world.random = _Sited(inner, world.draw_sites, site)
        try:
            super()._balance_object(chunk, objs, cls, *rest)
        finally:
            world.random = inner


# Crafter's generator takes about a second a world here, and most checks reset to the same
# few seeds (each L1 example starts from one): a world is a function of (seed, episode)
# alone, so the worlds made are kept and written back, with the generator's state after.
WORLDS_KEPT = 64
_WORLDS: dict[tuple, tuple] = {}


class CrafterEnv(gymnasium.Env):
    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, **kwargs: Any) -> None:
        self.game = _Game(**kwargs)
        self.action_space = gymnasium.spaces.Discrete(len(constants.actions))
        size = VIEW[0] * VIEW[1] + len(ITEMS)
        self.observation_space = gymnasium.spaces.Box(0, 18, (size,), np.uint8)

    def reset(self, *, seed: int | None = None, options: dict | None = None):  # type: ignore[override]
        super().reset(seed=seed)
        game = self.game
        if seed is not None:
            # Crafter seeds episode e's world with hash((seed, e)): a seeded reset starts over.
            game._seed, game._episode = int(seed), 0
        key = (game._seed, game._episode + 1)
        made = _WORLDS.get(key)
        if made is None:
            game.reset()
            _WORLDS[key] = (read_state(self), game._world.random.get_state())
            while len(_WORLDS) > WORLDS_KEPT:
                del _WORLDS[next(iter(_WORLDS))]
        else:
            # The world Crafter made for this seed and episode before, as it left it.
            game._episode += 1
            game._world.reset(seed=0)
            game._player = objects.Player(game._world, (AREA // 2, AREA // 2))
            write_state(self, made[0])
            game._world.random.set_state(made[1])
        return self.observe(), {}

    def step(self, action: Any):  # type: ignore[override]
        # Crafter would read a negative action as a Python index; outside the space is refused.
        if not self.action_space.contains(int(action)):
            raise ValueError(f"action {action!r} is outside Discrete({self.action_space.n})")
        world = self.game._world
        world.draw_sites.clear()
        world.site_of = _sites_of(self.game)
        try:
            _, reward, done, _ = self.game.step(int(action))
        finally:
            world.site_of = {}
        dead = self.game._player.health <= 0
        return self.observe(), float(reward), bool(dead), bool(done and not dead), {}

    def observe(self) -> np.ndarray:
        return observe(self.game)


def _sites_of(game: Any) -> dict[int, tuple]:
    """Each object's site at the start of a step: its kind and place in its kind's list."""
    sites: dict[int, tuple] = {id(game._player): ("player", 0)}
    counts = collections.Counter()
    for obj in game._world.objects:
        kind = KIND_OF.get(type(obj))
        if kind is not None:
            sites[id(obj)] = (kind, counts[kind])
            counts[kind] += 1
    return sites


def observe(game: Any) -> np.ndarray:
    semantic = game._sem_view()
    view = np.zeros(VIEW, np.uint8)
    px, py = (int(v) for v in game._player.pos)
    for x in range(VIEW[0]):
        for y in range(VIEW[1]):
            cx, cy = px + x - VIEW[0] // 2, py + y - VIEW[1] // 2
            if 0 <= cx < AREA and 0 <= cy < AREA:
                view[x, y] = semantic[cx, cy]
    inventory = [game._player.inventory[name] for name in ITEMS]
    return np.concatenate([view.ravel(), np.asarray(inventory, np.uint8)])


def make(**kwargs: Any) -> gymnasium.Env:
    return CrafterEnv(**kwargs)


def read_state(env: gymnasium.Env) -> dict[str, Any]:
    game = env.unwrapped.game  # type: ignore[attr-defined]
    world, player = game._world, game._player
    state: dict[str, Any] = {
        "mat_map": np.asarray(world._mat_map, np.int64),
        "player_pos": [int(v) for v in player.pos],
        "facing": [int(v) for v in player.facing],
        "sleeping": bool(player.sleeping),
        "player_last_health": int(player._last_health),
        "step": int(game._step),
        "last_health": int(game._last_health),
        "daylight": float(world.daylight),
        "chunks": [chunk_index(key) for key in world._chunks],
    }
    for name in COUNTERS:
        state[name.lstrip("_")] = float(getattr(player, name))
    # The groups' leaves by dotted name: a divergence reads `inventory.wood`.
    state.update({f"inventory.{name}": int(player.inventory[name]) for name in ITEMS})
    for name in ACHIEVEMENTS:
        state[f"achievements.{name}"] = int(player.achievements[name])
        state[f"unlocked.{name}"] = name in game._unlocked
    lists: dict[str, list] = {name: [] for name in KINDS}
    others = [obj for obj in world.objects if obj is not player]
    for order, obj in enumerate(others):
        kind = KIND_OF[type(obj)]
        record = [order, int(obj.pos[0]), int(obj.pos[1])]
        for field in KINDS[kind][1]:
            if field.startswith("facing_"):
                record.append(int(obj.facing["xy".index(field[-1])]))
            else:
                record.append(int(getattr(obj, field)))
        lists[kind].append(record)
    state.update(lists)
    return state


def write_state(env: gymnasium.Env, state: dict[str, Any]) -> None:
    game = env.unwrapped.game  # type: ignore[attr-defined]
    world, player = game._world, game._player
    world._mat_map[:] = np.asarray(state["mat_map"], np.uint8)
    world._objects = [None]
    world._obj_map[:] = 0
    world._chunks = _fresh_chunks(world)
    for index in state["chunks"]:
        world._chunks[chunk_key(index)]  # the key, in Crafter's order, before any object
    world.daylight = float(state["daylight"])
    game._step = int(state["step"])
    game._last_health = int(state["last_health"])
    game._unlocked = {name for name in ACHIEVEMENTS if state[f"unlocked.{name}"]}
    player.pos = np.asarray(state["player_pos"], np.int64)
    player.facing = tuple(int(v) for v in state["facing"])
    player.sleeping = bool(state["sleeping"])
    player._last_health = int(state["player_last_health"])
    for name in COUNTERS:
        value = float(state[name.lstrip("_")])
        setattr(player, name, int(value) if value.is_integer() else value)
    player.inventory = {name: int(state[f"inventory.{name}"]) for name in ITEMS}
    player.achievements = {name: int(state[f"achievements.{name}"]) for name in ACHIEVEMENTS}
    player.removed = False
    world.add(player)
    records = []
    for kind in KINDS:
        for record in state[kind]:
            records.append((int(record[0]), kind, [int(v) for v in record]))
    # The world's list order; equal orders (a drawn state) keep the kinds' order.
    for _, kind, record in sorted(records, key=lambda r: r[0]):
        world.add(_made(world, player, kind, record))


def _made(world: Any, player: Any, kind: str, record: list[int]) -> Any:
    pos = (record[1], record[2])
    rest = dict(zip(KINDS[kind][1], record[3:], strict=True))
    if kind == "zombies":
        obj = objects.Zombie(world, pos, player)
        obj.cooldown = rest["cooldown"]
    elif kind == "skeletons":
        obj = objects.Skeleton(world, pos, player)
        obj.reload = rest["reload"]
    elif kind == "cows":
        obj = objects.Cow(world, pos)
    elif kind == "arrows":
        obj = objects.Arrow(world, pos, np.array((rest["facing_x"], rest["facing_y"])))
    else:
        obj = objects.Plant(world, pos)
        obj.grown = rest["grown"]
    if "health" in rest:
        obj.health = rest["health"]
    return obj
