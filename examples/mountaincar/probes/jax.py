"""L1 probes for the JAX MountainCar port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(module, before, action, after):
    import jax.numpy as jnp

    physics = jnp.asarray(before["physics"], dtype=jnp.float32)
    position, velocity = module.dynamics(physics[0], physics[1], action, module.Params())
    return {"physics": jnp.stack([position, velocity])}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.is_terminated")
def is_terminated(module, before, action, after):
    # Asked of the state the reference reached, so the answer is the reference's own flag.
    import jax.numpy as jnp

    physics = jnp.asarray(after["physics"], dtype=jnp.float32)
    return {"terminated": module.is_terminated(physics[0], physics[1], module.Params())}


@is_terminated.expect
def _(before, action, after, transition):
    return {"terminated": np.bool_(transition.terminated)}
