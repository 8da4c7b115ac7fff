"""L1 probes for the NumPy CartPole port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(module, before, action, after):
    out = module.dynamics(before["physics"][None, :], np.asarray([action]))
    return {"physics": out[0]}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.is_terminated")
def is_terminated(module, before, action, after):
    # Asked of the state the reference reached, so the answer is the reference's own flag.
    return {"terminated": module.is_terminated(after["physics"][None, :])[0]}


@is_terminated.expect
def _(before, action, after, transition):
    return {"terminated": np.bool_(transition.terminated)}
