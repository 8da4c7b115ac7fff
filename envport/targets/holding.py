"""Which of a batch of states a port can hold: its entry's optional `can_hold`.

A port may represent only part of the spec's state space (a game that derives the player to
move from the piece counts cannot load a position where they disagree). It says so with
`can_hold(ref_state) -> bool`, taking what its `state_from_reference` takes (docs/
port-contract.md, "States a port cannot hold"): one state, jax-traceable, for JAX (vmapped
here); one env's dict for a NumPy env; a batch, answering one bool per position, for a NumPy
game. The verifier asks before it loads drawn states, so a refusal is an answer of its own,
never a crash or a divergence; a port without `can_hold` holds every state.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from envport.targets.loader import ContractError
from envport.targets.names import TargetName

States = dict[str, np.ndarray]
Holder = Callable[[States], np.ndarray]


def holder(entry: ModuleType, target: str, game: bool) -> Holder | None:
    """The port's `can_hold` over a batch of reference states, or None when it has none."""
    can_hold = getattr(entry, "can_hold", None)
    if can_hold is None:
        return None
    if not callable(can_hold):
        raise ContractError("the port's `can_hold` is not a function (docs/port-contract.md)")
    if target == TargetName.JAX:
        import jax

        batched = jax.jit(jax.vmap(can_hold))
        return lambda states: _checked(batched(states), states)
    if game:
        return lambda states: _checked(can_hold(dict(states)), states)

    def each(states: States) -> np.ndarray:
        rows = _rows(states)
        return _checked(
            [bool(can_hold({k: v[i] for k, v in states.items()})) for i in rows], states
        )

    return each


def _rows(states: States) -> range:
    return range(len(next(iter(states.values()))) if states else 0)


def _checked(answer: Any, states: States) -> np.ndarray:
    """The answer as bool[B], or one line saying what `can_hold` gave instead."""
    held = np.asarray(answer)
    count = len(_rows(states))
    if held.shape != (count,) or held.dtype.kind not in "bui":
        raise ContractError(
            f"`can_hold` answered {held.dtype} of shape {held.shape} for {count} states; "
            "it must answer one bool per state (docs/port-contract.md)"
        )
    return held.astype(bool)
