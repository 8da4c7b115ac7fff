"""Bridge that lets pgx's own MinAtar Breakout (`minatar-breakout`, pgx 2.6) be verified by
envport against MinAtar itself, unchanged.

This file is all the third-party env needs: pgx's public `init` and `step` (which already
leave an ended game as it is, with reward 0), its reward vector's one entry as the reward,
and the reference's state mapped onto pgx's State. pgx steps with the reference's minimal
action set (no-op, left, right) and, like the spec's reference, with sticky actions off.
pgx never truncates; the reference has no step counter, so a state it hands over starts
pgx's at 0.
"""

import jax
import jax.numpy as jnp
from pgx.minatar.breakout import MinAtarBreakout, State

_env = MinAtarBreakout(use_minimal_action_set=True, sticky_action_prob=0.0)


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
    i = lambda name: jnp.array(ref_state[name], dtype=jnp.int32)  # noqa: E731
    terminal = jnp.array(ref_state["terminal"], dtype=bool)
    state = State(
        _ball_y=i("ball_y"),
        _ball_x=i("ball_x"),
        _ball_dir=i("ball_dir"),
        _pos=i("pos"),
        _brick_map=jnp.array(ref_state["brick_map"], dtype=bool).reshape(10, 10),
        _strike=jnp.array(ref_state["strike"], dtype=bool),
        _last_x=i("last_x"),
        _last_y=i("last_y"),
        _terminal=terminal,
        # pgx reads an ended game from `terminated` (its `_terminal` is the game's copy).
        terminated=terminal,
        legal_action_mask=_env.legal_action_mask,
    )
    return state.replace(observation=_env.observe(state))


def state_to_reference(state):
    return {
        "ball_y": state._ball_y,
        "ball_x": state._ball_x,
        "ball_dir": state._ball_dir,
        "pos": state._pos,
        "brick_map": state._brick_map.astype(jnp.int32),
        "strike": state._strike,
        "last_x": state._last_x,
        "last_y": state._last_y,
        "terminal": state._terminal,
    }
