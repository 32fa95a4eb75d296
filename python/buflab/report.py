"""A finished sweep as people read it: a table, a figure, theory marks.

The x axis is the first varied key; each combination of the other varied keys is one line
(a column group in the table). Used by `buflab sweep` and `buflab reproduce`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from rich.table import Table

from buflab import __version__, plots, theory
from buflab.console import progress_bar
from buflab.engine import core, scenario_json
from buflab.plots import Line, Mark
from buflab.recipes import SweepHeader
from buflab.scenario import Scenario, apply_overrides
from buflab.sweep import Plan, SweepOutcome, run_sweep
from buflab.units import parse_rate

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

    def groups(self) -> list[tuple[str, pd.DataFrame]]:
        """(label, rows sorted by x) for each combination of the non-x varied keys."""
        frame = self.summary.assign(_x=[plots.axis_value(v)[0] for v in self.summary[self.x_key]])
        if not self.line_keys:
            return [("", frame.sort_values("_x"))]
        result = []
        for values, rows in frame.groupby(self.line_keys, sort=False):
            values = values if isinstance(values, tuple) else (values,)
            label = ", ".join(
                self.header.label(key, value)
                for key, value in zip(self.line_keys, values, strict=True)
            )
            result.append((label, rows.sort_values("_x")))
        return result

    def lines(self) -> list[Line]:
        return [
            Line(
                label=label,
                x=rows["_x"].tolist(),
                utilization=rows["utilization_mean"].tolist(),
                utilization_ci=rows["utilization_ci95"].tolist(),
                drop_rate=rows["drop_rate_mean"].tolist(),
                drop_rate_ci=rows["drop_rate_ci95"].tolist(),
            )
            for label, rows in self.groups()
        ]

    def table(self, title: str) -> Table:
        """Rows: x values; per line: utilization and drop rate (± 95 % CI with several seeds)."""
        groups = self.groups()
        table = Table(title=title)
        table.add_column(self.x_key.rsplit(".", 1)[-1], justify="right", no_wrap=True)
        for label, _ in groups:
            prefix = f"{label}\n" if label else ""
            table.add_column(f"{prefix}utilization", justify="right")
            table.add_column(f"{prefix}drop rate", justify="right")
        x_values = list(self.plan.varies[0].values)
        for x in x_values:
            cells = [str(x)]
            for _, rows in groups:
                row = rows[rows[self.x_key] == x]
                if row.empty:
                    cells += ["–", "–"]
                    continue
                cells.append(_percent(row, "utilization"))
                cells.append(_percent(row, "drop_rate"))
            table.add_row(*cells)
        return table


def _percent(row: pd.DataFrame, metric: str) -> str:
    mean = float(row[f"{metric}_mean"].iloc[0])
    half_width = float(row[f"{metric}_ci95"].iloc[0])
    if math.isnan(half_width):
        return f"{100 * mean:.2f} %"
    return f"{100 * mean:.2f}±{100 * half_width:.2f} %"


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
        marks.append(Mark(bdp * scale, f"RTT·C = {bdp:,.0f} pkt"))
        if facts.flows > 1:
            small = bdp / math.sqrt(facts.flows)
            marks.append(Mark(small * scale, f"RTT·C/√N = {small:,.0f} pkt"))
    settings = view.header.theory
    if settings is not None:
        wmax = _slowest_access_facts(view.plan, normalised).wmax_pkts
        tiny = theory.tiny_buffer_for_utilization(wmax, settings.load, settings.utilization)
        marks.append(
            Mark(
                tiny * scale,
                f"eq. 2.1 = {tiny:.0f} pkt (W={wmax:.0f}, ρ={settings.load:g}, "
                f"θρ={settings.utilization:g})",
            )
        )
    return marks


def _slowest_access_facts(plan: Plan, normalised: Scenario) -> theory.LinkFacts:
    """Eq. 2.1 is about slow access links: when the access rate is swept, use the slowest."""
    for vary in plan.varies:
        if vary.key == "network.access.rate":
            slowest = min(vary.values, key=parse_rate)
            return theory.LinkFacts.from_scenario(apply_overrides(normalised, {vary.key: slowest}))
    return theory.LinkFacts.from_scenario(normalised)


def write_figure(
    view: SweepView, marks: list[Mark], out: Path, stem: str, title: str, version: str
) -> list[Path]:
    kind = view.x_kind()
    unit = plots.AXIS_UNITS.get(kind or "", "")
    x_label = f"{view.x_key} ({unit})" if unit else view.x_key
    xs = [plots.axis_value(v)[0] for v in view.plan.varies[0].values]
    footer = plots.footer_text(
        str(view.plan.base.get("name", "unnamed")), view.plan.seeds(), version
    )
    fig = plots.sweep_figure(
        view.lines(), x_label, plots.use_log_x(view.x_key, xs), marks, footer, title
    )
    return plots.save(fig, out, stem)


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


def run_and_report(
    plan: Plan, header: SweepHeader, out: Path, jobs: int | None, stem: str, title: str
) -> SweepReport:
    """Run the plan under a progress bar, then draw `stem`.png/.svg in OUT.

    Raises SweepInterrupted on Ctrl-C (finished runs and the CSV tables are kept)."""
    with progress_bar(f"{stem}: {len(plan.runs)} runs") as update:
        outcome = run_sweep(plan, out, jobs, update)
    view = SweepView(plan, header, outcome.summary)
    marks = theory_marks(view, plan.base)
    figures = write_figure(view, marks, out, stem, title, __version__)
    return SweepReport(outcome, view, marks, figures)
