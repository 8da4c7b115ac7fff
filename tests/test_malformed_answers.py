"""A worker's answer of the wrong shape is the port's failed check, named, never a traceback
(issue 27). The port rewrites the harness beside it so that its worker answers `rollout`
with a forged value; an answer over the size limit is refused before it is read."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.errors import PortError
from envport.serve.client import PortWorker
from envport.serve.ops import Ping
from envport.serve.sandbox import Limits
from envport.spec import load_spec
from envport.targets.registry import load_request

from helpers import CARTPOLE, ROOT, user_env

# Appended to the port's env.py: at import, the worker's answers are rewritten.
FORGER = """

import sys as _sys
import numpy as _np
import msgpack as _mp
_host = _sys.modules.get("envport.verifiers.host") or _sys.modules["__main__"]
_real_answer = _host.Host.answer

def _forged(self, op):
    real = _real_answer(self, op)
    kind = {kind!r}
    if kind == "huge" and op.op == "ping":
        return {{"blob": b"x" * (16 << 20)}}
    if op.op != "rollout":
        return real
    if kind == "empty":
        return {{}}
    if kind == "zero_rows":
        return {{k: v[:0] if getattr(v, "ndim", 0) else v for k, v in real.items()}}
    if kind == "broadcast":
        return {{k: _np.asarray(v).reshape(-1)[:1] if getattr(v, "ndim", 0) else v
                 for k, v in real.items()}}
    if kind == "ext":
        return {{k: _mp.ExtType(42, b"zz") for k in real}}
    return real

_host.Host.answer = _forged
"""

CASES = {
    "empty": "obs, reward, terminated, truncated missing (got {})",
    "zero_rows": "`obs` has shape (0, ",
    "broadcast": "`obs` has shape (1,), expected 2 leading axes",
    "ext": "msgpack extension type 42 is not one envport sends",
}


def _forging_copy(tmp_path: Path, kind: str) -> Path:
    spec = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec, ignore=shutil.ignore_patterns("__pycache__"))
    env_py = spec / "ports" / "numpy" / "env.py"
    env_py.write_text(env_py.read_text() + FORGER.format(kind=kind))
    return spec


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_malformed_answer_is_a_named_failure(kind: str, tmp_path: Path) -> None:
    spec = _forging_copy(tmp_path, kind)
    # The forger reads the process (refused by the static review): past the review, the
    # answer check must hold on its own.
    command = [sys.executable, "-m", "envport", "verify", str(spec), "--no-static-review"]
    command += ["--port", str(spec / "ports" / "numpy"), "--levels", "l3", "--episodes", "3"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=ROOT, env=user_env()
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert "sent a malformed answer to `rollout`" in output, output
    assert CASES[kind] in output, output


def test_an_answer_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    spec = _forging_copy(tmp_path, "huge")
    load = load_request(load_spec(spec), spec / "ports" / "numpy", "numpy")
    with PortWorker(timeout=60, load=load, limits=Limits(answer_bytes=1 << 20)) as worker:
        worker.receive()
        with pytest.raises(PortError, match=r"answer to `ping` was refused: over 1048576 bytes"):
            worker.request(Ping())
        # The worker was stopped; later requests fail at once with the same reason.
        with pytest.raises(PortError, match="was refused"):
            worker.request(Ping())


def test_batched_answers_of_the_wrong_shape_are_named() -> None:
    """A probe batch must answer every input twice and every eager call asked for (fewer
    would skip the jit check unseen); a session script one well-formed answer per request."""
    import numpy as np

    from envport.serve.answers import problem
    from envport.serve.ops import Probe, SessionScript, SessionStep

    state = {"x": np.zeros(2)}
    probe = Probe(
        probes_file="p.py",
        name="f",
        befores=[state] * 3,
        actions=[0] * 3,
        afters=None,
        jax=True,
        eager_first=2,
    )
    out = {"y": np.zeros(1)}
    assert problem(probe, {"first": [out] * 3, "second": [out] * 3, "eager": [out] * 2}) is None
    short = problem(probe, {"first": [out] * 3, "second": [out] * 3, "eager": [out]})
    assert short is not None and short.startswith("eager: expected a list of 2")
    assert problem(probe, {"first": [out] * 2, "second": [out] * 3, "eager": [out] * 2})
    step = SessionStep(actions=np.asarray([0]))
    script = SessionScript.of([step, step])
    answer = {
        "obs": np.zeros((1, 4)),
        "reward": np.zeros(1),
        "terminated": np.zeros(1, bool),
        "truncated": np.zeros(1, bool),
        "state": None,
    }
    assert problem(script, [answer, answer]) is None
    assert "expected a list of 2 answers" in str(problem(script, [answer]))
    assert str(problem(script, [answer, {}])).startswith("answer 1 (session_step)")
