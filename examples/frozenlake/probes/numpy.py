"""L1 probes for the NumPy FrozenLake port's module functions (harness code, not generated).

`call` runs in the worker with the port module and the step's noise (recorded from the
reference's draws); `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("lake.transition")
def transition(module, before, action, after, noise):
    direction = module.slip_direction(np.asarray([action]), np.asarray([noise]))
    s, reward, terminated = module.transition(np.asarray([before["s"]]), direction)
    return {"s": s[0], "reward": reward[0], "terminated": terminated[0]}


@transition.expect
def _(before, action, after, transition):
    return {
        "s": after["s"],
        "reward": np.float64(transition.reward),
        "terminated": np.bool_(transition.terminated),
    }
