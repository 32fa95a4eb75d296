"""The verdict on one published number, and on a row of them.

Published figures are read off plots, so each number carries a band (`≈ value ± band`) or a
claim without a number (`<` or `>` a value: "fewer drops", "above Reno"). buflab's figure is
the mean over a point's seeds with its 95 % Student-t interval (none with one seed).

- **agrees**: `≈`: the mean is within the band. `<`/`>`: the whole 95 % interval is on the
  claimed side (with one seed, the mean is).
- **near**: `≈`: the mean is outside the band but within twice it, or its 95 % interval
  reaches into the band. `<`/`>`: the interval touches the value (the mean on either side
  of it, within noise), or the mean equals it.
- **disagrees**: anything else: outside twice the band with the whole interval outside the
  band, or the whole interval on the wrong side of a claim.
- **not yet**: no number to judge: the point did not run (a scale that leaves it out, an
  interrupted run), the row has no recipe, or its recipe was refused.

A row's verdict is its worst judged number's (disagrees before near before agrees); a row
with no judged number is "not yet".

It must not know how the numbers were made or shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from buflab.experiments.report import Comparison

AGREES, NEAR, DISAGREES, NOT_YET = "agrees", "near", "disagrees", "not yet"
# From best to worst; "not yet" is no verdict at all and sorts last in the summary.
VERDICTS = (AGREES, NEAR, DISAGREES, NOT_YET)
# Outside the band but within this many bands of the value: near.
NEAR_BANDS = 2.0


def judge(comparison: Comparison) -> str:
    """The verdict on one published number beside buflab's mean and 95 % interval."""
    mean, entry = comparison.measured, comparison.published
    if math.isnan(mean):
        return NOT_YET
    half = 0.0 if math.isnan(comparison.ci95) else comparison.ci95
    if entry.relation in ("<", ">"):
        # How far the mean is on the claimed side of the value (negative: the wrong side).
        side = (mean - entry.value) * (1 if entry.relation == ">" else -1)
        if side > half:
            return AGREES
        return NEAR if side >= -half else DISAGREES
    off = abs(mean - entry.value)
    if _within(off, entry.band):
        return AGREES
    if _within(off, NEAR_BANDS * entry.band) or _within(off - half, entry.band):
        return NEAR
    return DISAGREES


def _within(distance: float, limit: float) -> bool:
    """distance ≤ limit, a value on the edge of its band counting as inside although its
    difference is off by a rounding (0.55 − 0.5 is 0.05000000000000004)."""
    return distance <= limit * (1 + 1e-9)


def worst(verdicts: Iterable[str]) -> str:
    """A row's verdict: its worst judged number's, "not yet" when none was judged."""
    judged = [v for v in verdicts if v != NOT_YET]
    return max(judged, key=VERDICTS.index) if judged else NOT_YET
