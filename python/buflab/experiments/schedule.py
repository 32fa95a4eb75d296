"""Which run goes first, which runs share a task, and when the whole lot should be done.

Read first: `buflab.engine.wall_time` (the engine's estimate of one run from the packets its
bottlenecks can carry). A sweep's runs can differ a hundredfold in cost (a 32-port switch
against a 2-port one), and on a cluster the sweep ends when its last run does: so the longest
runs start first (LPT order: the makespan is then within 4/3 of the best possible), while
the short ones fill the gaps at the end. Costs come from a model of earlier runs when the run
store has enough of them (`CostModel.fit`: wall time against packets and flows, fitted on
logarithms), else from the engine's formula. Runs estimated under `SHORT_RUN_S` are batched
into tasks of about `BATCH_S`, so that a sweep of thousands of millisecond runs does not pay
a task's overhead per run (about a millisecond on Dask, more with the round trip), but never
into fewer than `TASKS_PER_WORKER` tasks per worker, which keeps the end of the sweep
balanced. `Eta` turns the same estimates into the time left, corrected by the runs that
finished.

It must not know how tasks are run or where results go: runs and numbers in, tasks and
seconds out. Order and batching change when a run happens, never what it computes.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from buflab.engine.wall_time import DEPARTURES_PER_WALL_SECOND, estimate

if TYPE_CHECKING:
    from buflab.experiments.sweep import PlannedRun

# A run estimated under this many seconds shares a task with others.
SHORT_RUN_S = 0.5
# The estimated work of one task of short runs.
BATCH_S = 2.0
# Short runs are never batched into fewer tasks than this many per worker, so that the last
# tasks are small enough to spread over every worker.
TASKS_PER_WORKER = 4
# A model is fitted from at least this many earlier runs, spanning at least this factor in
# packets; with fewer, the engine's formula scaled by their median ratio to it.
FIT_MIN_RUNS = 10
FIT_MIN_SPAN = 2.0


@dataclass(frozen=True)
class RunCost:
    """What a run's cost is estimated from: the packets its bottlenecks can carry in the
    simulated time (`buflab.engine.wall_time.estimate`) and the number of flows and users
    (more flows, more ACKs and timers per packet)."""

    packets: float
    flows: float

    @classmethod
    def of(cls, normalized: dict[str, Any]) -> RunCost:
        """The cost features of a validated scenario."""
        flows = 0.0
        for entry in normalized.get("traffic") or []:
            # long-lived flows, closed-loop users, open-loop sources: whichever it has
            count = next((entry[k] for k in ("flows", "users", "sources") if k in entry), 1)
            flows += float(count) if isinstance(count, int | float) else 1.0
        return cls(estimate(normalized).packets, flows)

    def features(self) -> list[float]:
        return [1.0, math.log(max(self.packets, 1.0)), math.log1p(self.flows)]


@dataclass(frozen=True)
class CostModel:
    """Wall seconds of a run from its `RunCost`: exp(b · (1, ln packets, ln(1 + flows))) when
    fitted, else the engine's packets ÷ departures per second times `scale`."""

    coefficients: tuple[float, ...] | None = None
    scale: float = 1.0
    fitted_on: int = 0

    @classmethod
    def fit(cls, history: Iterable[tuple[RunCost, float]]) -> CostModel:
        """The model of earlier runs: (their cost features, their measured wall seconds)."""
        # start-up time: numpy only when there is a history to fit
        import numpy as np

        rows = [(cost, wall) for cost, wall in history if wall > 0 and cost.packets > 0]
        if not rows:
            return cls()
        ratios = [wall / _formula(cost) for cost, wall in rows]
        scale = statistics.median(ratios)
        packets = [cost.packets for cost, _ in rows]
        if len(rows) < FIT_MIN_RUNS or max(packets) < FIT_MIN_SPAN * min(packets):
            return cls(None, scale, len(rows))
        x = np.array([cost.features() for cost, _ in rows])
        y = np.log([wall for _, wall in rows])
        solution, *_ = np.linalg.lstsq(x, y, rcond=None)
        return cls(tuple(float(b) for b in solution), scale, len(rows))

    def predict(self, cost: RunCost) -> float:
        if self.coefficients is None:
            return self.scale * _formula(cost)
        exponent = sum(b * f for b, f in zip(self.coefficients, cost.features(), strict=True))
        return math.exp(min(exponent, 50.0))


def _formula(cost: RunCost) -> float:
    return max(cost.packets, 1.0) / DEPARTURES_PER_WALL_SECOND


@dataclass(frozen=True)
class Task:
    """What one worker is given at a time: one run, or several short ones run in turn."""

    runs: tuple[PlannedRun, ...]
    estimate_s: float


def make_tasks(
    runs: Sequence[PlannedRun], estimate_s: Callable[[PlannedRun], float], workers: int
) -> list[Task]:
    """The runs as tasks, longest first: each run estimated at `SHORT_RUN_S` or more is a task
    of its own; shorter ones, still longest first, are grouped into tasks of about `BATCH_S`
    (less when that would leave fewer than `TASKS_PER_WORKER` tasks per worker). Ties keep the
    plan's order, so the same sweep gives the same tasks."""
    costed = sorted(((estimate_s(run), index, run) for index, run in enumerate(runs)),
                    key=lambda item: (-item[0], item[1]))  # fmt: skip
    long = [Task((run,), cost) for cost, _, run in costed if cost >= SHORT_RUN_S]
    short = [(cost, run) for cost, _, run in costed if cost < SHORT_RUN_S]
    if not short:
        return long
    total = sum(cost for cost, _ in short)
    target = min(BATCH_S, total / (TASKS_PER_WORKER * max(workers, 1)))
    batches: list[Task] = []
    group: list[PlannedRun] = []
    work = 0.0
    for cost, run in short:
        if group and work + cost > target:
            batches.append(Task(tuple(group), work))
            group, work = [], 0.0
        group.append(run)
        work += cost
    batches.append(Task(tuple(group), work))
    return long + batches


@dataclass
class Eta:
    """The time left for a set of runs on `workers` workers: the estimated work left, scaled
    by how the finished runs compared with their estimates, spread over the workers, and never
    less than the longest run left (it cannot be split)."""

    estimates: dict[str, float]
    workers: int
    _measured: float = 0.0
    _estimated_done: float = 0.0
    _left: dict[str, float] = field(init=False)

    def __post_init__(self) -> None:
        self._left = dict(self.estimates)

    def finished(self, run_id: str, wall_s: float | None) -> None:
        estimated = self._left.pop(run_id, None)
        if estimated is not None and wall_s is not None and wall_s > 0:
            self._measured += wall_s
            self._estimated_done += estimated

    def seconds_left(self) -> float:
        if not self._left:
            return 0.0
        correction = self._measured / self._estimated_done if self._estimated_done > 0 else 1.0
        work = correction * sum(self._left.values())
        return max(work / max(self.workers, 1), correction * max(self._left.values()))

    def deadline(self) -> float:
        """`seconds_left` as a point in `time.monotonic` time, for a bar that counts down."""
        return time.monotonic() + self.seconds_left()
