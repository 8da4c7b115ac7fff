"""Steps per second of a loaded port or an anchor implementation, inside a worker.

Every implementation runs the same workload: `batch` envs stepped `steps` times with actions
cycled from a pool the driver drew from the reference's action space, and an env that ends
restarted. JAX ports and gymnax anchors (same loop, same compilation) and Rust ports restart
an env from the state its slot started in (its own reset's for JAX, a reference start state
for Rust, whose ABI has no reset); the NumPy port's `VectorEnv` autoresets itself.
Compilation is timed apart, one untimed run warms caches, and the best of `repeats` timed
runs is reported (the machine is shared).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from envport.targets.loader import ContractError

ANCHORS = ("gymnax",)


def run_bench(
    port: Any,
    batch: int,
    steps: int,
    repeats: int,
    actions: np.ndarray,
    states: dict[str, np.ndarray] | None = None,
    anchor: str | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """SPS of `port` (or of `anchor`, when given) at one batch size.

    `actions` is a pool (K, batch, ...) cycled over the steps; `states` a pool of reference
    start states (fields stacked over M envs) for ports that cannot reset themselves.
    """
    if anchor is not None:
        port = load_anchor(anchor)
    if port is None:
        raise ContractError("no port loaded")
    backend = port.backend
    if backend in ("jax", "gymnax"):
        return _bench_jax(port, batch, steps, repeats, actions, seed)
    if backend == "numpy":
        return _bench_numpy(port, batch, steps, repeats, actions, seed)
    if backend == "rust":
        if states is None:
            raise ContractError("a Rust port's bench needs reference start states")
        return _bench_rust(port, batch, steps, repeats, actions, states)
    raise ContractError(f"no bench for backend `{backend}`")


def best_of(run: Callable[[], None], batch: int, steps: int, repeats: int) -> dict[str, Any]:
    run()  # warm-up: first-touch page faults, lazy initialisation, thread start-up
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    runs = [batch * steps / s for s in seconds]
    return {"sps": max(runs), "sps_runs": runs}


# ---- JAX ports and gymnax anchors ----


class GymnaxAnchor:
    """A gymnax env from `gymnax.make`, driven through its transition before autoreset."""

    backend = "gymnax"

    def __init__(self, name: str) -> None:
        import gymnax

        self.env, self.params = gymnax.make(name)

    def reset(self, key: Any) -> Any:
        return self.env.reset_env(key, self.params)

    def step(self, key: Any, state: Any, action: Any) -> Any:
        obs, state, reward, terminated, _ = self.env.step_env(key, state, action, self.params)
        return obs, state, reward, terminated | self.env.is_truncated(state, self.params)


_anchors: dict[str, Any] = {}


def load_anchor(name: str) -> Any:
    kind, _, env_id = name.partition(":")
    if kind not in ANCHORS or not env_id:
        raise ContractError(f"anchor {name!r}: expected gymnax:EnvId (e.g. gymnax:CartPole-v1)")
    if name not in _anchors:
        _anchors[name] = GymnaxAnchor(env_id)
    return _anchors[name]


def _jax_functions(port: Any) -> tuple[Callable, Callable]:
    """reset(key) -> (obs, state) and step(key, state, action) -> (obs, state, reward, done)."""
    if port.backend == "gymnax":
        return port.reset, port.step
    entry, params = port.entry, port.params

    def reset(key: Any) -> Any:
        return entry.reset(key, params)

    def step(key: Any, state: Any, action: Any) -> Any:
        obs, state, reward, terminated, truncated, _ = entry.step(key, state, action, params)
        return obs, state, reward, terminated | truncated

    return reset, step


def _bench_jax(
    port: Any, batch: int, steps: int, repeats: int, actions: np.ndarray, seed: int
) -> dict[str, Any]:
    """Both ways to drive a jitted env (lax.scan over the steps, or a Python loop over a
    jitted step); the faster one is reported, the other kept in `loops`.

    An env that ends restarts from the state its slot started from (as Brax's
    AutoResetWrapper does), so the same loop serves every JAX env and no reset randomness
    is drawn per step; the step's own keys are split per env, which costs nothing where the
    env ignores them (XLA drops the unused work).
    """
    import jax
    import jax.numpy as jnp

    reset, step = _jax_functions(port)
    vstep = jax.vmap(step)
    # Arguments, not closed-over constants: megabytes of constants slow XLA's compiler.
    pool = jnp.asarray(actions, dtype=jnp.int32 if actions.dtype.kind in "biu" else jnp.float32)
    # One key per step drawn up front: splitting a carried key inside the loop would add a
    # threefry round trip to every step of every implementation, env work or not.
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), steps)
    first_obs, first_state = jax.jit(jax.vmap(reset))(
        jax.random.split(jax.random.PRNGKey(seed), batch)
    )
    starts = (first_state, first_obs)

    def one_step(carry: Any, t: Any, key: Any, pool: Any, starts: Any) -> Any:
        state, _, _ = carry
        action = jax.lax.dynamic_index_in_dim(pool, t % pool.shape[0], keepdims=False)
        obs, state, reward, done = vstep(jax.random.split(key, batch), state, action)

        def restart(first: Any, now: Any) -> Any:
            ended = done.reshape(done.shape + (1,) * (now.ndim - 1))
            return jnp.where(ended, first, now).astype(now.dtype)

        state = jax.tree.map(restart, starts[0], state)
        obs = jax.tree.map(restart, starts[1], obs)
        # Last obs and reward stay in the carry so no part of the step is dead code.
        return state, obs, jnp.asarray(reward, jnp.float32)

    def scanned(carry: Any, keys: Any, pool: Any, starts: Any) -> Any:
        def body(c: Any, xs: Any) -> Any:
            return one_step(c, *xs, pool, starts), None

        return jax.lax.scan(body, carry, (jnp.arange(steps), keys))[0]

    carry = (first_state, first_obs, jnp.zeros(batch, jnp.float32))
    loops: dict[str, dict[str, Any]] = {}

    started = time.perf_counter()
    jitted_step = jax.jit(one_step)
    # One step outside the loop gives the carry the exact types the step returns (weak
    # types, the env's own state dtypes), which a scan needs; its compile time is counted.
    zero = jnp.int32(0)
    carry = jax.block_until_ready(jitted_step(carry, zero, keys[0], pool, starts))
    jax.block_until_ready(jitted_step(carry, zero, keys[0], pool, starts))
    step_compile = time.perf_counter() - started

    started = time.perf_counter()
    scan_fn = jax.jit(scanned).lower(carry, keys, pool, starts).compile()
    scan_compile = time.perf_counter() - started
    loops["scan"] = best_of(
        lambda: jax.block_until_ready(scan_fn(carry, keys, pool, starts)), batch, steps, repeats
    ) | {"compile_s": scan_compile}

    inputs = [(jnp.int32(t), keys[t]) for t in range(steps)]

    def python_loop() -> None:
        current = carry
        for t, key in inputs:
            current = jitted_step(current, t, key, pool, starts)
        jax.block_until_ready(current)

    loops["python"] = best_of(python_loop, batch, steps, repeats) | {"compile_s": step_compile}
    best = max(loops, key=lambda name: loops[name]["sps"])
    return {
        **loops[best],
        "loop": best,
        "loops": {name: loop["sps"] for name, loop in loops.items()},
    }


# ---- NumPy ports ----


def _bench_numpy(
    port: Any, batch: int, steps: int, repeats: int, actions: np.ndarray, seed: int
) -> dict[str, Any]:
    env = port.entry.VectorEnv(num_envs=batch)
    env.reset(seed=seed)
    pool = [np.ascontiguousarray(row) for row in actions]

    def run() -> None:
        for t in range(steps):
            env.step(pool[t % len(pool)])

    return best_of(run, batch, steps, repeats) | {"compile_s": 0.0, "loop": "python"}


# ---- Rust ports ----


def _bench_rust(
    port: Any,
    batch: int,
    steps: int,
    repeats: int,
    actions: np.ndarray,
    states: dict[str, np.ndarray],
) -> dict[str, Any]:
    starts = port.pack(states)
    # Each env slot restarts from its own reference start state.
    initial = np.ascontiguousarray(starts[np.arange(batch) % len(starts)])
    rows = initial.copy()
    pool = [np.ascontiguousarray(a) for a in port.actions(actions, len(actions))]
    out = port.outputs(batch)
    done = np.zeros(batch, dtype=bool)
    step = port.lib.envport_step
    # Addresses taken once: the loop below is what a training loop around the port pays.
    fixed = (rows.ctypes.data, *out.pointers)
    addresses = [a.ctypes.data for a in pool]

    def run() -> None:
        for t in range(steps):
            if step(batch, fixed[0], addresses[t % len(addresses)], *fixed[1:]) != 0:
                raise ContractError("envport_step failed during the bench")
            np.logical_or(out.terminated, out.truncated, out=done)
            ended = np.flatnonzero(done)
            if ended.size:
                rows[ended] = initial[ended]

    return best_of(run, batch, steps, repeats) | {
        "compile_s": float(getattr(port, "build_s", 0.0)),
        "loop": "python",
    }
