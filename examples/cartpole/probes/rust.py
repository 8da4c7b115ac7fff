"""L1 probes for the Rust CartPole port's module functions (harness code, not generated).

`call` runs in the worker with the crate's exported C functions (`CrateSymbols`): each probe
calls the `#[no_mangle] extern "C"` function the spec's contract names for its module
function. `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def dynamics(crate, before, action, after):
    physics = np.array(before["physics"], dtype=np.float64)
    crate.call("physics_dynamics", physics, np.float64(action))  # steps the 4 values in place
    return {"physics": physics}


@dynamics.expect
def _(before, action, after, transition):
    return {"physics": after["physics"]}


@probe("physics.is_terminated")
def is_terminated(crate, before, action, after):
    # Asked of the state the reference reached, so the answer is the reference's own flag.
    physics = np.array(after["physics"], dtype=np.float64)
    return {"terminated": np.bool_(crate.call("physics_is_terminated", physics, returns="u8"))}


@is_terminated.expect
def _(before, action, after, transition):
    return {"terminated": np.bool_(transition.terminated)}
