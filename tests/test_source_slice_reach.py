"""What the slicer reaches beyond plain names: a package's re-exports, `import_module` and
`__import__` calls, attributes holding instances of a listed class, subclass overrides and
methods called on values of unknown type; and a listed module that cannot be read stops the
run with one line. Real modules: a small game package written to disk and imported."""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from envport.errors import SpecError
from envport.pipeline.sources.reading import read_sources
from envport.pipeline.sources.slicing import slice_modules

from helpers import CARTPOLE, ROOT, run_envport, user_env

PACKAGE = {
    "toygame/__init__.py": """
        # The package re-exports what its modules define.
        from .board import Board
        """,
    "toygame/base.py": """
        class BaseEnv:
            def reset(self, seed=None):
                self._layout()
                return self.observe()

            def _layout(self):
                raise NotImplementedError

            def observe(self):
                return 0

            def describe(self):
                return "a toy"
        """,
    "toygame/cells.py": """
        class Cell:
            def toggle(self):
                return False

            def paint(self, canvas):
                canvas.fill(0)


        class Door(Cell):
            def toggle(self):
                self.open = not getattr(self, "open", False)
                return True

            def paint(self, canvas):
                canvas.fill(1)


        class Lava(Cell):
            def toggle(self):
                return False
        """,
    "toygame/board.py": """
        from .cells import Cell, Door


        def _clip(i, size):
            return max(0, min(size - 1, i))


        def _unused_helper():
            return 1


        class Board:
            def __init__(self, size):
                self.size = size
                self.cells = [Cell() for _ in range(size)]

            def set(self, i, cell):
                self.cells[_clip(i, self.size)] = cell

            def get(self, i):
                return self.cells[_clip(i, self.size)]

            def rotate_left(self):
                return Board(self.size)

            def render_board(self, canvas):
                for cell in self.cells:
                    cell.paint(canvas)
        """,
    "toygame/games/__init__.py": "",
    "toygame/games/bounce.py": """
        SPEED = 2


        class Bounce:
            def apply(self, board):
                board.set(SPEED, board.get(0))

            def render_bounce(self):
                return "bounce"
        """,
    "toygame/games/walk.py": """
        def start_position():
            return 1


        def never_called():
            return 2


        class Game:
            def act(self, action):
                return action + start_position()

            def draw(self):
                return None
        """,
    "toygame/env.py": """
        import importlib

        from toygame import Board
        from toygame.base import BaseEnv
        from toygame.cells import Door


        class ToyEnv(BaseEnv):
            def __init__(self, game="walk"):
                self.board = Board(3)
                rules = importlib.import_module("toygame." + "games.bounce")
                self.rule = rules.Bounce()
                # Which game is only known at run time: every listed one is a candidate.
                self.game = importlib.import_module("toygame.games." + game).Game()

            def _layout(self):
                self.board.set(1, Door())

            def step(self, action):
                cell = self.board.get(action)
                cell.toggle()
                self.rule.apply(self.board)
                walk = __import__("toygame.games.walk", fromlist=["Game"])
                return self.game.act(action), walk.start_position(), False, False, {}
        """,
}
LISTED = [
    "toygame.env",
    "toygame.base",
    "toygame.board",
    "toygame.cells",
    "toygame.games.bounce",
    "toygame.games.walk",
]


@pytest.fixture
def toygame(tmp_path: Path) -> Iterator[Path]:
    for name, text in PACKAGE.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m == "toygame" or m.startswith("toygame.")]:
        del sys.modules[name]


def sliced(root: Path) -> dict[str, str]:
    texts = [(m, (root / (m.replace(".", "/") + ".py")).read_text()) for m in LISTED]
    found = slice_modules(texts, ("toygame.env", "ToyEnv"), set())
    assert found is not None
    return {m: s.text for m, s in zip(LISTED, found, strict=True)}


def test_a_name_imported_through_a_package_re_export_keeps_its_definition(
    toygame: Path,
) -> None:
    board = sliced(toygame)["toygame.board"]
    # `from toygame import Board` -> toygame/__init__.py's `from .board import Board`.
    assert "class Board:" in board and "def _clip(i, size):" in board
    # Methods reached through `self.board = Board(3)`; a relative import it uses.
    for kept in ["def set(self, i, cell):", "def get(self, i):", "from .cells import Cell"]:
        assert kept in board, kept
    assert "def render_board" not in board and "def _unused_helper" not in board
    # Not called through the attribute, and no value of unknown type calls it either.
    assert "def rotate_left" not in board


def test_a_module_loaded_by_import_module_with_a_constant_name_keeps_what_is_used(
    toygame: Path,
) -> None:
    bounce = sliced(toygame)["toygame.games.bounce"]
    # `import_module("toygame." + "games.bounce").Bounce()`, then `self.rule.apply(...)`.
    assert "class Bounce:" in bounce and "def apply(self, board):" in bounce
    assert "SPEED = 2" in bounce and "def render_bounce" not in bounce


def test_a_computed_module_name_makes_every_listed_module_under_its_prefix_a_candidate(
    toygame: Path,
) -> None:
    walk = sliced(toygame)["toygame.games.walk"]
    # `import_module("toygame.games." + game).Game()`: `self.game.act` keeps `Game.act`;
    # `__import__("toygame.games.walk", fromlist=...)` keeps `start_position`.
    assert "class Game:" in walk and "def act(self, action):" in walk
    assert "def start_position():" in walk
    assert "def draw" not in walk and "def never_called" not in walk


def test_check_warns_when_no_listed_module_is_under_a_computed_name(toygame: Path) -> None:
    """`import_module("toygame.games." + game)` with no game listed: the rules it loads
    would reach no prompt, and `envport check` says which module loads them and where."""
    from envport.pipeline.spec_check import _sources
    from envport.spec import load_spec

    spec = load_spec(CARTPOLE)
    spec.reference.sources[:] = [m for m in LISTED if not m.startswith("toygame.games.")]
    lines = _sources(spec)
    warned = [line for line in lines if line.startswith("warn sources:")]
    assert warned == [
        "warn sources: toygame.env loads a module by a computed name under 'toygame.games.' "
        "and reference.sources lists none there: list the ones the env uses, or no prompt "
        "carries their code"
    ]
    spec.reference.sources[:] = LISTED
    assert not [line for line in _sources(spec) if line.startswith("warn")]


def test_overrides_of_kept_methods_and_methods_called_on_unknown_values_are_kept(
    toygame: Path,
) -> None:
    found = sliced(toygame)
    env, base, cells = found["toygame.env"], found["toygame.base"], found["toygame.cells"]
    # BaseEnv.reset calls self._layout(): ToyEnv's override is what runs.
    assert "def _layout(self):\n        self.board.set(1, Door())" in env
    assert "def reset(self, seed=None):" in base and "def observe(self):" in base
    assert "def describe" not in base
    # `cell.toggle()` on a cell of unknown class: every kept class's `toggle`; `Lava`, a
    # subclass of a kept class, may be on the board too.
    assert cells.count("def toggle(self):") == 3 and "class Lava(Cell):" in cells
    assert "def paint" not in cells


def test_minigrid_doorkey_prompt_carries_the_grid_methods_the_env_uses() -> None:
    from envport.pipeline.prompting import prompt_builder
    from envport.spec import load_spec

    builder = prompt_builder(load_spec(ROOT / "examples" / "minigrid_doorkey"), "jax", None)
    shown = {s.module: s.text for s in builder.sliced}
    grid = shown["minigrid.core.grid"]
    for method in ["set", "get", "slice", "rotate_left", "process_vis", "encode", "wall_rect"]:
        assert f"    def {method}(" in grid, method
    assert "def render(" not in grid
    # Reached by `reset` through `self._gen_grid`: DoorKey's own layout, with its helpers.
    assert "def _gen_grid(self, width, height):" in shown["minigrid.envs.doorkey"]
    assert "    def place_obj(" in shown["minigrid.minigrid_env"]
    objects = shown["minigrid.core.world_object"]
    for kept in ["class Lava(WorldObj):", "class Box(WorldObj):", "def toggle(", "def can_overlap"]:
        assert kept in objects, kept


def test_a_listed_module_that_cannot_be_read_is_a_spec_error_naming_it(toygame: Path) -> None:
    from envport.spec import load_spec

    (toygame / "brokenpkg").mkdir()
    (toygame / "brokenpkg" / "__init__.py").write_text("raise RuntimeError('needs a display')\n")
    (toygame / "brokenpkg" / "rules.py").write_text("X = 1\n")
    (toygame / "toygame" / "latin.py").write_bytes(b"NAME = '\xe9'\n")
    spec = load_spec(CARTPOLE)
    for module, why in [
        ("toygame.nothere", "cannot be found"),
        ("brokenpkg.rules", "cannot be imported (RuntimeError: needs a display)"),
        ("toygame.latin", "cannot be read ("),
    ]:
        spec.reference.sources[:] = [module]
        with pytest.raises(SpecError, match=r"^reference\.sources: module '") as raised:
            read_sources(spec)
        assert module in str(raised.value) and why in str(raised.value)
        sys.modules.pop("brokenpkg", None)


def test_translate_stops_before_any_model_call_naming_the_module(tmp_path: Path) -> None:
    """A listed module missing, or one whose package fails on import (once a traceback):
    one line naming it and why, exit 2, no run directory."""
    (tmp_path / "brokenpkg").mkdir()
    (tmp_path / "brokenpkg" / "__init__.py").write_text("raise RuntimeError('needs a display')\n")
    (tmp_path / "brokenpkg" / "rules.py").write_text("X = 1\n")
    spec_dir = tmp_path / "spec"
    shutil.copytree(CARTPOLE, spec_dir, ignore=shutil.ignore_patterns("replay", "ports"))
    toml = spec_dir / "envport.toml"
    listed = 'sources = ["gymnasium.envs.classic_control.cartpole"]'
    text = toml.read_text()
    assert listed in text
    for module, why in [
        ("cartpole_rules_nowhere", "cannot be found"),
        ("brokenpkg.rules", "cannot be imported (RuntimeError: needs a display)"),
    ]:
        toml.write_text(text.replace(listed, f'{listed[:-1]}, "{module}"]'))
        out = tmp_path / "out"
        result = run_envport(
            "translate", str(spec_dir), "--target", "numpy", "--out", str(out),
            env=user_env(PYTHONPATH=str(tmp_path)),
        )  # fmt: skip
        assert result.returncode == 2, result.stdout + result.stderr
        lines = (result.stdout + result.stderr).strip().splitlines()
        assert len(lines) == 1 and f"{module!r} {why}" in lines[0], lines
        assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    ("expression", "folded"),
    [
        ('"a.b"', ("a.b", True)),
        ('"a." + "b" + "c"', ("a.bc", True)),
        ('"a." + name', ("a.", False)),
        ('"a." + name + ".env"', ("a.", False)),
        ('f"a.{name}"', ("a.", False)),
        ('"a.%s" % name', ("a.", False)),
        ('"a.{}".format(name)', ("a.", False)),
        ("name", None),
        ('name + ".env"', None),
    ],
)
def test_a_module_name_folds_to_its_constant_or_its_constant_prefix(
    expression: str, folded: tuple[str, bool] | None
) -> None:
    import ast

    from envport.pipeline.sources.imports import fold

    parsed = ast.parse(expression, mode="eval").body
    assert fold(parsed) == folded


def test_a_rendering_statement_cut_in_one_module_cuts_no_line_of_another() -> None:
    """Line 6 of the env is a rendering block; line 6 of the helpers is a rule."""
    env = textwrap.dedent(
        """
        from pkg.rules import bounce


        class Env:
            def step(self, action):
                if self.render_mode == "human":
                    self.render()
                return bounce(action)
        """
    ).lstrip()
    rules = textwrap.dedent(
        """
        LIMIT = 3


        def bounce(x):
            x = x + 1
            x = min(x, LIMIT)
            return -x
        """
    ).lstrip()
    assert env.splitlines()[5].strip() == 'if self.render_mode == "human":'
    assert rules.splitlines()[5].strip() == "x = min(x, LIMIT)"
    found = slice_modules([("pkg.env", env), ("pkg.rules", rules)], ("pkg.env", "Env"), set())
    assert found is not None
    assert "render" not in found[0].text
    for line in rules.splitlines():
        assert line in found[1].text.splitlines(), line
