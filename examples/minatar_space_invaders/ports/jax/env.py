"""MinAtar SpaceInvaders (minatar 1.0.15, `MinAtar/SpaceInvaders-v1`, sticky actions off) in
the gymnax functional style (envport's JAX contract, no autoreset).

Actions: the minimal set, 0 no-op, 1 left, 2 right, 3 fire. Observation bool[10, 10, 6].
Reward 1 per alien shot; an episode ends when an alien or an alien's bullet reaches the
cannon and is never truncated. The game has no randomness: every reset is the same.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import ALIEN_SHOT_INTERVAL, SIZE, WAVE, transition
from .view import observe

START_MOVE_INTERVAL = 12
INTS = (
    "pos",
    "alien_dir",
    "enemy_move_interval",
    "alien_move_timer",
    "alien_shot_timer",
    "shot_timer",
    "ramp_index",
)
MAPS = ("alien_map", "f_bullet_map", "e_bullet_map")


class Params(NamedTuple):
    pass


class State(NamedTuple):
    pos: jax.Array  # int32: the cannon's column, on row 9
    alien_map: jax.Array  # int32[10, 10], [row][column], 1 where an alien is
    f_bullet_map: jax.Array  # int32[10, 10]: the cannon's bullets
    e_bullet_map: jax.Array  # int32[10, 10]: the aliens' bullets
    alien_dir: jax.Array  # int32: -1 marching left, +1 right
    enemy_move_interval: jax.Array  # int32: steps between marches (12 down to 6)
    alien_move_timer: jax.Array  # int32: steps until the next march
    alien_shot_timer: jax.Array  # int32: steps until the aliens next fire
    shot_timer: jax.Array  # int32: steps until the cannon is reloaded
    ramp_index: jax.Array  # int32: waves cleared that sped the aliens up
    terminal: jax.Array  # bool: an alien or a bullet reached the cannon


def default_params() -> Params:
    return Params()


def _obs(state: State):
    return observe(
        state.pos, state.alien_map, state.f_bullet_map, state.e_bullet_map, state.alien_dir
    )


def reset(key: jax.Array, params: Params):
    """The cannon in column 5, a 4x6 block of aliens top centre marching left, no bullet,
    the cannon loaded, the ramp at its start (the key is unused: no randomness)."""
    empty = jnp.zeros((SIZE, SIZE), dtype=jnp.int32)
    state = State(
        pos=jnp.int32(5),
        alien_map=WAVE.astype(jnp.int32),
        f_bullet_map=empty,
        e_bullet_map=empty,
        alien_dir=jnp.int32(-1),
        enemy_move_interval=jnp.int32(START_MOVE_INTERVAL),
        alien_move_timer=jnp.int32(START_MOVE_INTERVAL),
        alien_shot_timer=jnp.int32(ALIEN_SHOT_INTERVAL),
        shot_timer=jnp.int32(0),
        ramp_index=jnp.int32(0),
        terminal=jnp.bool_(False),
    )
    return _obs(state), state


def step(key: jax.Array, state: State, action, params: Params):
    after, reward = transition(state._asdict(), jnp.asarray(action, jnp.int32))
    state = State(**after)
    return _obs(state), state, reward, state.terminal, jnp.bool_(False), {}


def state_from_reference(ref_state) -> State:
    # jnp.array copies: jnp.asarray of a numpy array can share its buffer on CPU, and the
    # state must not change when the caller's dict does.
    return State(
        **{name: jnp.array(ref_state[name], dtype=jnp.int32) for name in INTS},
        **{name: jnp.array(ref_state[name], dtype=jnp.int32).reshape(SIZE, SIZE) for name in MAPS},
        terminal=jnp.array(ref_state["terminal"], dtype=bool),
    )


def state_to_reference(state: State):
    return state._asdict()
