"""Slicing the reference source by its syntax tree: what a port needs stays, the rest goes."""

from __future__ import annotations

import textwrap

from envport.pipeline.sources.slicing import slice_modules

ENV = textwrap.dedent(
    '''
    """A module docstring."""
    import math

    import numpy as np
    import pygame

    from pkg.helpers import clip_speed

    GRAVITY = 9.8
    SCREEN = 600  # only rendering uses it


    def unused():
        return 0


    class Env:
        """Line 1.

        Line 3.
        Line 4.
        Line 5.
        Line 6.
        Line 7.
        Line 8.
        Line 9.
        """

        metadata = {"render_modes": ["human"], "render_fps": 50}
        window = None

        def __init__(self, render_mode=None):
            self.force = 10.0  # push strength
            self.render_mode = render_mode
            # pygame utils
            self.screen_size = (SCREEN, SCREEN)
            self.cell = self.screen_size[0] // 4
            self.lastaction = None
            self.state = None

        def reset(self, seed=None):
            self.state = np.zeros(2)
            if self.render_mode == "human":
                self.render()
            return self._obs()

        def step(self, action):
            self.lastaction = action
            x, v = self.state
            v = clip_speed(v + self.force * math.cos(x) - GRAVITY)
            self.state = np.array([x + v, v])
            # see tests/envs/test_env.py for why
            return self._obs(), 1.0, False, False, {}

        def _obs(self):
            return np.array(self.state, dtype=np.float32)

        def render(self):
            pygame.draw(self.screen_size, self.cell, self.lastaction, self.window)

        def close(self):
            pygame.quit()


    class VectorEnv:
        def step(self, actions):
            return actions
    '''
).lstrip()
HELPERS = textwrap.dedent(
    """
    LIMIT = 0.07


    def clip_speed(v):
        return max(-LIMIT, min(LIMIT, v))


    def draw_frame():
        return None
    """
).lstrip()


def sliced(read: set[str]) -> tuple[str, list[str], str, list[str]]:
    result = slice_modules([("pkg.env", ENV), ("pkg.helpers", HELPERS)], ("pkg.env", "Env"), read)
    assert result is not None
    (env, helpers) = result
    return env.text, env.cut, helpers.text, helpers.cut


def test_the_dynamics_and_what_they_use_stay_verbatim() -> None:
    env, _, helpers, _ = sliced({"state"})
    for line in [
        "import math",
        "import numpy as np",
        "from pkg.helpers import clip_speed",
        "GRAVITY = 9.8",
        "class Env:",
        "        self.force = 10.0  # push strength",
        "        v = clip_speed(v + self.force * math.cos(x) - GRAVITY)",
        "    def _obs(self):",
        "        self.state = None",
    ]:
        assert line + "\n" in env, line
    # A helper in another source module, found through the import, with its constant.
    assert "def clip_speed(v):" in helpers and "LIMIT = 0.07" in helpers
    assert "def draw_frame" not in helpers


def test_rendering_close_metadata_and_long_docstrings_go_with_a_note() -> None:
    env, cut, _, helpers_cut = sliced({"state"})
    for gone in [
        "pygame",
        "def render",
        "def close",
        "metadata",
        "SCREEN",
        "window",
        "screen_size",
        "self.cell",
        "self.render_mode",
        "# pygame utils",
        "Line 3.",
        "module docstring",
        "class VectorEnv",
        "def unused",
        "tests/envs",
    ]:
        assert gone not in env, gone
    note = "; ".join(cut)
    for said in [
        "`Env.metadata`",
        "`Env.render`",
        "`Env.close`",
        "`VectorEnv`",
        "`unused`",
        "`SCREEN`",
        "statements that only serve rendering",
        "`Env`'s (10 lines)",
        "the module's",
        "1 import nothing kept uses",
        "1 comment naming files",
    ]:
        assert said in note, said
    assert "`draw_frame`" in "; ".join(helpers_cut)


def test_an_attribute_the_harness_reads_stays_though_only_rendering_uses_it() -> None:
    without, _, _, _ = sliced({"state"})
    with_it, _, _, _ = sliced({"state", "lastaction"})
    assert "self.lastaction = None" not in without
    assert "self.lastaction = None" in with_it and "self.lastaction = action" in with_it


def test_no_entry_or_no_parse_leaves_the_source_whole() -> None:
    assert slice_modules([("pkg.env", "x = (\n")], ("pkg.env", "Env"), set()) is None
    assert slice_modules([("pkg.env", "X = 1\n")], ("pkg.env", "Env"), set()) is None
    # An entry outside the sources: every class with a `step` is a root instead.
    found = slice_modules([("pkg.env", ENV)], ("elsewhere", "make"), set())
    assert found is not None and "class VectorEnv" in found[0].text


def test_a_listed_module_the_slice_does_not_reach_is_sliced_on_its_own_not_dropped() -> None:
    """A spec lists the modules where the rules live; one the entry reaches only through a
    package's re-export or an `import_module` call (MinAtar's games) must still reach the
    prompt: every top-level name in it becomes a root of the slice."""
    from envport.pipeline.sources.reading import read_sources, slice_sources
    from envport.spec import load_spec

    from helpers import CARTPOLE

    spec = load_spec(CARTPOLE)
    unreached = "gymnasium.envs.toy_text.taxi"
    spec.reference.sources.append(unreached)
    sliced = {s.module: s for s in slice_sources(spec, read_sources(spec))}
    assert set(sliced) == set(spec.reference.sources)
    shown = sliced[unreached].text
    assert "class TaxiEnv" in shown and "def step(self, a)" in shown
    # Sliced, not pasted whole: rendering still goes, with its note.
    assert "def render" not in shown and sliced[unreached].cut
