"""Asterix's randomness as the port's noise (harness code, not generated).

Every step draws from the game's own legacy RandomState (`game.random`, the same object as
`game.env.random` once seeded; the spec's `[randomness] generator` names it): first MinAtar's
sticky-action draw, `rand()` (the step repeats the last action when it is below 0.1); then,
in a step whose spawn timer is 0, the spawn: `rand()` (the object enters from the left,
moving right, when below 1/2), `rand()` (it is gold when below 1/3) and, when a slot is free,
`randint(n)` (which of the n free slots, in slot order).

The port's noise is four numbers in [0, 1): the sticky draw, the side draw, the gold draw,
and the slot as a fraction: the k-th of n free slots is any number in [k/n, (k+1)/n), so the
port takes `floor(u * n)`. The harness picks that number uniformly inside the interval (a
millionth away from its ends, so float32 rounding keeps it there), by a generator seeded
from the step itself (reproducible). Draws a step does not make are filled the same way,
uniform over [0, 1): the reference's noise is then distributed as the port's `sample_noise`,
and a correct port never reads a filled value.
"""

import hashlib

import numpy as np

MARGIN = 1e-6


def _filler(before, action):
    digest = hashlib.sha256(np.asarray([int(action)], dtype=np.int64).tobytes())
    for name in sorted(before):
        digest.update(np.ascontiguousarray(before[name]).tobytes())
    return np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))


def noise_from_draws(draws, before, action, env):
    filler = _filler(before, action)
    noise = filler.random(4)
    methods = [d.method for d in draws]
    if not methods or methods[0] != "rand" or draws[0].args:
        raise ValueError(f"expected the sticky-action draw rand() first, got {methods}")
    noise[0] = float(draws[0].value)
    spawn = methods[1:]
    if spawn not in ([], ["rand", "rand"], ["rand", "rand", "randint"]):
        raise ValueError(f"expected rand(), rand() and maybe randint(n) after it, got {methods}")
    if spawn:
        noise[1] = float(draws[1].value)
        noise[2] = float(draws[2].value)
    if len(spawn) == 3:
        free = int(draws[3].args[0])
        chosen = int(draws[3].value)
        noise[3] = (chosen + filler.uniform(MARGIN, 1 - MARGIN)) / free
    return noise
