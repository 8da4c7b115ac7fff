"""L1 probes for the JAX Acrobot port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(module, before, action, after):
    import jax.numpy as jnp

    physics = jnp.asarray(before["physics"], dtype=jnp.float32)
    return {"physics": module.dynamics(physics, action, module.Params())}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.is_terminated")
def is_terminated(module, before, action, after):
    # Asked of the state the reference reached, so the answer is the reference's own flag.
    import jax.numpy as jnp

    physics = jnp.asarray(after["physics"], dtype=jnp.float32)
    return {"terminated": module.is_terminated(physics, module.Params())}


@is_terminated.expect
def _(before, action, after, transition):
    return {"terminated": np.bool_(transition.terminated)}
