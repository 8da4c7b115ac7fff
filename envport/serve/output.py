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
import re
import threading
import time

# Bytes kept at each end of a worker's output.
OUTPUT_BYTES = 64 << 10
_CHUNK = 64 << 10
# How often `failure_words` looks at the output again.
_POLL = 0.05
# A Rust panic's first line (Rust 1.80+ names the thread's id too: `thread 'x' (2)`).
_PANIC = re.compile(r"^thread '[^'\n]*'(?: \(\d+\))? panicked at [^\n]*$", re.MULTILINE)
# The line a worker writes after all its output for a failed request, before it answers
# (`envport.serve.worker`): the bytes between two such lines are one failure's own.
_END = re.compile(r"^\[envport: request (\d+) failed above\]\n?", re.MULTILINE)
# How long the end line is waited for: it is in the pipe before the answer is sent, so
# only this reader's lag on a loaded machine is waited for (or a port that closed stderr).
END_WAIT = 30.0


def end_line(request_id: int) -> bytes:
    """What a worker writes to its output once a failed request's own output is all out."""
    return f"\n[envport: request {request_id} failed above]\n".encode()


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

    def since(self, mark: int) -> str:
        """What the child wrote after `mark`, as kept (at most three times `keep` bytes),
        with what was dropped said in the text."""
        with self._lock:
            total, head, tail = self._total, bytes(self._head), bytes(self._tail)
        tail_start = total - len(tail)
        first = head[mark:] if mark < len(head) else b""
        last = tail[max(0, mark - tail_start) :]
        dropped = total - mark - len(first) - len(last)
        text = first + _dropped(dropped) + last if dropped > 0 else first + last
        return text.decode(errors="replace")

    def failure_words(
        self,
        mark: int,
        request_id: int,
        limit: int,
        grace: float,
        panic: bool = False,
        sent: int | None = None,
    ) -> tuple[str, str | None]:
        """What the child printed for failed request `request_id` (sent when its output
        stood at `mark`), cut to about `limit` characters, and the last Rust panic in it.

        The worker ends a failure's output with its end line before it answers, so the
        bytes between the previous end line and this one are the failure's own whatever
        this reader's lag: an earlier failure's late backtrace frames are not taken for
        this one's, and this one's panic is not missed on a loaded machine. A Rust panic on
        a thread the port left running may still follow the answer: with `panic` and none
        in the failure's own bytes, what comes after is waited for until it stops growing
        and holds a panic, or `grace` s.

        `sent` is where the output stood when the request was sent, if `mark` was moved on
        since (an answer to a request sent ahead of it came first, and what that one printed
        is not this failure's): the worker may have finished this request too before that
        answer was read, so its end line can lie before `mark`, and is looked for from
        `sent` before it is waited for."""
        end = end_line(request_id).decode().strip()
        starts = [mark] if sent is None or sent >= mark else [mark, sent]
        deadline = time.monotonic() + END_WAIT
        while True:
            start, text = next(
                ((at, seen) for at in starts if end in (seen := self.since(at))),
                (mark, self.since(mark)),
            )
            if end in text or time.monotonic() >= deadline:
                break
            time.sleep(_POLL)
        own, found, _ = text.partition(end)
        # Up to an earlier failure's end line, the bytes are that failure's.
        earlier = list(_END.finditer(own))
        if earlier:
            own = own[earlier[-1].end() :]
        if panic and found and panic_message(own) is None:
            own += self._late(start, len(text), grace)
        own = _END.sub("", own)
        return _cut_output(own.strip(), limit), panic_message(own)

    def _late(self, mark: int, seen_chars: int, grace: float) -> str:
        """What the child wrote after the end line: waited for until it stops growing and
        holds a Rust panic, or `grace` s."""
        deadline = time.monotonic() + grace
        seen = -1
        while True:
            total = self.total
            after = self.since(mark)[seen_chars:]
            if total == seen and panic_message(after) is not None:
                return after
            if time.monotonic() >= deadline:
                return after
            seen = total
            time.sleep(_POLL)

    def last_line(self, limit: int) -> str:
        """The last non-empty line the child wrote, cut to `limit` characters."""
        with self._lock:
            kept = bytes(self._tail or self._head)
        text = _END.sub("", kept.decode(errors="replace"))
        lines = [line for line in text.splitlines() if line.strip()]
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


def panic_message(text: str) -> str | None:
    """The last Rust panic in `text`: its `thread '...' panicked at file:line:col:` line
    and its message, up to the backtrace or the note that offers one."""
    found = list(_PANIC.finditer(text))
    if not found:
        return None
    lines = text[found[-1].start() :].splitlines()
    words = [lines[0]]
    for line in lines[1:6]:
        if line.startswith(("stack backtrace:", "note: ")) or _PANIC.match(line):
            break
        words.append(line)
    return "\n".join(words).strip()


def _cut_output(text: str, limit: int) -> str:
    """`text` at most about `limit` bytes: its first and last halves when longer, with how
    many bytes of output were dropped between them."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    half = limit // 2
    kept = raw[:half] + _dropped(len(raw) - 2 * half) + raw[-half:]
    return kept.decode(errors="replace")


def _dropped(count: int) -> bytes:
    return f"\n[... {count} bytes of output dropped ...]\n".encode()
