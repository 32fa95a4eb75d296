"""Figures of event-log analyses: the testbed's distributions, one colour per run.

One figure, four titled panels, any number of runs overlaid (the published figures compare two
to four settings on one axes):

- inter-arrival time of stored packets (thesis Fig 4.9), a CDF on a log axis, with the
  serialization time of the most common packet size marked: gaps left of it arrived faster
  than line rate;
- burst size, runs of successive packets of one flow (thesis Fig 4.12 top), as the fraction of
  bursts at least that long (a CCDF) on log axes: nearly every burst is a packet or two, and
  the tail, which is what the measure is about, would sit in the top percent of a CDF;
- queueing delay of stored packets, a CDF;
- occupancy over time (the queue rebuilt from the log), the warm-up shaded: the three
  distributions leave it out.

The two time axes share one unit, the one their values read best in. Many packets wait no time
at all (the queue was empty) and some arrive together: a log axis has no zero, so when a run
has such values the axis is linear from 0 to a threshold below the smallest values drawn and
logarithmic above it, and the share at zero is a labelled point on the 0 tick.

It draws a `QueueAnalysis` (`buflab.analysis.queue`) and must not know how the log was
recorded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from buflab.analysis.queue import Distribution, QueueAnalysis
from buflab.engine.events import PS_PER_S
from buflab.plots import RULE_COLOUR, finish, plt, save
from buflab.plots.labels import Unit, unit_for
from buflab.plots.ticks import plain_linear, plain_log, plain_symlog

# The linear part of a time axis (0 to its threshold) takes this many decades' width.
_LINEAR_DECADES = 0.4
# The line-rate gap is a reference, not a rule of thumb: the dash-dot-dot of other marks.
_REFERENCE = {"color": RULE_COLOUR, "linestyle": (0, (5, 2, 1, 2, 1, 2)), "linewidth": 1.2}


def analysis_figure(analyses: Mapping[str, QueueAnalysis], footer: str) -> plt.Figure:
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    (iat, bursts), (delay, occupancy) = axes
    colours = {label: f"C{k % 10}" for k, label in enumerate(analyses)}
    unit = time_unit(
        [a.interarrival for a in analyses.values()] + [a.queue_delay for a in analyses.values()]
    )
    notes = []
    zero_axes = []
    for ax, measure, what in (
        (iat, "interarrival", "inter-arrival time of stored packets"),
        (delay, "queue_delay", "queueing delay of stored packets"),
    ):
        dists = {label: getattr(a, measure) for label, a in analyses.items()}
        if _time_cdfs(ax, dists, unit, colours):
            zero_axes.append(what.split(" of ")[0])
        ax.set_xlabel(f"{what} ({unit.name})")
        ax.set_ylabel("fraction of packets ≤ x (CDF)")
        ax.set_ylim(0, 1.01)
    handles: list = [Line2D([], [], color=colours[label], label=label) for label in analyses]
    gaps = {_line_rate_gap_s(a) for a in analyses.values()}
    if len(gaps) == 1 and analyses:
        # Back-to-back packets of the commonest size at the queue's line rate (Fig 4.9's
        # 12 µs): gaps left of it arrived faster than the link can send.
        size, gap = gaps.pop()
        shown = f"{gap / unit.divisor:.3g} {unit.name}"
        label = f"gap of back-to-back {size} B packets at line rate ({shown})"
        handles.append(iat.axvline(gap / unit.divisor, label=label, **_REFERENCE))
    _burst_ccdfs(bursts, {label: a.bursts for label, a in analyses.items()}, colours)
    warmups = set()
    for label, a in analyses.items():
        occupancy.plot(
            a.series["time_s"], a.series["queue_pkts"], color=colours[label], linewidth=0.8
        )
        warmups.add(a.facts.window_start_ps / PS_PER_S)
    for warmup in sorted(w for w in warmups if w > 0):
        occupancy.axvspan(0, warmup, color="gray", alpha=0.12, linewidth=0)
    if any(w > 0 for w in warmups):
        handles.append(Patch(color="gray", alpha=0.12, label="warm-up (left out of the CDFs)"))
    occupancy.set_xlabel("time (s)")
    occupancy.set_ylabel("packets waiting (interval mean)")
    occupancy.set_ylim(bottom=0)
    plain_linear(occupancy.yaxis)
    for ax, title in (
        (iat, "Inter-arrival times of stored packets"),
        (bursts, "Burst sizes: successive packets of one flow"),
        (delay, "Queueing delay of stored packets"),
        (occupancy, "Queue occupancy"),
    ):
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
    notes.append(
        "The distributions are over the measured window, after the warm-up"
        + (" (shaded)." if any(w > 0 for w in warmups) else ".")
    )
    if zero_axes:
        notes.append(
            f"The {' and '.join(zero_axes)} axes run linearly from 0 to a decade below the "
            "smallest values, logarithmically above; the point on the 0 tick is the share of "
            "exactly zero (packets arriving together, or finding the queue empty)."
        )
    return finish(fig, footer, handles, [h.get_label() for h in handles], notes, ncol=3)


def time_unit(dists: Sequence[Distribution]) -> Unit:
    """One unit for every time axis of the figure: the one in which the middle of the values
    drawn (between the smallest 1st and the largest 99th percentile above zero) reads
    between 1 and 1,000."""
    lows = [d.quantile(0.01, positive=True) for d in dists if d.count]
    highs = [d.quantile(0.99, positive=True) for d in dists if d.count]
    lows, highs = [v for v in lows if np.isfinite(v)], [v for v in highs if np.isfinite(v)]
    if not lows:
        return Unit("ms", 1e-3)
    middle = math.sqrt(min(lows) * max(highs)) / PS_PER_S
    return unit_for("time", [middle])


def _time_cdfs(
    ax: plt.Axes, dists: Mapping[str, Distribution], unit: Unit, colours: Mapping[str, str]
) -> bool:
    """The CDF of each run's times in `unit`. With values of exactly zero the axis is linear
    from 0 to a decade below the smallest 1st percentile of the positive values, logarithmic
    above, and each run's share at zero a labelled point on the 0 tick; without, a log axis
    from that decade. Returns whether the axis has its zero."""
    scale = 1.0 / (PS_PER_S * unit.divisor)
    counted = {label: d for label, d in dists.items() if d.count}
    if not counted or all(d.high == 0 for d in counted.values()):
        ax.set_xticks([])
        ax.text(0.5, 0.5, "every value is zero", transform=ax.transAxes, ha="center")
        return False
    firsts = [d.quantile(0.01, positive=True) * scale for d in counted.values()]
    threshold = 10 ** math.floor(math.log10(min(f for f in firsts if np.isfinite(f))))
    zeros = {label: d.counts[0] / d.count for label, d in counted.items()}
    with_zero = any(share > 0 for share in zeros.values())
    for label, dist in counted.items():
        cdf = dist.cdf()
        values = cdf["value"].to_numpy() * scale
        fractions = cdf["cdf"].to_numpy()
        positive = dist.edges[np.flatnonzero(dist.counts) + 1] > 1  # not the zero bin
        start = zeros[label]
        if with_zero:
            x, y = np.r_[0.0, values[positive]], np.r_[start, fractions[positive]]
        else:
            x, y = np.r_[threshold, values], np.r_[0.0, fractions]
        ax.step(x, y, where="post", color=colours[label])
    if with_zero:
        _label_zeros(ax, zeros, colours)
    if with_zero:
        ax.set_xscale("symlog", linthresh=threshold, linscale=_LINEAR_DECADES)
        ax.set_xlim(left=0.0)
        plain_symlog(ax.xaxis, Unit(""), threshold)
    else:
        ax.set_xscale("log")
        ax.set_xlim(left=threshold)
        plain_log(ax.xaxis)
    return with_zero


# Labels of the shares at zero are this far apart at least (points), so two close shares'
# labels do not print over each other.
_LABEL_GAP_PT = 11.0


def _label_zeros(ax: plt.Axes, zeros: Mapping[str, float], colours: Mapping[str, str]) -> None:
    """Each run's share at zero as a point on the 0 tick with its percentage beside it, the
    labels lifted where two shares lie closer than a line of text."""
    fig = ax.get_figure()
    height_pt = ax.get_position().height * fig.get_figheight() * 72
    last_pt = -math.inf
    for label, share in sorted(zeros.items(), key=lambda item: item[1]):
        if share <= 0:
            continue
        ax.plot(0.0, share, marker="o", color=colours[label], clip_on=False, zorder=5)
        at_pt = max(share * height_pt + 3, last_pt + _LABEL_GAP_PT)
        last_pt = at_pt
        ax.annotate(
            f"{100 * share:.3g} % at 0",
            (0.0, share),
            textcoords="offset points",
            xytext=(7, at_pt - share * height_pt),
            fontsize=8,
            color=colours[label],
        )


def _burst_ccdfs(
    ax: plt.Axes, dists: Mapping[str, Distribution], colours: Mapping[str, str]
) -> None:
    """Each run's fraction of bursts at least x packets long (1 at x = 1), on log axes; a
    linear x axis with whole-number ticks when no burst reaches 10 packets."""
    high = 1.0
    smallest = 1.0
    for label, dist in dists.items():
        if dist.count == 0:
            continue
        sizes = np.flatnonzero(dist.counts)
        at_least = np.cumsum(dist.counts[::-1])[::-1][sizes] / dist.count
        # P(size ≥ x) holds from just above the size before up to each size: steps "pre".
        ax.step(sizes, at_least, where="pre", color=colours[label])
        ax.plot(sizes, at_least, "o", markersize=2.5, color=colours[label])
        high = max(high, float(sizes.max()))
        smallest = min(smallest, float(at_least.min()))
    ax.set_yscale("log")
    ax.set_ylim(10 ** math.floor(math.log10(smallest)), 1.5)
    ax.set_ylabel("fraction of bursts ≥ x (CCDF)")
    ax.set_xlabel("burst size x (packets)")
    if high >= 10:
        ax.set_xscale("log")
        ax.set_xlim(0.8, high * 1.3)
        plain_log(ax.xaxis)
    else:
        ax.set_xlim(0.5, high + 0.5)
        ax.set_xticks(range(1, int(high) + 1))
    plain_log(ax.yaxis)


def _line_rate_gap_s(a: QueueAnalysis) -> tuple[int, float]:
    size = int(np.argmax(a.stored_sizes.counts))
    return size, size * 8 / a.facts.rate_bps


def save_analysis_figure(
    analyses: Mapping[str, QueueAnalysis], out: Path, footer: str
) -> list[Path]:
    return save(analysis_figure(analyses, footer), out, "analysis")
