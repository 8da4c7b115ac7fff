"""The static review (`review.static`): a port that looks at its surroundings is refused
before it runs, by `envport verify`, naming the file, the line and the rule.

The payloads of tests/watched/ are ports right only while watched (each reads its
environment, PID, uid, working directory, the clock or envport's modules, a different way);
beside the harness they pass every level, so only a review of their source stops them. The
tables below are the evasions a hostile model would try, each refused by a rule; the
known-good ports and bridges of every example pass it.
"""

from __future__ import annotations

import marshal
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envport.errors import SpecError
from envport.spec import load_spec
from envport.targets.registry import choose_target
from envport.verifiers.source_review.check import review_port
from envport.verifiers.source_review.python import Allowed, review_python
from envport.verifiers.source_review.rules import PYTHON_IMPORTS
from envport.verifiers.source_review.rust import review_rust

from helpers import CARTPOLE, ROOT, payload_place, plant_code, run_envport, user_env

WATCHED = Path(__file__).parent / "watched"
MARKER = re.compile(r"(?:#|//) refused: (\w+)")


def _marked(text: str) -> list[tuple[int, str]]:
    """The (line, rule) of each line marked `# refused: rule` in a planted file."""
    return [
        (number, match.group(1))
        for number, line in enumerate(text.splitlines(), start=1)
        if (match := MARKER.search(line))
    ]


def _refused(output: str, file: str, line: int, rule: str) -> bool:
    """The report names the file, the line and the rule."""
    return re.search(rf"{re.escape(file)}:{line}: .*\[rule: {rule}\]", output) is not None


@pytest.mark.parametrize("name", sorted(p.stem for p in WATCHED.glob("*.py")))
def test_a_port_right_only_while_watched_fails_the_review(name: str, tmp_path: Path) -> None:
    port = tmp_path / "numpy"
    shutil.copytree(CARTPOLE / "ports" / "numpy", port)
    code = (WATCHED / f"{name}.py").read_text()
    plant_code(port, code, payload_place(code))
    marked = _marked((port / "env.py").read_text())
    assert marked, "every payload marks the line the review must name"
    done = run_envport("verify", str(CARTPOLE), "--port", str(port), "--levels", "l1")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert "FAIL review.static" in output, output
    for line, rule in marked:
        assert _refused(output, "env.py", line, rule), (line, rule, output)
    # Refused before any of it ran: no level was checked.
    assert "l1." not in output, output


def test_a_rust_port_reading_its_pid_fails_the_review_before_it_is_built(tmp_path: Path) -> None:
    port = tmp_path / "rust"
    shutil.copytree(CARTPOLE / "ports" / "rust", port, ignore=shutil.ignore_patterns("target"))
    lib = port / "src" / "lib.rs"
    text = lib.read_text()
    marker = "    if n == 0 {\n        return 0;\n    }\n"
    assert marker in text
    planted = "    let _watched = std::process::id() < 16; // refused: import\n"
    lib.write_text(text.replace(marker, marker + planted, 1))
    done = run_envport("verify", str(CARTPOLE), "--port", str(port), "--levels", "l1")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    ((line, rule),) = _marked(lib.read_text())
    assert _refused(output, "src/lib.rs", line, rule), output
    assert "std::process" in output and "l1." not in output, output


def test_every_examples_known_good_port_and_bridge_passes_the_review() -> None:
    ports = sorted(p for p in ROOT.glob("examples/*/ports/*") if p.is_dir())
    assert len(ports) >= 40
    for port in ports:
        spec = load_spec(port.parent.parent)
        found = review_port(port, spec, choose_target(spec, port, "auto"))
        assert found == [], [f.text() for f in found]


def test_the_spec_extends_a_targets_imports(tmp_path: Path) -> None:
    """A bridge's package is refused until the spec allows it; then it and its submodules
    are admitted, and nothing else is."""
    spec_dir = tmp_path / "cartpole"
    shutil.copytree(CARTPOLE, spec_dir, ignore=shutil.ignore_patterns("ports", "replay"))
    port = spec_dir / "ports" / "numpy"
    shutil.copytree(CARTPOLE / "ports" / "numpy", port)
    env = port / "env.py"
    env.write_text("import fractions.x\nimport statistics\n" + env.read_text())
    spec = load_spec(spec_dir)
    before = [(f.line, f.rule) for f in review_port(port, spec, choose_target(spec, port, "numpy"))]
    assert before == [(1, "import"), (2, "import")]
    toml = spec_dir / "envport.toml"
    toml.write_text(
        toml.read_text().replace(
            'allow_imports = ["envpool"]', 'allow_imports = ["envpool", "fractions"]'
        )
    )
    spec = load_spec(spec_dir)
    after = review_port(port, spec, choose_target(spec, port, "numpy"))
    assert [(f.line, f.what) for f in after] == [(2, "`import statistics`")]


def test_allow_imports_on_a_rust_target_is_one_spec_error(tmp_path: Path) -> None:
    text = (CARTPOLE / "envport.toml").read_text()
    rust = '[targets.rust]\nentry = "lib"\n'
    assert rust in text
    (tmp_path / "envport.toml").write_text(text.replace(rust, rust + 'allow_imports = ["libc"]\n'))
    with pytest.raises(SpecError, match=r"rust.allow_imports`: a crate's imports are its"):
        load_spec(tmp_path)


def _python(code: str, target: str = "jax") -> list[str]:
    allowed = Allowed(target, PYTHON_IMPORTS[target], frozenset({"physics"}))
    return [f"{f.rule}:{f.what}" for f in review_python(code.encode(), "env.py", allowed)]


# A hostile model's ways to the process, files, clock or interpreter: each refused.
EVASIONS = {
    "import os as o": "import:`import os`",
    "from os import environ": "import:`from os import environ`",
    "import os.path": "import:`import os.path`",
    "import importlib": "import:`import importlib`",
    "import operator": "import:`import operator`",
    "import physics": "import:`import physics`",
    "from numpy import *": "import:`from numpy import *`",
    "from numpy import load": "attribute:`.load`",
    "import numpy.testing": "attribute:`.testing`",
    "from numpy.lib import stride_tricks": "attribute:`.lib`",
    "import numpy as np\nnp.fromfile('/proc/1/cmdline')": "attribute:`.fromfile`",
    "import numpy as np\nnp.load('/proc/1/environ')": "attribute:`.load`",
    "import numpy as np\nnp._core": "attribute:`._core`",
    "import numpy as np\nnp.warnings": "attribute:`.warnings`",
    "import jax\njax.devices()": "attribute:`.devices`",
    "import jax.numpy as jnp\njnp.zeros(1).device": "attribute:`.device`",
    "import numpy as np\nxp = np\nxp.load('/proc/1/environ')": "module:`np`",
    "import numpy as np\ndef f(m):\n    return m.load('/f')\nf(np)": "module:`np`",
    "import jax\njax.config.update('x', 1)": "attribute:`.config`",
    "from jax.experimental.serialize_executable import deserialize_and_load": (
        "attribute:`.serialize_executable`"
    ),
    "import jax\njax.ffi.ffi_call('getpid', None)": "attribute:`.ffi`",
    "import numpy as np\nnp.__dict__": "dunder:`.__dict__`",
    "type(x).__mro__": "dunder:`.__mro__`",
    "match x:\n    case object(__class__=c):\n        pass": "dunder:`.__class__`",
    "match g:\n    case object(gi_frame=f):\n        pass": "attribute:`.gi_frame`",
    "import numpy as np\nnp.geterr()": "attribute:`.geterr`",
    "type(x).mro()": "attribute:`.mro`",
    "x.ctypes.data": "attribute:`.ctypes`",
    "e.__traceback__": "dunder:`.__traceback__`",
    "g.gi_frame": "attribute:`.gi_frame`",
    "t.tb_frame": "attribute:`.tb_frame`",
    "f.__globals__": "dunder:`.__globals__`",
    "f.__code__": "dunder:`.__code__`",
    "__builtins__": "dunder:`__builtins__`",
    "__import__('o' + 's')": "dunder:`__import__`",
    "__name__": "dunder:`__name__`",
    "eval('1')": "builtin:`eval`",
    "exec('x = 1')": "builtin:`exec`",
    "compile('1', 'f', 'eval')": "builtin:`compile`",
    "globals()['x']": "builtin:`globals`",
    "vars(x)": "builtin:`vars`",
    "dir(x)": "builtin:`dir`",
    "open('/etc/passwd')": "builtin:`open`",
    "input()": "builtin:`input`",
    "id(x)": "builtin:`id`",
    "hash('x')": "builtin:`hash`",
    "breakpoint()": "builtin:`breakpoint`",
    "run = eval\nrun('1')": "builtin:`eval`",
    "def f():\n    open = len\ndef g():\n    return open('/x')": "builtin:`open`",
    "getattr(x, 'o' + 's')": "attribute:`.os`",
    "def f(x, name):\n    return getattr(x, name)": "dynamic:`getattr`",
    "getattr(x, '__class__')": "dunder:`.__class__`",
    "get = getattr": "dynamic:`getattr` as a value",
    "'{0.gi_frame}'.format(g)": "dynamic:`.format`",
    "('{0' + '.f}').format(g)": "dynamic:`.format`",
    # A method's `self` is whatever the caller passes: C.m(np, name) reaches any attribute.
    "class C:\n    def m(self, n):\n        return getattr(self, n)": "dynamic:`getattr`",
    "for n in ('a',):\n    n = '__class__'\n    getattr(x, n)": "dynamic:`getattr`",
    # A list the file changes (or could, through an alias) holds other names than it shows.
    "NAMES = ['a']\nNAMES[0] = '__cl' + 'ass__'\nfor n in NAMES:\n    getattr(x, n)": (
        "dynamic:`getattr`"
    ),
    "NAMES = ['a']\nalias = NAMES\nfor n in NAMES:\n    getattr(x, n)": "dynamic:`getattr`",
    "NAMES = ('a', ['b'])\nfor n in NAMES:\n    getattr(x, n)": "dynamic:`getattr`",
    "def f(x: \"__import__('os')\"): pass": "dunder:`__import__`",
}


@pytest.mark.parametrize(("code", "refusal"), list(EVASIONS.items()))
def test_an_evasion_is_refused_by_its_rule(code: str, refusal: str) -> None:
    assert refusal in _python(code), _python(code)


ALLOWED = [
    "from . import physics\nfrom .physics import dynamics",
    "import jax.numpy as jnp\nfrom jax import lax, random\njnp.select\nrandom.split",
    "import numpy as np\nnp.random.default_rng(0).integers(3)\nnp.array([1]).copy()",
    "from typing import NamedTuple\nclass S(NamedTuple):\n    x: int\nS(1)._replace(x=2)",
    "class A:\n    def __init__(self):\n        super().__init__()",
    "FIELDS = ('a', 'b')\ndef f(s):\n    return {n: getattr(s, f'_{n}') for n in FIELDS}",
    "CAP = {'a': 1}\ndef f(s):\n    for n, c in CAP.items():\n        getattr(s, n)",
    "print('{} {:.2f}'.format(1, 2.0))",
    "def f(x: 'int') -> 'float':\n    raise ValueError(x)",
    "state.time + 1",
]


@pytest.mark.parametrize("code", ALLOWED)
def test_a_steps_plain_code_passes(code: str) -> None:
    assert _python(code) == []


def _rust(code: str, crates: tuple[str, ...] = ()) -> list[str]:
    return [f"{f.rule}:{f.what}" for f in review_rust(code, "src/lib.rs", crates)]


RUST_EVASIONS = {
    'fn f() { std::env::var("HOME"); }': "import:`std::env`",
    "use std::{sync::Arc, fs};": "import:`std::fs`",
    "use ::std::time::Instant;": "import:`std::time`",
    "use std :: process;": "import:`std::process`",
    "use std::*;": "import:`std::*`",
    "use std::{self as s};": "import:`std::self`",
    "use std as s;": "import:`use std`",
    "extern crate core as c;": "import:`extern crate core as`",
    'mod x { pub extern crate std; }\nfn f() { x::std::env::var("A"); }': "import:`std::env`",
    "use core::arch::asm;": "import:`core::arch`",
    "fn f() { libc::getpid(); }": "import:`libc::`",
    'extern "C" { fn getpid() -> i32; }': "foreign:`extern { ... }`",
    '#[link(name = "c")] extern {}': "foreign:`#[link]`",
    '#[path = "/proc/self/environ"] mod x;': "foreign:`#[path]`",
    'const K: &str = include_str!("/etc/passwd");': "macro:`include_str!`",
    'const H: &str = env!("HOME");': "macro:`env!`",
    "fn f() -> bool { cfg!(debug_assertions) }": "macro:`cfg!`",
    "#[cfg(debug_assertions)] const G: f64 = 9.8;": "macro:`#[cfg(...)]`",
    'macro_rules! m { ($r:ident) => { $r::env::var("X") } }': "import:`$r::`",
}


@pytest.mark.parametrize(("code", "refusal"), list(RUST_EVASIONS.items()))
def test_a_rust_evasion_is_refused_by_its_rule(code: str, refusal: str) -> None:
    assert refusal in _rust(code), _rust(code)


def test_rust_text_in_comments_and_strings_and_allowed_paths_pass() -> None:
    code = (
        "// std::env::var and /* std::fs */ in comments\n"
        'const S: &str = "std::process::id()";\nconst R: &str = r#"std::env "x""#;\n'
        "use std::sync::{Arc, Mutex};\nuse std::f64::consts::PI;\n"
        "pub extern \"C\" fn envport_abi_version() -> u32 { let c = 'a'; 1 }\n"
        "fn g<'a>(x: &'a [f64]) -> f64 { x[0] }\n#[cfg(test)]\nmod tests {}\n"
    )
    assert _rust(code) == []
    assert _rust("fn f() { libc::getpid(); }", crates=("libc",)) == []


def test_a_translate_runs_repair_is_told_the_refused_line_and_rule(tmp_path: Path) -> None:
    """A module check's refusal reaches the run state as a failed check whose failure text
    (what the repair prompt quotes) names the file, the line and the rule."""
    from envport.pipeline.checks import _outcomes
    from envport.verifiers.reporting.divergence import VerifyReport
    from envport.verifiers.source_review.check import check_review

    port = tmp_path / "numpy"
    shutil.copytree(CARTPOLE / "ports" / "numpy", port)
    physics = port / "physics.py"
    physics.write_text("import time as clock\n" + physics.read_text())
    spec = load_spec(CARTPOLE)
    report = VerifyReport(spec="s", port=str(port), passed=False)
    report.review = check_review(port, spec, choose_target(spec, port, "numpy"))
    assert report.diverged
    (refused,) = [o for o in _outcomes("physics", report, "load", port) if not o.passed]
    assert refused.name == "review.static:physics" and refused.level == "review"
    assert "physics.py:1: `import time`: `time` reads the clock" in refused.failures[0]
    assert "[rule: import]" in refused.failures[0]


def test_a_stray_cargo_manifest_does_not_hide_a_python_ports_source(tmp_path: Path) -> None:
    port = tmp_path / "numpy"
    shutil.copytree(CARTPOLE / "ports" / "numpy", port)
    (port / "Cargo.toml").write_text('[package]\nname = "decoy"\n')
    (port / "physics.py").write_text("import os\n" + (port / "physics.py").read_text())
    spec = load_spec(CARTPOLE)
    for target in ("numpy", "auto"):
        found = review_port(port, spec, choose_target(spec, port, target))
        assert [(f.file, f.line, f.rule) for f in found] == [("physics.py", 1, "import")]


def test_a_list_another_file_of_the_port_names_is_not_a_constant() -> None:
    """`from .env import NAMES; NAMES.append(...)` in another module would change it."""
    code = b"NAMES = ['a']\ndef f(s):\n    return [getattr(s, n) for n in NAMES]\n"
    allowed = Allowed("numpy", PYTHON_IMPORTS["numpy"], frozenset())
    assert review_python(code, "env.py", allowed) == []
    (found,) = review_python(code, "env.py", allowed, frozenset({"NAMES"}))
    assert (found.line, found.rule) == (3, "dynamic")


def test_a_crate_whose_manifest_compiles_a_file_the_review_skips_is_refused(
    tmp_path: Path,
) -> None:
    port = tmp_path / "rust"
    shutil.copytree(CARTPOLE / "ports" / "rust", port, ignore=shutil.ignore_patterns("target"))
    (port / "src" / "lib.txt").write_text("pub fn pid() -> u32 { std::process::id() }\n")
    manifest = port / "Cargo.toml"
    text = manifest.read_text()
    assert 'path = "src/lib.rs"' in text
    manifest.write_text(text.replace('path = "src/lib.rs"', 'path = "src/lib.txt"'))
    spec = load_spec(CARTPOLE)
    found = review_port(port, spec, choose_target(spec, port, "rust"))
    assert [(f.file, f.rule) for f in found] == [("Cargo.toml", "files")]
    assert "src/lib.txt" in found[0].what


def _imported_once(tmp_path: Path) -> Path:
    """CartPole's NumPy port after a plain `import` of it: what any port handed to verify
    has beside its modules, a `__pycache__` written by the interpreter."""
    port = tmp_path / "port"
    shutil.copytree(
        CARTPOLE / "ports" / "numpy", port, ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(
        [sys.executable, "-c", "import port.env"],
        cwd=tmp_path, env=user_env(), check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert list((port / "__pycache__").glob("*.pyc"))
    return port


def _review(port: Path) -> list[str]:
    spec = load_spec(CARTPOLE)
    return [f.text() for f in review_port(port, spec, choose_target(spec, port, "numpy"))]


def test_the_bytecode_an_import_leaves_passes_and_a_crafted_one_is_refused(tmp_path: Path) -> None:
    port = _imported_once(tmp_path)
    assert _review(port) == []
    # The attack: bytecode of other code under the header of the real source (its mtime and
    # size), so Python loads it in the source's place while the review reads the source.
    pyc = next((port / "__pycache__").glob("physics.*.pyc"))
    header = pyc.read_bytes()[:16]
    hostile = compile("import os\nGRAVITY = float(os.getpid())\n", "physics.py", "exec")
    pyc.write_bytes(header + marshal.dumps(hostile))
    found = _review(port)
    assert len(found) == 1 and "physics" in found[0] and "not its source compiled" in found[0]
    # Unchecked hash-based bytecode is loaded whatever the source holds: judged the same.
    flags = (0b01).to_bytes(4, "little")
    pyc.write_bytes(header[:4] + flags + b"\0" * 8 + marshal.dumps(hostile))
    assert len(_review(port)) == 1
    # Stale bytecode (the source changed since) is never loaded: no finding.
    pyc.write_bytes(header[:8] + b"\0\0\0\0" + header[12:] + marshal.dumps(hostile))
    assert _review(port) == []
