"""Bridge that lets pgx's own MinAtar Asterix (`minatar-asterix`, pgx 2.6) be verified by
envport against MinAtar itself, unchanged.

pgx splits a step as envport's contract does: `_step` draws the noise (the sticky draw,
the spawn's side, gold or not, the slot) and `_step_det` is the deterministic rest, the
function pgx's own tests feed MinAtar's draws into. The bridge turns the spec's four
uniform numbers into `_step_det`'s arguments (side when noise[1] < 1/2, gold when noise[2]
< 1/3, the floor(noise[3] * n)-th of the n free slots) and applies the sticky rule with
pgx's sticky probability 0.1 (the spec's reference keeps MinAtar's default 0.1). Around
that it does what pgx's public `Env.step` does: an ended game (`terminated`) comes back
unchanged with reward 0, and the observation is pgx's own. pgx's slot array holds 99 in an
empty slot; the reference's state has a presence flag instead.
"""

import jax
import jax.numpy as jnp
from pgx.minatar.asterix import INF, MinAtarAsterix, State, _step_det

_env = MinAtarAsterix(use_minimal_action_set=True)
SLOTS = 8

_INTS = ("player_x", "player_y", "spawn_speed", "spawn_timer", "move_speed", "move_timer",
         "ramp_timer", "ramp_index", "last_action")  # fmt: skip


def default_params():
    return None


def reset(key, params):
    state = _env.init(key)
    return state.observation, state


def sample_noise(key, state, action, params):
    return jax.random.uniform(key, (4,))


def _play(noise, state, action):
    action = _env.minimal_action_set[action]
    action = jnp.where(noise[0] < _env.sticky_action_prob, state._last_action, action)
    free = state._entities[:, 0] == INF
    # The k-th free slot in slot order (slot 0 when none is free: pgx then spawns nothing).
    k = jnp.floor(noise[3] * jnp.maximum(free.sum(), 1)).astype(jnp.int32)
    slot = jnp.argmax(free & (jnp.cumsum(free) == k + 1))
    state = state.replace(_step_count=state._step_count + 1)
    return _step_det(state, action, lr=noise[1] < 0.5, is_gold=noise[2] < 1 / 3, slot=slot)


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
    taken = jnp.array(ref_state["slot_taken"], dtype=bool).reshape(SLOTS)
    columns = [
        jnp.array(ref_state["slot_x"], dtype=jnp.int32).reshape(SLOTS),
        jnp.arange(1, SLOTS + 1, dtype=jnp.int32),  # slot i crosses row i + 1
        jnp.array(ref_state["slot_right"], dtype=jnp.int32).reshape(SLOTS),
        jnp.array(ref_state["slot_gold"], dtype=jnp.int32).reshape(SLOTS),
    ]
    entities = jnp.where(taken[:, None], jnp.stack(columns, axis=1), INF)
    terminal = jnp.array(ref_state["terminal"], dtype=bool)
    # pgx reads an ended game from `terminated` (its `_terminal` is the game's copy).
    state = State(
        **fields,
        _entities=entities,
        _terminal=terminal,
        terminated=terminal,
        legal_action_mask=_env.legal_action_mask,
    )
    return state.replace(observation=_env.observe(state))


def state_to_reference(state):
    ref = {name: getattr(state, f"_{name}") for name in _INTS}
    entities = state._entities
    taken = entities[:, 0] != INF
    ref["terminal"] = state._terminal
    ref["slot_taken"] = taken
    ref["slot_x"] = jnp.where(taken, entities[:, 0], 0)
    ref["slot_right"] = taken & (entities[:, 2] == 1)
    ref["slot_gold"] = taken & (entities[:, 3] == 1)
    return ref
