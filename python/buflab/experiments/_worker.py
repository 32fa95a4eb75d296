"""What a sweep's worker processes run. Kept apart from `buflab.experiments.sweep` so that a
worker imports only the engine (and pandas only for runs with downloads): workers start once per
sweep, and a fresh interpreter (the "spawn" start method) imports everything it needs again.

It must not know plans or files: one scenario text in, one summary out.
"""

from __future__ import annotations

import signal
from typing import Any

from buflab.analysis.bumps import bump_metrics
from buflab.engine import run_engine


def ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group. Workers ignore it so that only the parent
    # reacts (saving results, printing one line) and workers print no tracebacks; the
    # parent then terminates them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_summary(scenario_text: str) -> dict[str, Any]:
    """One run, keeping only the summary (a sweep stores nothing else); runs with bumps add
    their counts (`buflab.analysis.bumps.bump_metrics`), runs with downloads their
    completion-time and throughput metrics (`buflab.analysis.transfers.sweep_metrics`)."""
    raw = run_engine(scenario_text)
    summary = raw["summary"]
    if raw.get("bumps") and raw["bumps"].get("name"):
        summary.update(bump_metrics(raw["bumps"]))
    if raw.get("transfers") and raw["transfers"].get("flow"):
        # start-up time: pandas only for runs with downloads (workers start once per sweep)
        from buflab.analysis.transfers import sweep_metrics
        from buflab.engine.result import table_dtypes, typed_frame

        transfers = typed_frame(raw["transfers"], table_dtypes("transfers"))
        summary.update(sweep_metrics(transfers, summary["warmup_s"]))
    return summary
