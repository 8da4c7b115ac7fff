"""l2.reset: the port's own `reset` against the reference's, as two samples per component.

Every other check injects the reference's states, so before this check a port drawing its
start states from the wrong range, sign or distribution passed. The known-good ports pass;
each reset mutant of the examples' lists fails on the component it breaks.
"""

from __future__ import annotations

import functools
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from envport.spec import PortSpec, load_spec
from envport.targets.reference import Reference
from envport.verifiers.levels.l2 import reset as reset_check
from envport.verifiers.reporting.divergence import LevelResult
from envport.verifiers.selfcheck import apply_mutant, load_mutants
from envport.verifiers.stats import reset_sample
from envport.verifiers.vector.check import check_vector
from envport.verifiers.verify import VerifyOptions, verify

from helpers import CARTPOLE, NUMPY_PORT, ROOT, run_envport, started_worker, with_budgets

EXAMPLES = ROOT / "examples"


@functools.cache
def reference_draws(name: str) -> tuple[PortSpec, reset_sample.ResetSample]:
    spec = load_spec(EXAMPLES / name)
    return spec, reset_sample.draw(spec, Reference(spec), seed=0)


def check(name: str, port: Path, target: str) -> LevelResult:
    spec, sample = reference_draws(name)
    with started_worker(EXAMPLES / name, port, target) as worker:
        return reset_check.check_reset(spec, worker, sample, 0, "envport verify ... --levels l2")


def test_n_is_fixed_by_the_design_before_any_port_draw() -> None:
    _, sample = reference_draws("cartpole")
    # Eight random components (4 state, 4 observation) and two projections of each group
    # at family alpha 1e-3, KS distance 0.05 with power 0.95 by the DKW bound; the step
    # counter is constant.
    assert sample.n == 15593 and "alpha 0.001 over 12 components" in sample.how
    _, lake = reference_draws("frozenlake")
    # A constant reset is seen as constant in the pilot's first stage, and that stage is the
    # sample: a value of probability 0.05 would have shown in 135 resets with probability
    # 0.999 (the design's own alpha and shift), so no further resets are drawn.
    assert lake.n == reset_sample.CONSTANT_PILOT == 135 and "every component constant" in lake.how


@pytest.mark.slow
@pytest.mark.parametrize("target", ["numpy", "jax"])
@pytest.mark.parametrize("name", ["cartpole", "frozenlake", "pendulum"])
def test_known_good_ports_reset_like_the_reference(name: str, target: str) -> None:
    level = check(name, EXAMPLES / name / "ports" / target, target)
    assert level.passed, [d.text() for d in level.divergences]
    assert level.name == "l2.reset" and level.steps_compared == reference_draws(name)[1].n
    components = {k: v for k, v in level.statistics.items() if k != "sample_size"}
    assert "state.elapsed_steps" in components  # states read too, not only observations
    for figures in components.values():
        if figures["kind"] != "constant":
            assert figures["p_value"] > figures["alpha"] / 2 and "power" in figures["design"]


RESET_MUTANTS = [
    ("cartpole", "numpy-reset-range", "obs.x"),
    ("cartpole", "jax-reset-normal", "obs.x"),
    ("cartpole", "numpy-reset-obs-dtype", "obs.dtype"),
    ("cartpole", "numpy-reset-one-draw", "obs.joint[sum]"),
    ("pendulum", "numpy-reset-sign", "obs.sin_theta"),
    ("pendulum", "jax-reset-speed-range", "obs.theta_dot"),
    ("taxi", "jax-reset-destination", "obs"),
    ("mountaincar", "jax-reset-sign", "obs.position"),
    ("frozenlake", "jax-reset-counter", "state.elapsed_steps"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "mutant_id", "field"), RESET_MUTANTS)
def test_a_wrong_reset_is_caught_naming_the_field(
    name: str, mutant_id: str, field: str, tmp_path: Path
) -> None:
    mutant = next(m for m in load_mutants(EXAMPLES / name) if m.id == mutant_id)
    port = apply_mutant(mutant, EXAMPLES / name / "ports" / mutant.target, tmp_path / "port")
    level = check(name, port, mutant.target)
    assert not level.passed
    first = level.divergences[0]
    assert (first.level, first.mode) == ("l2", "reset") and first.replay
    found = {f.field: f for d in level.divergences for f in d.fields}
    assert field in found, found.keys()
    if not field.endswith(".dtype"):
        # Both samples summarised, so the report shows how they differ.
        assert (
            set(found[field].expected)
            == set(found[field].actual)
            == {
                "mean",
                "std",
                "min",
                "max",
            }
        )
        assert field in first.message or field in {d.fields[0].field for d in level.divergences}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seeding", "message"),
    [("np.random.default_rng(0)", "seed is ignored"), ("np.random.default_rng()", "twice")],
)
def test_numpy_seeding_contract(numpy_port_copy: Path, seeding: str, message: str) -> None:
    env = numpy_port_copy / "env.py"
    text = env.read_text()
    env.write_text(text.replace("self.rng = np.random.default_rng(seed)", f"self.rng = {seeding}"))
    level = check("cartpole", numpy_port_copy, "numpy")
    assert not level.passed
    assert any(message in d.message for d in level.divergences), level.divergences


@pytest.mark.slow
def test_the_blind_spot_was_real_l1_and_l3_pass_a_wrong_reset(tmp_path: Path) -> None:
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "numpy-reset-range")
    port = apply_mutant(mutant, NUMPY_PORT, tmp_path / "numpy")
    options = VerifyOptions(levels=("l1", "l3"), examples=30, episodes=20)
    assert verify(str(CARTPOLE), str(port), options).passed


@pytest.mark.slow
def test_reset_and_vector_checks_run_by_default_and_reach_json_and_junit(tmp_path: Path) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    done = run_envport(
        "verify", str(CARTPOLE), "--port", str(NUMPY_PORT), "--examples", "5", "--episodes", "5",
        "--junit", str(junit), "--json", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass l2.reset: 15593 resets per side" in done.stdout
    assert "pass l2.vector: batches 1, 3, 8, 13, 33" in done.stdout
    names = {case.get("name") for case in ET.parse(junit).getroot()}
    assert {"l2.reset", "l2.vector"} <= names
    levels = {f"{lv['level']}.{lv['mode']}": lv for lv in json.loads(report.read_text())["levels"]}
    assert levels["l2.reset"]["statistics"]["obs.x"]["test"] == "KS"
    assert levels["l2.vector"]["endings"]["terminated"] > 0


@pytest.mark.slow
def test_a_declared_n_and_the_specs_summaries_are_compared(tmp_path: Path) -> None:
    """A generated world's reset is too slow for the design's thousands of resets, and its
    cells each drawn right say nothing of its counts: the spec sets n, and its summaries of
    a start state are components of their own (here, whether the cart's position and speed
    share a sign, which a reset drawing one number for all four always makes so)."""
    example = with_budgets(
        CARTPOLE,
        tmp_path / "cartpole",
        {
            "levels.l2": {"reset_samples": 400},
            "state.summaries": {"same_sign": '"float(physics[0] * physics[1] > 0)"'},
        },
    )
    spec = load_spec(example)
    sample = reset_sample.draw(spec, Reference(spec), seed=0)
    assert sample.n == 400 and "the spec's" in sample.how and "KS distance of" in sample.how
    assert set(sample.columns(spec)["summary.same_sign"]) == {0.0, 1.0}
    replay = "envport verify ... --levels l2"
    with started_worker(example, NUMPY_PORT, "numpy") as worker:
        level = reset_check.check_reset(spec, worker, sample, 0, replay)
    assert level.passed, [d.text() for d in level.divergences]
    assert "summary.same_sign" in level.statistics
    # The VectorEnv's own resets, as one sample, carry the summaries too; at the spec's n
    # no single reset is judged alone, and a gap says so.
    with started_worker(example, NUMPY_PORT, "numpy") as worker:
        vector = check_vector(spec, worker, sample, 0, replay)
    assert vector.passed, [d.text() for d in vector.divergences]
    assert "summary.same_sign" in vector.statistics
    assert any("judged alone" in gap.detail for gap in vector.gaps), vector.gaps
    mutant = next(m for m in load_mutants(CARTPOLE) if m.id == "numpy-reset-one-draw")
    port = apply_mutant(mutant, NUMPY_PORT, tmp_path / "port")
    with started_worker(example, port, "numpy") as worker:
        level = reset_check.check_reset(spec, worker, sample, 0, replay)
    found = {f.field for d in level.divergences for f in d.fields}
    assert not level.passed and "summary.same_sign" in found, found
