"""L1 probes for the JAX MinAtar Seaquest port's module functions (harness code, not
generated).

`call` runs in the worker with the port module and the step's noise (recorded from the
game's own RandomState); `expect` reads one reference transition. The arranged inputs are
the NumPy probes' (probes/numpy.py says why each is there).
"""

import importlib.util
from pathlib import Path

import numpy as np

from envport.verifiers.draws.probes import probe

_spec = importlib.util.spec_from_file_location("seaquest_numpy_probes", Path(__file__).with_name("numpy.py"))
_numpy_probes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_numpy_probes)


@probe("env.step_given_noise")
def step_given_noise(module, before, action, after, noise):
    import jax.numpy as jnp

    state = module.state_from_reference(before)
    obs, new, reward, terminated, _, _ = module.step_given_noise(
        jnp.asarray(noise, jnp.float32), state, jnp.asarray(action, jnp.int32), module.default_params()
    )
    return {**module.state_to_reference(new), "reward": reward, "obs": obs}


@step_given_noise.expect
def _(before, action, after, transition):
    return {**after, "reward": np.float64(transition.reward), "obs": transition.obs}


surfacing = probe("env.surfacing")(step_given_noise.call)
surfacing.expect(step_given_noise.expect_fn)
surfacing.arrange(_numpy_probes._surfacing)

bullet_near_enemy = probe("env.bullet_near_enemy")(step_given_noise.call)
bullet_near_enemy.expect(step_given_noise.expect_fn)
bullet_near_enemy.arrange(_numpy_probes._bullet_near_enemy)
