"""The reference must be deterministic from an injected state before a port is held to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from envport.errors import SpecError
from envport.spec import load_spec
from envport.targets.reference import Reference
from envport.verifiers.coverage.determinism import check_reference_determinism

from helpers import NUMPY_PORT, ROOT, run_envport, user_env

SPEC = """\
name = "gusty"

[reference]
entry = "gusty_env:make"
kwargs = {{ gusts = {gusts} }}

[state]
fields = {{ position = "unwrapped.position" }}

[state.bounds]
position = {{ low = -9, high = 9, integer = true }}

[targets.numpy]
entry = "env"
"""


def _spec(tmp_path: Path, gusts: bool) -> Path:
    folder = tmp_path / "gusty"
    folder.mkdir()
    (folder / "envport.toml").write_text(SPEC.format(gusts=str(gusts).lower()))
    return folder


def test_a_reference_drawing_from_its_own_generator_is_named_before_any_port_is_blamed(
    tmp_path: Path,
) -> None:
    spec = load_spec(_spec(tmp_path, gusts=True))
    with pytest.raises(SpecError) as caught:
        check_reference_determinism(spec, Reference(spec), 0)
    message = str(caught.value)
    assert message.startswith("the reference is not deterministic from an injected state")
    assert "`env.unwrapped.random`" in message or "`env.random`" in message, message
    assert "[randomness]" in message and "\n" not in message


@pytest.mark.parametrize("name", ["cartpole", "frozenlake", "blackjack", "minigrid_doorkey"])
def test_the_examples_references_are_deterministic_from_their_state(name: str) -> None:
    spec = load_spec(ROOT / "examples" / name)
    check_reference_determinism(spec, Reference(spec), 0)


def test_without_the_gusts_the_same_env_passes(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, gusts=False))
    check_reference_determinism(spec, Reference(spec), 0)


def test_verify_stops_with_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = _spec(tmp_path, gusts=True)
    tests = str(ROOT / "tests")
    done = run_envport(
        "verify", str(spec), "--port", str(NUMPY_PORT), env=user_env(PYTHONPATH=tests)
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not deterministic from an injected state" in lines[0], lines
    assert "Traceback" not in done.stderr
