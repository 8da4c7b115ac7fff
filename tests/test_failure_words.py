"""A failed request is told the port's own words: what the port printed for that failure,
with a Rust panic's message first, not the late tail of an earlier failure's backtrace."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from envport.serve.output import BoundedOutput, end_line, panic_message

PANIC = (
    "thread '<unnamed>' (2) panicked at src/lib.rs:80:21:\n"
    "index out of bounds: the len is 3 but the index is 5\n"
    "stack backtrace:\n"
)
FRAME = "  {0}: _PyEval_EvalFrameDefault\n             at Python/ceval.c:{0}:22\n"


@pytest.fixture
def output() -> Iterator[BoundedOutput]:
    """A worker's output pipe, written to by the test itself."""
    found = BoundedOutput()
    yield found
    found.close()


def test_an_earlier_failures_late_frames_are_not_this_failures_words(output: BoundedOutput) -> None:
    # Request 7's backtrace and end line reach this reader after request 8 was sent
    # (the mark is taken before them), then request 8's own panic and end line.
    mark = output.total
    late = "".join(FRAME.format(n) for n in range(20, 28)).encode() + end_line(7)
    os.write(output.writer, late + PANIC.encode() + end_line(8))
    words, panic = output.failure_words(mark, 8, 4000, grace=60.0, panic=True)
    assert "ceval.c:20" not in words and "request" not in words
    assert panic is not None and panic.endswith("the len is 3 but the index is 5")


def test_the_words_are_waited_for_until_the_failures_end_line_arrives(
    output: BoundedOutput,
) -> None:
    mark = output.total
    written = threading.Event()

    def write_later() -> None:
        # A loaded machine: the reader sees the failure's bytes well after its answer.
        time.sleep(0.5)
        os.write(output.writer, PANIC.encode() + end_line(3))
        written.set()

    thread = threading.Thread(target=write_later)
    thread.start()
    words, panic = output.failure_words(mark, 3, 4000, grace=0.0, panic=True)
    thread.join()
    assert written.is_set()
    assert panic is not None and "index out of bounds" in words


def test_a_panic_after_the_end_line_is_waited_for_within_the_grace(output: BoundedOutput) -> None:
    mark = output.total
    os.write(output.writer, end_line(4))

    def panic_later() -> None:
        # A panic on a thread the port left running, after the failure's answer.
        time.sleep(0.3)
        os.write(output.writer, PANIC.encode())

    thread = threading.Thread(target=panic_later)
    thread.start()
    # Generous: the wait ends when the panic is in, not at the grace.
    started = time.monotonic()
    _, panic = output.failure_words(mark, 4, 4000, grace=60.0, panic=True)
    thread.join()
    assert time.monotonic() - started < 60.0
    assert panic is not None and panic.endswith("the len is 3 but the index is 5")


def test_without_a_panic_the_words_are_what_was_printed(output: BoundedOutput) -> None:
    mark = output.total
    os.write(output.writer, b"envport_step: bad input\n" + end_line(2))
    words, panic = output.failure_words(mark, 2, 4000, grace=0.2, panic=True)
    assert words == "envport_step: bad input"
    assert panic is None
    # A dead worker's last line is its own, not an end line.
    assert output.last_line(500) == "envport_step: bad input"


def test_the_last_panics_message_is_taken_without_its_backtrace() -> None:
    stale = "thread 'main' panicked at src/old.rs:1:1:\nold message\n" + FRAME.format(3)
    text = stale + PANIC + FRAME.format(4) + "note: Some details are omitted\n"
    assert panic_message(text) == (
        "thread '<unnamed>' (2) panicked at src/lib.rs:80:21:\n"
        "index out of bounds: the len is 3 but the index is 5"
    )
    # An older compiler's form, without the thread's id, and a note instead of frames.
    older = "thread 'x' panicked at src/lib.rs:9:5:\nattempt to add with overflow\nnote: run"
    assert panic_message(older) == (
        "thread 'x' panicked at src/lib.rs:9:5:\nattempt to add with overflow"
    )
    assert panic_message("no panic here\n  3: frame\n") is None


def test_a_panic_between_long_frames_is_found_though_the_reports_cut_drops_it(
    output: BoundedOutput,
) -> None:
    mark = output.total
    # This request's panic between long backtraces: a 4,000-character cut keeps both
    # ends and drops the panic between, which is still told.
    frames = "".join(FRAME.format(n) for n in range(60))
    text = frames + PANIC + frames + "note: Some details\n"
    os.write(output.writer, text.encode() + end_line(5))
    words, panic = output.failure_words(mark, 5, 4000, grace=60.0, panic=True)
    assert "panicked at" not in words
    assert panic is not None
    assert panic.endswith("index out of bounds: the len is 3 but the index is 5")
