"""The slicer follows a package's re-export under an alias (RLCard's
`rlcard/games/leducholdem/__init__.py`: `from ...dealer import LeducholdemDealer as Dealer`)
and chains of `__init__`s, so the class the env really uses reaches the prompt; and a listed
module the env reaches nothing of is one warning line of `envport check`. Real modules: a
small card package written to tmp_path and put on sys.path."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from envport.pipeline.sources.slicing import slice_modules
from envport.pipeline.spec_check import _sources
from envport.spec import load_spec

from helpers import CARTPOLE

PACKAGE = {
    "cardpkg/__init__.py": """
        # Re-exported under other names, as RLCard's game packages do.
        from .dealer import SmallDealer as Dealer
        from .rules import points
        """,
    "cardpkg/rules/__init__.py": """
        from .scoring import score as points
        """,
    "cardpkg/rules/scoring.py": """
        def score(card):
            return card % 3


        def unused_score(card):
            return 0
        """,
    "cardpkg/dealer.py": """
        class SmallDealer:
            def __init__(self):
                self.deck = [0, 1, 2, 3, 4, 5]

            def deal(self):
                return self.deck.pop()


        class BigDealer:
            def __init__(self):
                self.deck = list(range(52))

            def deal(self):
                return self.deck.pop()
        """,
    "cardpkg/game.py": """
        import cardpkg
        from cardpkg import Dealer, points


        class CardEnv:
            def __init__(self):
                self.dealer = Dealer()
                self.spare = cardpkg.Dealer()

            def reset(self, seed=None):
                return 0, {}

            def step(self, action):
                card = self.dealer.deal()
                return card, points(card), False, False, {}
        """,
    "cardpkg/extra.py": """
        def nothing_the_env_uses():
            return 1
        """,
}
LISTED = ["cardpkg.game", "cardpkg.dealer", "cardpkg.rules.scoring"]


@pytest.fixture
def cardpkg(tmp_path: Path) -> Iterator[Path]:
    for name, text in PACKAGE.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m == "cardpkg" or m.startswith("cardpkg.")]:
        del sys.modules[name]


def _sliced(root: Path, listed: list[str]) -> dict[str, str]:
    texts = [(m, (root / (m.replace(".", "/") + ".py")).read_text()) for m in listed]
    found = slice_modules(texts, ("cardpkg.game", "CardEnv"), set())
    assert found is not None
    return {m: s.text for m, s in zip(listed, found, strict=True)}


def test_a_class_re_exported_under_an_alias_reaches_the_prompt(cardpkg: Path) -> None:
    sliced = _sliced(cardpkg, LISTED)
    dealer = sliced["cardpkg.dealer"]
    # `Dealer` is `SmallDealer` (the 6-card deck), through cardpkg/__init__.py's alias; its
    # method through `self.dealer = Dealer()`. The 52-card dealer no one uses is cut.
    assert "class SmallDealer:" in dealer and "self.deck = [0, 1, 2, 3, 4, 5]" in dealer
    assert "def deal(self):" in dealer and "class BigDealer" not in dealer
    # `points` is `score` two `__init__`s down (cardpkg -> cardpkg.rules -> .scoring).
    scoring = sliced["cardpkg.rules.scoring"]
    assert "def score(card):" in scoring and "unused_score" not in scoring


def test_a_listed_module_the_env_reaches_nothing_of_is_one_warning(cardpkg: Path) -> None:
    # CartPole's spec with these sources: its entry is none of them, so every listed class
    # with a `step` is where the slicing starts.
    spec = load_spec(CARTPOLE)
    spec.reference.sources[:] = [*LISTED, "cardpkg.extra"]
    warned = [line for line in _sources(spec) if line.startswith("warn")]
    assert warned == [
        "warn sources: cardpkg.extra contributes nothing the env's __init__, reset or step "
        "reach (it is shown from its own definitions): drop it from reference.sources, or "
        "list the module the env imports its code from"
    ]
    spec.reference.sources[:] = LISTED
    assert not [line for line in _sources(spec) if line.startswith("warn")]


def test_leduc_holdems_six_card_dealer_reaches_the_prompt() -> None:
    """RLCard's own case: LeducholdemGame takes `Dealer` from its package, whose `__init__`
    renames LeducholdemDealer (the 6-card deck); limit hold'em's 52-card `Dealer`, which the
    Leduc dealer subclasses, is kept only for what the Leduc one inherits."""
    pytest.importorskip("rlcard")
    listed = [
        "rlcard.games.leducholdem.game",
        "rlcard.games.leducholdem.dealer",
        "rlcard.games.limitholdem.dealer",
    ]
    texts = []
    for name in listed:
        found = importlib.util.find_spec(name)
        assert found is not None and found.origin is not None
        texts.append((name, Path(found.origin).read_text()))
    slices = slice_modules(texts, ("rlcard.games.leducholdem.game", "LeducholdemGame"), set())
    assert slices is not None
    leduc = slices[1].text
    assert "class LeducholdemDealer(Dealer):" in leduc
    assert "self.deck = [Card('S', 'J'), Card('H', 'J')" in leduc
    assert not slices[1].unreached
