"""Figures of per-flow TCP traces (`monitor.trace_flows`): the plots the pacing study drew
(cumulative throughput, congestion window, fairness, RTT), for one run or several overlaid
(paced against unpaced, say).

Traces are step functions: a row holds a sender's state from its time until the flow's next
row. To compare flows and runs they are read on one time grid (`on_grid`). With a few flows
every flow gets its own line; with more, a run is drawn as the mean window, the total bytes
acknowledged and the mean RTT of its flows, so that fifty flows still make a readable figure.
Jain's index (Jain, Chiu, Hawe 1984) of the flows' cumulative throughput measures fairness:
1 when every flow has had the same share, 1/n when one flow had it all.

It draws the traces it is given and must not know how they were recorded or printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from buflab.plots import add_footer, legend_below, plt, save

# Up to this many flows per run, each flow gets its own line.
FLOW_LINES = 5
GRID_POINTS = 400


def grid_of(runs: Mapping[str, pd.DataFrame]) -> np.ndarray:
    """GRID_POINTS times from 0 to the last trace row of any run."""
    end = max((float(t["time_s"].max()) for t in runs.values() if len(t) > 0), default=0.0)
    return np.linspace(0.0, end, GRID_POINTS)


def on_grid(traces: pd.DataFrame, column: str, grid: np.ndarray) -> pd.DataFrame:
    """`column` of every traced flow at the grid times (rows) by flow (columns): the value of
    the flow's last row at or before each time; nan before its first row."""
    out = {}
    for flow, rows in traces.groupby("flow", sort=True):
        times = rows["time_s"].to_numpy()
        values = rows[column].to_numpy(dtype=float)
        idx = np.searchsorted(times, grid, side="right") - 1
        read = np.where(idx >= 0, values[np.clip(idx, 0, None)], np.nan)
        out[int(flow)] = read
    return pd.DataFrame(out, index=grid)


def jain_index(shares: pd.DataFrame) -> pd.Series:
    """Jain's fairness index across the columns at each row: (Σx)² ÷ (n·Σx²), over the flows
    with a value; nan where every share is zero."""
    x = shares.fillna(0.0)
    n = shares.notna().sum(axis=1)
    total = x.sum(axis=1)
    squares = (x**2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total**2 / (n * squares)).where(squares > 0)


def trace_figure(runs: Mapping[str, pd.DataFrame], footer: str) -> plt.Figure:
    """Four panels over time: congestion window, cumulative throughput (MB acknowledged),
    Jain's index of the flows' cumulative throughput, and smoothed RTT; one colour per run."""
    grid = grid_of(runs)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    (ax_cwnd, ax_bytes), (ax_fair, ax_rtt) = axes
    handles, labels = [], []
    for k, (label, traces) in enumerate(runs.items()):
        colour = f"C{k}"
        if len(traces) == 0:
            continue
        cwnd = on_grid(traces, "cwnd_pkts", grid)
        acked = on_grid(traces, "acked_bytes", grid).fillna(0.0) / 1e6
        rtt = on_grid(traces, "srtt_s", grid).replace(0.0, np.nan) * 1e3
        n = cwnd.shape[1]
        if n <= FLOW_LINES:
            for j, flow in enumerate(cwnd.columns):
                name = f"{label}, flow {flow}" if n > 1 else label
                style = ["-", "--", ":", "-.", (0, (5, 1))][j]
                (line,) = ax_cwnd.plot(grid, cwnd[flow], color=colour, ls=style, lw=1.0)
                ax_bytes.plot(grid, acked[flow], color=colour, ls=style, lw=1.2)
                ax_rtt.plot(grid, rtt[flow], color=colour, ls=style, lw=1.0)
                handles.append(line)
                labels.append(name)
        else:
            (line,) = ax_cwnd.plot(grid, cwnd.mean(axis=1), color=colour, lw=1.0)
            ax_bytes.plot(grid, acked.sum(axis=1), color=colour, lw=1.2)
            ax_rtt.plot(grid, rtt.mean(axis=1), color=colour, lw=1.0)
            handles.append(line)
            labels.append(f"{label} ({n} flows: mean window and RTT, total bytes)")
        if n > 1:
            ax_fair.plot(grid, jain_index(acked), color=colour, lw=1.2)
    ax_cwnd.set_ylabel("congestion window (segments)")
    ax_bytes.set_ylabel("cumulative throughput (MB acknowledged)")
    ax_fair.set_ylabel("Jain's index of cumulative throughput")
    ax_fair.set_ylim(0.0, 1.05)
    if not ax_fair.lines:
        ax_fair.text(
            0.5, 0.5, "one flow per run", ha="center", va="center", transform=ax_fair.transAxes
        )
    ax_rtt.set_ylabel("smoothed RTT (ms)")
    for ax in (ax_fair, ax_rtt):
        ax.set_xlabel("time (s)")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    legend_below(fig, handles, labels, bottom=0.02, ncol=min(3, max(1, len(labels))))
    add_footer(fig, footer)
    return fig


def write_trace_figure(runs: Mapping[str, pd.DataFrame], out: Path, footer: str) -> list[Path]:
    """traces.png and traces.svg in `out`; nothing when no run has a trace row."""
    if not any(len(t) > 0 for t in runs.values()):
        return []
    return save(trace_figure(runs, footer), out, "traces")
