"""MinAtar Breakout (minatar 1.0.15, `MinAtar/Breakout-v1`, sticky actions off) in the gymnax
functional style (envport's JAX contract, no autoreset).

Actions: the minimal set, 0 no-op, 1 left, 2 right. Observation bool[10, 10, 4]. Reward
1 per brick broken; an episode ends when the ball passes the paddle and is never truncated.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import BRICK_ROWS, SIZE, transition
from .view import observe

START_ROW = 3
INTS = ("ball_x", "ball_y", "ball_dir", "pos", "last_x", "last_y")
BOOLS = ("strike", "terminal")


class Params(NamedTuple):
    pass


class State(NamedTuple):
    ball_x: jax.Array  # int32: the ball's column
    ball_y: jax.Array  # int32: its row, 0 the top, 9 the paddle's
    ball_dir: jax.Array  # int32: 0 up-left, 1 up-right, 2 down-right, 3 down-left
    pos: jax.Array  # int32: the paddle's column
    last_x: jax.Array  # int32: where the ball was one step ago (the trail)
    last_y: jax.Array  # int32
    brick_map: jax.Array  # int32[10, 10], [row][column], 1 where a brick is
    strike: jax.Array  # bool: a brick was hit last step
    terminal: jax.Array  # bool: the ball went past the paddle


def default_params() -> Params:
    return Params()


def _obs(state: State):
    return observe(
        state.ball_x, state.ball_y, state.pos, state.brick_map, state.last_x, state.last_y
    )


def reset(key: jax.Array, params: Params):
    """The ball on row 3 at the left wall heading down-right, or at the right wall heading
    down-left, one chance in two; the paddle in column 4; rows 1..3 full of bricks."""
    right = jax.random.randint(key, (), 0, 2) == 1
    x = jnp.where(right, SIZE - 1, 0).astype(jnp.int32)
    bricks = jnp.where(BRICK_ROWS[:, None], 1, 0) * jnp.ones((SIZE, SIZE), dtype=jnp.int32)
    state = State(
        ball_x=x,
        ball_y=jnp.int32(START_ROW),
        ball_dir=jnp.where(right, 3, 2).astype(jnp.int32),
        pos=jnp.int32(4),
        last_x=x,
        last_y=jnp.int32(START_ROW),
        brick_map=bricks.astype(jnp.int32),
        strike=jnp.bool_(False),
        terminal=jnp.bool_(False),
    )
    return _obs(state), state


def step(key: jax.Array, state: State, action, params: Params):
    x, y, direction, pos, bricks, strike, last_x, last_y, terminal, reward = transition(
        state.ball_x,
        state.ball_y,
        state.ball_dir,
        state.pos,
        state.brick_map,
        state.strike,
        state.last_x,
        state.last_y,
        state.terminal,
        jnp.asarray(action, jnp.int32),
    )
    state = State(x, y, direction, pos, last_x, last_y, bricks, strike, terminal)
    return _obs(state), state, reward, terminal, jnp.bool_(False), {}


def state_from_reference(ref_state) -> State:
    # jnp.array copies: jnp.asarray of a numpy bool array can share its buffer on CPU, and
    # the state must not change when the caller's dict does.
    return State(
        **{name: jnp.array(ref_state[name], dtype=jnp.int32) for name in INTS},
        brick_map=jnp.array(ref_state["brick_map"], dtype=jnp.int32).reshape(SIZE, SIZE),
        **{name: jnp.array(ref_state[name], dtype=bool) for name in BOOLS},
    )


def state_to_reference(state: State):
    return state._asdict()
