"""Tick marks that read as numbers: 10,000 and 20,000 rather than 1e4 and 2e+04, a few ticks
per axis rather than every minor one labelled, in the unit the axis names (`labels.Unit`)
while the data stay in their base unit.

It sets locators and formatters on a matplotlib axis and must not know what is drawn on it.
"""

from __future__ import annotations

import math

from matplotlib.axis import Axis
from matplotlib.ticker import (
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    SymmetricalLogLocator,
)

from buflab.plots.labels import PLAIN, Unit, number_text

# Ticks per decade by the decades an axis spans: 1-2-5 on a short log axis, decades on a long.
_FEW_DECADES = 3.0


def _formatter(unit: Unit) -> FuncFormatter:
    return FuncFormatter(lambda value, _position: number_text(value / unit.divisor))


def plain_log(axis: Axis, unit: Unit = PLAIN) -> None:
    """A log axis labelled 1, 2, 5, 10, 20, … (or only decades when it spans more than three)
    in plain, thousands-separated numbers; minor ticks unlabelled. Call it once the data are
    drawn: the span decides the ticks."""
    low, high = sorted(axis.get_view_interval())
    decades = math.log10(high / low) if low > 0 and high > 0 else math.inf
    subs = (1.0, 2.0, 5.0) if decades <= _FEW_DECADES else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(_formatter(unit))
    axis.set_minor_formatter(NullFormatter())


def plain_linear(axis: Axis, unit: Unit = PLAIN, bins: int = 6) -> None:
    """A linear axis with at most `bins` ticks at round numbers, plain and thousands-
    separated, without matplotlib's offset or exponent."""
    axis.set_major_locator(MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]))
    axis.set_major_formatter(_formatter(unit))


def plain_symlog(axis: Axis, unit: Unit, threshold: float) -> None:
    """A linear-then-log axis (matplotlib's symlog, linear up to `threshold`): zero at its own
    tick, then decades, labelled as plain numbers."""
    axis.set_major_locator(SymmetricalLogLocator(base=10, linthresh=threshold))
    axis.set_major_formatter(_formatter(unit))
    axis.set_minor_formatter(NullFormatter())
