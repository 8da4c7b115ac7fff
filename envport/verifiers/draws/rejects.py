"""Drawn states the reference rejects are not examples (docs/structured-state.md).

L1 and L2 draw states from the spec, and a spec can only approximate what the rules allow
(a Blackjack dealer with no card, a hand grown past its declared capacity). When the
reference itself raises on such a state, on writing it or on stepping from it, the draw is
rejected, as a `state.valid` expression would have rejected it: the port is never held to a
state its reference cannot take. The spec's own errors (a harness that fails) still stop
the check, and a spec that lets no draw through is one error saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import reject

from envport.errors import SpecError
from envport.structure import OverCapacity


@contextmanager
def reference_rejects() -> Iterator[None]:
    """Around reference calls on a drawn state: its exceptions reject the draw."""
    try:
        yield
    except OverCapacity:
        reject()
    except SpecError:
        raise
    except Exception:  # the reference's own refusal, whatever its type
        reject()


def unsatisfiable(level: str) -> SpecError:
    return SpecError(
        f"{level}: no drawn state was accepted by `state.valid` and the reference; "
        "widen `state.bounds` or the declared fields, or relax `state.valid`"
    )
