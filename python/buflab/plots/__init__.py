"""The plots layer, and what every figure shares: the sweep figure (two metrics against the
first varied key), the rules of thumb drawn in one style everywhere, saving.

Figures are drawn with the Agg backend (files only, no display needed) and saved as PNG and
SVG. What every figure carries below its axes (the legend, notes saying how to read the error
bars, the footer naming the scenario, the bottleneck, the traffic, the simulated time, the
seeds and the buflab version) is laid out by `caption.finish`; axes and legends speak words
and units (`labels`) and plain numbers (`ticks`).

The layer's other modules draw what the analysis layer computes: `traces` (per-flow TCP
traces), `queue` (the event log's distributions) and `rates` (QCN reaction points). The layer
stands on the engine and analysis layers; it must not know how the numbers it draws were
produced (sweeps, searches) or how the command line prints them: the experiments draw their
own figures with these helpers.
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
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from buflab.engine.lazy import listing, submodule  # noqa: E402
from buflab.engine.units import KINDS, UnitError, parse_quantity  # noqa: E402

# `finish`, `footer_text`, `Setting` and `bars_note` are what the figures of the other layers
# use from here (`plots.finish`, `plots.footer_text`).
from buflab.plots.caption import SAVE_DPI, finish  # noqa: E402
from buflab.plots.caption import Setting as Setting  # noqa: E402
from buflab.plots.caption import bars_note as bars_note  # noqa: E402
from buflab.plots.caption import footer_text as footer_text  # noqa: E402
from buflab.plots.labels import PLAIN, MetricAxis, Unit  # noqa: E402
from buflab.plots.ticks import plain_linear, plain_log  # noqa: E402


@dataclass(frozen=True)
class Rule:
    """How a rule of thumb is drawn in every figure: its name and its dash pattern (grey, so
    that the data's colours stay the data's)."""

    name: str
    linestyle: str


# The rules of thumb (buflab.analysis.theory), one line style each, in every figure: the
# sweep's, the search's, the curve's and the auto-sizer's.
RULES = {
    "rtt_c": Rule("RTT·C", ":"),
    "sqrt_n": Rule("RTT·C/√N", "--"),
    "eq21": Rule("eq. 2.1", "-."),
}
RULE_COLOUR = "0.3"
RULE_WIDTH = 1.4


def rule_style(rule: str) -> dict[str, Any]:
    """Keyword arguments drawing `rule` (a key of RULES) as every figure draws it."""
    return {"color": RULE_COLOUR, "linestyle": RULES[rule].linestyle, "linewidth": RULE_WIDTH}


def rule_label(rule: str, packets: float | None = None, detail: str = "") -> str:
    """A rule's legend entry: "RTT·C = 1,250 pkt", "RTT·C/√N = 125 pkt (N = 100)"; without
    a size, its name (a curve of sizes)."""
    name = RULES[rule].name
    size = "" if packets is None else f" = {packets:,.0f} pkt"
    return f"{name}{size}{f' ({detail})' if detail else ''}"


@dataclass(frozen=True)
class Mark:
    """A vertical reference line in x-axis units: a rule of thumb (`rule`, a key of RULES)
    or, without one, another reference drawn in a plain grey dash-dot-dot."""

    x: float
    label: str
    rule: str = ""


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


def use_log_x(xs: Sequence[float]) -> bool:
    """Positive values spanning more than a decade (buffers of 1 to 12,500 packets, access
    links of 20 Mb/s to 1 Gb/s) read best on a log axis: on a linear one all but the largest
    crowd at its left edge."""
    positive = [x for x in xs if x > 0]
    return len(positive) == len(xs) > 1 and max(positive) / min(positive) > 10


# Categorical points of several lines sit side by side around their tick, this far apart (in
# tick spacings), so their error bars do not hide one another.
_DODGE = 0.08


def sweep_figure(
    lines: Sequence[Line],
    x_label: str,
    log_x: bool,
    marks: Sequence[Mark],
    footer: str,
    title: str,
    x_ticks: Sequence[tuple[float, str]] | None = None,
    panels: tuple[MetricAxis, MetricAxis] = (
        MetricAxis("utilization (%)", 100, 102),
        MetricAxis("drop rate (%)", 100),
    ),
    x_unit: Unit = PLAIN,
    notes: Sequence[str] = (),
) -> Figure:
    """Two panels against x: `panels` say what the lines' top and bottom values are (by
    default utilization and drop rate). `x_ticks` (position, label) names categorical x
    values (a recipe's cases): their points are drawn apart, not joined by lines, since
    nothing lies between two cases. `x_unit` is the unit the x values (base units) are shown
    in; `notes` go under the legend (how to read the error bars, say)."""
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 8))
    categorical = bool(x_ticks)
    for k, line in enumerate(lines):
        shift = _DODGE * (k - (len(lines) - 1) / 2) if categorical else 0.0
        for axes, means, half_widths, panel in (
            (top, line.top, line.top_ci, panels[0]),
            (bottom, line.bottom, line.bottom_ci, panels[1]),
        ):
            axes.errorbar(
                [x + shift for x in line.x],
                [panel.scale * value for value in means],
                yerr=_bars(half_widths, panel.scale),
                marker="o",
                linestyle="none" if categorical else "-",
                capsize=3,
                color=f"C{k % 10}",
                label=line.label or None,
            )
    for axes, panel in ((top, panels[0]), (bottom, panels[1])):
        axes.set_ylabel(panel.label)
        axes.set_ylim(0, panel.y_max)
        plain_linear(axes.yaxis)
    bottom.set_xlabel(x_label)
    for axes in (top, bottom):
        if log_x:
            axes.set_xscale("log")
        axes.grid(True, which="major", alpha=0.3)
        draw_marks(axes, marks)
    if categorical:
        assert x_ticks is not None
        bottom.set_xticks([x for x, _ in x_ticks], [label for _, label in x_ticks])
        bottom.set_xlim(min(x for x, _ in x_ticks) - 0.5, max(x for x, _ in x_ticks) + 0.5)
    elif log_x:
        plain_log(bottom.xaxis, x_unit)
    else:
        plain_linear(bottom.xaxis, x_unit)
    top.set_title(title)
    handles, labels = top.get_legend_handles_labels()
    return finish(fig, footer, handles, labels, notes)


def draw_marks(axes: Axes, marks: Sequence[Mark]) -> None:
    """Vertical lines at the marks, each rule of thumb in its own style (`RULES`)."""
    for mark in marks:
        if mark.rule:
            style = rule_style(mark.rule)
        else:
            style = {"color": RULE_COLOUR, "linestyle": (0, (5, 2, 1, 2, 1, 2)), "linewidth": 1.2}
        axes.axvline(mark.x, label=mark.label, **style)


def _bars(half_widths: Sequence[float], scale: float) -> list[float] | None:
    bars = [0.0 if math.isnan(h) else scale * h for h in half_widths]
    return bars if any(bars) else None


def save(fig: Figure, out: Path, stem: str) -> list[Path]:
    """Write `stem`.png and `stem`.svg into `out`; returns the paths."""
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for path in paths:
        fig.savefig(path, dpi=SAVE_DPI)
    plt.close(fig)
    return paths


def __getattr__(name: str) -> Any:
    # Submodules load on first use (`buflab.plots.traces` right after `import buflab`).
    return submodule(__name__, name)


def __dir__() -> list[str]:
    return listing(__name__, globals())
