"""Figures of buffer searches (`buflab size`).

- `search_figure`: one search. Above, the utilization of each probe against its buffer, the
  target as a horizontal line, the rules of thumb as vertical lines and the answer marked.
  Below, on the same buffer axis, the probes in the order they ran: bisection closes in on
  the answer, so its last probes sit close together, and numbering them beside their points
  would pile the numbers up there; one row per probe keeps each apart.
- `curve_figure`: a search per value of a varied key (the course plot "minimum buffer vs
  number of flows"), the measured minimum beside RTT·C/√N, RTT·C and eq. 2.1. A value whose
  search found no buffer is drawn as a triangle at its largest probe, not left out.

Saved like the sweep figures (`plots.save`: PNG and SVG), with the footer of
`plots.footer_text` naming the scenario, the bottleneck, the traffic, the simulated time, the
seeds and the buflab version, the rules of thumb in the style of every figure
(`plots.RULES`), and notes saying what a point is, how precise the answer is and which rules
do not apply.

It draws a finished search and must not know how the search ran.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot, as in buflab.plots: figures are files, no display needed

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator, NullLocator  # noqa: E402

from buflab import __version__, plots  # noqa: E402
from buflab.engine.scenario import Scenario  # noqa: E402
from buflab.experiments.sizing import (  # noqa: E402
    RuleSizes,
    SizeCurve,
    Sizing,
    eq21_notes,
    precision_text,
    seeds_of,
)
from buflab.plots import labels  # noqa: E402
from buflab.plots.ticks import plain_linear, plain_log  # noqa: E402

SEARCH_STEM = "size"
CURVE_STEM = "size_curve"
NOT_FOUND = "no buffer found (up to the largest probe)"
_PASSED, _MISSED = "tab:green", "tab:red"


# --- one search --------------------------------------------------------------------------------


def search_figure(sizing: Sizing, footer: str, title: str, seeds: int = 1) -> Figure:
    """Utilization (%) of each probe against its buffer (packets), and below the probes in the
    order run; `seeds` per probe."""
    fig, (axes, order) = plt.subplots(
        2, 1, sharex=True, figsize=(8, 7), gridspec_kw={"height_ratios": [3, 1.4]}
    )
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
                color=_PASSED if passed else _MISSED,
                label=label,
            )
    axes.axhline(
        100 * sizing.target, color="black", linewidth=1, label=f"target {_pct(sizing.target)}"
    )
    notes = [plots.bars_note(seeds, "probe")]
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
        notes.append(f"Precision: {precision_text(sizing, advice=False)}.")
    _probe_order(order, sizing)
    xs = [float(p.buffer_pkts) for p in sizing.probes]
    if sizing.rules is not None:
        xs += _rule_marks(axes, order, sizing.rules)
        notes += eq21_notes([("", sizing.rules)])
    unit = labels.Unit("packets")
    if _spans_a_decade(xs):
        axes.set_xscale("log")
        plain_log(order.xaxis, unit)
    else:
        plain_linear(order.xaxis, unit)
    plain_linear(axes.yaxis)
    order.set_xlabel("buffer (packets)")
    axes.set_ylabel("utilization (%)")
    axes.set_title(title)
    for ax in (axes, order):
        ax.grid(True, which="major", alpha=0.3)
    handles, texts = axes.get_legend_handles_labels()
    return plots.finish(fig, footer, handles, texts, notes)


def _probe_order(axes: Axes, sizing: Sizing) -> None:
    """The probes in the order they ran: probe k at height k, joined in order, coloured as
    above (the search's path, from the first probe at the top)."""
    numbers = list(range(1, len(sizing.probes) + 1))
    buffers = [p.buffer_pkts for p in sizing.probes]
    axes.plot(buffers, numbers, color="0.6", linewidth=0.8, zorder=1)
    for k, probe in zip(numbers, sizing.probes, strict=True):
        axes.plot(
            probe.buffer_pkts,
            k,
            marker="o",
            markersize=4,
            color=_PASSED if probe.passed else _MISSED,
            markerfacecolor=None if probe.passed else "white",
            linestyle="none",
        )
    axes.set_ylim(len(numbers) + 0.7, 0.3)  # the first probe at the top
    axes.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    axes.set_ylabel("probe\n(order run)")


def _rule_marks(axes: Axes, order: Axes, rules: RuleSizes) -> list[float]:
    """Vertical lines at the rules' buffers, in both panels, in the style of every figure;
    returns their positions."""
    marks = [plots.Mark(rules.rtt_c, plots.rule_label("rtt_c", rules.rtt_c), "rtt_c")]
    if rules.rtt_c_sqrt_n is not None:
        label = plots.rule_label("sqrt_n", rules.rtt_c_sqrt_n, f"N = {rules.flows:,}")
        marks.append(plots.Mark(rules.rtt_c_sqrt_n, label, "sqrt_n"))
    if rules.eq21 is not None and rules.eq21 > 0:
        marks.append(plots.Mark(rules.eq21, plots.rule_label("eq21", rules.eq21), "eq21"))
    plots.draw_marks(axes, marks)
    plots.draw_marks(order, [plots.Mark(m.x, "", m.rule) for m in marks])
    return [m.x for m in marks]


# --- a search per value ------------------------------------------------------------------------


def curve_figure(
    curves: Sequence[SizeCurve], x_label: str, footer: str, title: str, seeds: int = 1
) -> Figure:
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
            if categorical:  # nothing lies between two names: points, not a line
                style["linestyle"] = "none"
            axes.plot(*zip(*pairs, strict=True), **style)
            drawn.extend(y for _, y in pairs)

    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for n, one in enumerate(curves):
        # Every series searched the same values in the same order (size_curves).
        sizings = [one.points[i].sizing for i in order]
        series = one.series
        name = labels.legend_label(*series) if series is not None else "measured"
        line(
            [float(s.buffer_pkts) if s.buffer_pkts is not None else None for s in sizings],
            marker="o",
            color=colors[n % len(colors)],
            linewidth=2,
            label=f"minimum buffer, {name}",
        )
        _draw_not_found(axes, x_sorted, sizings, drawn)
    line(
        [r.rtt_c_sqrt_n if r else None for r in rules],
        marker=".",
        label=plots.rule_label("sqrt_n"),
        **plots.rule_style("sqrt_n"),
    )
    bdps = {round(r.rtt_c, 6) for r in rules if r}
    if len(bdps) == 1:
        bdp = bdps.pop()
        axes.axhline(bdp, label=plots.rule_label("rtt_c", bdp), **plots.rule_style("rtt_c"))
        drawn.append(bdp)
    else:
        line(
            [r.rtt_c if r else None for r in rules],
            label=plots.rule_label("rtt_c"),
            **plots.rule_style("rtt_c"),
        )
    line(
        [r.eq21 if r and r.eq21 else None for r in rules],
        marker=".",
        label=plots.rule_label("eq21"),
        **plots.rule_style("eq21"),
    )
    notes = [
        f"Each minimum: bisection over probes of {seeds} seed{'s' if seeds > 1 else ''} each "
        "(the mean utilization of a probe's seeds against the target)."
    ]
    notes += eq21_notes(
        [
            (labels.legend_label(curve.key, curve.points[i].value), r)
            for i, r in zip(order, rules, strict=True)
        ]
    )
    unit = labels.Unit("")
    if not categorical:
        kinds = {plots.axis_value(value)[1] for value in values}
        unit = labels.unit_for(kinds.pop() if len(kinds) == 1 else None, xs)
    if not categorical and _spans_a_decade(xs):
        axes.set_xscale("log")
    # Ticks at the values searched: they are the experiment's points, and names need them.
    texts = [
        labels.value_text(v) if categorical else labels.number_text(x / unit.divisor)
        for v, x in zip(values, xs, strict=True)
    ]
    axes.set_xticks(xs, texts)
    axes.xaxis.set_minor_locator(NullLocator())
    if _spans_a_decade(drawn):
        axes.set_yscale("log")
        plain_log(axes.yaxis)
    else:
        axes.set_ylim(bottom=0)
        plain_linear(axes.yaxis)
    axes.set_xlabel(x_label if categorical else labels.axis_label(curve.key, unit))
    axes.set_ylabel("minimum buffer (packets)")
    axes.set_title(title)
    axes.grid(True, which="major", alpha=0.3)
    handles, legend = axes.get_legend_handles_labels()
    return plots.finish(fig, footer, handles, legend, notes)


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
        color=_MISSED,
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


def _bars(half_widths: Sequence[float]) -> list[float] | None:
    bars = [0.0 if math.isnan(h) else 100 * h for h in half_widths]
    return bars if any(bars) else None


def _spans_a_decade(values: Sequence[float]) -> bool:
    """More than a decade between positive values reads best on a log axis."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return len(positive) == len(values) and len(positive) > 1 and max(positive) > 10 * min(positive)


def _pct(fraction: float) -> str:
    """A target as a reader writes it: 95 %, 97.5 %."""
    return f"{100 * fraction:.4g} %"


# --- files -------------------------------------------------------------------------------------


def write_search_figure(
    sizing: Sizing, scenario: Scenario, runs: int, out: Path, label: str = ""
) -> list[Path]:
    """OUT/size.png and .svg for one search; `label` names a curve's value in the title."""
    name = str(scenario.get("name", "unnamed"))
    setting = plots.Setting.of([scenario])
    footer = plots.footer_text(name, seeds_of(scenario, runs), __version__, setting)
    title = "Utilization of each probe" + (f", {label}" if label else "")
    out.mkdir(parents=True, exist_ok=True)
    return plots.save(search_figure(sizing, footer, title, runs), out, SEARCH_STEM)


def write_curve_figure(
    curves: SizeCurve | Sequence[SizeCurve], scenario: Scenario, runs: int, out: Path
) -> list[Path]:
    """OUT/size_curve.png and .svg: one curve, or the series of `size_curves` overlaid."""
    curves = [curves] if isinstance(curves, SizeCurve) else list(curves)
    curve = curves[0]
    name = str(scenario.get("name", "unnamed"))
    x_label = labels.axis_label(curve.key, labels.Unit(""))
    searched = [point.scenario for one in curves for point in one.points]
    footer = plots.footer_text(
        name, seeds_of(scenario, runs), __version__, plots.Setting.of(searched)
    )
    title = f"Minimum buffer for {_pct(curve.target)} utilization"
    out.mkdir(parents=True, exist_ok=True)
    return plots.save(curve_figure(curves, x_label, footer, title, runs), out, CURVE_STEM)
