"""States the verifier makes up obey the spec's derived fields (docs/spec.md, "Derived
fields"), wherever they are made: drawn by L1 and L2, arranged by a probe, solved by
`l1.landings`. A made-up state that breaks the spec's own rule is one no play reaches, and a
port that holds only reachable states could not load it.

On CartPole (real Gymnasium, the known-good NumPy port in a sandboxed worker) with a rule
the reference's reset meets: the step counter is 1 exactly when the cart is right of 1.0.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from envport.spec import PortSpec, load_spec
from envport.targets.reference import Reference
from envport.verifiers.draws.landing import land, landing_choices, random_state
from envport.verifiers.draws.strategies import draws_for
from envport.verifiers.options import VerifyOptions
from envport.verifiers.verify import verify

from helpers import CARTPOLE, NUMPY_PORT

RULE = "int(physics[0] > 1.0)"
DERIVE = f'\n[state.derive]\nelapsed_steps = "{RULE}"\n'

# A probe whose `arrange` puts the cart far right with the counter at 0 (which the rule
# makes 1). Its call reports, from the state the port was sent, whether the rule holds.
PROBES = """
import numpy as np

from envport.verifiers.draws.probes import probe


@probe("physics.dynamics")
def right_of_one(module, before, action, after):
    x = float(np.asarray(before["physics"])[0])
    return {"obeys": np.bool_(int(before["elapsed_steps"]) == int(x > 1.0))}


@right_of_one.expect
def _(before, action, after, transition):
    return {"obeys": np.bool_(True)}


@right_of_one.arrange
def _(state, action, pick):
    state = dict(state)
    physics = np.array(state["physics"])
    physics[0] = 1.5 + pick(0, 5) / 10
    state["physics"] = physics
    state["elapsed_steps"] = np.asarray(0)
    return state, action
"""


def _obeys(state: dict[str, np.ndarray]) -> bool:
    x = float(np.asarray(state["physics"])[0])
    return int(np.asarray(state["elapsed_steps"])) == int(x > 1.0)


def _spec(tmp_path: Path) -> Path:
    copy = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, copy, ignore=shutil.ignore_patterns("ports", "__pycache__"))
    (copy / "probes" / "numpy.py").write_text(PROBES)
    toml = copy / "envport.toml"
    toml.write_text(toml.read_text() + DERIVE)
    return copy


def test_a_probes_arranged_state_obeys_the_derived_fields(tmp_path: Path) -> None:
    options = VerifyOptions(target="numpy", levels=("l1",), examples=12, module="physics")
    report = verify(str(_spec(tmp_path)), str(NUMPY_PORT), options)
    level = next(level for level in report.levels if level.name == "l1.physics.dynamics")
    assert level.passed and level.steps_compared > 0, report.text()


def test_landings_solve_states_that_obey_the_derived_fields(tmp_path: Path) -> None:
    spec: PortSpec = load_spec(_spec(tmp_path))
    reference = Reference(spec)
    rng = np.random.default_rng(0)
    landed = []
    for landing in landing_choices(spec, draws_for(spec, reference).constants):
        if landing.field != "physics" or landing.index != (0,):
            continue  # the cart's position: where the rule's threshold is met
        found = land(spec, reference, random_state(spec, rng), 0, landing, 0)
        if found is not None:
            landed += [found.state] + ([] if found.mirror is None else [found.mirror])
    assert len(landed) >= 4, "no landing on the cart's position"
    assert all(_obeys(state) for state in landed), [
        (s["physics"][0], s["elapsed_steps"]) for s in landed
    ]
