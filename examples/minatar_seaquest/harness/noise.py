"""Seaquest's randomness as the port's noise (harness code, not generated).

Every step draws from the game's own legacy RandomState (`game.random`, the same object as
`game.env.random` once seeded; the spec's `[randomness] generator` names it): first MinAtar's
sticky-action draw, `rand()` (the step repeats the last action when it is below 0.1); then,
in a live step whose enemy spawn timer is 0, `_spawn_enemy`: `rand()` (from the left, moving
right, when below 1/2), `rand()` (a sub when below 1/3, else a fish) and `randint(low=1,
high=9)` (the row); then, when the diver spawn timer is 0, `_spawn_diver`: `rand()` (side)
and `randint(low=1, high=9)` (row). The enemy draws are made even when the spawn is then
cancelled (an object on that row moves the other way).

The port's noise is six numbers in [0, 1): the sticky draw, the enemy's side draw, its sub
draw, its row as a fraction (row r of 1..8 is any number in [(r-1)/8, r/8), the port takes
`1 + floor(8u)`), the diver's side draw and its row as a fraction. The harness picks a row's
number uniformly inside its interval (a millionth from its ends, so float32 rounding keeps
it there) by a generator seeded from the step itself (its state, action and draws:
reproducible). Draws a step does not make are filled the same way, uniform over [0, 1):
the reference's noise is then distributed as the port's `sample_noise`, and a correct port
never reads a filled value.
"""

import hashlib

import numpy as np

MARGIN = 1e-6
ROWS = 8


def _filler(before, action, draws):
    # Seeded by the step itself: its state, action and what it drew. The sticky draw is in
    # every step, so the many steps from the same state (each episode's first) get fills of
    # their own rather than one fill repeated, which would make the fills a lumpy sample.
    digest = hashlib.sha256(np.asarray([int(action)], dtype=np.int64).tobytes())
    for name in sorted(before):
        digest.update(np.ascontiguousarray(before[name]).tobytes())
    for draw in draws:
        digest.update(np.ascontiguousarray(draw.value).tobytes())
    return np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))


def _row(draw, filler):
    row = int(draw.value)
    if draw.kwargs.get("low", 1) != 1 or draw.kwargs.get("high", ROWS + 1) != ROWS + 1:
        raise ValueError(f"expected randint(low=1, high=9) for a row, got {draw.kwargs}")
    return (row - 1 + filler.uniform(MARGIN, 1 - MARGIN)) / ROWS


def noise_from_draws(draws, before, action, env):
    filler = _filler(before, action, draws)
    noise = filler.random(6)
    methods = [d.method for d in draws]
    if not methods or methods[0] != "rand" or draws[0].args:
        raise ValueError(f"expected the sticky-action draw rand() first, got {methods}")
    noise[0] = float(draws[0].value)
    rest = draws[1:]
    # Which spawns drew is told by the pattern: the enemy's three draws come first.
    if len(rest) in (3, 5):
        if [d.method for d in rest[:3]] != ["rand", "rand", "randint"]:
            raise ValueError(f"expected the enemy's rand(), rand(), randint(), got {methods}")
        noise[1], noise[2] = float(rest[0].value), float(rest[1].value)
        noise[3] = _row(rest[2], filler)
        rest = rest[3:]
    if len(rest) == 2:
        if [d.method for d in rest] != ["rand", "randint"]:
            raise ValueError(f"expected the diver's rand(), randint(), got {methods}")
        noise[4] = float(rest[0].value)
        noise[5] = _row(rest[1], filler)
        rest = []
    if rest:
        raise ValueError(f"unexpected draws in a Seaquest step: {methods}")
    return noise
