"""Hand-written known-good port: a test subject for the verifier, not model output.

Kurt Spencer's OpenSimplex noise in three dimensions, as the `opensimplex` package (0.4.5.1)
computes it for Crafter's terrain, for many points at once.

The noise at a point is a sum over points of a lattice (the integer points of a "stretched"
space) of each lattice point's gradient dotted with the offset to it, weighted by
(2 - |offset|^2)^4 where that is positive. The lattice cell holding the point is split into
three regions (the simplex at its origin, the one at its far corner, the octahedron between)
and the reference sums the region's own corners and two extra points chosen by which
corners are nearest; that choice is made here as the reference makes it.

Only the gradients depend on the seed (through its permutation); which lattice points a
point sums, its offsets to them and their weights depend on the point alone. Crafter reads
the same points in every world, so that geometry is computed once, in float64 with the
reference's own operations (`Geometry`): where a point lies exactly on a boundary between
regions, or exactly at the reach of a lattice point, the reference's float64 rounding
decides, and here it decides the same way. Each world's part is in jax.numpy, float32: the
permutation from the seed (its 64-bit arithmetic in pairs of uint32 words) and each
term's gradient dotted with its weighted offset (`noise3`), within a few 1e-7 of the
reference's float64 sum."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

NORM = 103.0
MASK = 0xFF
_LCG_MUL = 6364136223846793005
_LCG_ADD = 1442695040888963407


def _gradients() -> list[list[int]]:
    """The 24 gradients, toward a rhombicuboctahedron's vertices: for each sign pattern
    (x's sign fastest, negative first; then y's, positive first; then z's, positive first),
    the long component 11 on x, then y, then z, the other two 4."""
    rows = []
    for sz, sy, sx in itertools.product((1, -1), (1, -1), (-1, 1)):
        for long in range(3):
            row = [4, 4, 4]
            row[long] = 11
            rows.append([row[0] * sx, row[1] * sy, row[2] * sz])
    return rows


GRADIENTS = jnp.array(_gradients(), jnp.float32)
STRETCH = -1.0 / 6  # (1 / sqrt(3 + 1) - 1) / 3: into the lattice's coordinates
SQUISH = 1.0 / 3  # (sqrt(3 + 1) - 1) / 3: back out of them


def _bits(c: int) -> list[int]:
    """A corner of the unit cell by the reference's name for it: bit 0 x, bit 1 y, bit 2 z."""
    return [c & 1, c >> 1 & 1, c >> 2 & 1]


def _first(c: int, value: int) -> int:
    """The first axis (x, then y, else z) whose bit in c is `value`."""
    return next((i for i in range(2) if c >> i & 1 == value), 2)


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
            row[i] = row[i] + 1 if step > 0 else -1
            rows.append(row)
    return rows if len(rows) == 2 else [[0, 0, 0], [0, 0, 0]]


def _table(rule) -> np.ndarray:
    return np.array([rule(c) for c in range(8)], np.int64)


BITS = _table(_bits)
FLIPPED = _table(_flipped)  # 1 on every axis but the first c leaves out, -1 there
DOUBLED = _table(_doubled)  # 2 on the first axis c has
NEAR_ORIGIN = _table(lambda c: _pair(c, -1))  # the origin among the two nearest corners
NEAR_FAR = _table(lambda c: _pair(c, 1))  # the far corner among the two nearest
# Each region's own corners (the simplices have four, the octahedron six).
CORNERS = np.array(
    [
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]],
        [[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0]],
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]],
    ],
    np.int64,
)
USED = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)


# The seeding's 64-bit arithmetic in pairs of uint32 words (high, low): x64 is off.
def _words(value: int) -> tuple[jax.Array, jax.Array]:
    return jnp.uint32(value >> 32), jnp.uint32(value & 0xFFFFFFFF)


def _wide_product(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The 64-bit product of two uint32 words, by 16-bit halves (each partial fits 32 bits)."""
    a1, a0, b1, b0 = a >> 16, a & 0xFFFF, b >> 16, b & 0xFFFF
    low, cross1, cross2 = a0 * b0, a1 * b0, a0 * b1
    partial = low + (cross1 << 16)
    low_word = partial + (cross2 << 16)
    carries = (partial < low).astype(jnp.uint32) + (low_word < partial).astype(jnp.uint32)
    return a1 * b1 + (cross1 >> 16) + (cross2 >> 16) + carries, low_word


def _lcg(high: jax.Array, low: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One step of the seeding's generator: state * MUL + ADD modulo 2**64."""
    mul_high, mul_low = _words(_LCG_MUL)
    add_high, add_low = _words(_LCG_ADD)
    product_high, product_low = _wide_product(low, mul_low)
    product_high = product_high + low * mul_high + high * mul_low
    out_low = product_low + add_low
    carry = (out_low < product_low).astype(jnp.uint32)
    return product_high + add_high + carry, out_low


def _signed_mod(high: jax.Array, low: jax.Array, add: int, m: jax.Array) -> jax.Array:
    """(state + add) mod m, the state read as a signed 64-bit integer, the result in
    [0, m) (Python's modulo), for 1 <= m <= 256: every partial stays below 2**17."""
    w16 = jnp.uint32(1 << 16) % m
    w32 = w16 * w16 % m  # 2**32 mod m
    w64 = w32 * w32 % m  # 2**64 mod m: a negative state is its unsigned value less 2**64
    unsigned = ((high % m) * w32 + low % m) % m
    negative = high >> 31
    return ((unsigned + jnp.uint32(add) % m + m - negative * w64) % m).astype(jnp.int32)


def permutation(seed) -> jax.Array:
    """The permutation of 0..255 a seed (0 <= seed < 2**31) picks: a 64-bit linear
    congruential generator, stepped three times to mix the seed, then once per place from
    the last down, each place taking a remaining value (the draw plus 31, modulo the
    places left)."""
    high, low = jnp.uint32(0), jnp.asarray(seed).astype(jnp.uint32)
    for _ in range(3):
        high, low = _lcg(high, low)

    def place(k, carry):
        high, low, source, perm = carry
        high, low = _lcg(high, low)
        i = 255 - k
        r = _signed_mod(high, low, 31, (i + 1).astype(jnp.uint32))
        return high, low, source.at[r].set(source[i]), perm.at[i].set(source[r])

    start = (high, low, jnp.arange(256, dtype=jnp.int32), jnp.zeros(256, jnp.int32))
    return jax.lax.fori_loop(0, 256, place, start)[3]


class Geometry:
    """The seed-free part of the noise at fixed points (x, y, z float64 arrays of N): for
    each of the reference's eight terms a point sums, the lattice point (`at` int32[8, 3,
    N]) and the offset to it times its weight (`weighted` float32[8, 3, N]), in float64 as
    the reference computes them, then rounded once.

    A point whose every weight is a rounding residue (its lattice points all exactly at
    their reach, 2 - |offset|^2 = 0, which float64 leaves a few 1e-16 above; its noise
    about 1e-65) is noise whose sign alone decides Crafter's `> 0`: its weights are scaled
    up to about 1e-30 together, so float32 keeps that sign where it would round them to 0."""

    def __init__(self, x, y, z) -> None:
        p = np.stack([np.asarray(v, np.float64).ravel() for v in (x, y, z)])
        stretched = p + (p[0] + p[1] + p[2]) * STRETCH
        base = np.floor(stretched).astype(np.int64)
        squish = (base[0] + base[1] + base[2]) * SQUISH
        ins = stretched - base  # where the point lies in its cell, [0, 1)^3
        d0 = p - (base + squish)  # the point from its cell's origin, in real space
        region, ext0, ext1 = _extras(ins)
        offsets = [CORNERS[region, k].T for k in range(CORNERS.shape[1])] + [ext0, ext1]
        used = [USED[region, k] for k in range(CORNERS.shape[1])] + [True, True]
        at, weighted = [], []
        for offset, counted in zip(offsets, used, strict=True):
            shift = (offset[0] + offset[1] + offset[2]) * SQUISH
            d = d0 - offset - shift
            attn = 2 - d[0] * d[0] - d[1] * d[1] - d[2] * d[2]
            attn = np.where(counted & (attn > 0), attn, 0.0)
            attn *= attn
            at.append(base + offset)
            weighted.append(attn * attn * d)
        scale = np.max(np.abs(np.stack(weighted)), axis=(0, 1))
        lift = np.where((scale > 0) & (scale < 1e-30), 1e-30 / np.where(scale > 0, scale, 1), 1)
        self.at = np.stack(at).astype(np.int32)
        self.weighted = (np.stack(weighted) * lift).astype(np.float32)


def noise3(perm: jax.Array, at: jax.Array, weighted: jax.Array) -> jax.Array:
    """OpenSimplex(seed).noise3 at a Geometry's points, `perm` the seed's permutation:
    each term's gradient (the hashed lattice point's) dotted with its weighted offset, the
    terms added in the reference's order. -> float32[N].

    One term at a time (a scan): under a vmap of thousands of worlds each term's numbers
    alone are hundreds of megabytes, all eight at once several gigabytes."""

    def add(value, term):
        point, w = term
        hashed = perm[(perm[(perm[point[0] & MASK] + point[1]) & MASK] + point[2]) & MASK]
        g = GRADIENTS[hashed % GRADIENTS.shape[0]]
        return value + (g[:, 0] * w[0] + g[:, 1] * w[1] + g[:, 2] * w[2]), None

    value, _ = jax.lax.scan(add, jnp.zeros(at.shape[-1], jnp.float32), (at, weighted))
    return value / NORM


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
