"""What a sweep keeps of the bumps table: each bump's counts as metrics of the run.

A sweep stores one summary per run; a run with bumps (`[[network.bump]]`) adds each numeric
column of each bump's row as a metric named `NAME.COLUMN` (`monitor.vq_overflows`,
`pacer.gap_mean_s`), so that recipes can plot and compare them like the summary's. It must
not know how sweeps store or print them.
"""

from __future__ import annotations

import math
from typing import Any

# The columns that describe a bump rather than count what it did.
_DESCRIPTIVE = {"name", "at", "pacer", "instances", "rate_bps"}


def bump_metrics(columns: dict[str, list[Any]]) -> dict[str, float]:
    """The engine's bumps table (column name -> values, one per bump) as `NAME.COLUMN`
    metrics; NaN stays NaN (a gap with fewer than two packets)."""
    return row_metrics(columns, "name", _DESCRIPTIVE)


def row_metrics(
    columns: dict[str, list[Any]], key: str, descriptive: set[str], prefix: str = ""
) -> dict[str, float]:
    """A table of the engine's with a row per part (column name -> values) as metrics named
    `PREFIX` + the row's `key` + `.COLUMN`, leaving out the `descriptive` columns (labels,
    settings); a missing value is NaN. The bumps' and the optical FIFOs' tables alike."""
    metrics: dict[str, float] = {}
    for i, name in enumerate(columns.get(key, [])):
        for column, values in columns.items():
            if column in descriptive:
                continue
            value = values[i]
            metrics[f"{prefix}{name}.{column}"] = math.nan if value is None else float(value)
    return metrics
