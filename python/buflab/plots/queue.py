"""Figures of event-log analyses: the testbed's CDFs, one curve per run.

One figure, four panels, any number of runs overlaid (the published figures compare two to
four settings on one axes):

- inter-arrival time of stored packets (thesis Fig 4.9), log x, with the serialization time of
  the most common packet size marked: gaps left of it arrived faster than line rate;
- burst size, runs of successive packets of one flow (thesis Fig 4.12 top);
- queueing delay of stored packets;
- occupancy over time (the queue rebuilt from the log).

It draws a `QueueAnalysis` (`buflab.analysis.queue`) and must not know how the log was
recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from buflab.analysis.queue import Distribution, QueueAnalysis
from buflab.engine.events import PS_PER_S
from buflab.plots import add_footer, plt, save


def analysis_figure(analyses: Mapping[str, QueueAnalysis], footer: str) -> plt.Figure:
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    (iat, bursts), (delay, occupancy) = axes
    iat_scale, delay_scale = 1e6 / PS_PER_S, 1e3 / PS_PER_S
    _log_cdfs(iat, [a.interarrival for a in analyses.values()], iat_scale, list(analyses))
    _log_cdfs(delay, [a.queue_delay for a in analyses.values()], delay_scale, list(analyses))
    for label, a in analyses.items():
        cdf = a.bursts.cdf()
        # From zero at the smallest size, so that a single size still draws its step.
        values, fractions = cdf["value"].to_numpy(), cdf["cdf"].to_numpy()
        bursts.step(np.r_[values[:1], values], np.r_[0.0, fractions], where="post", label=label)
        occupancy.plot(a.series["time_s"], a.series["queue_pkts"], label=label, linewidth=0.8)
    gaps = {_line_rate_gap_us(a) for a in analyses.values()}
    if len(gaps) == 1 and analyses:
        # Back-to-back packets of the commonest size at the queue's line rate (Fig 4.9's
        # 12 µs): gaps left of it arrived faster than the link can send.
        size, gap = gaps.pop()
        iat.axvline(
            gap, color="dimgray", linestyle="--", linewidth=1, label=f"{size} B at line rate"
        )
    iat.set_xscale("log")
    iat.set_xlabel("inter-arrival time of stored packets (µs)")
    _burst_axis(bursts, [a.bursts for a in analyses.values()])
    bursts.set_xlabel("burst size (successive packets of one flow)")
    delay.set_xlabel("queueing delay (ms)")
    if all(a.queue_delay.count == 0 or a.queue_delay.high == 0 for a in analyses.values()):
        # Nothing waited (a queue that only ever serves at once, as a bump's may).
        delay.set_xticks([])
        delay.text(0.5, 0.5, "no packet waited", transform=delay.transAxes, ha="center")
    else:
        delay.set_xscale("log")
    for ax in (iat, bursts, delay):
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.01)
    occupancy.set_xlabel("time (s)")
    occupancy.set_ylabel("packets waiting (interval mean)")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    iat.legend(fontsize=8, loc="lower right")
    add_footer(fig, footer)
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig


def _log_cdfs(ax: plt.Axes, dists: list[Distribution], scale: float, labels: list[str]) -> None:
    """CDFs of times on a log axis starting below the smallest 1st percentile of the values
    above zero: smaller ones (zero among them: simultaneous arrivals, no wait) sit at its left
    edge."""
    firsts = [d.quantile(0.01, positive=True) * scale for d in dists if d.count]
    firsts = [f for f in firsts if np.isfinite(f)]
    left = 10 ** (np.floor(np.log10(min(firsts))) - 0.5) if firsts else 1e-3
    for dist, label in zip(dists, labels, strict=True):
        if dist.count == 0:
            continue
        cdf = dist.cdf()
        x = np.maximum(cdf["value"].to_numpy() * scale, left)
        ax.step(
            np.concatenate(([left], x)),
            np.concatenate(([0.0], cdf["cdf"])),
            where="post",
            label=label,
        )
    ax.set_xlim(left=left)


def _burst_axis(ax: plt.Axes, dists: list[Distribution]) -> None:
    """Burst sizes on a log axis when they span a decade or more; otherwise (one flow's single
    run of the whole window, say) a linear one, whose plain ticks stay legible."""
    counted = [d for d in dists if d.count]
    low = min((d.low for d in counted), default=1.0)
    high = max((d.high for d in counted), default=1.0)
    if high >= 10 * max(low, 1.0):
        ax.set_xscale("log")
    else:
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)


def _line_rate_gap_us(a: QueueAnalysis) -> tuple[int, float]:
    size = int(np.argmax(a.stored_sizes.counts))
    return size, size * 8 / a.facts.rate_bps * 1e6


def save_analysis_figure(
    analyses: Mapping[str, QueueAnalysis], out: Path, footer: str
) -> list[Path]:
    return save(analysis_figure(analyses, footer), out, "analysis")
