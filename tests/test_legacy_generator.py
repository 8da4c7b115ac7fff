"""A reference that draws from a generator of its own, named by `[randomness] generator`.

The subject is tests/gusty_env.py: a walk whose step draws a gust from the env's own legacy
`np.random.RandomState` (`env.random`), not Gymnasium's `np_random`, as MinAtar's games do;
with `reseeds`, `reset(seed)` replaces that object, as MinAtar's `seed` does.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from envport.errors import SpecError
from envport.spec import load_spec
from envport.targets.randomness import RecordingGenerator
from envport.targets.reference import Reference
from envport.verifiers.coverage.determinism import check_reference_determinism

from helpers import NUMPY_PORT, ROOT, run_envport, user_env

SPEC = """\
name = "gusty"

[reference]
entry = "gusty_env:make"
kwargs = {{ gusts = true, reseeds = {reseeds} }}

[state]
fields = {{ position = "position" }}

[state.bounds]
position = {{ low = -9, high = 9, integer = true }}

[randomness]
noise = "categorical"
categories = 2
harness = "harness/noise.py"
{generator}

[targets.numpy]
entry = "env"
"""

# The gust as the port's noise: 1 when the step's one `rand()` blew the walker on.
HARNESS = """\
import numpy as np


def noise_from_draws(draws, before, action, env):
    methods = [d.method for d in draws]
    if methods != ["rand"]:
        raise ValueError(f"expected one random.rand() per step, got {methods}")
    return np.int64(float(draws[0].value) < 0.5)
"""


def _spec(
    tmp_path: Path, generator: str | None, reseeds: bool = True, harness: str = HARNESS
) -> Path:
    folder = tmp_path / "gusty"
    (folder / "harness").mkdir(parents=True)
    line = "" if generator is None else f'generator = "{generator}"'
    (folder / "envport.toml").write_text(SPEC.format(reseeds=str(reseeds).lower(), generator=line))
    (folder / "harness" / "noise.py").write_text(harness)
    return folder


def test_the_proxy_records_a_random_states_draws_in_order() -> None:
    plain = np.random.RandomState(11)
    proxy = RecordingGenerator(np.random.RandomState(11))
    assert np.array_equal(proxy.randint(1, 6, 8), plain.randint(1, 6, 8))
    assert np.array_equal(proxy.rand(8), plain.rand(8))
    assert proxy.choice([3, 4, 5]) == plain.choice([3, 4, 5])
    assert proxy.normal(0.0, scale=2.0) == plain.normal(0.0, scale=2.0)
    assert [d.method for d in proxy.draws] == ["randint", "rand", "choice", "normal"]
    assert proxy.draws[0].args == (1, 6, 8) and proxy.draws[0].value.shape == (8,)
    assert proxy.draws[3].kwargs == {"scale": 2.0}


def test_each_steps_draw_from_the_named_random_state_becomes_the_noise(tmp_path: Path) -> None:
    reference = Reference(load_spec(_spec(tmp_path, "random")))
    reference.reset(5)
    twin = np.random.RandomState(5)  # what the env's own generator draws after reset(5)
    for action in [1, 0, 1, 1, 0, 0, 1, 0]:
        before = int(reference.read_state()["position"])
        out = reference.step(action)
        gust = twin.rand() < 0.5
        assert int(out.noise) == int(gust)
        assert int(reference.read_state()["position"]) == before + (1 if action else -1) + gust
        assert [d.method for d in reference.recorder._proxy.draws] == ["rand"]  # type: ignore[union-attr]


def test_the_proxy_is_reinstalled_when_a_reset_replaces_the_generator(tmp_path: Path) -> None:
    reference = Reference(load_spec(_spec(tmp_path, "unwrapped.random")))
    reference.reset(3)
    first = reference.env.unwrapped.random
    noise = [int(reference.step(1).noise) for _ in range(20)]
    reference.reset(3)
    again = reference.env.unwrapped.random
    assert again is not first and isinstance(again, RecordingGenerator)
    assert isinstance(again.inner, np.random.RandomState)  # one proxy, never a proxy's proxy
    assert [int(reference.step(1).noise) for _ in range(20)] == noise
    assert again.draws and not first.draws[20:]  # the old proxy no longer records


def test_every_name_of_the_named_generator_draws_through_the_proxy(tmp_path: Path) -> None:
    # As MinAtar, where `game.random` and `game.env.random` are one RandomState after `seed`.
    reference = Reference(load_spec(_spec(tmp_path, "random", reseeds=False)))
    env = reference.env.unwrapped
    env.weather = SimpleNamespace(random=env.random)
    reference.reset(0)
    assert isinstance(env.random, RecordingGenerator) and env.weather.random is env.random
    reference.step(1)
    env.weather.random.randint(3)  # drawn under the other name: the same stream, recorded
    assert [d.method for d in env.random.draws] == ["rand", "randint"]
    reference.reseed_draws(4)  # one fresh stream for both names, never two
    assert env.weather.random.inner is env.random.inner


def test_fresh_streams_keep_the_legacy_api_and_repeat_for_a_seed(tmp_path: Path) -> None:
    reference = Reference(load_spec(_spec(tmp_path, "random")))
    reference.reset(0)
    runs = []
    for _ in range(2):
        reference.write_state({"position": np.int64(0)})
        reference.reseed_draws(2**62 + 9)  # a 64-bit example seed: beyond RandomState's own
        runs.append([int(reference.step(0).noise) for _ in range(30)])
    assert runs[0] == runs[1] and 0 < sum(runs[0]) < 30


def test_declared_draws_pass_the_determinism_preflight(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, "random"))
    check_reference_determinism(spec, Reference(spec), 0)


def test_declaring_np_random_when_it_draws_from_its_own_is_stopped(tmp_path: Path) -> None:
    # A harness that accepts a step without draws: the preflight, not the harness, objects.
    lenient = HARNESS.replace('if methods != ["rand"]:', "if methods[1:]:").replace(
        "float(draws[0].value) < 0.5", "bool(draws) and float(draws[0].value) < 0.5"
    )
    assert lenient != HARNESS
    spec = load_spec(_spec(tmp_path, None, harness=lenient))
    with pytest.raises(SpecError) as caught:
        check_reference_determinism(spec, Reference(spec), 0)
    message = str(caught.value)
    assert "declared draws" in message and "`env.random`" in message, message
    assert "randomness.generator" in message and "\n" not in message


@pytest.mark.parametrize(
    ("generator", "expected"),
    [
        ("game.random", "the reference has no attribute `game.random`"),
        ("unwrapped.gusts", "`unwrapped.gusts` is a bool, not a np.random.RandomState"),
    ],
)
def test_a_generator_path_that_is_not_one_is_a_spec_error(
    tmp_path: Path, generator: str, expected: str
) -> None:
    reference = Reference(load_spec(_spec(tmp_path, generator)))
    with pytest.raises(SpecError) as caught:
        reference.reset(0)
    assert str(caught.value).startswith("key `randomness.generator`: " + expected)


def test_verify_names_a_missing_generator_in_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "game.env.random")
    done = run_envport(
        "verify", str(spec), "--port", str(NUMPY_PORT), env=user_env(PYTHONPATH=str(ROOT / "tests"))
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert (
        "key `randomness.generator`: the reference has no attribute `game.env.random`" in lines[0]
    )
    assert "Traceback" not in done.stderr
