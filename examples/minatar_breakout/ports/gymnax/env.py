"""Bridge that lets gymnax's own MinAtar Breakout (`Breakout-MinAtar`) be verified by envport
against MinAtar itself, unchanged.

This file is all the third-party env needs: gymnax's `step_env` (the transition before its
autoreset) with its `done` split into the game's end (`terminal`) and gymnax's own episode
limit (`time >= max_steps_in_episode`, 1000 steps, which MinAtar does not have), and the
reference's state mapped onto gymnax's EnvState. The reference carries no step counter, so
a state it hands over starts gymnax's clock at 0.
"""

import jax.numpy as jnp
from gymnax.environments.minatar.breakout import EnvState, MinBreakout

_env = MinBreakout()


def default_params():
    return _env.default_params


def reset(key, params):
    # gymnax draws its planes as float32; MinAtar's are bool (the bridge's one adaptation).
    obs, state = _env.reset_env(key, params)
    return obs.astype(bool), state


def step(key, state, action, params):
    obs, state, reward, done, info = _env.step_env(key, state, action, params)
    terminated = done
    truncated = jnp.bool_(False)
    return obs.astype(bool), state, reward, terminated, truncated, info


def state_from_reference(ref_state):
    # jnp.array copies (jnp.asarray of a numpy bool array can share its buffer on CPU).
    i = lambda name: jnp.array(ref_state[name], dtype=jnp.int32)  # noqa: E731
    return EnvState(
        ball_y=i("ball_y"),
        ball_x=i("ball_x"),
        ball_dir=i("ball_dir"),
        pos=i("pos"),
        brick_map=jnp.array(ref_state["brick_map"], dtype=jnp.float32).reshape(10, 10),
        strike=jnp.array(ref_state["strike"], dtype=bool),
        last_y=i("last_y"),
        last_x=i("last_x"),
        time=jnp.int32(0),
        terminal=jnp.array(ref_state["terminal"], dtype=bool),
    )


def state_to_reference(state):
    return {
        "ball_y": state.ball_y,
        "ball_x": state.ball_x,
        "ball_dir": state.ball_dir,
        "pos": state.pos,
        "brick_map": state.brick_map.astype(jnp.int32),
        "strike": state.strike,
        "last_y": state.last_y,
        "last_x": state.last_x,
        "terminal": state.terminal,
    }
