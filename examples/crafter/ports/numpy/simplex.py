"""Hand-written known-good port: a test subject for the verifier, not model output.

Kurt Spencer's OpenSimplex noise in three dimensions, as the `opensimplex` package (0.4.5.1)
computes it for Crafter's terrain, evaluated for whole arrays of points at once.

The noise at a point is a sum over points of a lattice (the integer points of a "stretched"
space) of each lattice point's gradient dotted with the offset to it, weighted by
(2 - |offset|^2)^4 where that is positive. The lattice cell holding the point is split into
three regions (the simplex at its origin, the one at its far corner, the octahedron between)
and the reference sums the region's own corners and two extra points chosen by which
corners are nearest. Those eight are not always every point within reach (about 3% of
points miss one small term), so the choice is made here exactly as the reference makes it,
for every point at once, and the terms are added in the reference's order."""

from __future__ import annotations

import itertools

import numpy as np

STRETCH = -1.0 / 6  # (1 / sqrt(3 + 1) - 1) / 3: into the lattice's coordinates
SQUISH = 1.0 / 3  # (sqrt(3 + 1) - 1) / 3: back out of them
NORM = 103.0
MASK = 0xFF
_LCG_MUL = 6364136223846793005
_LCG_ADD = 1442695040888963407


def _gradients() -> np.ndarray:
    """The 24 gradients, toward a rhombicuboctahedron's vertices: for each sign pattern
    (x's sign fastest, negative first; then y's, positive first; then z's, positive first),
    the long component 11 on x, then y, then z, the other two 4."""
    rows = []
    for sz, sy, sx in itertools.product((1, -1), (1, -1), (-1, 1)):
        for long in range(3):
            row = [4, 4, 4]
            row[long] = 11
            rows.append([row[0] * sx, row[1] * sy, row[2] * sz])
    return np.asarray(rows, np.float64)


GRADIENTS = _gradients()


def _bits(c: int) -> list[int]:
    """A corner of the unit cell by the reference's name for it: bit 0 x, bit 1 y, bit 2 z."""
    return [c & 1, c >> 1 & 1, c >> 2 & 1]


def _first(c: int, value: int) -> int:
    """The first axis (x, then y, else z) whose bit in c is `value`."""
    return next((i for i in range(2) if c >> i & 1 == value), 2)


def _table(rule) -> np.ndarray:
    return np.asarray([rule(c) for c in range(8)], np.int64)


def _flipped(c: int) -> list[int]:
    row = [1, 1, 1]
    row[_first(c, 0)] = -1
    return row


def _doubled(c: int) -> list[int]:
    row = [0, 0, 0]
    row[_first(c, 1)] = 2
    return row


def _pair(c: int, step: int) -> list[list[int]]:
    """A one-axis corner less each other axis (step -1), or a two-axis corner plus each of
    its own axes (step 1): the two extra points, axes in order."""
    rows = []
    for i in range(3):
        if (c >> i & 1) == (step > 0):
            row = _bits(c)
            row[i] += step if step > 0 else 0
            if step < 0:
                row[i] = -1
            rows.append(row)
    return rows if len(rows) == 2 else [[0, 0, 0], [0, 0, 0]]


BITS = _table(_bits)
FLIPPED = _table(_flipped)  # 1 on every axis but the first c leaves out, -1 there
DOUBLED = _table(_doubled)  # 2 on the first axis c has
NEAR_ORIGIN = _table(lambda c: _pair(c, -1))  # the origin among the two nearest corners
NEAR_FAR = _table(lambda c: _pair(c, 1))  # the far corner among the two nearest
# Each region's own corners, in the order the reference adds them (the simplices have four).
CORNERS = np.asarray(
    [
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]],
        [[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0]],
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]],
    ],
    np.int64,
)
USED = np.asarray([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)


def _wrap(value: int) -> int:
    """A signed 64-bit integer's wrap-around, as the reference's seeding overflows."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def permutation(seed: int) -> np.ndarray:
    """The permutation of 0..255 a seed picks: a 64-bit linear congruential generator,
    stepped three times to mix the seed, then once per place from the last down, each
    place taking a remaining value (the draw plus 31, modulo the places left)."""
    state = int(seed)
    for _ in range(3):
        state = _wrap(state * _LCG_MUL + _LCG_ADD)
    source = list(range(256))
    perm = [0] * 256
    for i in range(255, -1, -1):
        state = _wrap(state * _LCG_MUL + _LCG_ADD)
        # Python's modulo of the unwrapped sum: never negative for a positive divisor.
        r = (state + 31) % (i + 1)
        perm[i] = source[r]
        source[r] = source[i]
    return np.asarray(perm, np.int64)


class Simplex:
    """OpenSimplex(seed).noise3, for arrays of points."""

    def __init__(self, seed: int) -> None:
        self.perm = permutation(seed)
        # perm[(perm[x] + y) & 255] for every (x, y) mod 256: one lookup where there were two.
        cells = self.perm[:, None] + np.arange(256)[None, :]
        self.perm2 = self.perm[cells & MASK].reshape(-1)
        # Each hashed lattice point's gradient, one row per axis.
        self.gradient = np.ascontiguousarray(GRADIENTS[self.perm % len(GRADIENTS)].T)

    def noise3(self, x, y, z) -> np.ndarray:
        x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
        shape = x.shape
        # Points as rows per axis ([3, N]): the sums over axes stay fast.
        p = np.stack([x.ravel(), y.ravel(), z.ravel()])
        stretched = p + (p[0] + p[1] + p[2]) * STRETCH
        base = np.floor(stretched).astype(np.int64)
        squish = (base[0] + base[1] + base[2]) * SQUISH
        # Where the point lies in its cell, and the point from its cell's origin in real space.
        ins = stretched - base
        d0 = p - (base + squish)
        region, ext0, ext1 = _extras(ins)
        value = np.zeros(p.shape[1])
        for k in range(CORNERS.shape[1]):
            value += self._term(base, d0, CORNERS[region, k].T, USED[region, k])
        everywhere = np.ones(p.shape[1], bool)
        value += self._term(base, d0, ext0, everywhere)
        value += self._term(base, d0, ext1, everywhere)
        return (value / NORM).reshape(shape)

    def _term(self, base, d0, offset, used) -> np.ndarray:
        """One lattice point's term, `offset` [3, N] lattice steps from the cell's origin."""
        shift = (offset[0] + offset[1] + offset[2]) * SQUISH
        dx, dy, dz = d0 - offset - shift
        attn = 2 - dx * dx - dy * dy - dz * dz
        at = base + offset
        hashed = (self.perm2[(at[0] & MASK) << 8 | at[1] & MASK] + at[2]) & MASK
        g = self.gradient[:, hashed]
        dot = g[0] * dx + g[1] * dy + g[2] * dz
        attn = np.where(used & (attn > 0), attn, 0.0)
        attn *= attn
        return attn * attn * dot


def _extras(ins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each point's region (0 the simplex at the origin, 1 the one at the far corner, 2 the
    octahedron) and the two extra lattice points ([3, N] each) the reference adds, from
    where the point lies in its cell (`ins` [3, N], in [0, 1)^3)."""
    total = ins[0] + ins[1] + ins[2]
    region = np.where(total <= 1, 0, np.where(total >= 2, 1, 2))
    ext0, ext1 = np.zeros((len(total), 3), np.int64), np.zeros((len(total), 3), np.int64)
    for kind, extras in enumerate((_origin_extras, _far_extras, _middle_extras)):
        here = region == kind
        ext0[here], ext1[here] = extras(*ins[:, here], total[here])
    return region, ext0.T, ext1.T


# Each region's choice, with the reference's comparisons and ties, for its points only.
def _origin_extras(xi, yi, zi, total) -> tuple[np.ndarray, np.ndarray]:
    """The two nearest of the corners x, y, z (by their coordinate), and whether the
    origin is nearer than one of them."""
    a_pt, a_sc, b_pt, b_sc = np.full(len(xi), 1), xi, np.full(len(xi), 2), yi
    z_for_b = (a_sc >= b_sc) & (zi > b_sc)
    z_for_a = ~z_for_b & (a_sc < b_sc) & (zi > a_sc)
    b_pt, b_sc = np.where(z_for_b, 4, b_pt), np.where(z_for_b, zi, b_sc)
    a_pt, a_sc = np.where(z_for_a, 4, a_pt), np.where(z_for_a, zi, a_sc)
    rest = 1 - total
    origin_near = (rest > a_sc) | (rest > b_sc)
    c = np.where(origin_near, np.where(b_sc > a_sc, b_pt, a_pt), a_pt | b_pt)
    near, origin_near = NEAR_ORIGIN[c], origin_near[:, None]
    return np.where(origin_near, near[:, 0], BITS[c]), np.where(origin_near, near[:, 1], FLIPPED[c])


def _far_extras(xi, yi, zi, total) -> tuple[np.ndarray, np.ndarray]:
    """The two nearest of the corners yz, xz, xy (by the coordinate each leaves out), and
    whether the far corner is nearer than one of them."""
    a_pt, a_sc, b_pt, b_sc = np.full(len(xi), 6), xi, np.full(len(xi), 5), yi
    z_for_b = (a_sc <= b_sc) & (zi < b_sc)
    z_for_a = ~z_for_b & (a_sc > b_sc) & (zi < a_sc)
    b_pt, b_sc = np.where(z_for_b, 3, b_pt), np.where(z_for_b, zi, b_sc)
    a_pt, a_sc = np.where(z_for_a, 3, a_pt), np.where(z_for_a, zi, a_sc)
    rest = 3 - total
    far_near = (rest < a_sc) | (rest < b_sc)
    c = np.where(far_near, np.where(b_sc < a_sc, b_pt, a_pt), a_pt & b_pt)
    near, far_near = NEAR_FAR[c], far_near[:, None]
    return np.where(far_near, near[:, 0], BITS[c]), np.where(far_near, near[:, 1], DOUBLED[c])


def _middle_extras(xi, yi, zi, total) -> tuple[np.ndarray, np.ndarray]:
    """The octahedron: of each opposite pair of its corners the nearer, two of the three
    pairs kept, and which side (origin or far corner) each kept one lies on."""
    p1, p2, p3 = xi + yi, xi + zi, yi + zi
    a_far, b_far, c_far = p1 > 1, p2 > 1, p3 > 1
    a_sc, a_pt = np.where(a_far, p1 - 1, 1 - p1), np.where(a_far, 3, 4)
    b_sc, b_pt = np.where(b_far, p2 - 1, 1 - p2), np.where(b_far, 5, 2)
    c_sc, c_pt = np.where(c_far, p3 - 1, 1 - p3), np.where(c_far, 6, 1)
    for_a = (a_sc <= b_sc) & (a_sc < c_sc)
    for_b = ~for_a & (a_sc > b_sc) & (b_sc < c_sc)
    a_pt, a_far = np.where(for_a, c_pt, a_pt), np.where(for_a, c_far, a_far)
    b_pt, b_far = np.where(for_b, c_pt, b_pt), np.where(for_b, c_far, b_far)
    same = a_far == b_far
    both_far, one_each = (same & a_far)[:, None], (~same)[:, None]
    further, other = np.where(a_far, a_pt, b_pt), np.where(a_far, b_pt, a_pt)
    first = np.where(both_far, 1, np.where(one_each, FLIPPED[further], 0))
    second = np.where(
        both_far, DOUBLED[a_pt & b_pt], np.where(one_each, DOUBLED[other], FLIPPED[a_pt | b_pt])
    )
    return first, second
