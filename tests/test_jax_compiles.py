"""What a JAX port's verify compiles: programs shared across checks, none compiled for
glue. Counted by JAX's own compile events, not by time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import numpy as np
import pytest

from envport.spec import load_spec
from envport.targets.jax_port import JaxPort
from envport.targets.loader import import_modules
from envport.targets.reference import Reference
from envport.verifiers.levels.l3 import rollout as l3
from envport.verifiers.levels.l3.lanes import PortFeed
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.replay import replays
from envport.verifiers.verify import VerifyOptions

from helpers import CARTPOLE, JAX_PORT

COMPILED = "/jax/core/compile/backend_compile_duration"
_compiles = [0]


def _count(event: str, _seconds: float, **_: Any) -> None:
    if event == COMPILED:
        _compiles[0] += 1


@pytest.fixture(scope="module")
def port() -> Iterator[JaxPort]:
    spec = load_spec(CARTPOLE)
    entry = import_modules(JAX_PORT, [m.model_dump() for m in spec.target("jax").modules], "env")
    jax.monitoring.register_event_duration_secs_listener(_count)
    yield JaxPort(entry)
    jax.monitoring.unregister_event_duration_listener(_count)


def _compiled(call: Any) -> int:
    before = _compiles[0]
    call()
    return _compiles[0] - before


def _states(rows: int) -> dict[str, np.ndarray]:
    physics = np.random.default_rng(rows).uniform(-0.05, 0.05, (rows, 4))
    return {"physics": physics, "elapsed_steps": np.zeros(rows, np.int64)}


def test_reset_samples_compile_one_split_and_one_reset(port: JaxPort) -> None:
    """First in the file: JAX keeps what it compiled eagerly for the whole process."""
    assert _compiled(lambda: port.reset_samples(100, 3)) <= 2


def test_an_l3_resync_chunk_reuses_the_step_l1_compiled(port: JaxPort) -> None:
    """L3 asked for its resync chunks padded to 1024 rows at least, L1's step batches were
    padded to 512: the same step compiled twice in one run. Both read the state the step
    leaves (`l1.transition` and `l3.resync` compare it), so both use that program."""
    l1 = _compiled(lambda: port.step_batch(_states(400), np.zeros(400, np.int64), read_state=True))
    assert l1 >= 1
    spec = load_spec(CARTPOLE)
    options = L3Options(episodes=20, steps=500, mode="both")
    replay = replays(str(CARTPOLE), str(JAX_PORT), VerifyOptions(), 20, 500, True)["l3"]
    # The lane's queue only: the request it would send, stepped here by the same adapter.
    feed = PortFeed(None, spec, options, 32, replay)  # type: ignore[arg-type]
    chunk = l3.play_reference(Reference(spec), spec, options)
    rows = chunk.transitions
    assert rows < 512
    feed._add_resync(chunk)
    request = feed._queue[-1][0]
    answer: dict[str, Any] = {}
    assert _compiled(lambda: answer.update(port.step_batch(**request.args()))) == 0
    assert answer["obs"].shape == (rows, 4)


def test_a_batch_past_the_bucket_runs_in_buckets_the_step_already_compiled(
    port: JaxPort,
) -> None:
    """L1's 800 landing rows and L3's 3,806 resync rows were padded to 1,024 and 4,096: a
    compile each (pgx's Seaquest: about five seconds each). They run as 512-row buckets
    of the program a smaller batch compiled, with the same answers row by row."""
    states = _states(1300)
    actions = np.arange(1300, dtype=np.int64) % 2
    port.step_batch(_states(3), actions[:3], read_state=True)
    whole: dict[str, Any] = {}
    assert _compiled(lambda: whole.update(port.step_batch(states, actions, read_state=True))) == 0
    assert whole["obs"].shape == (1300, 4) and whole["state"]["physics"].shape == (1300, 4)
    for start in (0, 500, 1200):
        rows = slice(start, start + 100)
        part = port.step_batch(
            {k: v[rows] for k, v in states.items()}, actions[rows], read_state=True
        )
        np.testing.assert_array_equal(whole["obs"][rows], part["obs"])
        np.testing.assert_array_equal(whole["state"]["physics"][rows], part["state"]["physics"])
        np.testing.assert_array_equal(whole["terminated"][rows], part["terminated"])


def test_batch_vs_single_compiles_only_its_programs(port: JaxPort) -> None:
    """The batch, one env alone, and the keys: splitting keys eagerly compiled the seed,
    the split and a reshape apiece, and each env's keys taken from a JAX array a slice."""
    states, actions = _states(33), np.zeros((33, 20), np.int64)
    assert _compiled(lambda: port.batch_vs_single(states, actions)) <= 3
