"""envpool's CartPole-v1 behind envport's NumPy contract: a bridge, not a port.

envpool steps its envs in C++ and cannot load a state, so this bridge has only `reset` and
`step` and is verified by reverse injection (`envport verify ... --reverse-injection`):
the observation is the physics state (the spec's `state.from_observation`). envpool's
Gymnasium API already is the contract's: batched, next-step autoreset, float32 obs.
"""

import envpool
import numpy as np

ENV_ID = "CartPole-v1"


class VectorEnv:
    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self._env = envpool.make(ENV_ID, env_type="gymnasium", num_envs=num_envs, seed=0)

    def reset(self, seed=None):
        return self._env.reset(seed=seed)

    def step(self, actions):
        return self._env.step(np.asarray(actions, dtype=np.int32))
