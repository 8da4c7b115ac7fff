"""Steps of a NumPy port, run by a plain interpreter: the port imported as a user would.

Run as a file (`python -I plain_replay.py PORT ENTRY`), never imported: nothing of envport
is loaded in this process, so a port that behaves only while it sees the harness shows
here what it does otherwise. It reads `steps-in.npz` from its working directory (the
reference states, actions and noise of a sample of L3's steps), steps each through the
port's VectorEnv as the NumPy contract says, and writes `steps-out.npz` (the four outputs,
or `error`: the port's own words).
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


def main():
    port_dir, entry = sys.argv[1], sys.argv[2]
    data = np.load("steps-in.npz")
    states = {k[len("state/") :]: data[k] for k in data.files if k.startswith("state/")}
    actions = data["actions"]
    try:
        module = _import(port_dir, entry)
        env = module.VectorEnv(num_envs=len(actions))
        env.reset(seed=0)
        env.set_state(_states(module, states))
        if "noise" in data.files:
            answer = env.step_given_noise(actions, data["noise"])
        else:
            answer = env.step(actions)
        obs, reward, terminated, truncated = (np.asarray(part) for part in answer[:4])
    except Exception as error:  # the port's failure, reported in its own words
        np.savez("steps-out.npz", error=np.asarray(f"{type(error).__name__}: {error}"))
        return
    np.savez("steps-out.npz", obs=obs, reward=reward, terminated=terminated, truncated=truncated)


if __name__ == "__main__":
    main()
