"""Seaquest's object lists on a batch, as the game's Python lists behave within a step.

A list is held as records `[B, W, fields]` plus an `alive` mask `[B, W]` in list order (the
game appends at the end and `list.remove` takes out an object). Within a step nothing moves:
a removed object is only marked dead, an appended one goes after every slot used so far, so
"the first object in the list that ..." is the first alive slot. `compact` closes the gaps at
the end of the step, keeping the order. Hand-written known-good port, not model output.
"""

import numpy as np


class Objects:
    """One object list of a batch: records [B, W, F], alive [B, W], end [B] (the slot the
    next appended record takes)."""

    def __init__(self, records, length, room):
        batch, capacity, fields = records.shape
        self.records = np.zeros((batch, capacity + room, fields), dtype=np.int64)
        self.records[:, :capacity] = records
        self.alive = np.arange(capacity + room)[None, :] < length[:, None]
        self.end = np.array(length, dtype=np.int64)

    @property
    def width(self):
        return self.records.shape[1]

    def append(self, where, record):
        """Appends `record` [B, F] to the envs in `where` [B]."""
        rows = np.nonzero(where)[0]
        slot = self.end[rows]
        self.records[rows, slot] = record[rows]
        self.alive[rows, slot] = True
        self.end[rows] += 1

    def first_at(self, x, y):
        """-> (found bool[B], slot int[B]): the first alive object on square (x, y)."""
        here = (
            self.alive
            & (self.records[:, :, 0] == x[:, None])
            & (self.records[:, :, 1] == y[:, None])
        )
        return here.any(axis=1), np.argmax(here, axis=1)

    def remove(self, where, slot, record):
        """`list.remove(record)` for the object in `slot` where `where`: the game removes the
        first object equal to it in every number, which is an earlier, not yet walked twin
        when there is one; then the walked object stays and the reversed walk meets it again.
        -> bool[B]: where a twin went instead (the slot is to be walked once more)."""
        earlier = np.arange(self.width)[None, :] < np.asarray(slot)[..., None]
        same = self.alive & earlier & (self.records == record[:, None, :]).all(axis=2)
        twin = where & same.any(axis=1)
        self.kill(twin, np.argmax(same, axis=1))
        self.kill(where & ~twin, np.broadcast_to(slot, where.shape))
        return twin

    def kill(self, where, slot):
        rows = np.nonzero(where)[0]
        self.alive[rows, slot[rows]] = False

    def compact(self, capacity):
        """-> (records [B, capacity, F], length [B]): the alive objects, in order, first."""
        order = np.argsort(~self.alive, axis=1, kind="stable")
        records = np.take_along_axis(self.records, order[:, :, None], axis=1)[:, :capacity]
        length = np.minimum(self.alive.sum(axis=1), capacity)
        keep = np.arange(capacity)[None, :] < length[:, None]
        return np.where(keep[:, :, None], records, 0), length
