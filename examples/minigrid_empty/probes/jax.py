"""L1 probes for the JAX MiniGrid port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
The observation is the image (7 x 7 x 3, C order) then the direction.
"""

import numpy as np

from envport.verifiers.draws.probes import probe

# Empty sees through walls: its reference marks every cell of the view visible, so there
# is no visibility probe here (DoorKey has one).
SEE_THROUGH_WALLS = True


def _state(jnp, state):
    return (
        jnp.asarray(state["grid"], jnp.int32),
        jnp.asarray(state["agent_pos"], jnp.int32),
        jnp.asarray(state["agent_dir"], jnp.int32),
        jnp.asarray(state["carrying"], jnp.int32),
    )


@probe("rules.transition")
def transition(module, before, action, after):
    import jax.numpy as jnp

    grid, pos, direction, carrying = _state(jnp, before)
    grid, pos, direction, carrying, count, reward, terminated = module.transition(
        grid,
        pos,
        direction,
        carrying,
        jnp.asarray(before["step_count"], jnp.int32),
        jnp.asarray(action, jnp.int32),
        256,
    )
    return {
        "grid": grid,
        "agent_pos": pos,
        "agent_dir": direction,
        "carrying": carrying,
        "step_count": count,
        "reward": reward,
        "terminated": terminated,
    }


@transition.expect
def _(before, action, after, transition):
    return {
        **{name: after[name] for name in ("grid", "agent_pos", "agent_dir", "carrying")},
        "step_count": after["step_count"],
        "reward": np.float64(transition.reward),
        "terminated": np.bool_(transition.terminated),
    }


@probe("view.observe")
def observe(module, before, action, after):
    import jax.numpy as jnp

    return {"obs": module.observe(*_state(jnp, after), SEE_THROUGH_WALLS)}


@observe.expect
def _(before, action, after, transition):
    return {"obs": transition.obs}
