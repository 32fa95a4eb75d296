"""This machine's process pool, the default executor: one process per core, started with
"spawn", each ignoring Ctrl-C and dying with its parent (`_worker.start_worker`).

Read first: `buflab.experiments.execution` (the contract). The pool starts on the first task
and serves every task of the command after it (each probe of a size search, several searches
at once). A worker that dies mid-task (killed, out of memory) breaks a Python process pool
whole: the tasks that were in it are given to a new pool, and a task that was running in
`ATTEMPTS` broken pools fails with that said, as on Dask.

It must not know plans, files or the run store.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from buflab.engine import scenario_json
from buflab.experiments._worker import run_batch, start_worker
from buflab.experiments.execution import (
    ATTEMPTS,
    POLL_S,
    Executor,
    OnRun,
    failed_records,
    workers_without_main,
)

if TYPE_CHECKING:
    from buflab.experiments.schedule import Task


class LocalPool(Executor):
    def __init__(self, jobs: int | None = None) -> None:
        super().__init__()
        self.workers = jobs or os.cpu_count() or 1
        self.description = f"this machine's process pool, {self.workers} processes"
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _current(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # "spawn" gives workers a fresh interpreter: forking a process that runs the
                # progress bar's refresh thread is unsafe (and deprecated in Python 3.12).
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=start_worker,
                    initargs=(os.getpid(),),
                )
            return self._pool

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """A new pool for the next tasks, once, however many threads saw `broken` break."""
        with self._lock:
            if self._pool is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self._pool = None

    def run(self, tasks: Sequence[Task], on_run: OnRun) -> None:
        attempts = dict.fromkeys(range(len(tasks)), 0)
        # Each future with its task and the pool it went to (a broken pool is replaced once).
        futures: dict[Future[list[dict[str, Any]]], tuple[int, ProcessPoolExecutor]] = {}

        def submit(index: int) -> None:
            pool = self._current()
            texts = [scenario_json(run.scenario) for run in tasks[index].runs]
            with workers_without_main():
                futures[pool.submit(run_batch, texts)] = (index, pool)

        try:
            for index in range(len(tasks)):
                submit(index)
            while futures:
                if self.stopping:
                    raise KeyboardInterrupt
                done, _ = wait(futures, timeout=POLL_S, return_when=FIRST_COMPLETED)
                for future in done:
                    index, pool = futures.pop(future)
                    task = tasks[index]
                    try:
                        records = future.result()
                    except BrokenProcessPool:
                        # A worker died; every task in the pool was lost with it.
                        attempts[index] += 1
                        if attempts[index] >= ATTEMPTS:
                            records = failed_records(
                                task, f"its worker process died {ATTEMPTS} times running it"
                            )
                        else:
                            self._replace(pool)
                            submit(index)
                            continue
                    for run, record in zip(task.runs, records, strict=True):
                        on_run(run, record)
        except BaseException:
            self._stop_now()
            raise

    def _stop_now(self) -> None:
        """Cancel queued tasks and end the running ones now rather than when they finish."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())  # CPython keeps them here
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
