"""The rates of QCN reaction points over time (the `rates` table of a run with a
`pace_rate = "qcn"` bump): the plot of the NetBump seed's Fig 7.6, one line per source.

A row holds a limiter's rate from its time until the class's next row, so each source is
drawn as a step function, from its first message (before it, the source ran unlimited at its
line rate) to the end of the run. A second panel draws the sum of the rates beside the
bottleneck's rate, which a converged set of sources shares.

It draws the table it is given and must not know how it was recorded.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from buflab.engine.units import format_rate
from buflab.plots import finish, plt, save
from buflab.plots.ticks import plain_linear


def rate_figure(
    rates: pd.DataFrame, end_s: float, bottleneck_bps: float, footer: str, warmup_s: float = 0.0
) -> plt.Figure:
    """Each class's rate over time (Mb/s), and their sum beside the bottleneck's rate; the
    warm-up, which the run's statistics leave out, shaded."""
    fig, (ax, ax_sum) = plt.subplots(
        2, 1, figsize=(10, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    handles, labels = [], []
    steps = {}
    for k, (cls, rows) in enumerate(rates.groupby("class", sort=True)):
        rows = rows.sort_values("time_s", kind="stable")
        times = list(rows["time_s"]) + [end_s]
        values = list(rows["rate_bps"] / 1e6)
        values.append(values[-1])
        (line,) = ax.step(times, values, where="post", color=f"C{k % 10}", lw=1.0)
        handles.append(line)
        labels.append(f"source {cls}")
        steps[cls] = pd.Series(values, index=times)
    if steps:
        grid = sorted({t for s in steps.values() for t in s.index})
        total = sum(
            s[~s.index.duplicated(keep="last")].reindex(grid, method="ffill").fillna(0.0)
            for s in steps.values()
        )
        ax_sum.step(grid, total, where="post", color="black", lw=1.0, label="sum of rates")
    if bottleneck_bps > 0:
        ax_sum.axhline(
            bottleneck_bps / 1e6,
            color="grey",
            lw=1.0,
            label=f"bottleneck rate ({format_rate(bottleneck_bps)})",
        )
    ax.set_ylabel("reaction point rate (Mb/s)")
    ax.set_ylim(bottom=0)
    ax.set_title("Rate of each source's reaction point", fontsize=10)
    ax_sum.set_ylabel("sum (Mb/s)")
    ax_sum.set_ylim(bottom=0)
    ax_sum.set_xlabel("time (s)")
    ax_sum.legend(loc="lower right", fontsize="small")
    notes = []
    for a in (ax, ax_sum):
        a.grid(True, alpha=0.3)
        a.set_xlim(0, end_s)
        plain_linear(a.yaxis)
        if warmup_s > 0:
            a.axvspan(0, warmup_s, color="gray", alpha=0.12, linewidth=0)
    if warmup_s > 0:
        notes.append(f"Shaded: the warm-up ({warmup_s:g} s), left out of the summary statistics.")
    return finish(fig, footer, handles, labels, notes, ncol=min(6, max(1, len(labels))))


def write_rate_figure(
    rates: pd.DataFrame,
    end_s: float,
    bottleneck_bps: float,
    out: Path,
    footer: str,
    warmup_s: float = 0.0,
) -> list[Path]:
    """rates.png and rates.svg in `out`; nothing without a rate change."""
    if len(rates) == 0:
        return []
    return save(rate_figure(rates, end_s, bottleneck_bps, footer, warmup_s), out, "rates")
