"""The same scenario in the simulator and on real Linux TCP, side by side (`buflab compare`).

Read first: `buflab.engine.emulation` (what the emulation realises). Each point (one value of
each `--vary` key, every combination) runs once each way with the same seed, hence the same
flows, start times and RTTs; the table puts the summary figures both have beside each other
with their differences, and the figure draws utilization and drop rate against the first
varied key; a second figure per point overlays the two runs' time series (utilization and
queue) and their flows' goodputs. Emulations run one at a time, in real time: a point costs
its `duration`. With finite transfers (closed-loop users, downloads, open-loop arrivals),
each point also gets the offered load `buflab load` estimates beside the load each way
measured, and the transfers' completion times by file size (thesis Fig. 4.6's bins) both
ways.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.ticker import MaxNLocator

from buflab.analysis.transfers import by_size_bin
from buflab.engine.emulation.runner import emulate
from buflab.engine.files import write_atomically
from buflab.engine.result import Result
from buflab.engine.runner import run as simulate
from buflab.engine.runner import validate
from buflab.experiments.load import offered_load
from buflab.experiments.store import SIMULATOR, RunStore, linux_engine, store_one
from buflab.experiments.sweep import Plan, Vary
from buflab.plots import finish, labels, plt, save
from buflab.plots.ticks import plain_linear

SIMULATED, EMULATED = "buflab (simulated)", "Linux TCP (emulated)"
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


# What each size bin's row gives both ways (`sim_X`, `real_X`).
TRANSFER_FIGURES = ("transfers", "completed", "fct_mean_s", "fct_p50_s", "throughput_mean_bps")


def measured_transfers(result: Result) -> pd.DataFrame:
    """The transfers that started in the measured window (after the warm-up), as a sweep's
    transfer metrics count them; the same rule both ways."""
    transfers = result.transfers
    return transfers[transfers["start_s"] >= float(result.summary["warmup_s"])]


def transfers_compared(point: dict[str, Any], sim: Result, real: Result) -> pd.DataFrame:
    """One row per file-size bin (thesis Fig. 4.6's): the point's varied values, then
    `sim_X` and `real_X` for each of TRANSFER_FIGURES, over the transfers each run started
    after its warm-up. No rows when neither run had finite transfers."""
    if len(sim.transfers) == 0 and len(real.transfers) == 0:
        return pd.DataFrame()
    both = by_size_bin(measured_transfers(sim)), by_size_bin(measured_transfers(real))
    rows = []
    for s, r in zip(*(b.itertuples(index=False) for b in both), strict=True):
        row: dict[str, Any] = {**point, "bin": s.bin}
        for name in TRANSFER_FIGURES:
            row[f"sim_{name}"], row[f"real_{name}"] = getattr(s, name), getattr(r, name)
        rows.append(row)
    return pd.DataFrame(rows)


def loads_compared(sim: Result, real: Result) -> dict[str, float]:
    """The offered load `buflab load` estimates for the scenario (no drops, no queueing),
    beside the bottleneck's utilization each way: how far the estimate and the two runs'
    measured loads agree."""
    return {
        "offered": float(offered_load(sim.scenario)["load"]),
        "sim": float(sim.summary["utilization"]),
        "real": float(real.summary["utilization"]),
    }


def compare_figure(frame: pd.DataFrame, key: str | None, title: str, footer: str) -> plt.Figure:
    """Utilization and drop rate against `key` (or per point), simulated and real: points,
    not lines, since each point is its own experiment (and a key's values may be names)."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    xs = list(range(len(frame)))
    for ax, name in ((top, "utilization"), (bottom, "drop_rate")):
        ax.plot([x - 0.05 for x in xs], frame[f"sim_{name}"] * 100, "o", label=SIMULATED)
        ax.plot([x + 0.05 for x in xs], frame[f"real_{name}"] * 100, "s", label=EMULATED)
        ax.set_ylabel(labels.metric_axis(name, []).label)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        plain_linear(ax.yaxis)
    top.set_title(title)
    names = [str(k + 1) for k in xs] if key is None else list(map(labels.value_text, frame[key]))
    bottom.set_xticks(xs, names)
    bottom.set_xlim(-0.5, len(xs) - 0.5)
    bottom.set_xlabel("point" if key is None else labels.axis_label(key, labels.Unit("")))
    handles, texts = top.get_legend_handles_labels()
    notes = [
        "Each point: one run each way with the same seed (no seeds to average, no error bars)."
    ]
    return finish(fig, footer, handles, texts, notes)


def detail_figure(sim: Result, real: Result, title: str, footer: str) -> plt.Figure:
    """One point both ways: the bottleneck's utilization and mean queue per
    `monitor.interval` over the run, and each flow's goodput over the measured window."""
    fig, (util, queue, goodput) = plt.subplots(3, 1, figsize=(8, 9))
    for result, style, label in ((sim, "-", SIMULATED), (real, "--", EMULATED)):
        ts = result.timeseries
        util.plot(ts["time_s"], ts["utilization"] * 100, style, label=label)
        queue.plot(ts["time_s"], ts["queue_pkts"], style)
        flows = result.flows.sort_values("flow")
        marker = "o" if result is sim else "s"
        goodput.plot(flows["flow"], flows["goodput_bps"] / 1e6, marker, alpha=0.7)
    warmup = float(sim.summary["warmup_s"])
    for ax in (util, queue):
        if warmup > 0:
            ax.axvspan(0, warmup, color="gray", alpha=0.12, linewidth=0)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
    util.set_ylabel("utilization (%)")
    util.set_ylim(0, 105)
    util.set_title(title)
    queue.set_ylabel("mean queue (packets)")
    queue.set_ylim(bottom=0)
    goodput.set_xlabel("flow")
    goodput.xaxis.set_major_locator(MaxNLocator(integer=True))
    goodput.set_ylabel("goodput (Mb/s)")
    top = max(sim.flows["goodput_bps"].max(), real.flows["goodput_bps"].max()) / 1e6
    goodput.set_ylim(0, top * 1.1 if top > 0 else 1)
    goodput.grid(True, alpha=0.3)
    handles, texts = util.get_legend_handles_labels()
    notes = ["Goodput: each flow's over the measured window; circles simulated, squares Linux."]
    if warmup > 0:
        notes.append(f"Shaded: the warm-up ({warmup:g} s), which the summary figures leave out.")
    return finish(fig, footer, handles, texts, notes)


def store_compared(out: Path, kept: Sequence[tuple[dict[str, Any], Result, Result]]) -> None:
    """Both runs of every point as rows of OUT's run store, each with what ran it (the same
    scenario in the simulator and on Linux is two runs, two keys)."""
    store = RunStore(out)
    for _, sim, real in kept:
        for result, engine in ((sim, SIMULATOR), (real, linux_engine())):
            normalized = validate(result.scenario)
            store_one(store, normalized, result.summary, command="compare", engine=engine)


def write_compare(
    frame: pd.DataFrame,
    key: str | None,
    out: Path,
    title: str,
    footer: str,
    kept: Sequence[tuple[dict[str, Any], Result, Result]] = (),
) -> list[Path]:
    """compare.csv and the figure of every point, and with `kept` (see `compare`) each
    point's detail figure, `compare_point1`, `compare_point2`, …, and, where the runs had
    finite transfers, compare_transfers.csv (every point's size bins both ways)."""
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(out / "compare.csv", partial(frame.to_csv, index=False))
    files = [out / "compare.csv", *save(compare_figure(frame, key, title, footer), out, "compare")]
    bins = [transfers_compared(point, sim, real) for point, sim, real in kept]
    if any(len(b) for b in bins):
        table = pd.concat([b for b in bins if len(b)], ignore_index=True)
        write_atomically(out / "compare_transfers.csv", partial(table.to_csv, index=False))
        files.append(out / "compare_transfers.csv")
    for k, (point, sim, real) in enumerate(kept, start=1):
        where = ", ".join(f"{name} = {value}" for name, value in point.items())
        fig = detail_figure(sim, real, f"{title}{': ' + where if where else ''}", footer)
        files += save(fig, out, f"compare_point{k}")
    return files
