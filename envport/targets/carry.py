"""A reset that follows an episode, in the worker: what the port keeps across it.

Some references keep part of their state through `reset()` (MinAtar's sticky-action
wrapper keeps `last_action`, so the first step of an episode may repeat the last action of
the one before). `l2.reset_after_play` loads the states the reference's episodes ended in
and asks the port for the reset that follows each:

- NumPy: a VectorEnv loaded with those states, then `reset(seed=...)`, as a user resets
  after play (its autoreset is held to the reference's in l2.vector);
- JAX: a functional reset cannot see the episode before it, so the contract's optional
  `reset_after(key, state, params) -> (obs, state)` is that reset (the state the episode
  ended in goes in); a port without it answers with `reset(key, params)`, which keeps
  nothing.

Separate from the adapters (envport.targets.jax_port, numpy_port) so they keep one job each.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envport.targets.names import TargetName

# The JAX contract's optional function: a reset given the state the last episode ended in.
RESET_AFTER = "reset_after"


def reset_after(port: Any, states: dict[str, np.ndarray], seed: int) -> dict[str, Any]:
    """The reset after each of B states, its observation and its state read as the
    reference's fields (None without `state_to_reference`); `call`: what was called, said
    in the divergence (a JAX port without `reset_after` answers with `reset`)."""
    if port.backend == TargetName.JAX.value:
        return _jax(port, states, seed)
    env = port._env(states, seed)
    obs, _ = env.reset(seed=seed)
    return {"obs": np.array(obs), "state": port._read(env), "call": "VectorEnv.reset(seed)"}


def _jax(port: Any, states: dict[str, np.ndarray], seed: int) -> dict[str, Any]:
    jax, entry, params = port.jax, port.entry, port.params
    carry = getattr(entry, RESET_AFTER, None)
    read = getattr(entry, "state_to_reference", None)

    def one(ref_state: Any, key: Any) -> Any:
        if callable(carry):
            obs, state = carry(key, entry.state_from_reference(ref_state), params)
        else:
            obs, state = entry.reset(key, params)
        return obs, None if read is None else read(state)

    count = len(next(iter(states.values())))
    obs, read_back = jax.jit(jax.vmap(one))(states, port._keys(seed, (count,)))
    return {
        "obs": np.asarray(obs),
        "state": None if read_back is None else {k: np.asarray(v) for k, v in read_back.items()},
        "call": "reset_after()" if callable(carry) else "reset() (it has no `reset_after`)",
    }
