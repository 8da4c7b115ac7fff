"""The pot game (tests/pot_game/harness/pot_game.py) in envport's two-player JAX contract,
in float32 throughout: a test subject, hand-written. It leaves JAX's global configuration
alone (float64 stays off: no `jax_enable_x64`)."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

RAISES = 4


class State(NamedTuple):
    pot: jax.Array  # float32
    raises: jax.Array  # int32
    current_player: jax.Array  # int32
    observation: jax.Array  # float32[2]: [pot, raises / 4]
    legal_action_mask: jax.Array  # bool[2]
    rewards: jax.Array  # float32[2]
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool


def _state(pot, raises, player, rewards, terminated) -> State:
    observation = jnp.stack([pot, raises.astype(jnp.float32) / RAISES]).astype(jnp.float32)
    return State(
        pot=pot,
        raises=raises,
        current_player=player,
        observation=observation,
        legal_action_mask=jnp.ones(2, jnp.bool_),
        rewards=rewards,
        terminated=terminated,
        truncated=jnp.bool_(False),
    )


def init(key: jax.Array) -> State:
    del key
    return _state(jnp.float32(1.0), jnp.int32(0), jnp.int32(0), jnp.zeros(2, jnp.float32), False)


def step(state: State, action, key: jax.Array) -> State:
    del key
    take = jnp.asarray(action, jnp.int32) == 1
    mover = state.current_player
    half = state.pot / 2
    mine = jnp.where(take, half, 0.0)
    rewards = jnp.where(mover == 0, jnp.stack([mine, -mine]), jnp.stack([-mine, mine]))
    rewards = jnp.where(take, rewards, 0.0).astype(jnp.float32)
    pot = jnp.where(take, state.pot, state.pot + 0.5).astype(jnp.float32)
    raises = jnp.where(take, state.raises, state.raises + 1).astype(jnp.int32)
    ended = take | (raises == RAISES)
    return _state(pot, raises, (1 - mover).astype(jnp.int32), rewards, jnp.bool_(ended))


def state_from_reference(ref) -> State:
    return _state(
        jnp.asarray(ref["pot"]).astype(jnp.float32),
        jnp.asarray(ref["raises"]).astype(jnp.int32),
        jnp.asarray(ref["current_player"]).astype(jnp.int32),
        jnp.zeros(2, jnp.float32),
        jnp.bool_(False),
    )


def state_to_reference(state: State) -> dict:
    return {"pot": state.pot, "raises": state.raises, "current_player": state.current_player}
