"""What a sweep keeps of the optical tables: each optical FIFO's figures as metrics of the run.

A sweep stores one summary per run; a run whose queue is an optical FIFO (`queue =
"optical_fifo"`, thesis ch. 6) adds each numeric column of its `optical` row as a metric named
`optical.LINK.COLUMN` (`optical.bottleneck.lines`, `optical.bottleneck.fiber_km`), so that
recipes can print the hardware beside the utilization. It must not know how sweeps store or
print them.
"""

from __future__ import annotations

from typing import Any

from buflab.analysis.bumps import row_metrics

# The columns that name a row rather than measure it.
_DESCRIPTIVE = {"link"}


def optical_metrics(columns: dict[str, list[Any]]) -> dict[str, float]:
    """The engine's optical table (column name -> values, one per link) as
    `optical.LINK.COLUMN` metrics; NaN stays NaN (a mean with nothing to average)."""
    return row_metrics(columns, "link", _DESCRIPTIVE, prefix="optical.")
