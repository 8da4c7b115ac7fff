"""Bridge that lets gymnax's own MinAtar SpaceInvaders (`SpaceInvaders-MinAtar`) be verified
by envport against MinAtar itself, unchanged.

This file is all the third-party env needs: gymnax's `step_env` (the transition before its
autoreset; its `done` is the game's end, gymnax's 1000-step limit being applied outside
`step_env`), its float planes and maps cast to MinAtar's types, and the reference's state
mapped onto gymnax's EnvState. The game has no randomness, so the bridge exports no noise
functions. The reference carries no step counter, so a state it hands over starts gymnax's
clock at 0; `ramping` is gymnax's switch for the ramp MinAtar always applies.
"""

import jax.numpy as jnp
from gymnax.environments.minatar.space_invaders import EnvState, MinSpaceInvaders

_env = MinSpaceInvaders()
_INTS = ("pos", "alien_dir", "enemy_move_interval", "alien_move_timer", "alien_shot_timer",
         "shot_timer", "ramp_index")  # fmt: skip
_MAPS = ("alien_map", "f_bullet_map", "e_bullet_map")


def default_params():
    return _env.default_params


def reset(key, params):
    obs, state = _env.reset_env(key, params)
    return obs.astype(bool), state


def step(key, state, action, params):
    obs, state, reward, done, info = _env.step_env(key, state, action, params)
    return obs.astype(bool), state, reward, done, jnp.bool_(False), info


def state_from_reference(ref_state):
    # jnp.array copies (jnp.asarray of a numpy array can share its buffer on CPU).
    ints = {name: jnp.array(ref_state[name], dtype=jnp.int32) for name in _INTS}
    maps = {name: jnp.array(ref_state[name], dtype=jnp.float32).reshape(10, 10) for name in _MAPS}
    return EnvState(
        **ints,
        **maps,
        ramping=jnp.bool_(True),
        time=jnp.int32(0),
        terminal=jnp.array(ref_state["terminal"], dtype=bool),
    )


def state_to_reference(state):
    ref = {name: getattr(state, name) for name in _INTS}
    ref.update({name: getattr(state, name).astype(jnp.int32) for name in _MAPS})
    ref["terminal"] = state.terminal
    return ref
