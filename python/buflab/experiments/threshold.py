"""A sweep read as a threshold: per line, the smallest swept x whose mean metric reaches a
target — the y axis of figures like thesis Fig 3.4 ("minimum buffer for 80 % utilization vs
switch size"). A recipe asks for it with `[sweep.threshold]` (see `buflab.experiments.recipes`).

The minimum is the smallest x *that ran*: the grid's resolution is the answer's, and a line
that never reaches the target has none (its largest x is printed as a lower bound).
`buflab size` searches one line finely instead.

It reads a finished sweep and must not know how the sweep ran.
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator
from rich.table import Table

from buflab import plots
from buflab.analysis import theory
from buflab.engine import core, scenario_json
from buflab.engine.files import write_atomically
from buflab.engine.scenario import Scenario
from buflab.experiments.recipes import short_key
from buflab.experiments.report import SweepView, format_metric, metric_label, sweep_footer
from buflab.plots import labels
from buflab.plots.ticks import plain_linear


def threshold_frame(view: SweepView) -> pd.DataFrame | None:
    """One row per line: its varied values, `minimum` (the x value as swept; missing, nan in
    pandas, when no run reached the target), the metric there, `largest_run` (the largest x
    that ran), and with `times` the minimum's number (packets for "10pkt") times the line's
    value of that key; with `sqrt_n`, `rtt_c_sqrt_n_pkts`, the line's RTT·C/√N in packets."""
    threshold = view.header.threshold
    if threshold is None:
        return None
    column = f"{threshold.metric}_mean"
    rows = []
    for _, group in view.groups():
        # Column by column: a row of mixed columns would turn the integers into floats.
        row = {key: group[key].iloc[0] for key in view.line_keys}
        ran = group.dropna(subset=[column]) if column in group else group.iloc[0:0]
        reached = ran[ran[column] >= threshold.target]
        found = len(reached) > 0
        row["minimum"] = reached[view.x_key].iloc[0] if found else None
        row[threshold.metric] = float(reached[column].iloc[0]) if found else math.nan
        row["largest_run"] = ran[view.x_key].iloc[-1] if len(ran) else None
        if threshold.times is not None:
            times = float(group[threshold.times].iloc[0])
            product = float(reached["_x"].iloc[0]) * times if found else math.nan
            row[f"minimum_times_{short_key(threshold.times)}"] = product
        if threshold.sqrt_n:
            row[SQRT_N] = _sqrt_n_rule(_line_scenario(view, row))
        rows.append(row)
    frame = pd.DataFrame(rows)
    for key in ("minimum", "largest_run"):  # as swept: [4, None] would become [4.0, nan]
        frame[key] = pd.Series([row[key] for row in rows], dtype=object)
    return frame


SQRT_N = "rtt_c_sqrt_n_pkts"


def _line_scenario(view: SweepView, line: dict) -> Scenario:
    """The scenario of a line's first run (the rule depends on the line's keys only)."""
    keys = view.line_keys
    for run in view.plan.runs:
        if all(str(run.point[key]) == str(line[key]) for key in keys):
            return run.scenario
    raise LookupError(f"no run of the sweep has {line}")


def _sqrt_n_rule(scenario: Scenario) -> float:
    """RTT·C/√N in packets at the scenario's bottleneck (`theory.LinkFacts`: its rate, mean
    RTT, data packet size and long-lived flow count); nan without flows."""
    facts = theory.LinkFacts.from_scenario(core().validate(scenario_json(scenario)))
    if facts.flows <= 0:
        return math.nan
    return theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes) / math.sqrt(
        facts.flows
    )


def write_thresholds(
    view: SweepView, out: Path, stem: str, version: str
) -> tuple[pd.DataFrame | None, list[Path]]:
    """The threshold frame, also written to OUT/threshold.csv, and with one numeric line key
    the figure OUT/`stem`_threshold.png/svg; (None, []) without a threshold."""
    frame = threshold_frame(view)
    if frame is None:
        return None, []
    write_atomically(out / "threshold.csv", partial(frame.to_csv, index=False))
    if not view.line_keys or not all(map(_is_number, frame[view.line_keys[0]])):
        return frame, []
    return frame, plots.save(threshold_figure(view, frame, version), out, f"{stem}_threshold")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool)


def threshold_figure(view: SweepView, frame: pd.DataFrame, version: str) -> Figure:
    """The minimum against the first line key (Fig 3.4's axes), one series per combination
    of the other line keys (paced and unpaced), and with `times` the product; a line that
    never reached the target is a hollow marker at its largest x, "more than"; with
    `sqrt_n`, RTT·C/√N of each line as a dashed rule."""
    threshold = view.header.threshold
    assert threshold is not None
    line_key, *series_keys = view.line_keys
    fig, axes = plt.subplots(figsize=(8, 5.5))
    x_words = labels.key_words(view.x_key).axis
    kinds = {plots.axis_value(v)[1] for v in view.plan.varies[0].values}
    x_unit = labels.unit_for(kinds.pop() if len(kinds) == 1 else None, [1.0])
    columns = [("minimum", f"smallest {x_words}", "o")]
    if threshold.times is not None:
        product = f"minimum_times_{short_key(threshold.times)}"
        times_words = labels.key_words(threshold.times).axis
        columns.append((product, f"{x_words} × {times_words}", "s"))
    parts = frame.groupby(series_keys, sort=False) if series_keys else [((), frame)]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    drawn = 0
    for values, part in parts:
        values = values if isinstance(values, tuple) else (values,)
        name = ", ".join(
            view.figure_label(key, value) for key, value in zip(series_keys, values, strict=True)
        )
        found = part.dropna(subset=["minimum"])
        missing = part[part["minimum"].isna() & part["largest_run"].notna()]
        for column, label, marker in columns:
            color = colors[drawn % len(colors)]
            drawn += 1
            ys = [plots.axis_value(y)[0] for y in found[column]]
            # With series the legend names them (the y axis says what is drawn), else the column.
            text = name if name and column == "minimum" else f"{label}, {name}" if name else label
            axes.plot(found[line_key], ys, marker=marker, linewidth=2, color=color, label=text)
            if len(missing) and column == "minimum":
                axes.plot(
                    missing[line_key],
                    [plots.axis_value(y)[0] for y in missing["largest_run"]],
                    linestyle="none",
                    marker="^",
                    markersize=9,
                    markerfacecolor="none",
                    color=color,
                    label=f"{name + ': ' if name else ''}not reached at the largest {x_words}",
                )
    if threshold.sqrt_n:
        rule = frame.drop_duplicates(subset=[line_key]).sort_values(line_key)
        axes.plot(
            rule[line_key],
            rule[SQRT_N],
            marker=".",
            label=plots.rule_label("sqrt_n"),
            **plots.rule_style("sqrt_n"),
        )
    xs = sorted({float(x) for x in frame[line_key]})
    if min(xs) > 0 and max(xs) / min(xs) > 4:
        axes.set_xscale("log", base=2)
    axes.set_xticks(xs, [labels.number_text(x) for x in xs])
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xlabel(labels.axis_label(line_key, labels.Unit("")))
    target = format_metric(threshold.metric, threshold.target, 3)
    axes.set_ylabel(
        f"{x_words}{x_unit.bracket()} for {labels.metric_words(threshold.metric)} ≥ {target}"
    )
    axes.set_ylim(bottom=0)
    plain_linear(axes.yaxis, x_unit)
    axes.grid(True, alpha=0.3)
    axes.set_title(f"Smallest {x_words} reaching {target}, by {labels.key_words(line_key).axis}")
    runs = view.plan.runs_per_point
    metric = labels.metric_words(threshold.metric)
    notes = [
        f"Each point: the smallest swept {x_words} whose mean {metric} over {runs} "
        f"seed{'s' if runs > 1 else ''} reaches {target} (the sweep's grid is its resolution)."
    ]
    handles, texts = axes.get_legend_handles_labels()
    return plots.finish(fig, sweep_footer(view.plan, version), handles, texts, notes)


def threshold_table(view: SweepView, frame: pd.DataFrame) -> Table:
    threshold = view.header.threshold
    assert threshold is not None
    x_name = short_key(view.x_key)
    title = (
        f"smallest {x_name} with {metric_label(threshold.metric)} ≥ "
        f"{format_metric(threshold.metric, threshold.target, 3)}"
    )
    table = Table(title=title)
    for key in view.line_keys:
        table.add_column(short_key(key), justify="right")
    table.add_column(x_name, justify="right")
    table.add_column(metric_label(threshold.metric), justify="right")
    product = None if threshold.times is None else f"minimum_times_{short_key(threshold.times)}"
    if product is not None:
        table.add_column(f"× {short_key(threshold.times)}", justify="right")
    if threshold.sqrt_n:
        table.add_column("RTT·C/√N", justify="right")
    for row in frame.to_dict("records"):  # iterrows would make every column a float
        cells = [str(row[key]) for key in view.line_keys]
        if pd.isna(row["minimum"]):
            largest = row["largest_run"]
            cells += ["–" if pd.isna(largest) else f"> {largest}", "–"]
            if product is not None:
                cells.append("–")
        else:
            cells += [str(row["minimum"]), format_metric(threshold.metric, row[threshold.metric])]
            if product is not None:
                cells.append(f"{row[product]:g}")
        if threshold.sqrt_n:
            cells.append(f"{row[SQRT_N]:,.0f} pkt")
        table.add_row(*cells)
    return table
