"""Hand-written known-good port: a test subject for the verifier, not model output.

Crafter as a NumPy VectorEnv of B envs, each a Game (step.py) stepped in turn, with
next-step autoreset. Its state is the bridge's leaves (the reference's fields, one list of
records per kind whose `order` is the place among the world's objects); `set_state` builds
each env's Game from them and `get_state` reads them back.

A reset makes Crafter's world (worldgen.py) from numbers of the VectorEnv's own generator:
a simplex seed, then the uniforms the generator draws, so a seed reproduces its worlds and
each env's world is new; the player starts at the centre with Crafter's start counters and
the clock at step 0. The worlds a seed's resets make are kept once made (`_Stream`): a
world is a function of the seed and its place in the seed's stream alone."""

from __future__ import annotations

import numpy as np

from .objects import NOISE
from .observation import observe
from .player import Player
from .step import Game
from .world import ACHIEVEMENTS, ITEMS, MAX_ITEM, Thing, World, daylight
from .worldgen import MOST_DRAWS, SEED_HIGH, START, generate

KINDS = {
    "zombies": ("health", "counter"),
    "skeletons": ("health", "counter"),
    "cows": ("health",),
    "arrows": ("facing_x", "facing_y"),
    "plants": ("health", "grown"),
}
CAPACITY = {"zombies": 96, "skeletons": 56, "cows": 88, "arrows": 24, "plants": 32}
CHUNKS = 36


def state_from_reference(ref: dict) -> dict:
    return {name: np.array(value, copy=True) for name, value in ref.items()}


def state_to_reference(state: dict) -> dict:
    return {name: np.array(value, copy=True) for name, value in state.items()}


def _game(leaves: dict) -> Game:
    chunks = [int(c) for c in leaves["chunks"][: int(leaves["chunks.length"])]]
    world = World(leaves["mat_map"], chunks)
    pos, facing = leaves["player_pos"], leaves["facing"]
    player = Player((int(pos[0]), int(pos[1])), (int(facing[0]), int(facing[1])))
    player.inventory = {name: int(leaves[f"inventory.{name}"]) for name in ITEMS}
    player.achievements = {name: int(leaves[f"achievements.{name}"]) for name in ACHIEVEMENTS}
    player.sleeping = bool(leaves["sleeping"])
    player.last_health = int(leaves["player_last_health"])
    player.hunger, player.thirst = float(leaves["hunger"]), float(leaves["thirst"])
    player.fatigue, player.recover = float(leaves["fatigue"]), float(leaves["recover"])
    world.add(player)
    records = []
    for kind, fields in KINDS.items():
        for record in leaves[kind][: int(leaves[f"{kind}.length"])]:
            rest = dict(zip(fields, (int(v) for v in record[3:]), strict=True))
            records.append((int(record[0]), kind, (int(record[1]), int(record[2])), rest))
    # The world's list order; equal orders keep the kinds' order, as the bridge writes them.
    for _, kind, pos, rest in sorted(records, key=lambda r: r[0]):
        thing = Thing(kind, pos, health=rest.get("health", 0), counter=rest.get("counter", 0))
        if kind == "arrows":
            thing.facing = (rest["facing_x"], rest["facing_y"])
        thing.grown = rest.get("grown", 0)
        world.add(thing)
    game = Game(world, player)
    game.step_count = int(leaves["step"])
    game.last_health = int(leaves["last_health"])
    game.daylight = float(leaves["daylight"])
    game.unlocked = {name for name in ACHIEVEMENTS if bool(leaves[f"unlocked.{name}"])}
    return game


def _leaves(game: Game) -> dict:
    world, player = game.world, game.player
    leaves: dict = {"chunks": np.zeros(CHUNKS, np.int64)}
    for kind, fields in KINDS.items():
        leaves[kind] = np.zeros((CAPACITY[kind], 3 + len(fields)), np.int64)
    leaves["mat_map"] = world.mat.copy()
    leaves["player_pos"] = np.asarray(player.pos, np.int64)
    leaves["facing"] = np.asarray(player.facing, np.int64)
    leaves["sleeping"] = np.asarray(player.sleeping)
    leaves["player_last_health"] = np.asarray(player.last_health, np.int64)
    leaves["hunger"] = np.asarray(player.hunger, np.float64)
    leaves["thirst"] = np.asarray(player.thirst, np.float64)
    leaves["fatigue"] = np.asarray(player.fatigue, np.float64)
    leaves["recover"] = np.asarray(player.recover, np.float64)
    leaves["step"] = np.asarray(game.step_count, np.int64)
    leaves["last_health"] = np.asarray(game.last_health, np.int64)
    leaves["daylight"] = np.asarray(game.daylight, np.float64)
    for name in ITEMS:
        leaves[f"inventory.{name}"] = np.asarray(player.inventory[name], np.int64)
    for name in ACHIEVEMENTS:
        leaves[f"achievements.{name}"] = np.asarray(player.achievements[name], np.int64)
        leaves[f"unlocked.{name}"] = np.asarray(name in game.unlocked)
    leaves["chunks"][: len(world.chunks)] = world.chunks
    leaves["chunks.length"] = np.asarray(len(world.chunks), np.int64)
    rows: dict[str, list] = {kind: [] for kind in KINDS}
    others = [t for t in world.live() if t is not player]
    for order, thing in enumerate(others):
        rows[thing.kind].append([order, thing.pos[0], thing.pos[1], *_rest(thing)])
    for kind, records in rows.items():
        if len(records) > len(leaves[kind]):
            raise ValueError(f"{len(records)} {kind}, beyond the capacity {len(leaves[kind])}")
        if records:
            leaves[kind][: len(records)] = records
        leaves[f"{kind}.length"] = np.asarray(len(records), np.int64)
    return leaves


def _rest(thing: Thing) -> list[int]:
    """A record's numbers after `order, x, y`, as KINDS names them."""
    if thing.kind in ("zombies", "skeletons"):
        return [thing.health, thing.counter]
    if thing.kind == "cows":
        return [thing.health]
    if thing.kind == "arrows":
        return [thing.facing[0], thing.facing[1]]
    return [thing.health, thing.grown]


# Each creature's health when the generator makes it (objects.Cow, Zombie, Skeleton).
HEALTH = {"cows": 3, "zombies": 5, "skeletons": 3}


def start(simplex_seed: int, uniform) -> Game:
    """Env.reset's start: the world `generate` makes, the player added first (at the
    centre, facing down, 9 health, food, drink and energy), then the creatures in the
    generator's order, so the chunk keys and the list order are Crafter's."""
    return _built(*generate(simplex_seed, uniform))


def _built(mat: np.ndarray, made: list, centre: tuple[int, int]) -> Game:
    world = World(mat, [])
    player = Player(centre, (0, 1))
    for name in ("health", "food", "drink", "energy"):
        player.inventory[name] = MAX_ITEM
    player.last_health = MAX_ITEM
    world.add(player)
    for kind, pos in made:
        world.add(Thing(kind, pos, health=HEALTH[kind]))
    game = Game(world, player)
    game.last_health = MAX_ITEM
    game.daylight = daylight(0)
    return game


def _drawn(rng: np.random.Generator) -> tuple:
    """A new world's (materials, creatures, start) from a generator: the simplex seed, then
    as many uniforms as a world can draw (the generator takes them in order, the rest
    unused), so a world always takes the same count of numbers."""
    simplex_seed = int(rng.integers(0, SEED_HIGH))
    return generate(simplex_seed, iter(rng.random(MOST_DRAWS).tolist()).__next__)


# The worlds seeded resets made, per seed in the order its stream makes them, each with the
# generator's state after it. A world costs about 37 ms of CPU here, and a user's or the
# verifier's batches often start from the same seed (the verifier resets every VectorEnv it
# loads states into with seed 0, thousands of envs for L3's resync), so a seed's k-th
# world, a function of (seed, k) alone, is made once per process and copied after. The
# first seeds only, compactly (a uint8 map, the creatures as int16 rows: about 5 kB a world).
_KEPT: dict[int, list[tuple[np.ndarray, np.ndarray, dict]]] = {}
KEPT_SEEDS, KEPT_WORLDS = 2, 8192
KINDS_MADE = ("cows", "zombies", "skeletons")


class _Stream:
    """A VectorEnv's generator, with where it stands in its seed's stream of worlds while
    it has drawn nothing else since that seed (`at` None otherwise)."""

    def __init__(self, seed=None) -> None:
        self.rng = np.random.default_rng(seed)
        plain = isinstance(seed, int | np.integer)
        self.seed, self.at = (int(seed), 0) if plain else (None, None)

    def world(self) -> Game:
        if self.at is None:
            return _built(*_drawn(self.rng))
        kept = _KEPT.get(self.seed)
        if kept is None and len(_KEPT) < KEPT_SEEDS:
            kept = _KEPT[self.seed] = []
        if kept is not None and self.at < len(kept):
            mat, rows, after = kept[self.at]
            self.rng.bit_generator.state = after
            made = [(KINDS_MADE[k], (int(x), int(y))) for k, x, y in rows.tolist()]
            self.at += 1
            return _built(mat, made, START)
        mat, made, centre = _drawn(self.rng)
        if kept is not None and self.at == len(kept) < KEPT_WORLDS:
            rows = [(KINDS_MADE.index(kind), x, y) for kind, (x, y) in made]
            rows_array = np.asarray(rows, np.int16).reshape(-1, 3)
            kept.append((mat.astype(np.uint8), rows_array, self.rng.bit_generator.state))
        self.at += 1
        return _built(mat, made, centre)

    def random(self, shape) -> np.ndarray:
        self.at = None  # the stream's next world no longer follows from the seed alone
        return self.rng.random(shape)


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self._rng = _Stream()
        # Worlds are made when first needed: a world costs tens of milliseconds, and most
        # VectorEnvs are given their states (set_state) or a seeded reset at once.
        self._slots: list[Game | None] = [None] * num_envs
        self._ended = np.zeros(num_envs, bool)

    @property
    def _games(self) -> list[Game]:
        for i, game in enumerate(self._slots):
            if game is None:
                self._slots[i] = self._rng.world()
        return self._slots  # type: ignore[return-value]

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = _Stream(seed)
        mask = np.ones(self.num_envs, bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], bool)
        for i in np.flatnonzero(mask):
            self._slots[i] = self._rng.world()
            self._ended[i] = False
        return self._observe(), {}

    def _observe(self) -> np.ndarray:
        return np.stack([observe(g.world, g.player) for g in self._games])

    def sample_noise(self, actions) -> np.ndarray:
        return self._rng.random((self.num_envs, NOISE))

    def step_given_noise(self, actions, noise):
        actions = np.asarray(actions)
        reward = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        for i, game in enumerate(self._games):
            if self._ended[i]:
                self._slots[i] = self._rng.world()
                self._ended[i] = False
                continue
            reward[i], terminated[i], truncated[i] = game.step(int(actions[i]), noise[i])
        self._ended = terminated | truncated
        return self._observe(), reward, terminated, truncated, {}

    def step(self, actions):
        return self.step_given_noise(actions, self.sample_noise(actions))

    def set_state(self, states: dict) -> None:
        for i in range(self.num_envs):
            self._slots[i] = _game({name: np.array(v[i]) for name, v in states.items()})
        self._ended[:] = False

    def get_state(self) -> dict:
        rows = [_leaves(game) for game in self._games]
        return {name: np.stack([row[name] for row in rows]) for name in rows[0]}
