"""The same scenario in the simulator and on real Linux TCP, side by side (`buflab compare`).

Read first: `buflab.engine.emulation` (what the emulation realises). Each point (one value of
each `--vary` key, every combination) runs once each way with the same seed, hence the same
flows, start times and RTTs; the table puts the summary figures both have beside each other
with their differences, and the figure draws utilization and drop rate against the first
varied key. Emulations run one at a time, in real time: a point costs its `duration`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine.emulation.runner import emulate
from buflab.engine.runner import run as simulate
from buflab.experiments.sweep import Plan, Vary
from buflab.plots import add_footer, plt, save

# The summary figures both ways report, by name.
FIGURES = ("utilization", "drop_rate", "mean_queue_pkts", "jain_fairness")


def compare(
    tree: dict[str, Any],
    varies: Sequence[Vary],
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> pd.DataFrame:
    """One row per point: the varied values, then `sim_X`, `real_X` and `diff_X` (real − sim)
    for each figure X, and whether the emulation was faithful."""
    rows = []
    # The sweep's own plan: every combination, each point's overrides, one run (the scenario's
    # seed) per point.
    todo = Plan(tree, list(varies), 1).runs
    for k, run in enumerate(todo):
        sim = simulate(run.scenario).summary
        real = emulate(run.scenario)
        row: dict[str, Any] = dict(run.point)
        for name in FIGURES:
            row[f"sim_{name}"] = float(sim[name])
            row[f"real_{name}"] = float(real.summary[name])
            row[f"diff_{name}"] = row[f"real_{name}"] - row[f"sim_{name}"]
        row["real_faithful"] = bool(real.summary["faithful"])
        row["real_late_within_10us"] = float(real.summary["late_within_10us"])
        rows.append(row)
        progress(k + 1, len(todo))
    return pd.DataFrame(rows)


def compare_figure(frame: pd.DataFrame, key: str | None, title: str, footer: str) -> plt.Figure:
    """Utilization and drop rate against `key` (or per point), simulated and real."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    xs = list(range(len(frame))) if key is None else [str(x) for x in frame[key]]
    for ax, name, label in (
        (top, "utilization", "utilization (%)"),
        (bottom, "drop_rate", "drop rate (%)"),
    ):
        ax.plot(xs, frame[f"sim_{name}"] * 100, "o-", label="buflab (simulated)")
        ax.plot(xs, frame[f"real_{name}"] * 100, "s--", label="Linux TCP (emulated)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    top.set_title(title)
    top.legend(loc="lower right")
    bottom.set_xlabel(key or "point")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    add_footer(fig, footer)
    return fig


def write_compare(
    frame: pd.DataFrame, key: str | None, out: Path, title: str, footer: str
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "compare.csv", index=False)
    return [out / "compare.csv", *save(compare_figure(frame, key, title, footer), out, "compare")]
