"""L3's episodes cut in chunks, the same way for local lanes (lanes.py) and Ray tasks
(on_ray.py): a chunk is what one lane, or one task, plays and judges at a time."""

from __future__ import annotations

import math
import threading
from collections import deque

# Chunks per lane: enough that the port's work hides behind the reference's play, few
# enough that it stays small. A free-running batch runs as many steps as its longest
# episode, and a vectorised step costs much the same for 30 envs as for 2000, so the port's
# work grows with the number of chunks far more than with their size.
CHUNKS_PER_LANE = 4
MIN_CHUNK, MAX_CHUNK = 32, 1000


def chunk_size(episodes: int, lanes: int) -> int:
    return max(MIN_CHUNK, min(MAX_CHUNK, math.ceil(episodes / (CHUNKS_PER_LANE * lanes))))


class Chunks:
    """The run's episodes in chunks, each taken by whichever lane asks first, so a lane on
    a busier core simply takes fewer. Chunks shrink as the run nears its end (a share of
    what is left, between `size` and an eighth of it): few chunks while there is much to
    do, and lanes that finish together."""

    def __init__(self, indices: list[int], size: int, lanes: int) -> None:
        self._left = deque(indices)
        # A plan that fits one chunk (a replayed batch) stays one chunk: shares of it for
        # several lanes would split episodes that must be played side by side.
        self._size, self._lanes = size, 1 if size >= len(indices) else lanes
        self._smallest = max(MIN_CHUNK, size // 8)
        self._lock = threading.Lock()
        self.stop = threading.Event()  # a lane failed: the others stop taking chunks

    def take(self) -> list[int] | None:
        with self._lock:
            if self.stop.is_set() or not self._left:
                return None
            share = math.ceil(len(self._left) / self._lanes)
            count = max(self._smallest, min(self._size, share))
            return [self._left.popleft() for _ in range(min(count, len(self._left)))]
