"""The command line builds only the asked command's parser: `envport verify` starts without
importing the other commands' code (translate's pipeline, the run history and git)."""

from __future__ import annotations

import subprocess
import sys

from envport.cli import _COMMANDS, build_parser

from helpers import ROOT, user_env


def _commands(command: str | None) -> list[str]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command")
    return list(sub.choices)  # type: ignore[arg-type]


def test_a_known_command_builds_its_parser_alone_and_anything_else_builds_all() -> None:
    every = ["verify", *_COMMANDS]
    assert _commands("verify") == ["verify"]
    assert _commands("translate") == ["translate"]
    assert _commands(None) == every
    assert _commands("no-such-command") == every
    # The flag every command that runs generated code has, on a parser built alone too.
    words = ["serve", "examples/cartpole", "--reference", "--address", "tcp://127.0.0.1:1"]
    args = build_parser("serve").parse_args([*words, "--unsafe-no-sandbox"])
    assert args.unsafe_no_sandbox


def test_verify_imports_none_of_the_other_commands() -> None:
    probe = (
        "import sys\n"
        "from envport.cli import _port_at, build_parser\n"
        "build_parser('verify').parse_args(['verify', 'examples/cartpole', '--port', 'p'])\n"
        "with _port_at('examples/cartpole/ports/numpy'):\n"
        "    pass\n"
        "loaded = [m for m in sys.modules if m == 'git' or m.startswith(\n"
        "    ('envport.pipeline', 'envport.runs', 'envport.init', 'envport.review'))]\n"
        "print(sorted(loaded))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True, text=True, check=True, timeout=120, cwd=ROOT, env=user_env(),
    )  # fmt: skip
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
