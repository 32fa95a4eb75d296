"""The same scenario in the simulator and on real Linux TCP, side by side (`buflab compare`).

Read first: `buflab.engine.emulation` (what the emulation realises). Each point (one value of
each `--vary` key, every combination) runs once each way with the same seed, hence the same
flows, start times and RTTs; the table puts the summary figures both have beside each other
with their differences, and the figure draws utilization and drop rate against the first
varied key; a second figure per point overlays the two runs' time series (utilization and
queue) and their flows' goodputs. Emulations run one at a time, in real time: a point costs
its `duration`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine.emulation.runner import emulate
from buflab.engine.files import write_atomically
from buflab.engine.result import Result
from buflab.engine.runner import run as simulate
from buflab.experiments.sweep import Plan, Vary
from buflab.plots import add_footer, plt, save

# The summary figures both ways report, by name (`timeouts_per_s` is the summary's timeouts
# over its measured time: how often a flow fell back on its retransmission timer).
FIGURES = (
    "utilization",
    "drop_rate",
    "mean_queue_pkts",
    "jain_fairness",
    "timeouts_per_s",
    "retransmits_per_drop",
)


def figure(summary: dict[str, Any], name: str) -> float:
    """Summary figure `name` of a run, simulated or emulated."""
    if name == "timeouts_per_s":
        return float(summary["timeouts"]) / float(summary["measured_s"])
    return float(summary[name])


def compare(
    tree: dict[str, Any],
    varies: Sequence[Vary],
    progress: Callable[[int, int], None] = lambda done, total: None,
    keep: list[tuple[dict[str, Any], Result, Result]] | None = None,
) -> pd.DataFrame:
    """One row per point: the varied values, then `sim_X`, `real_X` and `diff_X` (real − sim)
    for each figure X, and whether the emulation was faithful. With `keep`, each point's
    (values, simulated result, emulated result) is appended to it."""
    rows = []
    # The sweep's own plan: every combination, each point's overrides, one run (the scenario's
    # seed) per point.
    todo = Plan(tree, list(varies), 1).runs
    for k, run in enumerate(todo):
        simulated = simulate(run.scenario)
        sim = simulated.summary
        real = emulate(run.scenario)
        if keep is not None:
            keep.append((dict(run.point), simulated, real))
        row: dict[str, Any] = dict(run.point)
        for name in FIGURES:
            row[f"sim_{name}"] = figure(sim, name)
            row[f"real_{name}"] = figure(real.summary, name)
            row[f"diff_{name}"] = row[f"real_{name}"] - row[f"sim_{name}"]
        row["real_faithful"] = bool(real.summary["faithful"])
        row["real_late_within_10us"] = float(real.summary["late_within_10us"])
        rows.append(row)
        progress(k + 1, len(todo))
    return pd.DataFrame(rows)


def compare_figure(frame: pd.DataFrame, key: str | None, title: str, footer: str) -> plt.Figure:
    """Utilization and drop rate against `key` (or per point), simulated and real."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    xs = list(range(len(frame))) if key is None else [str(x) for x in frame[key]]
    for ax, name, label in (
        (top, "utilization", "utilization (%)"),
        (bottom, "drop_rate", "drop rate (%)"),
    ):
        ax.plot(xs, frame[f"sim_{name}"] * 100, "o-", label="buflab (simulated)")
        ax.plot(xs, frame[f"real_{name}"] * 100, "s--", label="Linux TCP (emulated)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    top.set_title(title)
    top.legend(loc="lower right")
    bottom.set_xlabel(key or "point")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    add_footer(fig, footer)
    return fig


def detail_figure(sim: Result, real: Result, title: str, footer: str) -> plt.Figure:
    """One point both ways: the bottleneck's utilization and mean queue per
    `monitor.interval` over the run, and each flow's goodput over the measured window."""
    fig, (util, queue, goodput) = plt.subplots(3, 1, figsize=(8, 9))
    for result, style, label in ((sim, "-", "buflab (simulated)"), (real, "--", "Linux TCP")):
        ts = result.timeseries
        util.plot(ts["time_s"], ts["utilization"] * 100, style, label=label)
        queue.plot(ts["time_s"], ts["queue_pkts"], style, label=label)
        flows = result.flows.sort_values("flow")
        marker = "o" if result is sim else "s"
        goodput.plot(flows["flow"], flows["goodput_bps"] / 1e6, marker, label=label, alpha=0.7)
    warmup = float(sim.summary["warmup_s"])
    for ax in (util, queue):
        ax.axvline(warmup, color="gray", lw=0.8, ls=":")
        ax.set_xlabel("time (s); warm-up ends at the dotted line")
        ax.grid(True, alpha=0.3)
    util.set_ylabel("utilization (%)")
    util.set_ylim(0, 105)
    util.set_title(title)
    util.legend(loc="lower right")
    queue.set_ylabel("mean queue (pkt)")
    queue.set_ylim(bottom=0)
    goodput.set_xlabel("flow")
    goodput.set_ylabel("goodput (Mb/s)")
    top = max(sim.flows["goodput_bps"].max(), real.flows["goodput_bps"].max()) / 1e6
    goodput.set_ylim(0, top * 1.3 if top > 0 else 1)  # room for the legend above the points
    goodput.grid(True, alpha=0.3)
    goodput.legend(loc="upper center", ncol=2)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    add_footer(fig, footer)
    return fig


def write_compare(
    frame: pd.DataFrame,
    key: str | None,
    out: Path,
    title: str,
    footer: str,
    kept: Sequence[tuple[dict[str, Any], Result, Result]] = (),
) -> list[Path]:
    """compare.csv and the figure of every point, and with `kept` (see `compare`) each
    point's detail figure, `compare_point1`, `compare_point2`, …"""
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(out / "compare.csv", partial(frame.to_csv, index=False))
    files = [out / "compare.csv", *save(compare_figure(frame, key, title, footer), out, "compare")]
    for k, (point, sim, real) in enumerate(kept, start=1):
        where = ", ".join(f"{name} = {value}" for name, value in point.items())
        fig = detail_figure(sim, real, f"{title}{': ' + where if where else ''}", footer)
        files += save(fig, out, f"compare_point{k}")
    return files
