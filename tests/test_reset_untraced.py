"""l2.reset's sample runs the reference untraced past its pilot: the pilot's resets show
reset's branches to coverage, and the thousands the sample adds (16k for CartPole, 8k
for DoorKey, each six times slower traced) would show nothing new."""

from __future__ import annotations

from types import FrameType
from typing import Any

from envport.spec import load_spec
from envport.targets import rule_trace
from envport.targets.reference import Reference
from envport.verifiers.stats import reset_sample

from helpers import CARTPOLE


def test_only_the_pilots_resets_are_traced() -> None:
    spec = load_spec(CARTPOLE)
    reference = Reference(spec)
    traced: list[int] = [0]
    calls: list[int] = [0]

    def tracer(frame: FrameType, event: str, arg: Any) -> None:
        # The env's own reset, entered under the tracer (coverage.py's sees the same).
        if (
            event == "call"
            and frame.f_code.co_name == "reset"
            and "cartpole" in frame.f_code.co_filename
        ):
            traced[0] += 1

    reset = reference.reset

    def counted(seed: int | None) -> Any:
        calls[0] += 1
        return reset(seed)

    reference.reset = counted  # type: ignore[method-assign]
    rule_trace.install(tracer)
    try:
        sample = reset_sample.draw(spec, reference, 0)
    finally:
        rule_trace.uninstall()
    assert sample.n > reset_sample.PILOT
    assert calls[0] == reset_sample.PILOT + sample.n
    assert traced[0] == reset_sample.PILOT
