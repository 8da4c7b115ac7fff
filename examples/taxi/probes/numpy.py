"""L1 probes for the NumPy Taxi port's module functions (harness code, not generated).

`call` runs in the worker with the port module; `expect` reads one reference transition.
"""

import numpy as np

from envport.verifiers.draws.probes import probe


@probe("rules.transition")
def transition(module, before, action, after):
    s, reward, terminated = module.transition(np.asarray([before["s"]]), np.asarray([action]))
    return {"s": s[0], "reward": reward[0], "terminated": terminated[0]}


@transition.expect
def _(before, action, after, transition):
    return {
        "s": after["s"],
        "reward": np.float64(transition.reward),
        "terminated": np.bool_(transition.terminated),
    }


@probe("rules.decode")
def decode(module, before, action, after):
    return {"cell": np.stack(module.decode(np.asarray(before["s"])))}


@decode.expect
def _(before, action, after, transition):
    s = int(before["s"])
    return {"cell": np.array([s // 100, s // 20 % 5, s // 4 % 5, s % 4])}
