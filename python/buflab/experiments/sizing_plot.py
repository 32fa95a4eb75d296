"""Figures of buffer searches (`buflab size`).

- `search_figure`: one search, the utilization of each probe against its buffer, the target
  as a horizontal line, the rules of thumb as vertical lines and the answer marked.
- `curve_figure`: a search per value of a varied key (the course plot "minimum buffer vs
  number of flows"), the measured minimum beside RTT·C/√N, RTT·C and eq. 2.1. A value whose
  search found no buffer is drawn as a triangle at its largest probe, not left out.

Saved like the sweep figures (`plots.save`: PNG and SVG), with the footer of `plots.footer_text`
naming the scenario, the seeds and the buflab version. Rules that do not apply are said so in
a note under the axes rather than drawn.

It draws a finished search and must not know how the search ran.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot, as in buflab.plots: figures are files, no display needed

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import LogFormatter, NullLocator  # noqa: E402

from buflab import __version__, plots  # noqa: E402
from buflab.engine.scenario import Scenario  # noqa: E402
from buflab.engine.units import format_percent  # noqa: E402
from buflab.experiments.sizing import RuleSizes, SizeCurve, Sizing, eq21_notes, seeds_of  # noqa: E402

SEARCH_STEM = "size"
CURVE_STEM = "size_curve"
# Dash patterns tell the theory lines apart without colour (as in the sweep figures).
RTT_C_STYLE = ":"
SQRT_N_STYLE = "--"
EQ21_STYLE = "-."
NOT_FOUND = "no buffer found (up to the largest probe)"


# --- one search --------------------------------------------------------------------------------


def search_figure(sizing: Sizing, footer: str, title: str) -> Figure:
    """Utilization (%) of each probe against its buffer (packets), numbered in the order run."""
    fig, axes = plt.subplots(figsize=(8, 5.5))
    for passed, label, face in ((True, "meets the target", None), (False, "misses it", "white")):
        probes = [p for p in sizing.probes if p.passed == passed]
        if probes:
            axes.errorbar(
                [p.buffer_pkts for p in probes],
                [100 * p.utilization for p in probes],
                yerr=_bars([p.ci95 for p in probes]),
                marker="o",
                markerfacecolor=face,
                linestyle="none",
                capsize=3,
                color="tab:green" if passed else "tab:red",
                label=label,
            )
    for order, probe in enumerate(sizing.probes, start=1):
        axes.annotate(
            str(order),
            (probe.buffer_pkts, 100 * probe.utilization),
            textcoords="offset points",
            xytext=(5, 5),
            fontsize=7,
            color="dimgray",
        )
    axes.axhline(
        100 * sizing.target, color="black", linewidth=1, label=f"target {_pct(sizing.target)}"
    )
    notes = []
    if sizing.buffer_pkts is None:
        notes.append(f"No buffer up to {sizing.largest_probe:,} pkt meets the target.")
    else:
        answer = next(p for p in sizing.probes if p.buffer_pkts == sizing.buffer_pkts)
        axes.plot(
            answer.buffer_pkts,
            100 * answer.utilization,
            marker="*",
            markersize=16,
            color="gold",
            markeredgecolor="black",
            linestyle="none",
            zorder=5,  # above the probe's own marker
            label=f"minimum buffer {answer.buffer_pkts:,} pkt",
        )
    xs = [float(p.buffer_pkts) for p in sizing.probes]
    if sizing.rules is not None:
        xs += _rule_marks(axes, sizing.rules)
        notes += eq21_notes([("", sizing.rules)])
    if _spans_a_decade(xs):
        _log(axes, "x")
    axes.set_xlabel("buffer (packets)")
    axes.set_ylabel("utilization (%)")
    axes.set_title(title)
    return _finish(fig, axes, footer, notes)


def _rule_marks(axes: Axes, rules: RuleSizes) -> list[float]:
    """Vertical lines at the rules' buffers; returns their positions."""
    marks = [(rules.rtt_c, f"RTT·C = {rules.rtt_c:,.0f} pkt", RTT_C_STYLE)]
    if rules.rtt_c_sqrt_n is not None:
        label = f"RTT·C/√N = {rules.rtt_c_sqrt_n:,.0f} pkt (N = {rules.flows:,})"
        marks.append((rules.rtt_c_sqrt_n, label, SQRT_N_STYLE))
    if rules.eq21 is not None and rules.eq21 > 0:
        marks.append((rules.eq21, f"eq. 2.1 = {rules.eq21:,.0f} pkt", EQ21_STYLE))
    for x, label, style in marks:
        axes.axvline(x, color="dimgray", linestyle=style, linewidth=1.2, label=label)
    return [x for x, _, _ in marks]


# --- a search per value ------------------------------------------------------------------------


def curve_figure(curves: Sequence[SizeCurve], x_label: str, footer: str, title: str) -> Figure:
    """Minimum buffer (packets) against the varied value, one line per curve (the series of
    `size_curves`, e.g. paced and unpaced), with the rules of thumb of the first."""
    fig, axes = plt.subplots(figsize=(8, 5.5))
    curve = curves[0]
    values = [point.value for point in curve.points]
    xs = [plots.axis_value(value)[0] for value in values]
    categorical = any(math.isnan(x) for x in xs)
    if categorical:  # names (e.g. tcp = reno, cubic) sit at 0, 1, 2, …
        xs = [float(i) for i in range(len(values))]
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    rules = [curve.points[i].sizing.rules for i in order]
    x_sorted = [xs[i] for i in order]
    drawn: list[float] = []

    def line(ys: Sequence[float | None], **style: Any) -> None:
        pairs = [(x, y) for x, y in zip(x_sorted, ys, strict=True) if y is not None]
        if pairs:
            axes.plot(*zip(*pairs, strict=True), **style)
            drawn.extend(y for _, y in pairs)

    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for n, one in enumerate(curves):
        # Every series searched the same values in the same order (size_curves).
        sizings = [one.points[i].sizing for i in order]
        line(
            [float(s.buffer_pkts) if s.buffer_pkts is not None else None for s in sizings],
            marker="o",
            color=colors[n % len(colors)],
            linewidth=2,
            label=f"minimum buffer, {one.label}" if one.label else "minimum buffer (measured)",
        )
        _draw_not_found(axes, x_sorted, sizings, drawn)
    line(
        [r.rtt_c_sqrt_n if r else None for r in rules],
        color="dimgray",
        linestyle=SQRT_N_STYLE,
        marker=".",
        label="RTT·C/√N",
    )
    bdps = {round(r.rtt_c, 6) for r in rules if r}
    if len(bdps) == 1:
        bdp = bdps.pop()
        axes.axhline(bdp, color="dimgray", linestyle=RTT_C_STYLE, label=f"RTT·C = {bdp:,.0f} pkt")
        drawn.append(bdp)
    else:
        line(
            [r.rtt_c if r else None for r in rules],
            color="dimgray",
            linestyle=RTT_C_STYLE,
            label="RTT·C",
        )
    line(
        [r.eq21 if r and r.eq21 else None for r in rules],
        color="tab:purple",
        linestyle=EQ21_STYLE,
        marker=".",
        label="eq. 2.1",
    )
    notes = eq21_notes(
        [(f"{curve.key} = {curve.points[i].value}", r) for i, r in zip(order, rules, strict=True)]
    )
    if not categorical and _spans_a_decade(xs):
        _log(axes, "x")
    # Ticks at the values searched: they are the experiment's points, and names need them.
    axes.set_xticks(xs, [str(v) for v in values])
    axes.xaxis.set_minor_locator(NullLocator())
    if _spans_a_decade(drawn):
        _log(axes, "y")
    else:
        axes.set_ylim(bottom=0)
    axes.set_xlabel(x_label)
    axes.set_ylabel("minimum buffer (packets)")
    axes.set_title(title)
    return _finish(fig, axes, footer, notes)


def _draw_not_found(
    axes: Axes, xs: Sequence[float], sizings: Sequence[Sizing], drawn: list[float]
) -> None:
    """Searches that found no buffer: a triangle at the largest buffer probed, labelled."""
    missing = [
        (x, s.largest_probe) for x, s in zip(xs, sizings, strict=True) if s.buffer_pkts is None
    ]
    if not missing:
        return
    axes.plot(
        [x for x, _ in missing],
        [y for _, y in missing],
        marker="^",
        markersize=10,
        color="tab:red",
        linestyle="none",
        # One legend entry for the triangles of every series.
        label="_" + NOT_FOUND if NOT_FOUND in axes.get_legend_handles_labels()[1] else NOT_FOUND,
    )
    for x, y in missing:
        axes.annotate(
            f"> {y:,} pkt", (x, y), textcoords="offset points", xytext=(6, -3), fontsize=8
        )
    drawn.extend(float(y) for _, y in missing)


# --- shared ------------------------------------------------------------------------------------


def _finish(fig: Figure, axes: Axes, footer: str, notes: Sequence[str]) -> Figure:
    """Grid, then the legend and notes below the axes (where they hide no data), the footer."""
    axes.grid(True, which="major", alpha=0.3)
    handles, labels = axes.get_legend_handles_labels()
    lines = [wrapped for note in notes for wrapped in textwrap.wrap(note, 110)]
    legend_rows = math.ceil(len(handles) / 2)
    bottom = 0.03 + 0.028 * len(lines)
    if lines:
        fig.text(0.01, 0.03, "\n".join(lines), fontsize=7.5, va="bottom")
    plots.legend_below(fig, handles, labels, bottom)
    plots.add_footer(fig, footer)
    fig.tight_layout(rect=(0, bottom + 0.045 * legend_rows + 0.01, 1, 1))
    return fig


def _bars(half_widths: Sequence[float]) -> list[float] | None:
    bars = [0.0 if math.isnan(h) else 100 * h for h in half_widths]
    return bars if any(bars) else None


def _spans_a_decade(values: Sequence[float]) -> bool:
    """More than a decade between positive values reads best on a log axis."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return len(positive) == len(values) and len(positive) > 1 and max(positive) > 10 * min(positive)


def _log(axes: Axes, which: str) -> None:
    (axes.set_xscale if which == "x" else axes.set_yscale)("log")
    axis = axes.xaxis if which == "x" else axes.yaxis
    # Plain numbers (400, 1000, 2000) read better than 4×10²; minor ticks are labelled only
    # where the axis spans few decades, as matplotlib's own log formatter decides.
    plain = LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5))
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain)


def _pct(fraction: float) -> str:
    return format_percent(fraction).replace(" %", "%")


# --- files -------------------------------------------------------------------------------------


def write_search_figure(
    sizing: Sizing, scenario: Scenario, runs: int, out: Path, label: str = ""
) -> list[Path]:
    """OUT/size.png and .svg for one search; `label` names a curve's value in the footer."""
    name = str(scenario.get("name", "unnamed"))
    footer = plots.footer_text(
        f"{name}, {label}" if label else name, seeds_of(scenario, runs), __version__
    )
    title = f"{name}: utilization of each probe" + (f", {label}" if label else "")
    out.mkdir(parents=True, exist_ok=True)
    return plots.save(search_figure(sizing, footer, title), out, SEARCH_STEM)


def write_curve_figure(
    curves: SizeCurve | Sequence[SizeCurve], scenario: Scenario, runs: int, out: Path
) -> list[Path]:
    """OUT/size_curve.png and .svg: one curve, or the series of `size_curves` overlaid."""
    curves = [curves] if isinstance(curves, SizeCurve) else list(curves)
    curve = curves[0]
    name = str(scenario.get("name", "unnamed"))
    kinds = {plots.axis_value(point.value)[1] for point in curve.points}
    unit = plots.AXIS_UNITS.get(kinds.pop() or "", "") if len(kinds) == 1 else ""
    x_label = f"{curve.key} ({unit})" if unit else curve.key
    footer = plots.footer_text(name, seeds_of(scenario, runs), __version__)
    title = f"{name}: minimum buffer for {_pct(curve.target)} utilization"
    out.mkdir(parents=True, exist_ok=True)
    return plots.save(curve_figure(curves, x_label, footer, title), out, CURVE_STEM)
