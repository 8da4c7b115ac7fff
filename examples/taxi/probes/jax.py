"""L1 probes for the JAX Taxi port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("rules.transition")
def transition(module, before, action, after):
    import jax.numpy as jnp

    s, reward, terminated = module.transition(jnp.asarray(before["s"], jnp.int32), action)
    return {"s": s, "reward": reward, "terminated": terminated}


@transition.expect
def _(before, action, after, transition):
    return {
        "s": after["s"],
        "reward": np.float64(transition.reward),
        "terminated": np.bool_(transition.terminated),
    }


@probe("rules.decode")
def decode(module, before, action, after):
    import jax.numpy as jnp

    return {"cell": jnp.stack(module.decode(jnp.asarray(before["s"], jnp.int32)))}


@decode.expect
def _(before, action, after, transition):
    s = int(before["s"])
    return {"cell": np.array([s // 100, s // 20 % 5, s // 4 % 5, s % 4])}
