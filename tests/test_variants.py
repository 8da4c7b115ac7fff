"""Variants (docs/spec.md, "Variants"): a spec's `base` names the example it varies; the
files it names by relative path and its known-good ports fill in from the base's folder, a
bad base is one line (exit 2), and a run freezes what the variant takes from its base."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envport.errors import SpecError
from envport.runs.harness import check
from envport.runs.layout import create_run, new_run_id
from envport.runs.state import RunState
from envport.serve.client import PortWorker
from envport.serve.ops import LoadReference
from envport.spec import load_spec
from envport.variant import compose_port, frozen_text
from envport.verifiers.selfcheck import load_mutants

from helpers import ROOT, run_envport

BLACKJACK = ROOT / "examples" / "blackjack"
NATURAL = ROOT / "examples" / "blackjack-natural"
EMPTY = ROOT / "examples" / "minigrid_empty"
DOORKEY = ROOT / "examples" / "minigrid_doorkey"

SPEC = """base = {base}
name = "{name}"
[reference]
entry = "gymnasium:CartPole-v1"
[state]
fields = {{ physics = "unwrapped.state" }}
"""


def example(folder: Path, base: str | None, name: str | None = None) -> Path:
    """A spec in `folder` whose `base` key is `base` (left out when None)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = SPEC.format(base=f'"{base}"', name=name or folder.name)
    if base is None:
        text = text.split("\n", 1)[1]
    (folder / "envport.toml").write_text(text)
    return folder


def one_line_exit_2(*args: str, cwd: Path) -> str:
    done = run_envport(*args, cwd=cwd)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stdout.strip() == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_missing_base_is_one_line_exit_2(tmp_path: Path) -> None:
    variant = example(tmp_path / "natural", "../blackjack")
    (tmp_path / "port").mkdir()
    line = one_line_exit_2("verify", "natural", "--port", "port", cwd=tmp_path)
    assert "natural/envport.toml: key `base`: '../blackjack' is no example" in line
    assert "blackjack is not a folder holding envport.toml nor a spec file" in line
    with pytest.raises(SpecError, match="key `base`"):
        load_spec(variant)


def test_a_cycle_of_variants_is_one_line_exit_2(tmp_path: Path) -> None:
    example(tmp_path / "a", "../b")
    example(tmp_path / "b", "../c")
    example(tmp_path / "c", "../a")
    line = one_line_exit_2("check", "a", cwd=tmp_path)
    assert line.endswith(
        "c/envport.toml: key `base`: a cycle of variants: "
        "a/envport.toml -> b/envport.toml -> c/envport.toml -> a/envport.toml"
    ), line
    # A spec that names itself is the shortest cycle.
    example(tmp_path / "self", ".")
    with pytest.raises(SpecError, match=r"a cycle of variants: .*self/envport.toml -> "):
        load_spec(tmp_path / "self")


def test_a_base_that_is_not_a_path_is_one_spec_error(tmp_path: Path) -> None:
    (tmp_path / "envport.toml").write_text(SPEC.format(base="3", name="t"))
    with pytest.raises(SpecError, match=r"key `base`: Input should be a valid string"):
        load_spec(tmp_path)
    (tmp_path / "envport.toml").write_text(SPEC.format(base='""', name="t"))
    with pytest.raises(SpecError, match=r"key `base`: expected the path of the example"):
        load_spec(tmp_path)


def test_files_fill_in_from_the_nearest_folder_that_has_them(tmp_path: Path) -> None:
    """A variant of a variant: each file comes from the nearest folder holding it."""
    root = example(tmp_path / "root", None)
    middle = example(tmp_path / "middle", "../root")
    leaf = example(tmp_path / "leaf", "../middle/envport.toml")  # a spec file works too
    for folder, names in ((root, ["a.py", "b.py", "c.py"]), (middle, ["b.py"]), (leaf, ["c.py"])):
        for name in names:
            (folder / "probes").mkdir(exist_ok=True)
            (folder / "probes" / name).write_text(f"# {folder.name}\n")
    spec = load_spec(leaf)
    assert spec.folders == (leaf.resolve(), middle.resolve(), root.resolve())
    assert spec.harness_file("probes/a.py") == root.resolve() / "probes" / "a.py"
    assert spec.harness_file("probes/b.py") == middle.resolve() / "probes" / "b.py"
    assert spec.harness_file("probes/c.py") == leaf.resolve() / "probes" / "c.py"
    # A file no folder has is named where the user would add it.
    assert spec.harness_file("probes/d.py") == leaf.resolve() / "probes" / "d.py"
    assert load_spec(root).folders == (root.resolve(),)
    # A variant's spec file inside its base's folder shares that folder.
    (root / "natural.toml").write_text(SPEC.format(base='"envport.toml"', name="natural"))
    assert load_spec(root / "natural.toml").folders == (root.resolve(),)


def test_a_variants_port_is_its_files_over_its_bases(tmp_path: Path) -> None:
    base = example(tmp_path / "base", None)
    variant = example(tmp_path / "variant", "../base")
    (base / "ports" / "numpy" / "__pycache__").mkdir(parents=True)
    (base / "ports" / "numpy" / "__pycache__" / "env.cpython.pyc").write_bytes(b"stale")
    (base / "ports" / "numpy" / "env.py").write_text("from .settings import X\n")
    (base / "ports" / "numpy" / "settings.py").write_text("X = 1\n")
    (variant / "ports" / "numpy").mkdir(parents=True)
    (variant / "ports" / "numpy" / "settings.py").write_text("X = 2\n")
    folders = load_spec(variant).folders
    cache = tmp_path / "cache"
    composed = compose_port(folders, variant / "ports" / "numpy", cache)
    assert composed.parent == cache
    assert sorted(p.name for p in composed.iterdir()) == ["env.py", "settings.py"]
    assert (composed / "settings.py").read_text() == "X = 2\n"
    assert (composed / "env.py").read_text() == "from .settings import X\n"
    # The same files, the same directory; a changed file, another one.
    assert compose_port(folders, variant / "ports" / "numpy", cache) == composed
    (variant / "ports" / "numpy" / "settings.py").write_text("X = 3\n")
    changed = compose_port(folders, variant / "ports" / "numpy", cache)
    assert changed != composed and (changed / "settings.py").read_text() == "X = 3\n"
    assert not [p for p in cache.iterdir() if p.name.startswith(".composing-")]
    # A target the variant has no folder for is the base's port as it is; a port outside
    # the variant's folder (a run's) is never filled in.
    assert compose_port(folders, variant / "ports" / "jax", cache) == variant / "ports" / "jax"
    (base / "ports" / "jax").mkdir()
    assert compose_port(folders, variant / "ports" / "jax", cache) == base / "ports" / "jax"
    (tmp_path / "run" / "port").mkdir(parents=True)
    assert compose_port(folders, tmp_path / "run" / "port", cache) == tmp_path / "run" / "port"


def test_the_examples_variants_share_their_bases_files() -> None:
    natural, empty = load_spec(NATURAL), load_spec(EMPTY)
    assert natural.folders == (NATURAL, BLACKJACK) and empty.folders == (EMPTY, DOORKEY)
    bridge = DOORKEY / "harness" / "reference.py"
    assert empty.harness_file("harness/reference.py") == bridge
    assert not (EMPTY / "harness").exists() and not (NATURAL / "probes").exists()
    for target in ("jax", "numpy"):
        assert sorted(p.name for p in (EMPTY / "ports" / target).glob("*.py")) == ["env.py"]
    # Each keeps its own mutants, which the self-check runs for that spec.
    assert {m.id for m in load_mutants(NATURAL)}.isdisjoint(m.id for m in load_mutants(BLACKJACK))


def test_a_variant_without_mutants_runs_its_bases(tmp_path: Path) -> None:
    base = example(tmp_path / "base", None)
    shutil.copyfile(NATURAL / "mutants.toml", base / "mutants.toml")
    variant = example(tmp_path / "variant", "../base")
    assert [m.id for m in load_mutants(variant)] == [m.id for m in load_mutants(NATURAL)]


def test_a_frozen_variant_spec_comments_its_base_out() -> None:
    text = (NATURAL / "envport.toml").read_text()
    frozen = frozen_text(text)
    assert frozen != text and '\n# base = "../blackjack"  (frozen:' in frozen
    assert (
        frozen_text((BLACKJACK / "envport.toml").read_text())
        == (BLACKJACK / "envport.toml").read_text()
    )
    with pytest.raises(SpecError, match="key `base`: write it once, on its own line"):
        frozen_text('base = "../a"\nname = "t"\n[x]\nbase = 1\n')


def test_a_variants_run_holds_what_it_takes_from_its_base(tmp_path: Path) -> None:
    state = RunState(
        run_id=new_run_id("blackjack-natural", "numpy"),
        spec_source=str(NATURAL / "envport.toml"),
        spec_name="blackjack-natural",
        target="numpy",
        model="replay:/x",
    )
    run = create_run(tmp_path / "runs", NATURAL / "envport.toml", state)
    frozen = load_spec(run.spec_file)
    assert frozen.base is None and frozen.folders == (run.root,)
    assert frozen.reference.kwargs == {"natural": True, "sab": False}
    for relative in ("probes/numpy.py", "probes/jax.py", "harness/noise.py"):
        path = frozen.harness_file(relative)
        assert path == run.root / relative
        assert path.read_bytes() == (BLACKJACK / relative).read_bytes()
        check(path)  # hashed into the run's manifest when it started


def test_a_reference_worker_reads_the_bridge_its_variant_takes_from_the_base() -> None:
    """L3's lanes and l2.vector load the reference in a sandboxed worker that sees only what
    the driver names: a variant's spec folder and its bases' (Empty's bridge is DoorKey's)."""
    worker = PortWorker(timeout=300, load=LoadReference(spec=str(EMPTY / "envport.toml")))
    with worker:
        worker.receive()  # raises PortError with the worker's words if the load failed
