"""Bridge that lets pgx's own MinAtar Seaquest (`minatar-seaquest`, pgx 2.6) be verified by
envport against MinAtar itself, unchanged.

pgx splits a step as envport's contract does: `_step` draws the noise (the sticky draw, the
enemy's side, sub or fish, row, the diver's side and row) and `_step_det` is the
deterministic rest. The bridge turns the spec's six uniform numbers into `_step_det`'s
arguments (a side when below 1/2, a sub when below 1/3, a row 1 + floor(8u)) and applies the
sticky rule with pgx's sticky probability 0.1 (the spec's reference keeps MinAtar's default
0.1). Around that it does what pgx's public `Env.step` does: an ended game (`terminated`)
comes back unchanged with reward 0, and the observation is pgx's own. pgx holds each object
list as a fixed array with -1 in an empty row, its objects first in the game's order; the
bridge pads the reference's lists with -1 rows to pgx's sizes and reads them back.
"""

import jax
import jax.numpy as jnp
from pgx.minatar.seaquest import MinAtarSeaquest, State, _step_det

_env = MinAtarSeaquest(use_minimal_action_set=True)
# The spec's capacities, and pgx's own row counts.
CAPACITY = {"f_bullets": 3, "e_bullets": 12, "e_fish": 12, "e_subs": 12, "divers": 4}
PGX_ROWS = {"f_bullets": 5, "e_bullets": 25, "e_fish": 25, "e_subs": 25, "divers": 5}
FIELDS = {"f_bullets": 3, "e_bullets": 3, "e_fish": 4, "e_subs": 5, "divers": 4}

_INTS = ("oxygen", "diver_count", "sub_x", "sub_y", "e_spawn_speed", "e_spawn_timer",
         "d_spawn_timer", "move_speed", "ramp_index", "shot_timer", "last_action")  # fmt: skip
_FLAGS = ("sub_or", "surface", "terminal")


def default_params():
    return None


def reset(key, params):
    state = _env.init(key)
    return state.observation, state


def sample_noise(key, state, action, params):
    return jax.random.uniform(key, (6,))


def _play(noise, state, action):
    action = _env.minimal_action_set[action]
    action = jnp.where(noise[0] < _env.sticky_action_prob, state._last_action, action)
    state = state.replace(_step_count=state._step_count + 1)
    row = 1 + jnp.floor(noise[jnp.array([3, 5])] * 8).astype(jnp.int32)
    return _step_det(
        state, action, noise[1] < 0.5, noise[2] < 1 / 3, row[0], noise[4] < 0.5, row[1]
    )


# Jitted, as pgx's own docs call its step: eagerly, pgx's step traces its lax.cond and
# fori_loop bodies again on every call (seconds a step), which a user never sees.
@jax.jit
def step_given_noise(noise, state, action, params):
    state = jax.lax.cond(
        state.terminated,
        lambda: state.replace(rewards=jnp.zeros_like(state.rewards)),
        lambda: _play(noise, state, action).replace(legal_action_mask=_env.legal_action_mask),
    )
    state = state.replace(observation=_env.observe(state))
    return state.observation, state, state.rewards[0], state.terminated, jnp.bool_(False), {}


def step(key, state, action, params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_from_reference(ref_state):
    # jnp.array copies (jnp.asarray of a numpy array can share its buffer on CPU).
    fields = {f"_{name}": jnp.array(ref_state[name], dtype=jnp.int32) for name in _INTS}
    fields.update({f"_{name}": jnp.array(ref_state[name], dtype=bool) for name in _FLAGS})
    for name, capacity in CAPACITY.items():
        items = jnp.array(ref_state[name], dtype=jnp.int32).reshape(capacity, FIELDS[name])
        used = jnp.arange(capacity) < jnp.array(ref_state[f"{name}.length"])
        rows = jnp.full((PGX_ROWS[name], FIELDS[name]), -1, jnp.int32)
        fields[f"_{name}"] = rows.at[:capacity].set(jnp.where(used[:, None], items, -1))
    # pgx reads an ended game from `terminated` (its `_terminal` is the game's copy).
    state = State(
        **fields, terminated=fields["_terminal"], legal_action_mask=_env.legal_action_mask
    )
    return state.replace(observation=_env.observe(state))


def state_to_reference(state):
    ref = {name: getattr(state, f"_{name}") for name in (*_INTS, *_FLAGS)}
    for name, capacity in CAPACITY.items():
        rows = getattr(state, f"_{name}")
        filled = (rows != -1).any(axis=1)
        order = jnp.argsort(~filled, stable=True)
        items = rows[order][:capacity]
        length = jnp.minimum(filled.sum(), capacity)
        ref[name] = jnp.where((jnp.arange(capacity) < length)[:, None], items, 0)
        ref[f"{name}.length"] = length
    return ref
