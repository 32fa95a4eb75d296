"""The TCP traces of a sweep whose scenario traces flows (`monitor.trace_flows`): the pacing
study's figures (P1's window and cumulative throughput, P2's aggregate throughput and fairness
over time) from the sweep's own points, so that `buflab reproduce p1` draws what it promises.

A sweep keeps only each run's summary; the traces come from one more run per point, at the
point's first seed, kept whole in OUT/traces/<run id>/ (a run directory: `buflab traces` and
`buflab.load_run` read it). A run directory already there is reused, so an interrupted or
repeated sweep runs only what is missing; the runs are deterministic, so a reused one is the
one that would be made. Each line of the sweep (each combination of the other varied keys)
gets one figure overlaying its x values, STEM_traces.png (STEM_traces_<line>.png with several
lines).

It runs scenarios and draws their traces; it must not know the command line (progress goes
through `on_progress`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from buflab import plots
from buflab.engine.runner import run
from buflab.engine.scenario import get_key
from buflab.experiments.sweep import PlannedRun, SweepInterrupted
from buflab.plots.traces import write_trace_figure

if TYPE_CHECKING:  # the report draws these figures, so it imports this module
    from buflab.experiments.report import SweepView

TRACES_DIR = "traces"


def traces_wanted(view: SweepView) -> bool:
    """Whether the sweep's scenario traces flows."""
    return bool(get_key(view.plan.base, "monitor.trace_flows", None))


def first_runs(view: SweepView) -> list[PlannedRun]:
    """One planned run per point: the first seed's."""
    first: dict[str, PlannedRun] = {}
    seed = min(view.plan.seeds())
    for planned in view.plan.runs:
        if planned.seed == seed:
            first.setdefault(planned.id, planned)
    return list(first.values())


def run_traced(
    view: SweepView, out: Path, on_progress: Callable[[int, int], None] | None = None
) -> dict[str, Path]:
    """Each point's first-seed run, kept in OUT/traces/<id>/ (reused when there); returns the
    run directories by run id. Raises SweepInterrupted on Ctrl-C (finished runs are kept)."""
    todo = first_runs(view)
    done: dict[str, Path] = {}
    for k, planned in enumerate(todo):
        where = out / TRACES_DIR / planned.id
        if not (where / "traces.parquet").exists():
            try:
                result = run(planned.scenario)
            except KeyboardInterrupt:
                raise SweepInterrupted(len(done), len(todo), out, str(out / TRACES_DIR)) from None
            result.to_dir(where)
        done[planned.id] = where
        if on_progress:
            on_progress(k + 1, len(todo))
    return done


def draw_traces(
    view: SweepView, runs: dict[str, Path], out: Path, stem: str, title: str, version: str
) -> list[Path]:
    """One figure per line of the sweep, its x values overlaid and named as the sweep's figure
    names them; returns the files written."""
    by_id = {planned.id: planned for planned in first_runs(view)}
    lines: dict[tuple[str, ...], list[tuple[Any, Path]]] = {}
    for run_id, where in runs.items():
        point = by_id[run_id].point
        line = tuple(str(point[key]) for key in view.line_keys)
        lines.setdefault(line, []).append((point[view.x_key], where))
    files: list[Path] = []
    for line, members in lines.items():
        order = {str(v): i for i, v in enumerate(view.plan.varies[0].values)}
        members.sort(key=lambda member: order[str(member[0])])
        frames = {
            view.figure_label(view.x_key, x): pd.read_parquet(where / "traces.parquet")
            for x, where in members
        }
        scenarios = [by_id[i].scenario for i, where in runs.items() if where in _dirs(members)]
        name = str(view.plan.base.get("name", "unnamed"))
        seed = [min(view.plan.seeds())]
        footer = plots.footer_text(name, seed, version, plots.Setting.of(scenarios))
        described = ", ".join(
            view.figure_label(key, value) for key, value in zip(view.line_keys, line, strict=True)
        )
        figure_title = f"{title}: traces" + (f", {described}" if described else "")
        figure_stem = f"{stem}_traces" + (f"_{_slug(line)}" if len(lines) > 1 else "")
        files += write_trace_figure(
            frames, out, footer, figure_stem, figure_title, _warmup(members)
        )
    return files


def _dirs(members: list[tuple[Any, Path]]) -> set[Path]:
    return {where for _, where in members}


def _warmup(members: list[tuple[Any, Path]]) -> float:
    """The warm-up the runs share (read from their summaries), or 0 when they differ."""
    summaries = [json.loads((where / "summary.json").read_text()) for _, where in members]
    warmups = {float(summary["warmup_s"]) for summary in summaries}
    return warmups.pop() if len(warmups) == 1 else 0.0


def _slug(values: tuple[str, ...]) -> str:
    """A line's values as a file-name part: "together", "1Gbps-fast"."""
    return re.sub(r"[^A-Za-z0-9._+]+", "-", "-".join(values)).strip("-") or "line"
