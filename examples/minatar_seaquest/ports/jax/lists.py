"""Seaquest's object lists in JAX, as the game's Python lists behave within a step.

A list is records `[W, fields]` plus an `alive` mask `[W]` in list order (the game appends
at the end and `list.remove` takes an object out). Within a step nothing moves: a removed
object is only marked dead, an appended one goes after every slot used so far, so "the first
object in the list that ..." is the first alive slot; `compact` closes the gaps at the end of
the step, keeping the order. The walks read and write one slot at a time (they touch one
object each); `compact` moves every record at once.
Hand-written known-good port, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Objects(NamedTuple):
    records: jax.Array  # int32[W, F]
    alive: jax.Array  # bool[W]
    end: jax.Array  # int32: the slot the next appended record takes


def objects(records, length, room: int) -> Objects:
    capacity, fields = records.shape
    padded = jnp.concatenate([records, jnp.zeros((room, fields), records.dtype)])
    alive = jnp.arange(capacity + room) < length
    return Objects(padded, alive, jnp.asarray(length, jnp.int32))


def append(o: Objects, go, record) -> Objects:
    """Appends `record` [F] when `go` (into the slot after every one used so far)."""
    end = o.end
    kept = o.records[end]
    return Objects(
        o.records.at[end].set(jnp.where(go, record, kept)),
        o.alive.at[end].set(o.alive[end] | go),
        end + go.astype(jnp.int32),
    )


def first_at(o: Objects, x, y):
    """-> (found bool, slot int32): the first alive object on square (x, y)."""
    here = o.alive & (o.records[:, 0] == x) & (o.records[:, 1] == y)
    return here.any(), jnp.argmax(here)


def remove(o: Objects, where, slot, record):
    """`list.remove(record)` for the object in `slot` where `where`: the game removes the
    first object equal to it in every number, which is an earlier, not yet walked twin when
    there is one; then the walked object stays and the reversed walk meets it again.
    -> (o, twin bool: the slot is to be walked once more)."""
    earlier = jnp.arange(o.alive.shape[0]) < slot
    same = o.alive & earlier & (o.records == record[None, :]).all(axis=1)
    twin = where & same.any()
    o = kill(o, twin, jnp.argmax(same))
    return kill(o, where & ~twin, slot), twin


def kill(o: Objects, where, slot) -> Objects:
    return o._replace(alive=o.alive.at[slot].set(o.alive[slot] & ~where))


def put(o: Objects, slot, record) -> Objects:
    return o._replace(records=o.records.at[slot].set(record))


def push(o: Objects, go, record) -> Objects:
    """Appends `record` when `go` into the list's last slot, kept free for it: after every
    slot in use, as `append`, at a fixed place (a write to a known slot, not a scatter)."""
    return Objects(
        o.records.at[-1].set(jnp.where(go, record, o.records[-1])),
        o.alive.at[-1].set(o.alive[-1] | go),
        o.end,
    )


def pack(flags):
    """-> int32: bit k set where flags[..., k] (a list's slots, at most 31, as one number).
    Counts over slots become popcounts: no cumulative sum, which XLA's CPU code runs as a
    window per slot, recomputing its inputs for each."""
    return jnp.where(flags, jnp.left_shift(1, jnp.arange(flags.shape[-1])), 0).sum(axis=-1)


def up_to(width: int):
    """-> int32[width]: the bits of slots 0..k, for each slot k."""
    return jnp.left_shift(2, jnp.arange(width)) - 1


def compact(o: Objects, capacity: int):
    """-> (records [capacity, F], length): the alive objects, in order, first. Slot k reads
    the record at the position of the (k+1)-th alive one, the number of slots before which
    fewer than k+1 are alive: counts and one gather, not a sort (under vmap a sort of every
    list every step was most of the step)."""
    bits = pack(o.alive)
    alive_so_far = jax.lax.population_count(bits & up_to(o.alive.shape[0]))  # [W]
    source = (alive_so_far[None, :] <= jnp.arange(capacity)[:, None]).sum(axis=1)
    length = jnp.minimum(jax.lax.population_count(bits), capacity)
    records = o.records[jnp.minimum(source, o.alive.shape[0] - 1)]
    return jnp.where((jnp.arange(capacity) < length)[:, None], records, 0), length
