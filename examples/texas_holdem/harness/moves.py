"""Texas hold'em's four actions by name, for `[game] moves`: a differing legal-action mask
entry reads `legal_action_mask[1 raise]` (RLCard's `LimitholdemEnv.actions` order)."""

from __future__ import annotations

ACTIONS = ("call", "raise", "fold", "check")


def name(action: int, player: int) -> str:
    """The action's name; the same for either player."""
    return ACTIONS[action]
