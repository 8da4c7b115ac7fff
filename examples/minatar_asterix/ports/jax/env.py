"""MinAtar Asterix (minatar 1.0.15, `MinAtar/Asterix-v1`, sticky actions at 0.1) in the
gymnax functional style (envport's JAX contract), with explicit randomness: `sample_noise`
draws the step's four numbers (the sticky draw, the spawn's side, gold or enemy, which free
slot), `step_given_noise` is the deterministic rest, and `step` is the two composed.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .rules import SLOTS, move_player, ramp, spawn, sticky, touch
from .view import observe


class Params(NamedTuple):
    pass


class State(NamedTuple):
    player_x: jax.Array
    player_y: jax.Array
    spawn_speed: jax.Array
    spawn_timer: jax.Array
    move_speed: jax.Array
    move_timer: jax.Array
    ramp_timer: jax.Array
    ramp_index: jax.Array
    last_action: jax.Array
    terminal: jax.Array
    slot_taken: jax.Array
    slot_x: jax.Array
    slot_right: jax.Array
    slot_gold: jax.Array


def default_params() -> Params:
    return Params()


def _obs(s: State) -> jax.Array:
    return observe(s.player_x, s.player_y, s.slot_taken, s.slot_x, s.slot_right, s.slot_gold)


def reset(key: jax.Array, params: Params):
    i = jnp.int32
    state = State(
        i(5), i(5), i(10), i(10), i(5), i(5), i(100), i(0), i(0),
        jnp.bool_(False),
        jnp.zeros(SLOTS, dtype=bool),
        jnp.zeros(SLOTS, dtype=jnp.int32),
        jnp.zeros(SLOTS, dtype=bool),
        jnp.zeros(SLOTS, dtype=bool),
    )  # fmt: skip
    return _obs(state), state


def reset_after(key: jax.Array, state: State, params: Params):
    """The reset that follows an episode ending in `state`: MinAtar's sticky-action wrapper
    keeps its last action across reset(), so a new episode's first step may repeat it."""
    obs, fresh = reset(key, params)
    return obs, fresh._replace(last_action=state.last_action)


def sample_noise(key: jax.Array, state: State, action, params: Params):
    return jax.random.uniform(key, (4,))


def step_given_noise(noise, state: State, action, params: Params):
    s = state
    action = sticky(jnp.asarray(action), s.last_action, noise[0])
    taken, x, right, gold = spawn(
        s.slot_taken, s.slot_x, s.slot_right, s.slot_gold, s.spawn_timer, noise
    )
    spawn_timer = jnp.where(s.spawn_timer == 0, s.spawn_speed, s.spawn_timer)
    player_x, player_y = move_player(s.player_x, s.player_y, action)
    taken, reward, hit = touch(taken, x, gold, player_x, player_y)

    moving = s.move_timer == 0
    move_timer = jnp.where(moving, s.move_speed, s.move_timer)
    moved_x = jnp.where(moving & taken, x + jnp.where(right, 1, -1), x)
    taken = taken & (moved_x >= 0) & (moved_x <= 9)
    after, more, hit_after = touch(taken, moved_x, gold, player_x, player_y)
    taken = jnp.where(moving, after, taken)
    reward = reward + jnp.where(moving, more, 0.0)
    hit = hit | (moving & hit_after)
    spawn_speed, move_speed, ramp_timer, ramp_index = ramp(
        s.spawn_speed, s.move_speed, s.ramp_timer, s.ramp_index
    )
    stepped = State(
        player_x, player_y, spawn_speed, spawn_timer - 1, move_speed, move_timer - 1,
        ramp_timer, ramp_index, action, s.terminal | hit,
        taken, jnp.where(taken, moved_x, 0), right & taken, gold & taken,
    )  # fmt: skip
    # A terminal env keeps its state, but its last action (the wrapper sets it first).
    new = jax.tree.map(lambda a, b: jnp.where(s.terminal, b, a), stepped, s)
    new = new._replace(last_action=action)
    reward = jnp.where(s.terminal, 0.0, reward)
    return _obs(new), new, reward, new.terminal, jnp.bool_(False), {}


def step(key: jax.Array, state: State, action, params: Params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


_INTS = ("player_x", "player_y", "spawn_speed", "spawn_timer", "move_speed", "move_timer",
         "ramp_timer", "ramp_index", "last_action")  # fmt: skip


def state_from_reference(ref_state) -> State:
    # jnp.array copies: jnp.asarray of a numpy bool array can share its buffer on CPU.
    values = {name: jnp.array(ref_state[name], dtype=jnp.int32) for name in _INTS}
    return State(
        **values,
        terminal=jnp.array(ref_state["terminal"], dtype=bool),
        slot_taken=jnp.array(ref_state["slot_taken"], dtype=bool).reshape(SLOTS),
        slot_x=jnp.array(ref_state["slot_x"], dtype=jnp.int32).reshape(SLOTS),
        slot_right=jnp.array(ref_state["slot_right"], dtype=bool).reshape(SLOTS),
        slot_gold=jnp.array(ref_state["slot_gold"], dtype=bool).reshape(SLOTS),
    )


def state_to_reference(state: State):
    return state._asdict()
