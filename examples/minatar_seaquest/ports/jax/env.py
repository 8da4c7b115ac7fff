"""MinAtar Seaquest (minatar 1.0.15, `MinAtar/Seaquest-v1`, sticky actions at 0.1) in the
gymnax functional style (envport's JAX contract), with explicit randomness: `sample_noise`
draws the step's six numbers (the sticky draw; the enemy spawn's side, kind and row; the
diver spawn's side and row), `step_given_noise` is the deterministic rest, and `step` is the
two composed. Object lists are `name` int8[capacity, fields] plus `name_length` (the
reference's `name.length`): every field fits in a byte, and a byte is what the bench's restart
and the terminal env's keep copy of each record every step; the step widens them to int32
(the lists module's `Objects`) once, at its start.

A frame updates each list whole (the `sweeps` module: masks, counts and bit masks, no loop over
slots); where a removal may take an earlier equal twin, which only a walk slot by slot
follows, that env's frame is walked instead (rules.py), in a loop that runs only while
some env of a batch needs it.

Hand-written known-good port: a test subject for the verifier, not model output.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from . import lists, sweeps
from .rules import (
    CAPACITY,
    DIVER_SPAWN,
    FIELDS,
    MAX_OXYGEN,
    enemies,
    enemy_bullets,
    friendly_bullets,
    player,
    rescue,
    spawn_diver,
    spawn_enemy,
    sticky,
    timers_and_surface,
)
from .view import observe


class Params(NamedTuple):
    pass


class State(NamedTuple):
    oxygen: jax.Array
    diver_count: jax.Array
    sub_x: jax.Array
    sub_y: jax.Array
    e_spawn_speed: jax.Array
    e_spawn_timer: jax.Array
    d_spawn_timer: jax.Array
    move_speed: jax.Array
    ramp_index: jax.Array
    shot_timer: jax.Array
    last_action: jax.Array
    sub_or: jax.Array
    surface: jax.Array
    terminal: jax.Array
    f_bullets: jax.Array
    f_bullets_length: jax.Array
    e_bullets: jax.Array
    e_bullets_length: jax.Array
    e_fish: jax.Array
    e_fish_length: jax.Array
    e_subs: jax.Array
    e_subs_length: jax.Array
    divers: jax.Array
    divers_length: jax.Array


_INTS = ("oxygen", "diver_count", "sub_x", "sub_y", "e_spawn_speed", "e_spawn_timer",
         "d_spawn_timer", "move_speed", "ramp_index", "shot_timer", "last_action")  # fmt: skip
_FLAGS = ("sub_or", "surface", "terminal")


def default_params() -> Params:
    return Params()


def reset(key: jax.Array, params: Params):
    # Env.reset draws nothing: the sub on the surface in the middle, facing left.
    i = jnp.int32
    values = dict(
        oxygen=i(MAX_OXYGEN), diver_count=i(0), sub_x=i(5), sub_y=i(0), e_spawn_speed=i(20),
        e_spawn_timer=i(20), d_spawn_timer=i(DIVER_SPAWN), move_speed=i(5), ramp_index=i(0),
        shot_timer=i(0), last_action=i(0), sub_or=jnp.bool_(False), surface=jnp.bool_(True),
        terminal=jnp.bool_(False),
    )  # fmt: skip
    for name, capacity in CAPACITY.items():
        values[name] = jnp.zeros((capacity, FIELDS[name]), jnp.int8)
        values[f"{name}_length"] = i(0)
    state = State(**values)
    return observe(state), state


def reset_after(key: jax.Array, state: State, params: Params):
    """The reset that follows an episode ending in `state`: MinAtar's sticky-action wrapper
    keeps its last action across reset(), so a new episode's first step may repeat it."""
    obs, fresh = reset(key, params)
    return obs, fresh._replace(last_action=state.last_action)


def sample_noise(key: jax.Array, state: State, action, params: Params):
    return jax.random.uniform(key, (6,))


def _widened(s: State, room: dict) -> tuple[dict, dict]:
    d = s._asdict()
    o = {n: lists.objects(d[n].astype(jnp.int32), d[f"{n}_length"], room[n]) for n in CAPACITY}
    return d, o


def _spawns_and_player(noise, d: dict, o: dict, action, add=lists.append) -> None:
    enemy_due = d["e_spawn_timer"] == 0
    o["e_fish"], o["e_subs"] = spawn_enemy(
        d["move_speed"], o["e_fish"], o["e_subs"], enemy_due, noise, add
    )
    d["e_spawn_timer"] = jnp.where(enemy_due, d["e_spawn_speed"], d["e_spawn_timer"])
    diver_due = d["d_spawn_timer"] == 0
    o["divers"] = spawn_diver(o["divers"], diver_due, noise, add)
    d["d_spawn_timer"] = jnp.where(diver_due, DIVER_SPAWN, d["d_spawn_timer"])
    o["f_bullets"] = player(d, o["f_bullets"], action, add)


def _finished(d: dict, o: dict, reward) -> tuple[State, jax.Array]:
    reward = timers_and_surface(d, reward)
    for name, objects in o.items():
        records, d[f"{name}_length"] = lists.compact(objects, CAPACITY[name])
        d[name] = records.astype(jnp.int8)
    return State(**d), reward


# Room for what a step appends before its lists move: a spawn, a shot. The walks append
# the subs' shots to the enemy bullets too (one slot per sub more); the sweeps lay them
# out themselves.
ROOM = {"f_bullets": 1, "e_fish": 1, "e_subs": 1, "divers": 1, "e_bullets": 0}


def _swept(noise, s: State, action):
    """One live frame with every list updated whole (`sweeps`).
    -> (state, reward int32, twin: a removal the sweeps cannot follow)."""
    d, o = _widened(s, ROOM)
    _spawns_and_player(noise, d, o, action, lists.push)
    reward = jnp.int32(0)
    o["f_bullets"], o["e_fish"], o["e_subs"], reward, twin_f = sweeps.friendly_bullets(
        o["f_bullets"], o["e_fish"], o["e_subs"], reward
    )
    o["divers"], twin_d = sweeps.rescue(d, o["divers"])
    o["e_subs"], o["f_bullets"], reward, o["e_bullets"], twin_s = sweeps.enemies(
        d, o["e_subs"], o["f_bullets"], reward, o["e_bullets"]
    )
    o["e_bullets"] = sweeps.enemy_bullets(d, o["e_bullets"])
    o["e_fish"], o["f_bullets"], reward, _, twin_e = sweeps.enemies(
        d, o["e_fish"], o["f_bullets"], reward
    )
    state, reward = _finished(d, o, reward)
    return state, reward, twin_f | twin_d | twin_s | twin_e


def _walked(noise, s: State, action):
    """One live frame as the game walks it, slot by slot (rules.py). -> (state, reward)."""
    d, o = _widened(s, ROOM | {"e_bullets": CAPACITY["e_subs"] + 1})
    _spawns_and_player(noise, d, o, action)
    reward = jnp.int32(0)
    o["f_bullets"], o["e_fish"], o["e_subs"], reward = friendly_bullets(
        o["f_bullets"], o["e_fish"], o["e_subs"], reward
    )
    o["divers"] = rescue(d, o["divers"])
    o["e_subs"], o["f_bullets"], reward, o["e_bullets"] = enemies(
        d, o["e_subs"], o["f_bullets"], reward, o["e_bullets"]
    )
    o["e_bullets"] = enemy_bullets(d, o["e_bullets"])
    o["e_fish"], o["f_bullets"], reward, _ = enemies(d, o["e_fish"], o["f_bullets"], reward)
    return _finished(d, o, reward)


def _transition(noise, s: State, action):
    """The swept frame, or the walked one where a removal may take an earlier twin: a loop
    run once for such an env and not at all otherwise, so under `vmap` the walks run only
    in a batch where some env needs them (rarely: a hit object equal to an unwalked one)."""
    state, reward, twin = _swept(noise, s, action)

    def walk(carry):
        # The walk reads the loop's counter, so XLA cannot hoist it out of the loop (a
        # loop-invariant body runs before the loop, every step, needed or not).
        fresh = jnp.where(carry[0] == 0, noise, jnp.nan)
        return (carry[0] + 1, *_walked(fresh, s, action))

    _, state, reward = jax.lax.while_loop(
        lambda carry: carry[0] < twin.astype(jnp.int32), walk, (jnp.int32(0), state, reward)
    )
    return state, reward


# Compiled, as a user calls it: each walk is a loop whose body closes over the step's
# values, so called eagerly every step would compile its loops again.
@jax.jit
def step_given_noise(noise, state: State, action, params: Params):
    action = sticky(jnp.asarray(action), state.last_action, noise[0])
    stepped, reward = _transition(noise, state._replace(last_action=action), action)
    # A terminal env keeps its state, but its last action (the wrapper sets it first).
    new = jax.tree.map(lambda a, b: jnp.where(state.terminal, b, a), stepped, state)
    new = new._replace(last_action=action)
    reward = jnp.where(state.terminal, 0.0, reward.astype(jnp.float32))
    return observe(new), new, reward, new.terminal, jnp.bool_(False), {}


def step(key: jax.Array, state: State, action, params: Params):
    return step_given_noise(sample_noise(key, state, action, params), state, action, params)


def state_from_reference(ref_state) -> State:
    # jnp.array copies: jnp.asarray of a numpy bool array can share its buffer on CPU.
    values = {name: jnp.array(ref_state[name], dtype=jnp.int32) for name in _INTS}
    values.update({name: jnp.array(ref_state[name], dtype=bool) for name in _FLAGS})
    for name, capacity in CAPACITY.items():
        values[name] = jnp.array(ref_state[name], dtype=jnp.int8).reshape(capacity, FIELDS[name])
        values[f"{name}_length"] = jnp.array(ref_state[f"{name}.length"], dtype=jnp.int32)
    return State(**values)


def state_to_reference(state: State):
    out = state._asdict()
    for name in CAPACITY:
        out[f"{name}.length"] = out.pop(f"{name}_length")
    return out
