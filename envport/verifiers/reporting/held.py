"""Drawn states the port cannot hold: asked before they are loaded, counted per check.

A port may hold only part of the spec's state space (its `can_hold`, docs/port-contract.md).
A drawn state it refuses is neither a pass (nothing was compared) nor a failure (the spec
drew a state the port never meets in play): the check counts it and reports the count as a
gap. Past the spec's ceiling (`levels.unheld_ceiling`, a share of the check's draws) the
check fails: so few states compared say little, and the fix is the spec's (derive the
fields the port computes from the others, or declare the port's narrower domain). A state
the reference reached in play is another matter: the port must hold every one, and a
refusal there is a divergence (levels/l1/rows.py, l3.explore's kept rollouts). A proposed
case's start state is made up as a drawn one is (levels/l3/cases.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from envport.gaps import Gap, GapKind
from envport.serve.ops import Holds, Requester, States
from envport.verifiers.reporting.divergence import Divergence, LevelResult
from envport.verifiers.reporting.states import stack_states

T = TypeVar("T")

FIX = (
    "derive the fields the port computes from the others (`[state.derive]`) or declare the "
    "port's narrower domain (`[targets.<name>] domain`)"
)


def held_rows(worker: Requester, states: States) -> np.ndarray | None:
    """Which rows of a batch of states the port can hold; None: it holds every state."""
    held = worker.request(Holds(states=states))["held"]
    return None if held is None else np.asarray(held, dtype=bool)


@dataclass
class Unheld:
    """One check's drawn (or otherwise made-up) states and how many of them the port could
    not hold; `what` names them in the report's sentence."""

    check: str
    ceiling: float
    drawn: int = 0
    refused: int = 0
    what: str = "drawn states"
    # Whether the port answered `holds` with rows (a port without `can_hold` is asked once).
    answers: bool | None = None

    def kept(self, worker: Requester, items: list[T], befores: list[dict[str, Any]]) -> list[T]:
        """The `items` whose `befores` the port holds. An L1 check's first call is every
        drawn example, counted once; the one-at-a-time walk that shrinks a failure asks
        again (nothing counted twice)."""
        if self.answers is False:
            return items
        held = held_rows(worker, stack_states(befores))
        if self.answers is None:
            self.answers = held is not None
            self.count(held, len(items))
        if held is None:
            return items
        return [item for item, kept in zip(items, held, strict=True) if kept]

    def count(self, held: np.ndarray | None, drawn: int) -> None:
        self.drawn += drawn
        if held is not None:
            self.refused += int(np.count_nonzero(~held))

    def sentence(self) -> str:
        share = self.refused / self.drawn if self.drawn else 0.0
        return f"the port could not hold {self.refused} of {self.drawn} {self.what} ({share:.0%})"

    def report(self, level: LevelResult) -> None:
        """The count as the level's gap, or its failure above the ceiling."""
        if not self.refused:
            return
        if self.refused > self.ceiling * self.drawn:
            level.passed = False
            level.divergences.append(
                Divergence(
                    level=level.level,
                    mode=level.mode,
                    message=f"{self.sentence()}, above the ceiling of {self.ceiling:.0%} "
                    f"(`levels.unheld_ceiling`): too few compared; {FIX}",
                )
            )
            return
        level.gaps.append(
            Gap(
                check=self.check,
                kind=GapKind.STATES_NOT_HELD,
                detail=f"{self.sentence()}; nothing was compared from them ({FIX} to compare "
                "every draw)",
            )
        )
