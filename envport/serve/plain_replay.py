"""Steps of a port, run by a plain interpreter: the port imported as a user would.

Run as a file (`python -I plain_replay.py PORT ENTRY BACKEND`), never imported: nothing of
envport is loaded in this process, so a port that behaves only while it sees the harness
shows here what it does otherwise. It reads `steps-in.npz` from its working directory (the
reference states, actions and noise of a sample of L3's steps), steps each as the contract
says (NumPy: through the port's VectorEnv; JAX: each row through the one-env `step`, as a
user calls it, eagerly), and writes `steps-out.npz` (the four outputs, or `error`: the
port's own words).
"""

import importlib
import importlib.util
import os
import sys

import numpy as np

PACKAGE = "port_under_test"


def _import(port_dir, entry):
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(port_dir, "__init__.py"), submodule_search_locations=[port_dir]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    if os.path.exists(os.path.join(port_dir, "__init__.py")):
        spec.loader.exec_module(package)
    return importlib.import_module(f"{PACKAGE}.{entry}")


def _states(module, states):
    count = len(next(iter(states.values())))
    batched = getattr(module, "states_from_reference", None)
    if callable(batched):
        return {k: np.asarray(v) for k, v in batched(states).items()}
    rows = [module.state_from_reference({k: v[i] for k, v in states.items()}) for i in range(count)]
    return {k: np.stack([np.asarray(row[k]) for row in rows]) for k in rows[0]}


def _numpy_steps(module, states, actions, noise):
    env = module.VectorEnv(num_envs=len(actions))
    env.reset(seed=0)
    env.set_state(_states(module, states))
    answer = env.step(actions) if noise is None else env.step_given_noise(actions, noise)
    return [np.asarray(part) for part in answer[:4]]


def _jax_steps(module, states, actions, noise):
    import jax

    params = module.default_params() if hasattr(module, "default_params") else None
    rows = []
    for index in range(len(actions)):
        state = module.state_from_reference({k: v[index] for k, v in states.items()})
        if noise is None:
            key = jax.random.PRNGKey(index)
            out = module.step(key, state, actions[index], params)
        else:
            out = module.step_given_noise(noise[index], state, actions[index], params)
        obs, _, reward, terminated, truncated = out[:5]
        rows.append([np.asarray(part) for part in (obs, reward, terminated, truncated)])
    return [np.stack([row[i] for row in rows]) for i in range(4)]


def main():
    port_dir, entry, backend = sys.argv[1], sys.argv[2], sys.argv[3]
    data = np.load("steps-in.npz")
    states = {k[len("state/") :]: data[k] for k in data.files if k.startswith("state/")}
    actions = data["actions"]
    noise = data["noise"] if "noise" in data.files else None
    try:
        module = _import(port_dir, entry)
        steps = _jax_steps if backend == "jax" else _numpy_steps
        obs, reward, terminated, truncated = steps(module, states, actions, noise)
    except Exception as error:  # the port's failure, reported in its own words
        np.savez("steps-out.npz", error=np.asarray(f"{type(error).__name__}: {error}"))
        return
    np.savez("steps-out.npz", obs=obs, reward=reward, terminated=terminated, truncated=truncated)


if __name__ == "__main__":
    main()
