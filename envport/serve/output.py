"""What a worker prints, kept in a bounded buffer: its first and last bytes, and a count of
what was dropped between them.

A port may write without end (512 MiB to stdout in a loop). Sent to a file on the host,
that is a file the size of the flood, read whole into an error and from there into the
JSON report. Here the output goes through a pipe to a thread of the driver that keeps
`keep` bytes from the start (a load failure's first lines) and `keep` from the end (the
last line before a death, a panic's message), so memory and every text taken from it stay
bounded whatever the worker writes.
"""

from __future__ import annotations

import os
import threading

# Bytes kept at each end of a worker's output.
OUTPUT_BYTES = 64 << 10
_CHUNK = 64 << 10


class BoundedOutput:
    """A pipe a child writes its stdout and stderr to, read by a thread into head and tail.
    Give `writer` to the child, then call `started()` (closes the driver's copy of it)."""

    def __init__(self, keep: int = OUTPUT_BYTES) -> None:
        self.keep = keep
        self._read, self.writer = os.pipe()
        self._head = bytearray()
        self._tail = bytearray()
        # Bytes the child has written so far (kept or not).
        self._total = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="worker-output", daemon=True)
        self._thread.start()

    def started(self) -> None:
        """The child holds the pipe's writing end: the driver's copy is closed, so the
        reader sees the end of the output when the child dies."""
        if self.writer >= 0:
            os.close(self.writer)
            self.writer = -1

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._read, _CHUNK)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._total += len(chunk)
                room = self.keep - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                self._tail += chunk
                # Trimmed once it doubles, so a flood costs a copy per `keep` bytes, not per
                # chunk.
                if len(self._tail) > 2 * self.keep:
                    del self._tail[: len(self._tail) - self.keep]

    @property
    def total(self) -> int:
        """How many bytes the child has written so far: a mark for `since`."""
        with self._lock:
            return self._total

    def since(self, mark: int, limit: int) -> str:
        """What the child wrote after `mark`, as kept, at most about `limit` characters
        (its first and last halves when longer), with what was dropped said in the text."""
        with self._lock:
            total, head, tail = self._total, bytes(self._head), bytes(self._tail)
        tail_start = total - len(tail)
        first = head[mark:] if mark < len(head) else b""
        last = tail[max(0, mark - tail_start) :]
        dropped = total - mark - len(first) - len(last)
        text = first + _dropped(dropped) + last if dropped > 0 else first + last
        if len(text) > limit:
            half = limit // 2
            text = text[:half] + _dropped(len(text) - 2 * half) + text[-half:]
        return text.decode(errors="replace")

    def last_line(self, limit: int) -> str:
        """The last non-empty line the child wrote, cut to `limit` characters."""
        with self._lock:
            kept = bytes(self._tail or self._head)
        lines = [line for line in kept.decode(errors="replace").splitlines() if line.strip()]
        if not lines:
            return ""
        line = lines[-1]
        return line if len(line) <= limit else f"[... cut ...]{line[-limit:]}"

    def settle(self, wait: float) -> None:
        """Wait up to `wait` s for the reader to take the last bytes of a child that has
        died (it stops at the pipe's end, which the death brings)."""
        self.started()
        self._thread.join(wait)

    def close(self, wait: float = 1.0) -> None:
        """Stop reading (once the child is gone the reader ends by itself)."""
        self.settle(wait)
        # A reader still blocked (a grandchild holding the pipe) keeps its descriptor.
        if not self._thread.is_alive() and self._read >= 0:
            os.close(self._read)
            self._read = -1


def cut(text: str, limit: int) -> str:
    """`text` at most about `limit` characters: its first and last halves when longer, with
    how much was dropped between them (a port's error message may be megabytes long)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}[... {len(text) - 2 * half} characters dropped ...]{text[-half:]}"


def _dropped(count: int) -> bytes:
    return f"\n[... {count} bytes of output dropped ...]\n".encode()
