"""What a sweep's workers run, in the local pool's processes or on Dask's workers alike. Kept
apart from `buflab.experiments.sweep` so that a worker imports only the engine (and pandas only
for runs with downloads): workers start once per sweep, and a fresh interpreter (the "spawn"
start method, a cluster's worker) imports everything it needs again.

It must not know plans or files: scenario texts in, summaries (or each run's error) out.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from buflab import __version__
from buflab.analysis.bumps import bump_metrics
from buflab.analysis.network import network_metrics
from buflab.analysis.optical import optical_metrics
from buflab.engine import core, run_engine

# Topologies whose runs add the network figures (`buflab.analysis.network.network_metrics`).
GRAPHS = ("network", "tree", "layered")

# linux/prctl.h: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1


def start_worker(parent: int) -> None:
    """A worker's first act. Ctrl-C reaches the whole process group: workers ignore it so
    that only the parent reacts (saving results, printing one line) and workers print no
    tracebacks; the parent then terminates them. And a worker dies with its parent, even
    one killed with SIGKILL, which can stop nothing: the kernel sends it SIGKILL then
    (PR_SET_PDEATHSIG), and one whose parent is already gone exits at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def run_summary(scenario_text: str) -> dict[str, Any]:
    """One run, keeping only the summary (a sweep stores nothing else); runs with bumps add
    their counts (`buflab.analysis.bumps.bump_metrics`), runs with optical FIFOs their
    hardware and counts (`buflab.analysis.optical.optical_metrics`), runs with downloads their
    completion-time and throughput metrics (`buflab.analysis.transfers.sweep_metrics`), runs
    of a network, a tree or a layered network the drop rates per router and end to end and
    TCP's effective utilization (`buflab.analysis.network.network_metrics`)."""
    raw = run_engine(scenario_text)
    summary = raw["summary"]
    if (json.loads(scenario_text).get("network") or {}).get("topology") in GRAPHS:
        facts = core().traffic_facts(scenario_text)
        ingress = [link["ingress"] for link in facts["links"]]
        metrics = network_metrics(raw["links"], ingress, raw["flows"], facts["entries"])
        # A figure the run has no data for (no TCP flows for θ) is left out, not a column of nan.
        summary.update({key: value for key, value in metrics.items() if value == value})
    if raw.get("bumps") and raw["bumps"].get("name"):
        summary.update(bump_metrics(raw["bumps"]))
    if raw.get("optical") and raw["optical"].get("link"):
        summary.update(optical_metrics(raw["optical"]))
    if raw.get("transfers") and raw["transfers"].get("flow"):
        # start-up time: pandas only for runs with downloads (workers start once per sweep)
        from buflab.analysis.transfers import sweep_metrics
        from buflab.engine.result import table_dtypes, typed_frame

        transfers = typed_frame(raw["transfers"], table_dtypes("transfers"))
        summary.update(sweep_metrics(transfers, summary["warmup_s"]))
    return summary


def run_batch(scenario_texts: Sequence[str]) -> list[dict[str, Any]]:
    """Runs one after another (a task of several short runs, or of one), each answered by a
    record: `summary` or, for a run that raised, `error` (one line) and `traceback`; with the
    engine build, buflab version and host that made it. A run that fails does not stop the
    others of its task: its error is deterministic (the same scenario fails the same way
    anywhere), so it is reported once and not retried."""
    made_by = made_here()
    records = []
    for text in scenario_texts:
        try:
            records.append({"summary": run_summary(text), **made_by})
        except Exception as error:  # reported with its run, never swallowed
            line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            records.append(
                {
                    "error": f"{type(error).__name__}: {line}" if line else type(error).__name__,
                    "traceback": traceback.format_exc(),
                    **made_by,
                }
            )
    return records


def made_here() -> dict[str, str]:
    """What a worker reports of itself before it is given runs: its engine build and buflab
    version (a cluster whose workers run another build is refused), and its host."""
    return {
        "engine_build": core().engine_build(),
        "buflab_version": __version__,
        "host": socket.gethostname(),
    }
