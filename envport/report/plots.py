"""Plots for the HTML report, made with matplotlib and returned as inline SVG data URIs.

An SVG inside `<img src="data:...">` keeps the page one self-contained file, stays sharp
when zoomed, and is isolated: ids and styles of one plot cannot clash with another's, and
nothing in an image can run. Figures are built without pyplot (no global state, no GUI
backend), so writing a report never opens a window or depends on a display.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from envport.targets.bench.report import BenchReport

REFERENCE = "#1f77b4"
PORT = "#d62728"
MARK = "#555555"
MISSING = "matplotlib is not installed: pip install 'envport[plot]' for plots"


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_data_uri(figure: Figure) -> str:
    import matplotlib

    buffer = io.BytesIO()
    # Text as text (smaller files); no timestamp, so the same run gives the same page.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "envport"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _label(text: Any) -> str:
    # A `$` pair would start matplotlib's math mode; labels come from spec field names.
    return str(text).replace("$", r"\$")


def _is_flag(values: Sequence[Any]) -> bool:
    return all(isinstance(v, bool) for v in values)


def _flag_axis(axes: Axes) -> None:
    axes.set_yticks([0, 1], ["False", "True"])
    axes.set_ylim(-0.2, 1.2)


def _series_rows(
    figure: Figure, series: list[dict[str, Any]], fields: dict[str, dict[str, Any]], step: int
) -> None:
    """Per field: values of reference and port over the steps; under a float field, the
    absolute difference on a log scale against its tolerance, where drift shows."""
    rows: list[tuple[str, dict[str, Any]]] = []
    for item in series:
        rows.append(("values", item))
        if not _is_flag(item["reference"]):
            rows.append(("diff", item))
    ratios = [3 if kind == "values" else 2 for kind, _ in rows]
    axes_list = figure.subplots(len(rows), 1, sharex=True, height_ratios=ratios, squeeze=False)
    for axes, (kind, item) in zip(axes_list[:, 0], rows, strict=True):
        first = int(item.get("first_step", 0))
        reference = [float(v) for v in item["reference"]]
        port = [float(v) for v in item["port"]]
        steps = list(range(first, first + len(reference)))
        name = _label(item["field"])
        if kind == "values":
            flags = _is_flag(item["reference"])
            draw = "steps-mid" if flags else "default"
            # Wide and pale under the port's line: where they agree, both stay visible.
            axes.plot(
                steps, reference, color=REFERENCE, drawstyle=draw, linewidth=4, alpha=0.45,
                label="reference",
            )  # fmt: skip
            axes.plot(
                steps, port, color=PORT, linestyle="--", drawstyle=draw, marker=".", label="port"
            )
            if flags:
                _flag_axis(axes)
            axes.set_ylabel(name)
            axes.legend(loc="best", fontsize=8)
        else:
            diff = [max(abs(p - r), 1e-16) for p, r in zip(port, reference, strict=True)]
            axes.semilogy(steps, diff, color=PORT, marker=".", linewidth=1)
            bounds = fields.get(item["field"], {})
            atol, rtol = bounds.get("atol"), bounds.get("rtol")
            if atol is not None and rtol is not None:
                allowed = [atol + rtol * abs(r) for r in reference]
                axes.plot(steps, allowed, color=MARK, linestyle=":", label="tolerance")
                axes.legend(loc="best", fontsize=8)
            axes.set_ylabel(f"|port - ref|\n{name}", fontsize=8)
        axes.axvline(step, color=MARK, linestyle=":", linewidth=1)
        axes.grid(True, alpha=0.3)
    axes_list[-1, 0].set_xlabel("episode step (dotted line: first divergence)")


def divergence_plot(divergence: dict[str, Any]) -> str | None:
    """Reference vs port for the failing fields over the steps the divergence keeps (L3).
    None without such a series: one compared transition (L1, L2) is two numbers, which the
    divergence's lines say better than two dots joined by a line."""
    fields = {f["field"]: f for f in divergence.get("fields") or [] if "field" in f}
    series = [s for s in divergence.get("series") or [] if len(s.get("reference") or []) >= 2]
    step = divergence.get("step")
    if not series:
        return None
    rows = sum(1 if _is_flag(s["reference"]) else 2 for s in series)
    figure = _figure(7.5, 1.2 + 1.3 * rows)
    _series_rows(figure, series, fields, int(step or 0))
    title = f"{str(divergence.get('level', '')).upper()} {divergence.get('mode') or ''}".strip()
    if divergence.get("episode") is not None:
        title += f", episode {divergence['episode']}"
    figure.suptitle(_label(title), fontsize=10)
    return to_data_uri(figure)


def cost_plot(labels: list[str], tokens: list[int], dollars: list[float]) -> str | None:
    """Tokens per iteration (bars) and dollars so far (line)."""
    if not labels:
        return None
    figure = _figure(min(max(5.0, 2.0 + 0.55 * len(labels)), 11.0), 3.2)
    axes = figure.subplots()
    positions = list(range(len(labels)))
    axes.bar(positions, tokens, color=REFERENCE, alpha=0.7, label="tokens")
    axes.set_ylabel("tokens per iteration")
    axes.set_ylim(0, max(max(tokens) * 1.15, 1))
    axes.set_xticks(positions, [_label(text) for text in labels], rotation=45, ha="right")
    axes.tick_params(axis="x", labelsize=7)
    spent = axes.twinx()
    running, total = [], 0.0
    for value in dollars:
        total += value
        running.append(total)
    spent.plot(positions, running, color=PORT, marker="o", label="dollars so far")
    spent.set_ylabel("dollars so far")
    spent.set_ylim(bottom=0, top=max(running[-1] * 1.15, 0.01))
    handles = axes.get_legend_handles_labels()[0] + spent.get_legend_handles_labels()[0]
    # Above the axes: inside, it would cover the first bars.
    axes.legend(
        handles, ["tokens", "dollars so far"], loc="lower left", bbox_to_anchor=(0, 1.0),
        ncols=2, frameon=False, fontsize=8,
    )  # fmt: skip
    return to_data_uri(figure)


def bench_plot(report: BenchReport) -> str | None:
    """Steps per second against batch size, log-log; one-batch rows as flat lines."""
    if not report.rows:
        return None
    figure = _figure(7.0, 4.0)
    axes = figure.subplots()
    for name in report.names():
        # A size the port diverged at has no speed to draw.
        rows = sorted((r for r in report.timed() if r.name == name), key=lambda r: r.batch)
        if not rows:
            continue
        if len(rows) == 1:
            label = f"{name} (B={rows[0].batch})"
            axes.axhline(rows[0].sps, linestyle="--", linewidth=1, color=MARK, label=label)
            continue
        axes.plot([r.batch for r in rows], [r.sps for r in rows], marker="o", label=name)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xlabel("batch size (envs)")
    axes.set_ylabel("steps per second")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    return to_data_uri(figure)
