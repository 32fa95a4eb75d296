"""Figures of per-flow TCP traces (`monitor.trace_flows`): the plots the pacing study drew
(congestion window, data acknowledged over time, fairness, RTT), for one run or several
overlaid (paced against unpaced, say).

Traces are step functions: a row holds a sender's state from its time until the flow's next
row. To compare flows and runs they are read on one time grid (`on_grid`). With a few flows
every flow gets its own line; with more, a run is drawn as the mean window, the total data
acknowledged and the mean RTT of its flows, so that fifty flows still make a readable figure.
Jain's index (Jain, Chiu, Hawe 1984) of the data each flow has had acknowledged so far
measures fairness: 1 when every flow has had the same share, 1/n when one flow had it all.

The acknowledged data is a byte count that grows over time (the pacing study's "cumulative
throughput"), and the axis says so: megabytes, not a rate. A congestion window that overshoots
once (slow start at a fast link) would flatten every later sawtooth, so the window's axis is
cut a little above where the windows spend nearly all their time (`window_limit`) and each
peak above the cut is marked at the top edge with its size, as the figure's note says.

It draws the traces it is given and must not know how they were recorded or printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from buflab.plots import finish, plt, save
from buflab.plots.ticks import plain_linear

# Up to this many flows per run, each flow gets its own line.
FLOW_LINES = 5
GRID_POINTS = 400
# The window axis is cut when its peak exceeds PEAK_FACTOR times the 90th percentile of the
# windows drawn, at HEADROOM times that percentile: a sawtooth's top is within a factor of two
# of its bottom and near that percentile, while slow start overshoots to two or more times the
# windows that follow it (P1: 2.5 times, 100 flows at 1 Gb/s: 3 times).
PEAK_FACTOR = 2.0
HEADROOM = 1.5
_STYLES = ["-", "--", ":", "-.", (0, (5, 1))]


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


def window_limit(windows: Sequence[np.ndarray]) -> float | None:
    """Where to cut the window axis so that a brief peak does not flatten the rest: HEADROOM
    times the 90th percentile of every window drawn, when the largest is more than
    PEAK_FACTOR times that percentile; None (no cut) otherwise."""
    values = np.concatenate([w[np.isfinite(w)] for w in windows]) if windows else np.array([])
    if len(values) == 0:
        return None
    typical = float(np.percentile(values, 90))
    if typical <= 0 or float(values.max()) <= PEAK_FACTOR * typical:
        return None
    return HEADROOM * typical


def trace_figure(
    runs: Mapping[str, pd.DataFrame],
    footer: str,
    title: str = "",
    warmup_s: float = 0.0,
) -> plt.Figure:
    """Four panels over time: congestion window, data acknowledged (MB), Jain's index of the
    flows' data acknowledged so far, and smoothed RTT; one colour per run (a run labelled ""
    is one alone, its flows named by number). The warm-up, which a run's statistics leave
    out, is shaded."""
    grid = grid_of(runs)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    (ax_cwnd, ax_bytes), (ax_fair, ax_rtt) = axes
    handles, labels = [], []
    windows: list[tuple[np.ndarray, str]] = []  # each window line drawn, with its colour
    crowds: set[int] = set()  # flows of the runs drawn as one line each
    for k, (label, traces) in enumerate(runs.items()):
        colour = f"C{k % 10}"
        if len(traces) == 0:
            continue
        cwnd = on_grid(traces, "cwnd_pkts", grid)
        acked = on_grid(traces, "acked_bytes", grid).fillna(0.0) / 1e6
        rtt = on_grid(traces, "srtt_s", grid).replace(0.0, np.nan) * 1e3
        n = cwnd.shape[1]
        if n <= FLOW_LINES:
            for j, flow in enumerate(cwnd.columns):
                name = f"{label}, flow {flow}" if label else f"flow {flow}"
                name = label if label and n == 1 else name
                style = _STYLES[j]
                (line,) = ax_cwnd.plot(grid, cwnd[flow], color=colour, ls=style, lw=1.0)
                ax_bytes.plot(grid, acked[flow], color=colour, ls=style, lw=1.2)
                ax_rtt.plot(grid, rtt[flow], color=colour, ls=style, lw=1.0)
                windows.append((cwnd[flow].to_numpy(), colour))
                handles.append(line)
                labels.append(name)
        else:
            mean_window = cwnd.mean(axis=1)
            (line,) = ax_cwnd.plot(grid, mean_window, color=colour, lw=1.0)
            ax_bytes.plot(grid, acked.sum(axis=1), color=colour, lw=1.2)
            ax_rtt.plot(grid, rtt.mean(axis=1), color=colour, lw=1.0)
            windows.append((mean_window.to_numpy(), colour))
            handles.append(line)
            labels.append(label or f"{n} flows")
            crowds.add(n)
        if n > 1:
            ax_fair.plot(grid, jain_index(acked), color=colour, lw=1.2)
    notes = _cut_windows(ax_cwnd, grid, windows)
    if crowds:
        flows = " or ".join(f"{n:,}" for n in sorted(crowds))
        notes.insert(
            0,
            f"A run of {flows} flows is one line: the mean window and RTT of its flows and the "
            "data they had acknowledged together.",
        )
    ax_cwnd.set_ylabel("congestion window (segments)")
    ax_bytes.set_ylabel("data acknowledged (MB)")
    ax_fair.set_ylabel("Jain's index of data acknowledged")
    ax_fair.set_ylim(0.0, 1.05)
    if not ax_fair.lines:
        ax_fair.text(
            0.5, 0.5, "one flow per run", ha="center", va="center", transform=ax_fair.transAxes
        )
    ax_rtt.set_ylabel("smoothed RTT (ms)")
    for ax in (ax_fair, ax_rtt):
        ax.set_xlabel("time (s)")
    for ax, panel_title in zip(
        axes.flat,
        ("Congestion window", "Data acknowledged", "Fairness (1 = equal shares)", "RTT"),
        strict=True,
    ):
        ax.set_title(panel_title, fontsize=10)
        ax.grid(True, alpha=0.3)
        plain_linear(ax.yaxis)
        if warmup_s > 0:
            ax.axvspan(0, warmup_s, color="gray", alpha=0.12, linewidth=0)
    if warmup_s > 0:
        notes.append(f"Shaded: the warm-up ({warmup_s:g} s), left out of the summary statistics.")
    if title:
        fig.suptitle(title)
    return finish(fig, footer, handles, labels, notes, ncol=min(3, max(1, len(labels))))


def _cut_windows(
    ax: plt.Axes, grid: np.ndarray, windows: list[tuple[np.ndarray, str]]
) -> list[str]:
    """Cut the window axis at `window_limit` and mark each peak above it with a triangle at
    the top edge and its size; returns the note saying so (none without a cut)."""
    limit = window_limit([w for w, _ in windows])
    if limit is None:
        ax.set_ylim(bottom=0)
        return []
    ax.set_ylim(0, limit)
    for window, colour in windows:
        if not np.any(window > limit):
            continue
        peak = int(np.nanargmax(window))
        ax.plot(grid[peak], limit, marker="^", color=colour, clip_on=False, zorder=5)
        ax.annotate(
            f"{window[peak]:,.0f}",
            (grid[peak], limit),
            textcoords="offset points",
            xytext=(6, -9),
            fontsize=7,
            color=colour,
        )
    return [
        f"The window axis is cut at {limit:,.0f} segments so that the sawtooth stays "
        "visible: a peak above it (slow start, say) is marked ▲ at the top with its size."
    ]


def write_trace_figure(
    runs: Mapping[str, pd.DataFrame],
    out: Path,
    footer: str,
    stem: str = "traces",
    title: str = "",
    warmup_s: float = 0.0,
) -> list[Path]:
    """`stem`.png and .svg in `out`; nothing when no run has a trace row."""
    if not any(len(t) > 0 for t in runs.values()):
        return []
    return save(trace_figure(runs, footer, title, warmup_s), out, stem)
