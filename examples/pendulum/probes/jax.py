"""L1 probes for the JAX Pendulum port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(module, before, action, after):
    import jax.numpy as jnp

    physics = jnp.asarray(before["physics"], dtype=jnp.float32)
    params = module.Params()
    u = module.clip_torque(action, params)
    th, thdot = module.dynamics(physics[0], physics[1], u, params)
    return {"physics": jnp.stack([th, thdot])}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.cost")
def cost(module, before, action, after):
    import jax.numpy as jnp

    physics = jnp.asarray(before["physics"], dtype=jnp.float32)
    u = module.clip_torque(action, module.Params())
    return {"reward": -module.cost(physics[0], physics[1], u)}


@cost.expect
def _(before, action, after, transition):
    return {"reward": np.float64(transition.reward)}
