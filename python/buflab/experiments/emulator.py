"""Where a sweep's runs go when they are emulations (`buflab size --emulate`, `buflab
reproduce --emulate`): this machine's emulator, one run at a time, in this process.

Read first: `buflab.experiments.execution` (the contract) and `buflab.engine.emulation`
(what one emulation is). The datapath owns a core and every run takes its duration in real
time, so runs never overlap, whichever search or thread asks (several size searches of a
curve share one `Emulator` and wait their turn). A run's record is as a simulated run's:
its summary (with the emulation's fidelity figures, and a run with downloads' completion-time
metrics, as `_worker.run_summary` adds them), or its error in one line; what made it is Linux
and its kernel release beside the engine build (`build`), so that a sweep never takes a
simulated run for an emulated one or the reverse, and resumes only runs made the same way.

It must not know plans, files or the run store: tasks in, records out.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from buflab.analysis.bumps import bump_metrics
from buflab.engine import Error, ScenarioError, core
from buflab.engine.units import parse_time
from buflab.experiments._worker import made_here
from buflab.experiments.execution import Executor, OnRun
from buflab.experiments.store import linux_engine

if TYPE_CHECKING:
    from buflab.engine.result import Result
    from buflab.experiments.schedule import Task

# Seconds an emulation takes beyond its duration: the namespaces made and removed, the
# processes started and stopped, the event log replayed (measured: 3–5 s on this kind of
# machine for the scaled testbed); only for the ETA.
SETUP_S = 5.0

# One emulation at a time on this machine, whichever executor or thread asks.
_ONE_AT_A_TIME = threading.Lock()


class Emulator(Executor):
    """Runs each run as an emulation, one after another (module doc)."""

    workers = 1
    description = "this machine's emulator, one run at a time, in real time"

    def __init__(self) -> None:
        super().__init__()
        self.engine = linux_engine()
        self.build = f"{self.engine} + {core().engine_build()}"

    def wall_s(self, normalized: dict[str, Any]) -> float:
        """What a run takes: its duration in real time, and the set-up around it."""
        return parse_time(str(normalized["duration"])) + SETUP_S

    def run(self, tasks: Sequence[Task], on_run: OnRun) -> None:
        for task in tasks:
            for run in task.runs:
                if self.stopping:
                    raise KeyboardInterrupt
                with _ONE_AT_A_TIME:
                    record = self._record(run.scenario)
                on_run(run, record)

    def _record(self, scenario: dict[str, Any]) -> dict[str, Any]:
        # start-up time: the emulator only when a run is emulated
        from buflab.engine.emulation.runner import emulate

        made_by = {**made_here(), "engine_build": self.build}
        try:
            return {"summary": emulated_summary(emulate(scenario)), **made_by}
        except Error as error:  # the machine or the scenario: the run's one line, kept
            return {"error": f"{type(error).__name__}: {error}", "traceback": "", **made_by}

    def close(self) -> None:
        """Nothing is left running between runs."""


def check_emulable(scenarios: Sequence[dict[str, Any]], what: str) -> None:
    """Refuses, before anything runs, the first scenario the emulator cannot realise
    (`buflab.engine.emulation.plan`), in one line: `WHAT: KEY: got ...; expected ...`."""
    # start-up time: the emulator only when runs are emulated
    from buflab.engine.emulation.plan import plan
    from buflab.engine.emulation.runner import available_congestion_controls

    controls = available_congestion_controls()
    for scenario in scenarios:
        try:
            plan(scenario, controls)
        except ScenarioError as error:
            raise ScenarioError(f"{what}: {error}") from None


def emulated_summary(result: Result) -> dict[str, Any]:
    """An emulation's summary as a sweep keeps it: with a run with bumps' counts
    (`buflab.analysis.bumps.bump_metrics`) and a run with downloads' completion-time and
    throughput metrics (`buflab.analysis.transfers.sweep_metrics`), as a simulated run's."""
    summary = dict(result.summary)
    if len(result.bumps):
        summary.update(bump_metrics(result.bumps.to_dict("list")))
    transfers = result.transfers
    if len(transfers):
        # start-up time: the transfers' analysis only for runs with downloads
        from buflab.analysis.transfers import sweep_metrics

        summary.update(sweep_metrics(transfers, summary["warmup_s"]))
    return summary
