"""A failed request is told the port's own words: what the port printed for that failure,
with a Rust panic's message first, not the late tail of an earlier failure's backtrace."""

from __future__ import annotations

import os
import threading
import time

from envport.serve.output import BoundedOutput, panic_message

PANIC = (
    "thread '<unnamed>' (2) panicked at src/lib.rs:80:21:\n"
    "index out of bounds: the len is 3 but the index is 5\n"
    "stack backtrace:\n"
)
FRAME = "  {0}: _PyEval_EvalFrameDefault\n             at Python/ceval.c:{0}:22\n"


def test_a_panic_arriving_after_an_earlier_backtraces_tail_is_waited_for() -> None:
    output = BoundedOutput()
    try:
        mark = output.total
        # The earlier failure's last frames reach the pipe after this request was sent...
        os.write(output.writer, "".join(FRAME.format(n) for n in range(20, 28)).encode())
        written = threading.Event()

        def panic_later() -> None:
            # ...and this request's panic only after the failure reply (another thread's).
            time.sleep(0.3)
            os.write(output.writer, PANIC.encode())
            written.set()

        thread = threading.Thread(target=panic_later)
        thread.start()
        # Generous: the wait ends when the panic is in, not at the grace.
        words = output.words_since(mark, 4000, grace=60.0, panic=True)
        thread.join()
        assert written.is_set()
        assert "index out of bounds: the len is 3 but the index is 5" in words
    finally:
        output.close()


def test_without_a_panic_the_wait_ends_at_its_grace_with_what_was_printed() -> None:
    output = BoundedOutput()
    try:
        mark = output.total
        os.write(output.writer, b"envport_step: bad input\n")
        words = output.words_since(mark, 4000, grace=0.2, panic=True)
        assert words.strip() == "envport_step: bad input"
    finally:
        output.close()


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


def test_a_panic_between_long_frames_is_found_though_the_reports_cut_drops_it() -> None:
    output = BoundedOutput()
    try:
        mark = output.total
        # An earlier failure's late frames, then this request's panic and its own long
        # backtrace: a 4,000-character cut keeps both ends and drops the panic between.
        frames = "".join(FRAME.format(n) for n in range(60))
        os.write(output.writer, (frames + PANIC + frames + "note: Some details\n").encode())
        words = output.words_since(mark, 4000, grace=60.0, panic=True)
        assert "panicked at" not in words
        panic = output.panic_since(mark)
        assert panic is not None
        assert panic.endswith("index out of bounds: the len is 3 but the index is 5")
    finally:
        output.close()
