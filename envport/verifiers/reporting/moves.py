"""A game's legal-action mask named by move: where the spec names a harness function for it
(`[game] moves`), a differing mask entry reads `legal_action_mask[877 e2e4]`, the move the
player to move would make, not only its index into thousands of actions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from envport.spec import PortSpec
from envport.targets.reference import import_attr
from envport.targets.turns import CURRENT_PLAYER, LEGAL_ACTION_MASK
from envport.verifiers.reporting.divergence import FieldDiff

_PREFIX = f"{LEGAL_ACTION_MASK}["


def name_moves(spec: PortSpec, player: int, diffs: list[FieldDiff]) -> None:
    """Rename the differing mask entries (`legal_action_mask[877]`) by the move each is for
    `player`, the player to move."""
    game = spec.game
    if game is None or game.moves is None:
        return
    flagged = [d for d in diffs if d.field.startswith(_PREFIX) and d.field.endswith("]")]
    if not flagged:
        return
    name: Callable[[int, int], str] = import_attr(game.moves, "game.moves", spec)
    for diff in flagged:
        index = diff.field[len(_PREFIX) : -1]
        if index.isdigit():
            diff.field = f"{_PREFIX}{index} {name(int(index), player)}]"


def record_moves(spec: PortSpec, record: np.ndarray, diffs: list[FieldDiff]) -> None:
    """`name_moves` on a turn record (envport.targets.turns: the observation, the player to
    move, the mask), for the player the reference's record names."""
    if spec.game is None:
        return
    flat = np.asarray(record).reshape(-1)
    observed = flat.size - 1 - spec.game.actions
    if observed >= 0:
        name_moves(spec, int(flat[observed]), diffs)


def state_moves(spec: PortSpec, expected: dict, diffs: list[FieldDiff]) -> None:
    """`name_moves` on compared dicts holding a mask and the player to move (a probe of a
    game's move generator answers both)."""
    if LEGAL_ACTION_MASK in expected and CURRENT_PLAYER in expected:
        name_moves(spec, int(np.asarray(expected[CURRENT_PLAYER]).reshape(-1)[0]), diffs)
