"""The plots layer, and what every figure shares: the sweep figure (utilization and drop rate
against the first varied key), axes from unit strings, the legend below, the footer, saving.

Figures are drawn with the Agg backend (files only, no display needed) and saved as PNG
and SVG. Every figure carries a footer naming the scenario, the seeds and the buflab version,
so a figure found later still says what made it.

The layer's other modules draw what the analysis layer computes: `traces` (per-flow TCP
traces) and `queue` (the event log's CDFs). The layer stands on the engine and analysis
layers; it must not know how the numbers it draws were produced (sweeps, searches) or how
the command line prints them: the experiments draw their own figures with these helpers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot: sweeps run headless, on servers and in CI

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import ScalarFormatter  # noqa: E402

from buflab.engine.lazy import listing, submodule
from buflab.engine.units import KINDS, UnitError, parse_quantity  # noqa: E402

AXIS_UNITS = {"packets": "packets", "bytes": "bytes", "rate": "bit/s", "time": "s"}


@dataclass(frozen=True)
class Mark:
    """A vertical reference line, e.g. a theoretical buffer size, in x-axis units."""

    x: float
    label: str


@dataclass(frozen=True)
class Line:
    """One curve: per panel (top, bottom), y means and CI half-widths (nan = no interval) at
    the x positions, in the panel's scale."""

    label: str
    x: Sequence[float]
    top: Sequence[float]
    top_ci: Sequence[float]
    bottom: Sequence[float]
    bottom_ci: Sequence[float]


@dataclass
class Panel:
    """A panel's axis: its label, what the values are multiplied by to plot them, and the top
    of the y axis (None: as the data need; the bottom is 0)."""

    label: str
    scale: float = 1.0
    y_max: float | None = None


def axis_value(value: object) -> tuple[float, str | None]:
    """A varied value as a number for the x axis, and the kind of unit it was written in."""
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, int | float):
        return float(value), None
    try:
        quantity = parse_quantity(str(value), ("packets", *[k for k in KINDS if k != "packets"]))
    except UnitError:
        return math.nan, None
    return quantity.value, quantity.kind


def use_log_x(key: str, xs: Sequence[float]) -> bool:
    """Buffer sizes spanning more than a decade read best on a log axis."""
    positive = [x for x in xs if x > 0]
    is_buffer = key.rsplit(".", 1)[-1] == "buffer"
    return is_buffer and len(positive) == len(xs) and max(positive) / min(positive) > 10


def sweep_figure(
    lines: Sequence[Line],
    x_label: str,
    log_x: bool,
    marks: Sequence[Mark],
    footer: str,
    title: str,
    x_ticks: Sequence[tuple[float, str]] | None = None,
    panels: tuple[Panel, Panel] = (Panel("utilization (%)", 100, 102), Panel("drop rate (%)", 100)),
) -> Figure:
    """`x_ticks` (position, label) names categorical x values (a recipe's cases); `panels`
    say what the lines' top and bottom values are (by default utilization and drop rate)."""
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 8))
    for line in lines:
        for axes, means, half_widths, panel in (
            (top, line.top, line.top_ci, panels[0]),
            (bottom, line.bottom, line.bottom_ci, panels[1]),
        ):
            axes.errorbar(
                line.x,
                [panel.scale * value for value in means],
                yerr=_bars(half_widths, panel.scale),
                marker="o",
                capsize=3,
                label=line.label or None,
            )
    for axes, panel in ((top, panels[0]), (bottom, panels[1])):
        axes.set_ylabel(panel.label)
        axes.set_ylim(0, panel.y_max)
    bottom.set_xlabel(x_label)
    for axes in (top, bottom):
        if log_x:
            axes.set_xscale("log")
            # Buffer sizes read better as 1, 10, 100 than as powers of ten.
            axes.xaxis.set_major_formatter(ScalarFormatter())
        axes.grid(True, which="major", alpha=0.3)
        for mark, style in zip(marks, _MARK_STYLES, strict=False):
            axes.axvline(mark.x, color="dimgray", linestyle=style, linewidth=1.2, label=mark.label)
    if x_ticks:
        bottom.set_xticks([x for x, _ in x_ticks], [label for _, label in x_ticks], fontsize=8)
    top.set_title(title)
    # The legend (curves and theory lines) sits below the plots, where it hides no data.
    handles, labels = top.get_legend_handles_labels()
    legend_height = 0.0
    if handles:
        legend_height = 0.03 * math.ceil(len(handles) / 2) + 0.02
    legend_below(fig, handles, labels, 0.025)
    add_footer(fig, footer)
    fig.tight_layout(rect=(0, 0.03 + legend_height, 1, 1))
    return fig


# Distinct dash patterns, so the theory lines tell apart in the legend without colour.
_MARK_STYLES = ["--", ":", "-.", (0, (5, 2, 1, 2, 1, 2))]


def _bars(half_widths: Sequence[float], scale: float) -> list[float] | None:
    bars = [0.0 if math.isnan(h) else scale * h for h in half_widths]
    return bars if any(bars) else None


def legend_below(
    fig: Figure, handles: Sequence[Any], labels: Sequence[str], bottom: float, ncol: int = 2
) -> None:
    """The figure's legend centred below the plots, at height `bottom`, where it hides no
    data (nothing without handles)."""
    if handles:
        fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=ncol,
            fontsize=8,
            frameon=False,
            bbox_to_anchor=(0.5, bottom),
        )


def add_footer(fig: Figure, footer: str) -> None:
    """The line every figure carries at its foot (`footer_text`)."""
    fig.text(0.01, 0.005, footer, fontsize=7, color="gray", va="bottom")


def save(fig: Figure, out: Path, stem: str) -> list[Path]:
    """Write `stem`.png and `stem`.svg into `out`; returns the paths."""
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for path in paths:
        fig.savefig(path, dpi=150)
    plt.close(fig)
    return paths


def footer_text(scenario_name: str, seeds: Sequence[int], version: str) -> str:
    if not seeds:
        seed_text = "none"
    elif len(seeds) == 1:
        return f"scenario {scenario_name} · seed {seeds[0]} · buflab {version}"
    elif list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        seed_text = f"{seeds[0]}–{seeds[-1]}"
    else:
        seed_text = ", ".join(map(str, seeds))
    return f"scenario {scenario_name} · seeds {seed_text} · buflab {version}"


def __getattr__(name: str) -> Any:
    # Submodules load on first use (`buflab.plots.traces` right after `import buflab`).
    return submodule(__name__, name)


def __dir__() -> list[str]:
    return listing(__name__, globals())
