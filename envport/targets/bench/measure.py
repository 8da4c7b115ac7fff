"""Steps per second of a loaded port or an anchor implementation, inside a worker.

Every implementation runs the same workload: `batch` envs stepped `steps` times with actions
cycled from a pool the driver drew from the reference's action space, and an env that ends
restarted. JAX ports and anchors (gymnax, xminigrid: same loop, same compilation) and Rust
ports restart an env from the state its slot started in (its own reset's for JAX, a reference
start state for Rust, whose ABI has no reset); a JAX port with `reset_after` restarts through
it, with its slot's reset key, so what it carries across episodes is carried (and paid for);
the NumPy port's `VectorEnv` autoresets itself.

The first request for a workload prepares it (compiles, timed apart) and runs it once
untimed to warm caches; every request then times `repeats` runs. The driver asks for one
run at a time, alternating implementations, and keeps the best (the machine is shared).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from envport.targets.bench.anchors import ANCHORS, load_anchor
from envport.targets.loader import ContractError
from envport.targets.registry import TARGET_NAMES, TargetName, target


@dataclass
class Runner:
    """One way to drive the workload: `run` steps it once through; compile time apart."""

    run: Callable[[], None]
    compile_s: float = 0.0


# Slots whose first states one vmapped reset makes (first_states).
FIRST_STATES_CHUNK = 128

# The prepared workload of this worker: compiled loops and their buffers, kept between the
# driver's alternating requests, dropped when another workload (batch size) comes.
_prepared: dict[tuple, dict[str, Runner]] = {}


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
    Answers the best loop's SPS, runs and compile time, and every loop's SPS and compile time.
    """
    subject = load_anchor(anchor) if anchor is not None else port
    if subject is None:
        raise ContractError("no port loaded")
    key = (anchor, batch, steps, seed)
    if key not in _prepared:
        _prepared.clear()
        runners = _prepare(subject, batch, steps, actions, states, seed)
        for runner in runners.values():
            runner.run()  # warm-up: page faults, lazy initialisation, thread start-up
        _prepared[key] = runners
    runners = _prepared[key]
    loops = {name: timed(runner.run, batch, steps, repeats) for name, runner in runners.items()}
    best = max(loops, key=lambda name: max(loops[name]))
    return {
        "sps": max(loops[best]),
        "sps_runs": loops[best],
        "compile_s": runners[best].compile_s,
        "loop": best,
        "loops": {name: max(runs) for name, runs in loops.items()},
        "compiles": {name: runner.compile_s for name, runner in runners.items()},
    }


def _prepare(
    subject: Any,
    batch: int,
    steps: int,
    actions: np.ndarray,
    states: dict[str, np.ndarray] | None,
    seed: int,
) -> dict[str, Runner]:
    backend = subject.backend
    if backend in TARGET_NAMES and target(backend).bench_needs_start_states and states is None:
        raise ContractError(f"a {backend} port's bench needs reference start states")
    if backend == TargetName.JAX or backend in ANCHORS:
        return _prepare_jax(subject, batch, steps, actions, seed)
    if backend == TargetName.NUMPY:
        return _prepare_numpy(subject, batch, steps, actions, seed)
    if backend == TargetName.RUST and states is not None:
        return _prepare_rust(subject, batch, steps, actions, states)
    raise ContractError(f"no bench for backend `{backend}`")


def timed(run: Callable[[], None], batch: int, steps: int, repeats: int) -> list[float]:
    """SPS of each of `repeats` runs."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        runs.append(batch * steps / (time.perf_counter() - started))
    return runs


def best_of(run: Callable[[], None], batch: int, steps: int, repeats: int) -> dict[str, Any]:
    """One untimed warm-up run, then the best of `repeats` timed runs."""
    run()
    runs = timed(run, batch, steps, repeats)
    return {"sps": max(runs), "sps_runs": runs}


# ---- JAX ports and anchors ----


def _jax_functions(port: Any) -> tuple[Callable, Callable]:
    """reset(key) -> (obs, state) and step(key, state, action) -> (obs, state, reward, done)."""
    if port.backend in ANCHORS:  # anchors offer the loop's signatures
        return port.reset, port.step
    entry, params = port.entry, port.params
    if hasattr(entry, "bench_functions"):  # a two-player game's own functions
        return entry.bench_functions()

    def reset(key: Any) -> Any:
        return entry.reset(key, params)

    def step(key: Any, state: Any, action: Any) -> Any:
        obs, state, reward, terminated, truncated, _ = entry.step(key, state, action, params)
        return obs, state, reward, terminated | truncated

    return reset, step


def _carry_function(port: Any) -> Callable | None:
    """The port's `reset_after(key, state) -> (obs, state)`, if it has one (ports only)."""
    if port.backend in ANCHORS:
        return None
    carry = getattr(port.entry, "reset_after", None)
    if not callable(carry):
        return None
    params = port.params
    return lambda key, state: carry(key, state, params)


def first_states(reset: Callable, keys: Any) -> Any:
    """Each slot's first (obs, state): `reset` vmapped over FIRST_STATES_CHUNK keys at a
    time, the chunks in a loop. Not timed, but a generated world's reset can cost far more
    than linearly in its batch: Craftax-Classic's `generate_world` took 0.29 s for 128
    worlds, 8.2 s for 512 and did not finish 4,096 in 12 minutes, which is why its B=4096
    bench never answered; in chunks of 128, 4,096 take 18 s."""
    import jax

    batch = keys.shape[0]
    size = min(batch, FIRST_STATES_CHUNK)
    chunks = -(-batch // size)
    # The last chunk filled with the first keys again; what they make is dropped.
    padded = keys[jax.numpy.arange(chunks * size) % batch]
    padded = padded.reshape(chunks, size, *keys.shape[1:])
    made = jax.jit(lambda k: jax.lax.map(jax.vmap(reset), k))(padded)
    return jax.tree.map(lambda leaf: leaf.reshape(-1, *leaf.shape[2:])[:batch], made)


def _prepare_jax(
    port: Any, batch: int, steps: int, actions: np.ndarray, seed: int
) -> dict[str, Runner]:
    """Both ways to drive a jitted env: lax.scan over the steps, and a Python loop over a
    jitted step (the faster is reported, the other kept in `loops`).

    An env that ends restarts from the state its slot started from (as Brax's
    AutoResetWrapper does), so the same loop serves every JAX env and no reset randomness
    is drawn per step; the step's own keys are split per env, which costs nothing where the
    env ignores them (XLA drops the unused work).
    """
    import jax
    import jax.numpy as jnp

    reset, step = _jax_functions(port)
    carried_reset = _carry_function(port)
    vstep = jax.vmap(step)
    # Arguments, not closed-over constants: megabytes of constants slow XLA's compiler.
    pool = jnp.asarray(actions, dtype=jnp.int32 if actions.dtype.kind in "biu" else jnp.float32)
    # One key per step drawn up front: splitting a carried key inside the loop would add a
    # threefry round trip to every step of every implementation, env work or not.
    keys = jax.random.split(jax.random.PRNGKey(seed + 1), steps)
    slot_keys = jax.random.split(jax.random.PRNGKey(seed), batch)
    first_obs, first_state = first_states(reset, slot_keys)
    starts = (first_state, first_obs, slot_keys)

    def one_step(carry: Any, t: Any, key: Any, pool: Any, starts: Any) -> Any:
        state, _, _ = carry
        action = jax.lax.dynamic_index_in_dim(pool, t % pool.shape[0], keepdims=False)
        obs, state, reward, done = vstep(jax.random.split(key, batch), state, action)

        def restart(first: Any, now: Any) -> Any:
            ended = done.reshape(done.shape + (1,) * (now.ndim - 1))
            return jnp.where(ended, first, now).astype(now.dtype)

        if carried_reset is None:
            firsts = starts[:2]
        else:  # the slot's reset again, carrying what the ended episode leaves it
            firsts = jax.vmap(carried_reset)(starts[2], state)[::-1]
        state = jax.tree.map(restart, firsts[0], state)
        obs = jax.tree.map(restart, firsts[1], obs)
        # Last obs and reward stay in the carry so no part of the step is dead code.
        return state, obs, jnp.asarray(reward, jnp.float32)

    def scanned(carry: Any, keys: Any, pool: Any, starts: Any) -> Any:
        def body(c: Any, xs: Any) -> Any:
            t, key = xs  # scan slices (step index, key) pairs
            return one_step(c, t, key, pool, starts), None

        return jax.lax.scan(body, carry, (jnp.arange(steps), keys))[0]

    carry = (first_state, first_obs, jnp.zeros(batch, jnp.float32))
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
    inputs = [(jnp.int32(t), keys[t]) for t in range(steps)]

    def python_loop() -> None:
        current = carry
        for t, key in inputs:
            current = jitted_step(current, t, key, pool, starts)
        jax.block_until_ready(current)

    return {
        "scan": Runner(
            lambda: jax.block_until_ready(scan_fn(carry, keys, pool, starts)), scan_compile
        ),
        "python": Runner(python_loop, step_compile),
    }


# ---- NumPy ports ----


def _prepare_numpy(
    port: Any, batch: int, steps: int, actions: np.ndarray, seed: int
) -> dict[str, Runner]:
    env = port.entry.VectorEnv(num_envs=batch)
    env.reset(seed=seed)
    pool = [np.ascontiguousarray(row) for row in actions]

    def run() -> None:
        for t in range(steps):
            env.step(pool[t % len(pool)])

    return {"python": Runner(run)}


# ---- Rust ports ----


def _prepare_rust(
    port: Any, batch: int, steps: int, actions: np.ndarray, states: dict[str, np.ndarray]
) -> dict[str, Runner]:
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

    return {"python": Runner(run, float(getattr(port, "build_s", 0.0)))}
