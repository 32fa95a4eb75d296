"""Summaries of finite transfers: completion time and throughput, grouped by file size.

    >>> from buflab.analysis.transfers import by_size_bin, short_and_long
    >>> by_size_bin(result.transfers)      # one row per size bin (thesis Fig. 4.6)
    >>> short_and_long(result.transfers)   # short < 50 KB, long > 1,000 KB (IMC Fig. 5c, 5d)

The input is `Result.transfers`: one row per connection carrying one file. Every transfer
counts in `transfers`; only complete ones (`complete` true) enter `completed` and the
statistics, because an unfinished transfer has no completion time. Throughput is averaged
over transfers, bytes·8/fct each, as the thesis averages "the throughput of all flows in a
given flow size bin". Sizes are in bytes and KB is 1000 bytes. Given no transfers, both
functions return a table with the columns and no rows.

It must not know how the table was produced or how its summaries are printed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import pandas as pd

# Bin edges in bytes; each bin holds the sizes from its lower edge up to, not including, its
# upper edge. Thesis ch. 4, Fig. 4.6 caption: "The left-most bars show the average throughput
# of flows smaller than 30KB. The right-most ones show the average throughput of flows larger
# than 500KB." The text gives no edges in between; 50, 100 and 200 KB are our choice, so that
# the chapter's other thresholds fall on edges (the small flows of Fig. 4.7, ≤ 50KB; "flows
# smaller than 200KB do not see improved throughput"). Sizes exactly on an edge go up: a file
# of exactly 500 KB counts as "≥ 500 KB". With the chapter's file sizes (Pareto, mean 80 KB,
# shape 1.5, so none below 26.7 KB) about 16 % of files fall below 30 KB and 1.2 % at or
# above 500 KB.
SIZE_BINS: tuple[float, ...] = (0, 30_000, 50_000, 100_000, 200_000, 500_000, math.inf)

# The columns of every table this module returns, and their types.
COLUMNS: dict[str, str] = {
    "bin": "object",
    "transfers": "int64",
    "completed": "int64",
    "fct_mean_s": "float64",
    "fct_p50_s": "float64",
    "fct_p99_s": "float64",
    "throughput_mean_bps": "float64",
}


def by_size_bin(transfers: pd.DataFrame, bins: Sequence[float] = SIZE_BINS) -> pd.DataFrame:
    """One row per bin of file size, in order, bins without transfers included; `bins` are
    increasing edges in bytes. Transfers outside the first and last edge are left out."""
    if len(bins) < 2 or any(low >= high for low, high in pairwise(bins)):
        raise ValueError(f"bins must be at least two increasing edges, got {list(bins)}")
    if len(transfers) == 0:
        return _table([])
    size = transfers["bytes"]
    return _table(
        [
            _statistics(_bin_label(low, high), transfers[(size >= low) & (size < high)])
            for low, high in pairwise(bins)
        ]
    )


def short_and_long(
    transfers: pd.DataFrame, short_max: float = 50_000, long_min: float = 1_000_000
) -> pd.DataFrame:
    """Two rows: short transfers (bytes < short_max) and long ones (bytes > long_min).

    IMC 2008, §3.1.2 ("Flow Completion Time"): flows smaller than 50 KB (roughly 33 packets)
    are short, flows larger than 1000 KB (roughly 600 packets) are long; sizes in between are
    in neither row.
    """
    if len(transfers) == 0:
        return _table([])
    size = transfers["bytes"]
    return _table(
        [
            _statistics(f"short (< {_kb(short_max)} KB)", transfers[size < short_max]),
            _statistics(f"long (> {_kb(long_min)} KB)", transfers[size > long_min]),
        ]
    )


def sweep_metrics(transfers: pd.DataFrame, warmup_s: float) -> dict[str, float]:
    """Flat per-run numbers for a sweep's summary, over transfers that started after the
    warm-up: completed count, mean FCT and throughput of short and long transfers (IMC Fig.
    5c, 5d), and mean throughput per Fig. 4.6 size bin (`throughput_<bin>_bps`)."""
    measured = transfers[transfers["start_s"] >= warmup_s]
    metrics: dict[str, float] = {
        "transfers_started": float(len(measured)),
        "transfers_completed": float(measured["complete"].astype(bool).sum()),
    }
    # short_and_long's rows are short then long, or none when nothing started after warm-up.
    for kind, row in zip(("short", "long"), short_and_long(measured).itertuples(), strict=False):
        metrics[f"fct_{kind}_mean_s"] = row.fct_mean_s
        metrics[f"throughput_{kind}_mean_bps"] = row.throughput_mean_bps
    for (low, high), row in zip(
        pairwise(SIZE_BINS), by_size_bin(measured).itertuples(), strict=True
    ):
        metrics[f"throughput_{_bin_name(low, high)}_bps"] = row.throughput_mean_bps
    return metrics


def _bin_name(low: float, high: float) -> str:
    """A bin as part of a column name: "lt30KB", "30to50KB", "ge500KB"."""
    if low <= 0:
        return f"lt{_kb(high)}KB"
    if math.isinf(high):
        return f"ge{_kb(low)}KB"
    return f"{_kb(low)}to{_kb(high)}KB"


def _statistics(label: str, transfers: pd.DataFrame) -> dict[str, Any]:
    done = transfers[transfers["complete"].astype(bool)]
    fct = done["fct_s"]
    return {
        "bin": label,
        "transfers": len(transfers),
        "completed": len(done),
        "fct_mean_s": fct.mean(),
        "fct_p50_s": fct.quantile(0.50),
        "fct_p99_s": fct.quantile(0.99),
        "throughput_mean_bps": done["throughput_bps"].mean(),
    }


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)


def _bin_label(low: float, high: float) -> str:
    """ "< 30 KB", "30–50 KB", "≥ 500 KB"."""
    if low <= 0 and math.isinf(high):
        return "any size"
    if low <= 0:
        return f"< {_kb(high)} KB"
    if math.isinf(high):
        return f"≥ {_kb(low)} KB"
    return f"{_kb(low)}–{_kb(high)} KB"


def _kb(size: float) -> str:
    return f"{size / 1000:,g}"
