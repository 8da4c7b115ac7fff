"""A probe's `arrange` is the spec's harness code: when it raises (a helper file it loads is
missing, a bug), `envport verify` says so in one line and exits 2, as for any spec error,
with no traceback. (Crafter's probe loads harness/image.py by path; a run that had not
frozen that file crashed the translate with a traceback at the pixels module.)"""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import ROOT, run_envport

FREEWAY = ROOT / "examples" / "minatar_freeway"


def test_a_probe_whose_arrange_raises_is_one_line_and_exit_2(tmp_path: Path) -> None:
    spec_dir = tmp_path / "freeway"
    shutil.copytree(FREEWAY, spec_dir, ignore=shutil.ignore_patterns("ports", "replay"))
    probe = spec_dir / "probes" / "numpy.py"
    text = probe.read_text()
    marker = "@move_chicken.arrange\ndef _(state, action, pick):\n"
    assert marker in text
    probe.write_text(text.replace(marker, marker + "    open('/no/such/helper.py')\n"))
    done = run_envport(
        "verify",
        str(spec_dir),
        "--port",
        str(FREEWAY / "ports" / "numpy"),
        "--target",
        "numpy",
        "--levels",
        "l1",
        "--examples",
        "5",
    )
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "Traceback" not in out, out
    line = "the probe's `arrange` raised FileNotFoundError"
    assert sum(line in row for row in out.splitlines()) == 1, out
