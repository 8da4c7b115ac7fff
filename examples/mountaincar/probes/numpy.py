"""L1 probes for the NumPy MountainCar port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(module, before, action, after):
    physics = np.asarray(before["physics"], dtype=np.float64)[None, :]
    return {"physics": module.dynamics(physics, np.asarray([action]))[0]}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.is_terminated")
def is_terminated(module, before, action, after):
    # Asked of the state the reference reached, so the answer is the reference's own flag.
    physics = np.asarray(after["physics"], dtype=np.float64)[None, :]
    return {"terminated": module.is_terminated(physics)[0]}


@is_terminated.expect
def _(before, action, after, transition):
    return {"terminated": np.bool_(transition.terminated)}
