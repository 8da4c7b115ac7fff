"""L1 probes for the JAX FrozenLake port's module functions (harness code, not generated).

`call` runs in the worker with the port module and the step's noise (recorded from the
reference's draws); `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("lake.transition")
def transition(module, before, action, after, noise):
    import jax.numpy as jnp

    direction = module.slip_direction(action, noise)
    s, reward, terminated = module.transition(jnp.asarray(before["s"], jnp.int32), direction)
    return {"s": s, "reward": reward, "terminated": terminated}


@transition.expect
def _(before, action, after, transition):
    return {
        "s": after["s"],
        "reward": np.float64(transition.reward),
        "terminated": np.bool_(transition.terminated),
    }
