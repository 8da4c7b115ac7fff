"""Bridge that lets gymnax's own MinAtar Freeway (`Freeway-MinAtar`) be verified by envport
against MinAtar itself, unchanged.

gymnax's `step_env` draws the lanes' new speeds and directions from its key at every step
(used only on a crossing), then runs its own `step_agent`, `randomize_cars` and `step_cars`.
envport's contract splits a step into drawing noise and a deterministic step given it, so
the bridge does the same with gymnax's own functions: `sample_noise` draws as `step_env`
draws (`randint(1, 6)` speeds, directions from (-1, 1)) and encodes them as the spec's noise,
one number per lane, 0..9 (speed `n % 5 + 1`, right when `n >= 5`); `step_given_noise` is
`step_env`'s body with those draws. gymnax's episode end is its time limit, which its public
`step` reports as truncation (`is_truncated`: `time >= 2500`); MinAtar counts
`terminate_timer` down from 2500 and ends the game (terminated) when it passes 0, so the
reference's timer maps to gymnax's clock as `time = 2500 - terminate_timer`. gymnax keeps a
car as [x, lane + 1, timer, signed speed]; the reference as x, timer, speed and a direction
flag. Its float planes are cast to MinAtar's bool.
"""

import jax
import jax.numpy as jnp
from gymnax.environments.minatar.freeway import (
    EnvState,
    MinFreeway,
    randomize_cars,
    step_agent,
    step_cars,
)

_env = MinFreeway()
LANES = 8
TIME_LIMIT = 2500


def default_params():
    return _env.default_params


def reset(key, params):
    obs, state = _env.reset_env(key, params)
    return obs.astype(bool), state


def sample_noise(key, state, action, params):
    key_speed, key_dirs = jax.random.split(key)
    speeds = jax.random.randint(key_speed, shape=(LANES,), minval=1, maxval=6)
    directions = jax.random.choice(key_dirs, jnp.array([-1, 1]), shape=(LANES,))
    return (speeds - 1 + 5 * (directions > 0)).astype(jnp.int32)


@jax.jit
def step_given_noise(noise, state, action, params):
    noise = jnp.asarray(noise, dtype=jnp.int32)
    speeds = noise % 5 + 1
    directions = jnp.where(noise >= 5, 1, -1)
    state, reward, win = step_agent(_env.action_set[action], state, params)
    crossed = randomize_cars(speeds, directions, state.cars, False)
    state = state.replace(cars=jax.lax.select(win, crossed, state.cars))
    state = step_cars(state)
    state = state.replace(time=state.time + 1)
    terminated = _env.is_terminal(state, params)
    state = state.replace(terminal=terminated)
    truncated = _env.is_truncated(state, params)
    obs = _env.get_obs(state).astype(bool)
    return obs, state, reward.astype(jnp.float32), terminated, truncated, {}


def step(key, state, action, params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_from_reference(ref_state):
    # jnp.array copies (jnp.asarray of a numpy array can share its buffer on CPU).
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
    timer = jnp.array(ref_state["terminate_timer"], dtype=jnp.int32)
    return EnvState(
        pos=jnp.array(ref_state["pos"], dtype=jnp.int32),
        cars=cars,
        move_timer=jnp.array(ref_state["move_timer"], dtype=jnp.int32),
        time=TIME_LIMIT - timer,
        terminal=jnp.array(ref_state["terminal"], dtype=bool),
    )


def state_to_reference(state):
    cars = state.cars
    return {
        "pos": state.pos,
        "move_timer": state.move_timer,
        "terminate_timer": TIME_LIMIT - state.time,
        "terminal": state.terminal,
        "car_x": cars[:, 0],
        "car_timer": cars[:, 2],
        "car_speed": jnp.abs(cars[:, 3]),
        "car_right": cars[:, 3] > 0,
    }
