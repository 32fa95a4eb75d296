"""A recipe's points on real TCP beside the same points simulated (`buflab reproduce NAME
--emulate`): the same plan, the same seeds, so the same flows each way; one row per point
with each of the recipe's metrics simulated and on Linux, and, for a recipe with a
`[sweep.threshold]` table, each line's smallest passing buffer both ways.

Read first: `buflab.experiments.reproduce` (which runs both) and `report` (the summary frames
this pairs). It must not run anything or print.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

SIDES = ("sim", "real")


def points_beside(
    real: pd.DataFrame, sim: pd.DataFrame, keys: Sequence[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """One row per point of `real` (a sweep's summary frame: the varied `keys`, then
    `<metric>_mean`), in its order: the keys, then `sim_<metric>` and `real_<metric>` for
    each metric; nan where a side has no such point or metric."""
    columns = [f"{m}_mean" for m in metrics]

    def side(frame: pd.DataFrame, name: str) -> pd.DataFrame:
        kept = frame.reindex(columns=[*keys, *columns])
        return kept.rename(columns={f"{m}_mean": f"{name}_{m}" for m in metrics})

    merged = side(real, "real").merge(side(sim, "sim"), on=list(keys), how="left", sort=False)
    ordered = [f"{s}_{m}" for m in metrics for s in SIDES]
    return merged[[*keys, *ordered]]


def thresholds_beside(real: pd.DataFrame, sim: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Each line of a `[sweep.threshold]` table (its line `keys`, then `minimum` and
    `utilization` among others), in `real`'s order, with the smallest passing buffer and its
    utilization both ways: `sim_minimum`, `real_minimum`, `sim_utilization`,
    `real_utilization` (empty where a line never passed)."""
    picked = ["minimum", "utilization"]
    if keys:
        both = real[[*keys, *picked]].merge(
            sim[[*keys, *picked]], on=list(keys), how="left", suffixes=("_real", "_sim"), sort=False
        )
    else:  # a sweep of one line: one row each way
        sides = [
            f[picked].reset_index(drop=True).add_suffix(f"_{n}")
            for f, n in ((real, "real"), (sim, "sim"))
        ]
        both = pd.concat(sides, axis=1)
    renamed = {f"{c}_{s}": f"{s}_{c}" for c in picked for s in SIDES}
    return both.rename(columns=renamed)[[*keys, *(f"{s}_{c}" for c in picked for s in SIDES)]]
