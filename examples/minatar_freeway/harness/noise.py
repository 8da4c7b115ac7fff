"""Freeway's randomness as the port's noise (harness code, not generated).

The reference draws from the game's own legacy RandomState (`game.env.random`, named by the
spec's `[randomness] generator`) only in `_randomize_cars`: at reset, and in a step where the
chicken reaches the top row, `randint(1, 6, 8)` (each lane's speed 1..5) then `rand(8)`
(each lane drives right when its number is above 0.5, left below). The port's noise is one
value per lane, 0..9: `speed - 1`, plus 5 when the lane drives right.

Every step also begins with MinAtar's sticky-action draw, `rand()` with no arguments, from
the same RandomState (`game.random` is `game.env.random` after `seed`, and the recorder
wraps both names): sticky actions are off in this spec, so that draw never changes an
outcome and is left out of the noise.

A step without a crossing draws nothing else; its noise is filled with values from the same
distribution (uniform over 0..9), by a generator seeded from the step itself (reproducible),
so the reference's noise is distributed as the port's `sample_noise` and a correct port
never reads it. A number of exactly 0.5 (sign 0, a car that never moves right and has no
trail; probability 2**-53 a lane) cannot be expressed and is refused.
"""

import hashlib

import numpy as np

LANES = 8
SPEEDS = 5


def noise_from_draws(draws, before, action, env):
    if draws and draws[0].method == "rand" and not draws[0].args:
        draws = draws[1:]  # the sticky-action draw (sticky actions off)
    methods = [d.method for d in draws]
    if not methods:
        return _filler(before, action)
    if methods != ["randint", "rand"]:
        raise ValueError(f"expected randint(1, 6, 8) then rand(8), got {methods}")
    speeds = np.asarray(draws[0].value, dtype=np.int64)
    numbers = np.asarray(draws[1].value, dtype=np.float64)
    if speeds.shape != (LANES,) or numbers.shape != (LANES,) or np.any(numbers == 0.5):
        raise ValueError(f"unexpected draws: speeds {speeds}, numbers {numbers}")
    return (speeds - 1) + SPEEDS * (numbers > 0.5)


def _filler(before, action):
    digest = hashlib.sha256(np.asarray([int(action)], dtype=np.int64).tobytes())
    for name in sorted(before):
        digest.update(np.ascontiguousarray(before[name]).tobytes())
    filler = np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))
    return filler.integers(0, 2 * SPEEDS, size=LANES)
