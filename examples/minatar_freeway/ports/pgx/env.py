"""Bridge that lets pgx's own MinAtar Freeway (`minatar-freeway`, pgx 2.6) be verified by
envport against MinAtar itself, unchanged.

pgx splits a step as envport's contract does: `_step` draws the noise (the sticky draw and
the lanes' new speeds and directions) and `_step_det` is the deterministic rest, the
function pgx's own tests feed MinAtar's draws into. The spec's noise is one number per lane,
0..9 (speed `n % 5 + 1`, right when `n >= 5`); the bridge hands `_step_det` those speeds and
directions (+1 right, -1 left), with sticky actions off as in the spec's reference. Around
that it does what pgx's public `Env.step` does: an ended game (`terminated`) comes back
unchanged with reward 0, and the observation is pgx's own. pgx keeps a car as [x, lane + 1,
timer, signed speed]; the reference as x, timer, speed and a direction flag.
"""

import jax
import jax.numpy as jnp
from pgx.minatar.freeway import MinAtarFreeway, State, _step_det

_env = MinAtarFreeway(use_minimal_action_set=True, sticky_action_prob=0.0)
LANES = 8

_INTS = ("pos", "move_timer", "terminate_timer")


def default_params():
    return None


def reset(key, params):
    state = _env.init(key)
    return state.observation, state


def sample_noise(key, state, action, params):
    return jax.random.randint(key, (LANES,), 0, 10, dtype=jnp.int32)


def _play(noise, state, action):
    action = _env.minimal_action_set[action]
    speeds = noise % 5 + 1
    directions = jnp.where(noise >= 5, 1, -1).astype(jnp.int32)
    state = state.replace(_step_count=state._step_count + 1)
    return _step_det(state, action, speeds=speeds, directions=directions)


# Jitted, as pgx's own docs call its step: eagerly, pgx's step traces its lax.cond and
# fori_loop bodies again on every call (seconds a step), which a user never sees.
@jax.jit
def step_given_noise(noise, state, action, params):
    noise = jnp.asarray(noise, dtype=jnp.int32)
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
    lane = lambda name: jnp.array(ref_state[name], dtype=jnp.int32).reshape(LANES)  # noqa: E731
    right = jnp.array(ref_state["car_right"], dtype=bool).reshape(LANES)
    cars = jnp.stack(
        [
            lane("car_x"),
            jnp.arange(1, LANES + 1, dtype=jnp.int32),  # lane i is row i + 1
            lane("car_timer"),
            jnp.where(right, 1, -1) * lane("car_speed"),
        ],
        axis=1,
    )
    terminal = jnp.array(ref_state["terminal"], dtype=bool)
    # pgx reads an ended game from `terminated` (its `_terminal` is the game's copy).
    state = State(
        **fields,
        _cars=cars,
        _terminal=terminal,
        terminated=terminal,
        legal_action_mask=_env.legal_action_mask,
    )
    return state.replace(observation=_env.observe(state))


def state_to_reference(state):
    ref = {name: getattr(state, f"_{name}") for name in _INTS}
    cars = state._cars
    ref["terminal"] = state._terminal
    ref["car_x"] = cars[:, 0]
    ref["car_timer"] = cars[:, 2]
    ref["car_speed"] = jnp.abs(cars[:, 3])
    ref["car_right"] = cars[:, 3] > 0
    return ref
