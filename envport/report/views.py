"""What a check's levels look like on a page (a run's, a verify's): each level's line and its
divergences, with their plots and grid pictures, and the one template environment both
pages render with.

Every value shown is untrusted text (a port's error, a model's answer): the environment
escapes every value (jinja2 autoescape) and shows control characters escaped (`inert`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2
from pydantic import ValidationError

from envport.gaps import gap_lines
from envport.io.inert import inert
from envport.report import plots
from envport.report.grids import GridView, grid_views

log = logging.getLogger("envport.report")

# Plots per level of one check: the first few divergences tell the story.
PLOTS_PER_LEVEL = 3


@dataclass
class DivergenceView:
    text: str
    plot: str | None = None
    grids: list[GridView] = field(default_factory=list)


@dataclass
class LevelView:
    name: str
    passed: bool
    summary: str
    divergences: list[DivergenceView] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)


def _plot(divergence: dict[str, Any]) -> str | None:
    if not plots.available():
        return None
    try:
        return plots.divergence_plot(divergence)
    except Exception as error:  # a plot is a nicety: the page goes out without it
        log.warning("no plot for a divergence: %s", error)
        return None


def level_view(level: dict[str, Any]) -> LevelView:
    from envport.verifiers.reporting.divergence import LevelResult

    try:
        result = LevelResult.model_validate(level)
    except ValidationError:
        return LevelView(str(level.get("level", "?")), bool(level.get("passed")), "unreadable")
    views = []
    for index, divergence in enumerate(result.divergences):
        data = divergence.model_dump(mode="json")
        views.append(
            DivergenceView(
                divergence.text(),
                _plot(data) if index < PLOTS_PER_LEVEL else None,
                grid_views(data) if index < PLOTS_PER_LEVEL else [],
            )
        )
    return LevelView(result.name, result.passed, result.summary(), views, gap_lines(result.gaps))


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_template_source),
        # Every value is escaped, in every template, whatever its name.
        autoescape=True,
        # Control characters (a terminal escape in an answer) shown as \xNN, not hidden.
        finalize=lambda value: inert(value) if isinstance(value, str) else value,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _template_source(name: str) -> str:
    return resources.files("envport.report").joinpath(name).read_text(encoding="utf-8")
