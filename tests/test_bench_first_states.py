"""What the bench prepares before it times anything: each slot's first state, made in chunks
(a generated world's vmapped reset costs more than linearly in its batch), exactly as one
vmapped reset makes them; and reference start states only for a port that restarts from
them (a Rust port), since each is a reference reset."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from envport.serve.ops import LoadPort
from envport.targets.bench.measure import FIRST_STATES_CHUNK, first_states
from envport.targets.bench.run import needs_start_states


def _reset(key: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    cells = jax.random.uniform(key, (4, 3))
    return cells.sum(axis=1), {"cells": cells, "count": jnp.int32(cells.argmax())}


def test_first_states_in_chunks_are_one_vmapped_resets() -> None:
    for batch in (5, FIRST_STATES_CHUNK, 2 * FIRST_STATES_CHUNK + 3):
        keys = jax.random.split(jax.random.PRNGKey(7), batch)
        chunked = first_states(_reset, keys)
        whole = jax.vmap(_reset)(keys)
        for got, want in zip(jax.tree.leaves(chunked), jax.tree.leaves(whole), strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _load(target: str) -> LoadPort:
    return LoadPort(port_dir="port", modules=[], entry="env", target=target)


def test_reference_start_states_are_made_only_for_a_port_that_restarts_from_them() -> None:
    assert not needs_start_states([_load("jax"), None])
    assert not needs_start_states([_load("numpy")])
    assert needs_start_states([_load("jax"), _load("rust")])
    # A target the port settles when loaded may be Rust.
    assert needs_start_states([_load("auto")])
