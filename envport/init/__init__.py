"""`envport init ENV`: infer a spec for a reference env (see `write_spec`)."""

from __future__ import annotations

from pathlib import Path

from envport.init.errors import InitError
from envport.init.explore import Budget

__all__ = ["Budget", "InitError", "write_spec"]

TARGET_NAMES = ("jax", "numpy")


def write_spec(
    env: str,
    out_dir: Path,
    target: str | None = None,
    *,
    force: bool = False,
    budget: Budget | None = None,
) -> Path:
    """Infer a spec for `env` (`gymnasium:Id`, a bare registered id, or
    `package.module:factory`) and write `out_dir/envport.toml` (and a randomness harness
    beside it when the step is stochastic); returns the spec's path. Raises InitError
    (exit 2, one line) for anything it cannot infer or prove, or when the spec exists and
    not `force`. `target`: the one target to list (default jax and numpy)."""
    from envport.init.entry import parse_env
    from envport.init.infer import infer, say
    from envport.init.render import render
    from envport.init.stochastic import HARNESS_FILE, harness_text
    from envport.io.atomic import write_atomically
    from envport.spec import SPEC_FILENAME, load_spec

    if target is not None and target not in TARGET_NAMES:
        raise InitError(f"--target {target}: expected one of {', '.join(TARGET_NAMES)}")
    path = Path(out_dir) / SPEC_FILENAME
    if path.exists() and not force:
        raise InitError(f"{path} exists; pass --force to overwrite it")
    inference = infer(parse_env(env), budget or Budget())
    text = render(inference, [target] if target else list(TARGET_NAMES))
    path.parent.mkdir(parents=True, exist_ok=True)
    if inference.randomness is not None:
        harness = path.parent / HARNESS_FILE
        harness.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(harness, harness_text(inference.randomness))
    write_atomically(path, text)
    load_spec(path)  # what was written must load: a failure here is envport's bug
    say(f"wrote {path}")
    return path
