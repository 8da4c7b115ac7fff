"""FrozenLake's randomness as the port's noise (harness code, not generated).

The reference draws one uniform `u = np_random.random()` per step and takes transition
`argmax(cumsum(p) > u)` of `P[s][a]`, whose slippery candidates are the directions
(a - 1) % 4, a, (a + 1) % 4 in that order. The port's noise is that index: 0 slips one way,
1 goes where the action says, 2 slips the other way.
"""

import numpy as np

INTENDED = 1


def noise_from_draws(draws, before, action, env):
    methods = [d.method for d in draws]
    if methods != ["random"]:
        raise ValueError(f"expected one np_random.random() per step, got {methods}")
    probabilities = [t[0] for t in env.unwrapped.P[int(before["s"])][int(action)]]
    if len(probabilities) == 1:
        # A hole or the goal: the step stays put whatever it drew.
        return np.int64(INTENDED)
    return np.int64(np.argmax(np.cumsum(probabilities) > float(draws[0].value)))
