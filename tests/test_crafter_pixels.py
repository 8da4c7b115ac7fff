"""Crafter's image as a port module (examples/crafter/ports/*/pixels.py) and its L1 probe
`pixels.render` (examples/crafter/probes/), which renders a state with Crafter's own
renderer, its night noise handed alike to both sides, and compares pixel for pixel.

Here the probe's two halves are called directly on four states made from one reached in
play (by day facing left, at night, asleep, every item held), for the known-good ports
(equal: exactly in NumPy, within 1 in a channel in JAX) and for each of the image's mutants
(examples/crafter/mutants.toml, `*-pixels-*`: a wrong texture, an alpha ignored, the
night's noise at the wrong daylight, a wrong daylight mix, sleep not greyed), which differ.
A whole verify of a module (`envport verify ... --module pixels --levels l1`) runs the
same probe on 200 drawn states; at a verify each mutant took 10 to 37 s, too long here.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from envport.spec import load_spec
from envport.structure import encode
from envport.verifiers.draws.probes import load_probes
from envport.verifiers.selfcheck import apply_mutant, load_mutants

from helpers import ROOT

pytest.importorskip("crafter")

CRAFTER = ROOT / "examples" / "crafter"
PIXELS_MUTANTS = [m.id for m in load_mutants(CRAFTER) if "-pixels-" in m.id]
ALLOWED = {"numpy": 0, "jax": 1}  # the largest difference in a channel a correct port shows


def test_every_target_has_its_pixels_mutants() -> None:
    assert {m.split("-")[0] for m in PIXELS_MUTANTS} == {"numpy", "jax"}
    assert len(PIXELS_MUTANTS) >= 5


@pytest.fixture(scope="module")
def states() -> list[dict]:
    """One state reached in play (creatures in view), then at night, asleep and holding
    every item: each a state the probe's arrangement makes too."""
    reference_path = CRAFTER / "harness" / "reference.py"
    spec = importlib.util.spec_from_file_location("crafter_pixels_test_reference", reference_path)
    assert spec is not None and spec.loader is not None
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    env = reference.make()
    env.reset(seed=3)
    for action in [1, 1, 5, 3, 3, 5, 2, 4, 1]:  # ends after a move left: facing left
        env.step(action)
    day = encode(load_spec(CRAFTER).state, reference.read_state(env))
    assert tuple(day["facing"]) == (-1, 0)
    night = {**day, "daylight": np.float64(0.3)}
    asleep = {**day, "sleeping": np.bool_(True), "daylight": np.float64(0.7)}
    held = {**day, **{k: np.int64(1 + i % 9) for i, k in enumerate(day) if "inventory." in k}}
    return [day, night, asleep, held]


def _port(folder: Path, package: str) -> types.ModuleType:
    if package not in sys.modules:
        root = types.ModuleType(package)
        root.__path__ = [str(folder)]
        sys.modules[package] = root
    return importlib.import_module(f"{package}.pixels")


def _largest_differences(target: str, folder: Path, package: str, states: list) -> list[float]:
    if target == "jax":
        pytest.importorskip("jax")
    probe = load_probes(CRAFTER / "probes" / f"{target}.py")["pixels.render"]
    assert probe.expect_fn is not None
    module = _port(folder, package)
    call = probe.call
    if target == "jax":
        import jax

        call = jax.jit(lambda before: probe.call(module, before, 0, None, None))
    out = []
    for state in states:
        got = call(state) if target == "jax" else call(module, state, 0, None, None)
        want = probe.expect_fn(state, 0, None, None)["image"]
        image = np.asarray(got["image"])
        assert image.shape == (64, 64, 3)
        out.append(float(np.abs(image.astype(float) - np.asarray(want, float)).max()))
    return out


@pytest.mark.parametrize("target", ["numpy", "jax"])
def test_the_known_good_ports_draw_crafters_image(target: str, states: list) -> None:
    found = _largest_differences(target, CRAFTER / "ports" / target, f"pix_{target}", states)
    assert max(found) <= ALLOWED[target], found


@pytest.mark.parametrize("mutant_id", PIXELS_MUTANTS)
def test_a_slip_in_the_image_changes_its_pixels(
    mutant_id: str, states: list, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(CRAFTER) if m.id == mutant_id)
    folder = apply_mutant(mutant, CRAFTER / "ports" / mutant.target, tmp_path / "port")
    package = f"pix_{mutant_id.replace('-', '_')}"
    found = _largest_differences(mutant.target, folder, package, states)
    assert max(found) > ALLOWED[mutant.target], found
