"""Crafter's randomness as the port's noise (harness code, not generated).

Every draw of a Crafter step comes from the world's one legacy RandomState (`world.random`,
the spec's `[randomness] generator`), in this order: each object's `update`, in the
world's list order, for the objects within distance 18 of the player (the player first:
one `uniform()` on a collect whose requirements are met; a cow `uniform()` to move, then
`randint(0, 4)` for the way; a zombie up to three, a skeleton up to six, as their branches
go); then, every 10th step, each chunk's balance of zombies, skeletons and cows (a
`uniform()` to spawn or despawn, then `randint` for the cell or the victim); then, at night,
the render's noise, `uniform(32, 127, (H, W))`, which moves the stream on and nothing else
(the observation here is not the image).

How many draws a step makes, and where, depends on the state: so the noise is one row per
drawing site, each row that site's draws in the order it makes them (a tape the port reads
as the reference's code walks its branches), and a site that draws fewer leaves the rest of
its row to the filler. Sites (harness/reference.py logs the site of each draw):

    player            1 number
    zombies[k]        3 numbers   (the k-th zombie in its list at the start of the step)
    skeletons[k]      6 numbers
    cows[k]           2 numbers
    balance[c][kind]  2 numbers   (chunk c = (xmin // 12) * 6 + ymin // 12; kind 0 zombies,
                                   1 skeletons, 2 cows)

flattened in that order into float64[NOISE]. A `uniform()` is its value; `randint(lo, hi)`
drawing v is a number in [(v - lo) / n, (v - lo + 1) / n), n = hi - lo, from which the port
takes `lo + floor(u * n)` (placed a millionth from the interval's ends). Every number is
then uniform over [0, 1) as the port's `sample_noise` draws it, filled or drawn, and a
correct port never reads a filled one. The filler comes from a generator seeded by the step
(its state, action and draws): reproducible.
"""

import hashlib

import numpy as np

# The lists' capacities (envport.toml); a step's noise has a row for each slot.
ZOMBIES, SKELETONS, COWS = 96, 56, 88
CHUNKS, BALANCED = 36, 3
WIDTH = {"player": 1, "zombies": 3, "skeletons": 6, "cows": 2, "balance": 2}
COUNT = {"player": 1, "zombies": ZOMBIES, "skeletons": SKELETONS, "cows": COWS}
COUNT["balance"] = CHUNKS * BALANCED
OFFSET = {}
_at = 0
for _site in WIDTH:
    OFFSET[_site] = _at
    _at += WIDTH[_site] * COUNT[_site]
NOISE = _at
MARGIN = 1e-6
RENDER = (32, 127)


def _filler(before, action, draws):
    digest = hashlib.sha256(np.asarray([int(action)], dtype=np.int64).tobytes())
    for name in sorted(before):
        digest.update(np.ascontiguousarray(before[name]).tobytes())
    for draw in draws:
        digest.update(np.ascontiguousarray(draw.value).tobytes())
    return np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))


def _number(draw, filler):
    if draw.method == "uniform" and not draw.args and not draw.kwargs:
        return float(draw.value)
    if draw.method == "randint" and len(draw.args) == 2 and not draw.kwargs:
        low, high = (int(v) for v in draw.args)
        return (int(draw.value) - low + filler.uniform(MARGIN, 1 - MARGIN)) / (high - low)
    raise ValueError(f"unexpected game draw {draw.method}{draw.args}")


def _row(site):
    kind = site[0]
    if kind == "balance":
        return OFFSET[kind] + (site[1] * BALANCED + site[2]) * WIDTH[kind]
    if site[1] >= COUNT[kind]:
        raise ValueError(f"{kind}[{site[1]}] drew, beyond the noise's {COUNT[kind]} rows")
    return OFFSET[kind] + site[1] * WIDTH[kind]


def noise_from_draws(draws, before, action, env):
    filler = _filler(before, action, draws)
    noise = filler.random(NOISE)
    sites = list(env.unwrapped.game._world.draw_sites)
    if len(sites) > len(draws):
        raise ValueError(f"{len(sites)} sites logged for {len(draws)} draws")
    for draw in draws[len(sites) :]:
        if draw.method != "uniform" or tuple(draw.args[:2]) != RENDER:
            raise ValueError(f"a draw after the game's is not the render's: {draw.method}")
    used = {}
    for draw, site in zip(draws, sites, strict=False):
        row = _row(site)
        at = used.get(row, 0)
        if at >= WIDTH[site[0]]:
            raise ValueError(f"{site} drew more than {WIDTH[site[0]]} numbers in a step")
        noise[row + at] = _number(draw, filler)
        used[row] = at + 1
    return noise
