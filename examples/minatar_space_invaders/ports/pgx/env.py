"""Bridge that lets pgx's own MinAtar SpaceInvaders (`minatar-space_invaders`, pgx 2.6) be
verified by envport against MinAtar itself, unchanged.

This file is all the third-party env needs: pgx's public `init` and `step` (which already
leave an ended game as it is, with reward 0), its reward vector's one entry as the reward,
and the reference's state mapped onto pgx's State (pgx keeps the three maps as bool, the
reference as 0/1 integers). pgx steps with the reference's minimal action set (no-op, left,
right, fire) and, like the spec's reference, with sticky actions off. pgx never truncates.
"""

import jax
import jax.numpy as jnp
from pgx.minatar.space_invaders import MinAtarSpaceInvaders, State

_env = MinAtarSpaceInvaders(use_minimal_action_set=True, sticky_action_prob=0.0)

_INTS = ("pos", "alien_dir", "enemy_move_interval", "alien_move_timer", "alien_shot_timer",
         "shot_timer", "ramp_index")  # fmt: skip
_MAPS = ("alien_map", "f_bullet_map", "e_bullet_map")


def default_params():
    return None


def reset(key, params):
    state = _env.init(key)
    return state.observation, state


# Jitted, as pgx's own docs call it: eagerly, pgx's step traces its lax.cond and fori_loop
# bodies again on every call (about 2 s a step), which a user never sees.
@jax.jit
def step(key, state, action, params):
    state = _env.step(state, action, key)
    return state.observation, state, state.rewards[0], state.terminated, jnp.bool_(False), {}


def state_from_reference(ref_state):
    # jnp.array copies (jnp.asarray of a numpy array can share its buffer on CPU).
    fields = {f"_{name}": jnp.array(ref_state[name], dtype=jnp.int32) for name in _INTS}
    for name in _MAPS:
        fields[f"_{name}"] = jnp.array(ref_state[name], dtype=bool).reshape(10, 10)
    terminal = jnp.array(ref_state["terminal"], dtype=bool)
    # pgx reads an ended game from `terminated` (its `_terminal` is the game's copy).
    state = State(
        **fields, _terminal=terminal, terminated=terminal, legal_action_mask=_env.legal_action_mask
    )
    return state.replace(observation=_env.observe(state))


def state_to_reference(state):
    ref = {name: getattr(state, f"_{name}") for name in _INTS}
    ref.update({name: getattr(state, f"_{name}").astype(jnp.int32) for name in _MAPS})
    ref["terminal"] = state._terminal
    return ref
