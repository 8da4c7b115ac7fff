"""L1 probes for the NumPy Pendulum port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(module, before, action, after):
    physics = np.asarray(before["physics"], dtype=np.float64)[None, :]
    u = module.clip_torque(np.asarray(action)[None, :])
    return {"physics": module.dynamics(physics, u)[0]}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.cost")
def cost(module, before, action, after):
    physics = np.asarray(before["physics"], dtype=np.float64)[None, :]
    u = module.clip_torque(np.asarray(action)[None, :])
    return {"reward": -module.cost(physics, u)[0]}


@cost.expect
def _(before, action, after, transition):
    return {"reward": np.float64(transition.reward)}
