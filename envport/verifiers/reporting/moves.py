"""A game's legal-action mask named by move: where the spec names a harness function for it
(`[game] moves`), a differing mask entry reads `legal_action_mask[877 e2e4]`, the move the
player to move would make, not only its index into thousands of actions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from envport.spec import PortSpec
from envport.targets.reference import import_attr
from envport.targets.turns import LEGAL_ACTION_MASK
from envport.verifiers.reporting.divergence import FieldDiff

_PREFIX = f"{LEGAL_ACTION_MASK}["


def name_moves(spec: PortSpec, record: np.ndarray, diffs: list[FieldDiff]) -> None:
    """Rename the differing mask entries of a turn record (envport.targets.turns: the
    observation, the player to move, the mask) by the move each is for that player, as the
    reference's record names the player."""
    game = spec.game
    if game is None or game.moves is None:
        return
    flagged = [d for d in diffs if d.field.startswith(_PREFIX) and d.field.endswith("]")]
    if not flagged:
        return
    flat = np.asarray(record).reshape(-1)
    observed = flat.size - 1 - game.actions
    if observed < 0:
        return
    player = int(flat[observed])
    name: Callable[[int, int], str] = import_attr(game.moves, "game.moves", spec)
    for diff in flagged:
        index = diff.field[len(_PREFIX) : -1]
        if index.isdigit():
            diff.field = f"{_PREFIX}{index} {name(int(index), player)}]"
