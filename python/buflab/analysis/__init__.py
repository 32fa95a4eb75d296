"""The analysis layer: what numbers say, computed from scenarios, results and event logs.

- `theory`: the buffer sizing rules of the literature (RTT·C, RTT·C/√N, eq. 2.1, ρ^B).
- `stats`: confidence intervals of the mean of a few runs.
- `transfers`: finite transfers' completion times and throughput by file size.
- `queue`: the bottleneck queue rebuilt from its event log, and the testbed's traffic measures.
- `bumps`, `optical`: what a sweep keeps of the bumps and optical tables, as metrics of a run.

It stands on the engine layer (`buflab.engine`: scenarios, units, the event log) and on
nothing else: it must not know how runs are organised (sweeps, searches), drawn or printed.
This module imports none of them, so `buflab.analysis.theory` stays cheap to import.
"""

from __future__ import annotations

from typing import Any

from buflab.engine.lazy import listing, submodule


def __getattr__(name: str) -> Any:
    # Submodules load on first use (`buflab.analysis.queue` right after `import buflab`).
    return submodule(__name__, name)


def __dir__() -> list[str]:
    return listing(__name__, globals())
