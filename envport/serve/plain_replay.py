"""Steps of a port, run by a plain interpreter: the port imported as a user would.

Run as a file (`python main.py`, started by `plain_start` under a worker's limits), never
imported: nothing of envport is loaded in this process, so a port that behaves only while
it sees the harness shows here what it does otherwise. It reads from stdin, before the
port is imported, one npz: the port's folder, entry module and backend, and the reference
states, actions and noise of a sample of L3's steps. It steps each as the contract says
(NumPy: through the port's VectorEnv; JAX: each row through the one-env `step`, as a user
calls it, eagerly; a two-player port through its `step` on states), only the rows its
optional `can_hold` accepts, and writes one npz to stdout (which rows it held and their
four outputs, or `error`: the port's own words). Nothing reaches the disk: the
arguments are not on the command line, the answer not in the working directory.
"""

import importlib
import importlib.util
import io
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


def _field(state, name):
    return state[name] if isinstance(state, dict) else getattr(state, name)


def _turn(state):
    """A game's turn record (the same layout as envport.targets.turns.turn_record, which
    this file cannot import): observation, player to move, legal-action mask."""
    observation = np.asarray(_field(state, "observation"))
    mask = np.asarray(_field(state, "legal_action_mask"))
    current = np.asarray(_field(state, "current_player"))
    # turns.record_dtype: a float observation's own dtype, else int32 (never a promotion).
    dtype = observation.dtype if observation.dtype.kind == "f" else np.int32
    count = len(current)
    return np.concatenate(
        [
            observation.reshape(count, -1).astype(dtype),
            current.reshape(count, 1).astype(dtype),
            mask.reshape(count, -1).astype(dtype),
        ],
        axis=1,
    )


def _game_outputs(state):
    return [
        _turn(state),
        np.asarray(_field(state, "rewards")),
        np.asarray(_field(state, "terminated")),
        np.asarray(_field(state, "truncated")),
    ]


def _game_steps(module, states, actions, backend):
    """A two-player port's pgx-style functions: NumPy on the whole batch, JAX row by row."""
    if backend != "jax":
        return _game_outputs(module.step(module.state_from_reference(states), actions))
    import jax

    rows = []
    for index in range(len(actions)):
        state = module.state_from_reference({k: v[index] for k, v in states.items()})
        nxt = module.step(state, actions[index], jax.random.PRNGKey(index))
        rows.append(jax.tree_util.tree_map(lambda leaf: np.asarray(leaf)[None], nxt))
    merged = jax.tree_util.tree_map(lambda *leaves: np.concatenate(leaves), *rows)
    return _game_outputs(merged)


def _held(module, states, backend, game):
    """Which rows the port says it can hold (its optional `can_hold`, called as the contract
    says: NumPy game on the batch, otherwise one reference state at a time); a port
    without it holds every row. The rows it cannot hold are not stepped: they are outside
    the port's domain, as every other check treats them."""
    count = len(next(iter(states.values())))
    can_hold = getattr(module, "can_hold", None)
    if not callable(can_hold):
        return np.ones(count, bool)
    if game and backend != "jax":
        return np.asarray(can_hold(states), bool).reshape(count)
    return np.array([bool(can_hold({k: v[i] for k, v in states.items()})) for i in range(count)])


def _is_game(module):
    return (
        hasattr(module, "init")
        and not hasattr(module, "reset")
        and not hasattr(module, "VectorEnv")
    )


def _answer(output, **parts):
    buffer = io.BytesIO()
    np.savez(buffer, **parts)
    output.write(buffer.getvalue())
    output.flush()


def main():
    with np.load(io.BytesIO(sys.stdin.buffer.read())) as data:
        given = {name: data[name] for name in data.files}
    port_dir, entry, backend = (str(given.pop(name)) for name in ("port", "entry", "backend"))
    states = {k[len("state/") :]: v for k, v in given.items() if k.startswith("state/")}
    actions = given["actions"]
    noise = given.get("noise")
    # The answer's channel kept apart; what the port prints goes where stderr goes.
    output = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        module = _import(port_dir, entry)
        game = _is_game(module)
        held = _held(module, states, backend, game)
        if not held.any():
            _answer(output, held=held)
            return
        states = {k: v[held] for k, v in states.items()}
        actions = actions[held]
        noise = None if noise is None else noise[held]
        if game:
            obs, reward, terminated, truncated = _game_steps(module, states, actions, backend)
        else:
            steps = _jax_steps if backend == "jax" else _numpy_steps
            obs, reward, terminated, truncated = steps(module, states, actions, noise)
    except Exception as error:  # the port's failure, reported in its own words
        _answer(output, error=np.asarray(f"{type(error).__name__}: {error}"))
        return
    _answer(output, held=held, obs=obs, reward=reward, terminated=terminated, truncated=truncated)


if __name__ == "__main__":
    main()
