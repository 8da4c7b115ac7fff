"""The environment of every process that runs generated code: an allowlist, in one place.

A worker inherits from the driver only the variables named here; everything else is
dropped, whatever its name (`DATABASE_URL`, `MYSQL_PWD`, `SENTRY_DSN` name no secret, and
a port's error text reaches the model). What is left is what the interpreter, NumPy, JAX
and a Rust build read to behave as they do for the user: locale, time zone, hash seed,
the thread counts and CPU settings of OpenBLAS, OpenMP, XLA and rayon. The paths are the
driver's own: `PATH` (the interpreter's folder, the system's, and for a Rust build the
toolchain's), `HOME` and `TMPDIR` (the worker's scratch; the sandbox sets them to its
working directory). docs/isolation.md lists the same names.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

# Passed on unchanged when the driver has them.
PASSED = (
    "LANG",
    "LANGUAGE",
    "TZ",
    "PYTHONHASHSEED",
    "PYTHONPATH",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "JAX_PLATFORMS",
    "JAX_ENABLE_X64",
    "JAX_DEFAULT_MATMUL_PRECISION",
    "XLA_FLAGS",
    "TF_CPP_MIN_LOG_LEVEL",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "RAYON_NUM_THREADS",
    "RUST_BACKTRACE",
    # Set machine-wide on some processors (older OpenBLAS builds crash without them).
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
)
# Passed on by prefix: the locale's categories (LC_ALL, LC_CTYPE, LC_NUMERIC, ...).
PASSED_PREFIXES = ("LC_",)
# Where programs are looked up besides the interpreter's own folder.
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


# A reference worker runs the user's own trusted code, which the verifier's process also
# runs with the user's whole environment (L1, L2, L3's first lane): it gets that
# environment too (a renderer's MUJOCO_GL, a library's LD_LIBRARY_PATH), so every lane's
# reference behaves alike, less the names that say they hold a secret.
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PAT", "DSN")


def passed(name: str) -> bool:
    return name in PASSED or name.startswith(PASSED_PREFIXES)


def worker_environment(home: str, bins: Iterable[str] = ()) -> dict[str, str]:
    """The variables a worker starts with: the allowlist's, `HOME` and `TMPDIR` at `home`
    (its scratch), and a `PATH` of the driver's making (`bins` first: a Rust toolchain's)."""
    env = {name: value for name, value in os.environ.items() if passed(name)}
    env.setdefault("JAX_PLATFORMS", "cpu")
    folders = [*bins, os.path.dirname(sys.executable), *SYSTEM_PATH]
    env["PATH"] = os.pathsep.join(dict.fromkeys(folders))
    env["HOME"] = env["TMPDIR"] = home
    return env


def reference_environment(home: str) -> dict[str, str]:
    """A reference worker's variables: the user's, less any whose name marks a secret, with
    the worker's own `PATH`, `HOME` and `TMPDIR` (`worker_environment`)."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not any(marker in name.upper() for marker in SECRET_MARKERS)
    }
    return {**kept, **worker_environment(home)}
