"""Figures of the networks of tiny-buffer routers (thesis ch. 5): measured drop rates against
the buffer on a log axis with each theorem's bound drawn beside them, and the CDFs of a
flow's inter-arrival times at two routers.

It draws what it is given (`buflab.experiments.network` computes the numbers); it must not
know the theorems' formulas nor how a sweep ran.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from buflab.plots.caption import finish

# A bound above 1 bounds nothing: it is drawn at 1, the top of a probability axis.
_TOP = 1.0


@dataclass(frozen=True)
class BoundCurve:
    """A measured drop rate against the buffer, beside a bound at the same buffers."""

    label: str
    buffers: Sequence[float]
    measured: Sequence[float]
    bound: Sequence[float]
    bound_label: str
    color: int  # curves of one load share a colour
    marker: str = "o"
    bound_style: str = "--"


def bounds_figure(
    panels: Sequence[tuple[str, str, Sequence[BoundCurve]]],
    title: str,
    footer: str,
    floor_label: str = "no drop measured (on the axis floor)",
) -> Figure:
    """One panel per (title, y label, curves): measurements as markers joined by a line, bounds as
    lines of the same colour, both against the buffer, on a log y axis from the smallest
    measured drop rate to 1. A measurement of no drop at all is drawn as a hollow triangle on
    the axis floor (a log axis has no 0), `floor_label` in the legend."""
    width = max(8.0, 5.4 * len(panels))
    fig, axes = plt.subplots(1, len(panels), figsize=(width, 4.6), squeeze=False)
    positive = [
        y
        for _, _, curves in panels
        for c in curves
        for y in c.measured
        if y > 0 and math.isfinite(y)
    ]
    floor = 10 ** math.floor(math.log10(min(positive))) / 3 if positive else 1e-6
    handles: dict[str, object] = {}
    for ax, (panel, ylabel, curves) in zip(axes[0], panels, strict=True):
        for c in curves:
            color = f"C{c.color % 10}"
            x = np.asarray(c.buffers, dtype=float)
            y = np.asarray(c.measured, dtype=float)
            seen = y > 0
            (line,) = ax.plot(x[seen], y[seen], marker=c.marker, color=color, linewidth=1.2)
            handles.setdefault(c.label, line)
            if (~seen).any():
                ax.plot(
                    x[~seen],
                    np.full((~seen).sum(), floor),
                    marker="v",
                    color=color,
                    markerfacecolor="none",
                    linestyle="none",
                )
                (none,) = ax.plot(
                    [], [], marker="v", color="gray", markerfacecolor="none", ls="none"
                )
                handles.setdefault(floor_label, none)
            bound = np.minimum(np.asarray(c.bound, dtype=float), _TOP)
            (dashed,) = ax.plot(x, bound, linestyle=c.bound_style, color=color, linewidth=1.0)
            handles.setdefault(c.bound_label, dashed)
        ax.set_yscale("log")
        ax.set_ylim(floor / 1.5, 1.5)
        ax.set_xlabel("buffer B (packets)")
        ax.set_ylabel(ylabel)
        ax.set_title(panel, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return finish(fig, footer, list(handles.values()), list(handles), ncol=3)


def interarrival_figure(
    curves: Mapping[str, Mapping[str, Sequence[float]]], title: str, footer: str
) -> Figure:
    """Per case (a discipline), the empirical CDFs of one flow's inter-arrival times at each
    place (its ingress router, its last router), on a log time axis, one panel per case."""
    fig, axes = plt.subplots(1, len(curves), figsize=(5.4 * len(curves), 4.2), squeeze=False)
    for ax, (case, places) in zip(axes[0], curves.items(), strict=True):
        for k, (place, gaps) in enumerate(places.items()):
            x = np.sort(np.asarray(gaps, dtype=float)) * 1e6
            x = x[x > 0]
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=f"C{k}", label=place)
        ax.set_xscale("log")
        ax.set_xlabel("inter-arrival time (µs)")
        ax.set_ylabel("CDF")
        ax.set_title(case, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.suptitle(title, fontsize=10)
    return finish(fig, footer)
