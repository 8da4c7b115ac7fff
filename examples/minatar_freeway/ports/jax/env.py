"""MinAtar Freeway (minatar 1.0.15, `MinAtar/Freeway-v1`, sticky actions off) in the gymnax
functional style (envport's JAX contract), with explicit randomness: `sample_noise` draws the
lanes' next speeds, `step_given_noise` is the deterministic rest, and `step` is the two
composed.

Actions: the minimal set, 0 no-op, 1 up, 2 down. Observation bool[10, 10, 7]. Reward 1 a
crossing; an episode ends after 2501 frames and is never truncated.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import BOTTOM, LANES, MOVE_DELAY, SPEEDS, speeds_from_noise, transition
from .view import observe

TIME_LIMIT = 2500
CARS = ("car_x", "car_timer", "car_speed")
SCALARS = ("pos", "move_timer", "terminate_timer")


class Params(NamedTuple):
    pass


class State(NamedTuple):
    car_x: jax.Array
    car_timer: jax.Array
    car_speed: jax.Array
    car_right: jax.Array
    pos: jax.Array
    move_timer: jax.Array
    terminate_timer: jax.Array
    terminal: jax.Array


def default_params() -> Params:
    return Params()


def _obs(s: State) -> jax.Array:
    return observe(s.car_x, s.car_speed, s.car_right, s.pos)


def _draw(key: jax.Array) -> jax.Array:
    """Lanes' speeds as noise: uniform over 0..9 (speed 1..5, either way)."""
    return jax.random.randint(key, (LANES,), 0, 2 * SPEEDS, dtype=jnp.int32)


def reset(key: jax.Array, params: Params):
    # Every car starts at the left edge, waiting as many frames as its speed.
    speed, right = speeds_from_noise(_draw(key))
    state = State(
        car_x=jnp.zeros(LANES, dtype=jnp.int32),
        car_timer=speed,
        car_speed=speed,
        car_right=right,
        pos=jnp.int32(BOTTOM),
        move_timer=jnp.int32(MOVE_DELAY),
        terminate_timer=jnp.int32(TIME_LIMIT),
        terminal=jnp.bool_(False),
    )
    return _obs(state), state


def sample_noise(key: jax.Array, state: State, action, params: Params):
    return _draw(key)


def step_given_noise(noise, state: State, action, params: Params):
    *fields, reward = transition(*state, action, noise)
    new = State(*fields)
    return _obs(new), new, reward, new.terminal, jnp.bool_(False), {}


def step(key: jax.Array, state: State, action, params: Params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_from_reference(ref_state) -> State:
    # jnp.array copies: jnp.asarray of a numpy array can share its buffer on CPU.
    lanes = {name: jnp.array(ref_state[name], dtype=jnp.int32).reshape(LANES) for name in CARS}
    scalars = {name: jnp.array(ref_state[name], dtype=jnp.int32) for name in SCALARS}
    return State(
        **lanes,
        **scalars,
        car_right=jnp.array(ref_state["car_right"], dtype=bool).reshape(LANES),
        terminal=jnp.array(ref_state["terminal"], dtype=bool),
    )


def state_to_reference(state: State):
    return state._asdict()
