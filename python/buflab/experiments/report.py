"""A finished sweep as people read it: a table, a figure, theory marks.

The x axis is the first varied key; each combination of the other varied keys is one line
(a column group in the table). Used by `buflab sweep` and `buflab reproduce`.

It must not know the command line: the caller shows the progress (`progress`) and prints
the tables.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from rich.table import Table

from buflab import __version__, plots
from buflab.analysis import theory
from buflab.engine import core, scenario_json
from buflab.engine.scenario import Scenario, apply_overrides
from buflab.engine.units import format_rate, format_time, parse_rate
from buflab.experiments import traced
from buflab.experiments.execution import Executor
from buflab.experiments.recipes import DEFAULT_METRICS, Published, SweepHeader
from buflab.experiments.sweep import Plan, SweepOutcome, run_sweep
from buflab.plots import Line, Mark, labels

# Varied keys that change RTT·C or N, so one mark could not stand for every line.
_CHANGES_BDP = ("network.bottleneck.rate", "network.rtt", "traffic")


@dataclass
class SweepView:
    """The summary table arranged for display: x values and one group per line."""

    plan: Plan
    header: SweepHeader
    summary: pd.DataFrame

    @property
    def x_key(self) -> str:
        return self.plan.keys[0]

    @property
    def line_keys(self) -> list[str]:
        return self.plan.keys[1:]

    def x_kind(self) -> str | None:
        kinds = {plots.axis_value(v)[1] for v in self.plan.varies[0].values}
        return kinds.pop() if len(kinds) == 1 else None

    def is_categorical(self) -> bool:
        """x values that are not numbers or quantities (case names) sit at 0, 1, 2, …"""
        return any(math.isnan(plots.axis_value(v)[0]) for v in self.plan.varies[0].values)

    def x_position(self, value: Any) -> float:
        if self.is_categorical():
            return float(list(self.plan.varies[0].values).index(value))
        return plots.axis_value(value)[0]

    def groups(
        self, label: Callable[[str, Any], str] | None = None
    ) -> list[tuple[str, pd.DataFrame]]:
        """(label, rows sorted by x) for each combination of the non-x varied keys; `label`
        names a value of a key (by default the header's `label`, as tables show it)."""
        label = label or self.header.label
        frame = self.summary.assign(_x=[self.x_position(v) for v in self.summary[self.x_key]])
        if not self.line_keys:
            return [("", frame.sort_values("_x"))]
        result = []
        for values, rows in frame.groupby(self.line_keys, sort=False):
            values = values if isinstance(values, tuple) else (values,)
            text = ", ".join(
                label(key, value) for key, value in zip(self.line_keys, values, strict=True)
            )
            result.append((text, rows.sort_values("_x")))
        return result

    def figure_label(self, key: str, value: Any) -> str:
        """A varied value in a figure's legend: the recipe's label, a case's name, else the
        key and value in words ("access 1 Gb/s", "400 flows")."""
        recipe = self.header.labels.get(key, {}).get(str(value))
        if recipe is not None:
            return recipe
        if any(vary.key == key and vary.cases is not None for vary in self.plan.varies):
            return str(value)
        return labels.legend_label(key, value)

    def tick_label(self, value: Any) -> str:
        """A categorical x value at its tick: the recipe's label, else the value in words (the
        axis names the key)."""
        recipe = self.header.labels.get(self.x_key, {}).get(str(value))
        return recipe if recipe is not None else labels.value_text(value)

    def drop_metric(self) -> str:
        """The drop rate to plot: the first the header names, so a VOQ recipe, whose losses
        are at the inputs, shows `input_drop_rate` and not the output's zero."""
        named = [m for m in self.header.metrics if m in DROP_METRICS]
        return next((m for m in named if f"{m}_mean" in self.summary), "drop_rate")

    def panel_metrics(self) -> tuple[str, str]:
        """The metrics of the figure's two panels: the header's `plot`, or utilization and
        the drop rate."""
        return self.header.plot or ("utilization", self.drop_metric())

    def lines(self) -> list[Line]:
        """The figure's curves, one per group, labelled in words (`figure_label`)."""
        top, bottom = self.panel_metrics()
        return [
            Line(
                label=label,
                x=rows["_x"].tolist(),
                top=rows[f"{top}_mean"].tolist(),
                top_ci=rows[f"{top}_ci95"].tolist(),
                bottom=rows[f"{bottom}_mean"].tolist(),
                bottom_ci=rows[f"{bottom}_ci95"].tolist(),
            )
            for label, rows in self.groups(self.figure_label)
        ]

    def panel(self, metric: str) -> plots.MetricAxis:
        """The axis a metric is drawn on (`labels.metric_axis`): in words, fractions in
        percent, times and rates in the unit their largest mean reads best in."""
        column = f"{metric}_mean"
        values = self.summary[column].tolist() if column in self.summary else []
        return labels.metric_axis(metric, values)

    def table(self, title: str) -> Table:
        """Rows: x values; per line: the header's metrics (utilization and drop rate unless
        it names others), ± 95 % CI with several seeds."""
        groups = self.groups()
        metrics = self.header.metrics
        if len(metrics) > len(DEFAULT_METRICS) and self.line_keys:
            return self._long_table(title, groups, metrics)
        table = Table(title=title)
        table.add_column(self.x_key.rsplit(".", 1)[-1], justify="right", no_wrap=True)
        for label, _ in groups:
            prefix = f"{label}\n" if label else ""
            for metric in metrics:
                table.add_column(f"{prefix}{metric_label(metric)}", justify="right")
        x_values = list(self.plan.varies[0].values)
        for x in x_values:
            cells = [str(x)]
            for _, rows in groups:
                row = rows[rows[self.x_key] == x]
                cells += ["–" if row.empty else _cell(row, metric) for metric in metrics]
            table.add_row(*cells)
        return table

    def _long_table(
        self, title: str, groups: list[tuple[str, pd.DataFrame]], metrics: tuple[str, ...]
    ) -> Table:
        """One row per x value and line, one column per metric: many metrics across many lines
        would not fit a terminal side by side."""
        table = Table(title=title)
        table.add_column(self.x_key.rsplit(".", 1)[-1], justify="right", no_wrap=True)
        table.add_column("", no_wrap=True)
        for metric in metrics:
            table.add_column(metric_label(metric), justify="right")
        for x in self.plan.varies[0].values:
            for label, rows in groups:
                row = rows[rows[self.x_key] == x]
                cells = ["–" if row.empty else _cell(row, metric) for metric in metrics]
                table.add_row(str(x), label, *cells)
        return table


def metric_label(metric: str) -> str:
    return metric.removesuffix("_s").removesuffix("_bps").removesuffix("_pkts").replace("_", " ")


def format_metric(metric: str, value: float, digits: int | None = None) -> str:
    """A summary metric in its own unit: fractions as percent, times, rates, packets;
    `digits` significant digits for fractions (default: two decimals of a percent)."""
    if math.isnan(value):
        return "–"
    if metric.endswith("_s"):
        return format_time(value)
    if metric.endswith("_bps"):
        return format_rate(value)
    if metric in _FRACTIONS or metric.endswith("_fraction"):
        if digits is not None:
            return f"{100 * value:.{digits}g} %"
        return f"{100 * value:.3g} %" if abs(value) < 0.01 else f"{100 * value:.2f} %"
    if float(value).is_integer():
        return f"{value:,.0f}"  # a count
    return f"{value:,.4g}"


# Loss rates a sweep figure's lower panel can show: at the output line or at the VOQs.
DROP_METRICS = ("drop_rate", "input_drop_rate")

_FRACTIONS = (
    "utilization",
    "drop_rate",
    "input_drop_rate",
    "mark_rate",
    "iat_faster_than_line",
    "jain_fairness",
)


def _cell(row: pd.DataFrame, metric: str) -> str:
    if f"{metric}_mean" not in row:
        return "–"
    mean = float(row[f"{metric}_mean"].iloc[0])
    half_width = float(row[f"{metric}_ci95"].iloc[0])
    if math.isnan(half_width):
        return format_metric(metric, mean)
    return f"{format_metric(metric, mean)} ±{format_metric(metric, half_width)}"


@dataclass(frozen=True)
class Comparison:
    """A published number beside buflab's mean at the same point."""

    published: Published
    measured: float  # nan when the point has not run
    ci95: float

    @property
    def verdict(self) -> str:
        if math.isnan(self.measured):
            return "not run"
        entry = self.published
        difference = self.measured - entry.value
        if entry.relation in ("<", ">"):
            # A claim without a number holds when the whole 95 % interval is on its side.
            sign = 1 if entry.relation == ">" else -1
            margin = 0.0 if math.isnan(self.ci95) else self.ci95
            if sign * difference > margin:
                return "agrees"
            return "disagrees" if sign * difference < -margin else "within noise"
        if abs(difference) <= entry.band:
            return "agrees"
        return "above" if difference > 0 else "below"


def compare_published(view: SweepView) -> list[Comparison]:
    """Each of the header's published numbers with buflab's mean at its point."""
    comparisons = []
    for entry in view.header.published:
        mean, ci = _point_mean(view, entry.point, entry.metric)
        if entry.relative_to is not None:
            base_mean, base_ci = _point_mean(view, entry.relative_to, entry.metric)
            # Independent seeds per point would add variances; common seeds make this an upper
            # bound, which is the cautious side for a printed interval.
            mean, ci = mean - base_mean, math.hypot(ci, base_ci)
        comparisons.append(Comparison(entry, mean, ci))
    return comparisons


def _point_mean(view: SweepView, point: dict[str, Any], metric: str) -> tuple[float, float]:
    """Mean and CI half-width of `metric` at a point of the sweep; nan if it has not run."""
    rows = view.summary  # the point's keys are varied ones: checked when the recipe is read
    for key, value in point.items():
        rows = rows[rows[key].astype(str) == str(value)] if len(rows) else rows
    column = f"{metric}_mean"
    if len(rows) == 0 or column not in rows:
        return math.nan, math.nan
    if len(rows) > 1:
        raise KeyError(f"published point {point} matches {len(rows)} sweep points")
    return float(rows[column].iloc[0]), float(rows[f"{metric}_ci95"].iloc[0])


def comparison_table(comparisons: list[Comparison], title: str) -> Table:
    table = Table(title=title)
    for name in ("point", "metric", "published", "buflab", "", "source"):
        table.add_column(name, justify="right" if name in ("published", "buflab") else "left")
    for c in comparisons:
        point, published, measured = comparison_cells(c)
        table.add_row(
            point,
            metric_label(c.published.metric),
            published,
            measured,
            c.verdict,
            c.published.source,
        )
    return table


def comparison_cells(c: Comparison) -> tuple[str, str, str]:
    """A comparison in words: its point (values, "minus" the other point's), the published
    number with its band or relation, and buflab's mean ± its 95 % interval."""
    entry = c.published
    point = ", ".join(f"{value}" for value in entry.point.values())
    if entry.relative_to is not None:
        point += " minus " + ", ".join(f"{value}" for value in entry.relative_to.values())
    measured = format_metric(entry.metric, c.measured, 3)
    if not math.isnan(c.ci95):
        measured += f" ± {format_metric(entry.metric, c.ci95, 2)}"
    published = format_metric(entry.metric, entry.value, 3)
    if entry.relation == "≈":
        published += f" ± {format_metric(entry.metric, entry.band, 2)}"
    else:
        published = f"{entry.relation} {published}"
    return point, published, measured


def comparison_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    """The comparison as rows for `published.csv`."""
    return pd.DataFrame(
        [
            {
                **{f"point.{k}": v for k, v in c.published.point.items()},
                "relative_to": json.dumps(c.published.relative_to)
                if c.published.relative_to
                else "",
                "metric": c.published.metric,
                "relation": c.published.relation,
                "published": c.published.value,
                "band": c.published.band,
                "buflab_mean": c.measured,
                "buflab_ci95": c.ci95,
                "verdict": c.verdict,
                "source": c.published.source,
            }
            for c in comparisons
        ]
    )


def theory_marks(view: SweepView, base: Scenario) -> list[Mark]:
    """RTT·C, RTT·C/√N and (with [sweep.theory]) eq. 2.1, when the x axis is a buffer size."""
    kind = view.x_kind()
    if view.x_key.rsplit(".", 1)[-1] != "buffer" or kind not in ("packets", "bytes"):
        return []
    normalised = core().validate(scenario_json(base))
    facts = theory.LinkFacts.from_scenario(normalised)
    scale = facts.packet_bytes if kind == "bytes" else 1.0
    marks = []
    if not any(key.startswith(_CHANGES_BDP) for key in view.line_keys):
        bdp = theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes)
        marks.append(Mark(bdp * scale, plots.rule_label("rtt_c", bdp), "rtt_c"))
        if facts.flows > 1:
            small = bdp / math.sqrt(facts.flows)
            label = plots.rule_label("sqrt_n", small, f"N = {facts.flows:,}")
            marks.append(Mark(small * scale, label, "sqrt_n"))
    settings = view.header.theory
    if settings is not None:
        wmax = _slowest_access_facts(view.plan, normalised).wmax_pkts
        tiny = theory.tiny_buffer_for_utilization(wmax, settings.load, settings.utilization)
        detail = f"W = {wmax:,.0f}, ρ = {settings.load:g}, θρ = {settings.utilization:g}"
        marks.append(Mark(tiny * scale, plots.rule_label("eq21", tiny, detail), "eq21"))
    return marks


def _slowest_access_facts(plan: Plan, normalised: Scenario) -> theory.LinkFacts:
    """Eq. 2.1 is about slow access links: when the access rate is swept, use the slowest."""
    for vary in plan.varies:
        if vary.key == "network.access.rate":
            slowest = min(vary.values, key=parse_rate)
            return theory.LinkFacts.from_scenario(apply_overrides(normalised, {vary.key: slowest}))
    return theory.LinkFacts.from_scenario(normalised)


def write_figure(
    view: SweepView,
    marks: list[Mark],
    out: Path,
    stem: str,
    title: str,
    version: str,
    emulated: bool = False,
) -> list[Path]:
    """OUT/`stem`.png and .svg: the sweep's two panels against its first varied key, in
    words and units, the error bars explained and the footer naming the runs' setting
    (`emulated`: on real TCP)."""
    values = view.plan.varies[0].values
    xs = [view.x_position(v) for v in values]
    kind = view.x_kind()
    unit = plots.Unit("") if view.is_categorical() else labels.unit_for(kind, xs)
    x_label = labels.axis_label(view.x_key, unit)
    ticks = None
    if view.is_categorical():
        ticks = [(x, view.tick_label(value)) for x, value in zip(xs, values, strict=True)]
    log_x = ticks is None and plots.use_log_x(xs)
    top, bottom = view.panel_metrics()
    panels = (view.panel(top), view.panel(bottom))
    notes = [plots.bars_note(view.plan.runs_per_point)]
    fig = plots.sweep_figure(
        view.lines(),
        x_label,
        log_x,
        marks,
        sweep_footer(view.plan, version, emulated),
        title,
        ticks,
        panels,
        unit,
        notes,
    )
    return plots.save(fig, out, stem)


def sweep_footer(plan: Plan, version: str, emulated: bool = False) -> str:
    """The footer of a sweep's figures: its scenario, the setting over all its points (a
    swept rate reads as its range, `emulated` runs as on real TCP), its seeds and the
    version."""
    first_seed = {}  # one run per point: the seeds change no setting
    for run in plan.runs:
        first_seed.setdefault(tuple(map(str, run.point.values())), run.scenario)
    setting = plots.Setting.of(first_seed.values(), emulated)
    name = str(plan.base.get("name", "unnamed"))
    return plots.footer_text(name, plan.seeds(), version, setting)


def point_value(view: SweepView, line_label: str, x: Any, metric: str) -> float:
    """The mean of `metric` at x on the line with this label (nan if that run is missing)."""
    for label, rows in view.groups():
        if label == line_label:
            row = rows[rows[view.x_key] == x]
            return float(row[f"{metric}_mean"].iloc[0]) if not row.empty else math.nan
    raise KeyError(line_label)


@dataclass
class SweepReport:
    """A finished sweep with its table view, theory marks and figure files."""

    outcome: SweepOutcome
    view: SweepView
    marks: list[Mark]
    figures: list[Path]


# How a caller shows a sweep's progress: given a description, a context that yields the
# `on_progress(done, total, seconds_left)` of `run_sweep` (the command line's progress bar)
# or None.
Progress = Callable[[str], AbstractContextManager[Callable[..., None] | None]]


def run_and_report(
    plan: Plan,
    header: SweepHeader,
    out: Path,
    jobs: int | None,
    stem: str,
    title: str,
    progress: Progress | None = None,
    executor: Executor | str | None = None,
    command: str = "sweep",
) -> SweepReport:
    """Run the plan on `executor` (`run_sweep`'s: None for the process pool of `jobs`), its
    progress shown by `progress` (nothing shown without), then draw `stem`.png/.svg in OUT,
    and with a scenario that traces flows their figures (`traced`: one more run per point,
    STEM_traces.png; not for the emulator's runs, whose traces would be simulated ones).

    Raises SweepInterrupted on Ctrl-C (finished runs and the CSV tables are kept)."""
    with (progress or unshown)(f"{stem}: {len(plan.runs)} runs") as update:
        outcome = run_sweep(plan, out, jobs, update, executor=executor, command=command)
    view = SweepView(plan, header, outcome.summary)
    marks = theory_marks(view, plan.base)
    # An executor of another engine than the simulator: the emulator's runs on real TCP.
    emulated = isinstance(executor, Executor) and executor.engine is not None
    figures = write_figure(view, marks, out, stem, title, __version__, emulated)
    # (The traces of an emulated sweep would be a simulation's: its figures stay the sweep's.)
    if traced.traces_wanted(view) and not emulated:
        # A scenario that traces flows promises their figures (P1, P2): one run per point.
        points = len(traced.first_runs(view))
        with (progress or unshown)(f"{stem}: traces, {points} runs") as update:
            kept = traced.run_traced(view, out, update)
        figures += traced.draw_traces(view, kept, out, stem, title, __version__)
    return SweepReport(outcome, view, marks, figures)


def unshown(description: str) -> AbstractContextManager[None]:
    return nullcontext()
