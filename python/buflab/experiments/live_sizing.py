"""The live auto-sizer beside an offline search (thesis ch. 4.3, reproduction target T12).

The thesis's real-time tool sized the buffer "through a binary search ... after measuring
the utilization over a period of three seconds, the buffer size is decreased if the
utilization is within 99.5% of the desired throughput, and is increased otherwise". Whether
that converges to the minimum buffer is a question about two answers per seed: the offline
one, the smallest buffer of a sweep's grid whose whole measured run reaches the target, and
the live one, where the auto-sizer settled (`autosize_buffer_pkts`) within one run of the
same scenario and seed. A recipe asks for the comparison with `[sweep.autosize]` beside a
`[sweep.threshold]` (see `buflab.experiments.recipes`).

The offline answer per seed uses the auto-sizer's own pass rule (at least tolerance × target,
0.995 by default), so both answers are to the same question; the grid's resolution is the
offline answer's, as with any threshold.

It builds the live runs' plan and reads two finished sweeps; it must not know how they ran.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from buflab import plots
from buflab.engine.scenario import Scenario
from buflab.experiments.recipes import Published, SweepHeader
from buflab.experiments.report import Comparison, SweepView, sweep_footer
from buflab.experiments.sweep import Plan
from buflab.plots import axis_value

# The thesis tool's "within 99.5% of the desired throughput", also the engine's default.
DEFAULT_TOLERANCE = 0.995


def live_plan(scenario: Scenario, header: SweepHeader, runs: int) -> Plan:
    """One run per seed of the unvaried scenario with the auto-sizer on: the sweep's first
    `runs` seeds, so each live answer has an offline twin with the same flows."""
    assert header.autosize is not None
    settings = dict(header.autosize)
    duration = settings.pop("duration", None)
    live = {**scenario, "autosize": settings}
    if duration is not None:
        live["duration"] = duration
    return Plan(live, [], runs)


@dataclass
class LiveVsOffline:
    """Per seed the offline and the live answer (packets), and what they say together."""

    table: pd.DataFrame  # seed, offline_pkts (nan: no grid size reached), live_pkts
    target: float
    step_pkts: float  # the grid's spacing around the offline answers

    @property
    def verdict(self) -> str:
        """ "agrees" when the live median lies within the offline answers' range widened by
        one grid step each side (the comparison's band), "disagrees" otherwise, "not run"
        without answers on both sides."""
        if self.table["offline_pkts"].dropna().empty or self.table["live_pkts"].dropna().empty:
            return "not run"
        return "agrees" if self.comparison().verdict == "agrees" else "disagrees"

    def comparison(self) -> Comparison:
        """The verdict as a published entry beside the others (in published.csv and the
        report): the thesis gives no number, so the reference is the offline answers' range,
        its middle ± half its width and one grid step, and the measured value the live
        median."""
        offline = self.table["offline_pkts"].dropna()
        low, high = float(offline.min()), float(offline.max())
        entry = Published(
            point={},
            metric="autosize_buffer_pkts",
            value=(low + high) / 2,
            band=(high - low) / 2 + self.step_pkts,
            source=(
                "thesis ch. 4.3 (T12): the live tool converges to the minimum buffer; reference "
                "= the offline answers' range ± one grid step"
            ),
        )
        live = float(statistics.median(self.table["live_pkts"].dropna()))
        return Comparison(entry, measured=live, ci95=math.nan)

    def paragraph(self) -> str:
        if self.verdict == "not run":
            return "The live auto-sizer or the offline grid has no finished run to compare."
        offline = self.table["offline_pkts"].dropna()
        live = self.table["live_pkts"].dropna()

        def spread(values: pd.Series) -> str:
            return (
                f"median {statistics.median(values):g} packets "
                f"(range {values.min():g}-{values.max():g}, {len(values)} seeds)"
            )

        unreached = int(self.table["offline_pkts"].isna().sum())
        missing = f"; {unreached} seeds never reached it on the grid" if unreached else ""
        return (
            f"Minimum buffer for {self.target:.0%} utilization. Offline (the smallest grid size "
            f"whose run reaches {DEFAULT_TOLERANCE:g} × the target): {spread(offline)}"
            f"{missing}. Live auto-sizer (the size its search settled at): {spread(live)}. "
            f"The live median is within the offline range widened by one grid step "
            f"({self.step_pkts:g} packets) each side: {self.verdict}."
        )


def compare(
    offline: SweepView,
    offline_results: pd.DataFrame,
    live_results: pd.DataFrame,
    header: SweepHeader,
) -> LiveVsOffline:
    """The per-seed answers of a finished offline grid and live runs; `offline_results` and
    `live_results` are their sweeps' results tables (one row per run)."""
    assert header.autosize is not None
    target = float(header.autosize["target_utilization"])
    tolerance = float(header.autosize.get("tolerance", DEFAULT_TOLERANCE))
    x_key = offline.x_key
    sizes = sorted({_packets(value) for value in offline.plan.varies[0].values})
    rows: list[dict[str, Any]] = []
    for seed in sorted(set(offline_results.get("seed", [])) | set(live_results.get("seed", []))):
        ran = offline_results[offline_results["seed"] == seed]
        passing = [
            _packets(value)
            for value, utilization in zip(ran[x_key], ran["utilization"], strict=True)
            if utilization >= tolerance * target
        ]
        live = live_results[live_results["seed"] == seed]["autosize_buffer_pkts"].dropna()
        rows.append(
            {
                "seed": seed,
                "offline_pkts": min(passing) if passing else math.nan,
                "live_pkts": float(live.iloc[0]) if len(live) else math.nan,
            }
        )
    table = pd.DataFrame(rows, columns=["seed", "offline_pkts", "live_pkts"])
    offline_answers = table["offline_pkts"].dropna()
    live_answers = table["live_pkts"].dropna()
    if offline_answers.empty or live_answers.empty:
        return LiveVsOffline(table, target, math.nan)
    low, high = offline_answers.min(), offline_answers.max()
    return LiveVsOffline(table, target, max(_spacing(sizes, low), _spacing(sizes, high)))


def _packets(value: Any) -> float:
    """A grid value ("20pkt" or 20) as packets."""
    number, _ = axis_value(value)
    return float(number)


def _spacing(sizes: list[float], size: float) -> float:
    """The grid's widest gap next to `size`."""
    index = sizes.index(size)
    gaps = [sizes[i + 1] - sizes[i] for i in (index - 1, index) if 0 <= i < len(sizes) - 1]
    return max(gaps, default=0.0)


def figure(result: LiveVsOffline, offline: SweepView, version: str) -> Figure:
    """Per seed, the offline answer and the live one, with each side's median as a line."""
    fig, axes = plt.subplots(figsize=(8, 5.5))
    table = result.table
    for column, label, marker, color in (
        ("offline_pkts", "offline: smallest grid size reaching the target", "s", "tab:blue"),
        ("live_pkts", "live auto-sizer: where its search settled", "o", "tab:orange"),
    ):
        found = table.dropna(subset=[column])
        axes.plot(
            found["seed"],
            found[column],
            marker=marker,
            linestyle="none",
            color=color,
            markersize=8,
            label=label,
        )
        if len(found):
            axes.axhline(
                statistics.median(found[column]),
                color=color,
                linestyle=":",
                linewidth=1.5,
                label=f"median, {label.split(':')[0]}",
            )
    seeds = [int(seed) for seed in table["seed"]]
    axes.set_xticks(seeds, [str(seed) for seed in seeds])
    axes.set_xlabel("seed")
    axes.set_ylabel(f"minimum buffer for {result.target:.0%} utilization (packets)")
    highest = max(table[["offline_pkts", "live_pkts"]].max().dropna(), default=1.0)
    axes.set_ylim(0, highest * 1.15)  # room above the highest marker
    axes.grid(True, alpha=0.3)
    axes.set_title("Live auto-sizer against the offline search, per seed")
    notes = [
        f"Offline: the smallest size of the sweep's grid (every {result.step_pkts:g} packets "
        f"here) whose whole run reaches {DEFAULT_TOLERANCE:g} × the target. Live: one run of "
        "the same scenario and seed with the auto-sizer on (3-s steps). Verdict: "
        f"{result.verdict}."
    ]
    handles, texts = axes.get_legend_handles_labels()
    return plots.finish(fig, sweep_footer(offline.plan, version), handles, texts, notes)
