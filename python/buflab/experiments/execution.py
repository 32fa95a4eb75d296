"""Where a sweep's tasks run: the contract between a sweep and the thing that runs its tasks,
this machine's process pool (`pool.LocalPool`, the default) or a Dask cluster
(`cluster.DaskCluster`); `backends` chooses one.

Read first: `buflab.experiments.schedule` (what a task is). An executor takes tasks and calls
back, in the caller's thread, once per run with the record the worker made
(`buflab.experiments._worker.run_batch`: a summary, or the run's error). It owns retries of
what is not the run's fault (a worker killed mid-run: the run is given to another worker; a
run that kills its worker every time fails after `ATTEMPTS`), and it stops on Ctrl-C,
cancelling what has not finished. One executor serves a whole command: every probe of a size
search, and several searches at once from threads (`in_parallel`).

It must not know plans, files or the run store: tasks in, records out.
"""

from __future__ import annotations

import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from buflab.experiments.schedule import Task
    from buflab.experiments.sweep import PlannedRun

# How many times a task may be running on a worker that dies before its runs are reported as
# failed: Dask's default `distributed.scheduler.allowed-failures` + 1, kept for the pool too.
ATTEMPTS = 4
# How often a waiting executor looks whether it was told to stop (seconds).
POLL_S = 0.2

OnRun = Callable[["PlannedRun", dict[str, Any]], None]
T = TypeVar("T")


class Executor(ABC):
    """Runs tasks on workers. `workers` is how many runs it can run at once (for batching and
    the ETA); `description` says where, in one line for the terminal."""

    workers: int
    description: str
    # What makes its runs when that is not the simulator of this process: the run store's
    # `engine` and the build a run file must have been made by to count as done (the
    # emulator's name Linux and its kernel release). None: the simulator, this engine build.
    engine: str | None = None
    build: str | None = None

    def __init__(self) -> None:
        self._stopping = threading.Event()

    def wall_s(self, normalized: dict[str, Any]) -> float | None:
        """What a run takes, when the executor knows it better than the history of past runs
        does (an emulation takes its duration in real time); None: ask the history."""
        return None

    @abstractmethod
    def run(self, tasks: Sequence[Task], on_run: OnRun) -> None:
        """Runs every task; calls `on_run(run, record)` for each run as its task finishes.
        A task that cannot finish (its worker died `ATTEMPTS` times) gives each of its runs
        a record with `error`. Ctrl-C (in this thread, or `stop()` from another) cancels the
        tasks not finished and raises KeyboardInterrupt."""

    def stop(self) -> None:
        """Makes every `run` in progress, in any thread, cancel its tasks and raise
        KeyboardInterrupt (Ctrl-C reaches only the main thread)."""
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @abstractmethod
    def close(self) -> None:
        """Releases the workers (ends the processes it started)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def failed_records(task: Task, error: str) -> list[dict[str, Any]]:
    """A record per run of a task that could not finish, saying why."""
    return [{"error": error, "traceback": ""} for _ in task.runs]


def in_parallel(calls: Sequence[Callable[[], T]], executor: Executor) -> list[T]:
    """Each call in a thread of its own, sharing `executor` (several size searches at once);
    their results in order. Ctrl-C stops every call's runs; the first error raised by a call
    (a call that was stopped raises what its own Ctrl-C handling raises) is raised here once
    all have ended."""
    if len(calls) == 1:
        return [calls[0]()]
    with ThreadPoolExecutor(max_workers=len(calls), thread_name_prefix="buflab-search") as pool:
        futures = [pool.submit(call) for call in calls]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            if any(future.exception() is not None for future in done):
                executor.stop()  # one search failed: the others stop too
            wait(futures)
        except KeyboardInterrupt:
            executor.stop()
            wait(futures)
        errors = [future.exception() for future in futures if future.exception() is not None]
        # A search's own error comes before the interruptions it caused in the others.
        errors.sort(key=_interrupted)
        if errors:
            raise errors[0]
        return [future.result() for future in futures]


def _interrupted(error: BaseException) -> bool:
    return isinstance(error, KeyboardInterrupt | Interrupted)


class Interrupted(Exception):
    """Work stopped by Ctrl-C after keeping what finished (a sweep's `SweepInterrupted`)."""


@contextmanager
def workers_without_main() -> Iterator[None]:
    """While workers start, the caller's main module looks like it has no file: a spawned
    worker otherwise runs it again first (a script without an `if __name__ == "__main__"`
    guard would start the sweep again in every worker, and `<stdin>` cannot be read back),
    and a worker needs nothing of it (it runs buflab's own functions)."""
    main = sys.modules.get("__main__")
    saved = {name: getattr(main, name) for name in ("__file__", "__spec__") if hasattr(main, name)}
    try:
        for name in saved:
            if name == "__spec__":
                main.__spec__ = None
            else:
                delattr(main, name)
        yield
    finally:
        for name, value in saved.items():
            setattr(main, name, value)
