"""Runs on a Dask cluster: `--cluster local` (a `distributed.LocalCluster` on this machine's
cores), `--cluster tcp://HOST:PORT` (a scheduler already running, with its workers) and
`--cluster slurm` (workers started as Slurm jobs by dask-jobqueue). Dask is an optional
dependency: `pip install 'buflab[cluster]'`, and `'buflab[slurm]'` for Slurm.

Read first: `buflab.experiments.execution` (the contract) and `pool` (the default beside it).
The client (this process) plans, schedules and writes; workers only run
(`_worker.run_batch`) and send back summaries, so a sweep's files are the same wherever its
runs ran and an interrupted one resumes anywhere. Tasks go out longest first (each task's
Dask priority is its rank in `schedule.make_tasks`'s order). What is not the run's fault is
Dask's to retry: a task whose worker dies is given to another, up to the scheduler's
`allowed-failures` (3 by default) before Dask calls it a `KilledWorker`, reported here as the
run's failure. A run that raises is not retried (retries=0): it fails the same way anywhere.
Workers must run the same engine build as the client: a cluster whose workers differ is
refused when it is joined, and a record from such a worker (one that joined later) is
reported as a failure instead of being written.

It must not know plans, files or the run store.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import signal
import socket
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from buflab.engine import Error, scenario_json
from buflab.engine.units import format_count
from buflab.experiments._worker import made_here, run_batch
from buflab.experiments.execution import (
    POLL_S,
    Executor,
    OnRun,
    failed_records,
    workers_without_main,
)

if TYPE_CHECKING:
    from buflab.experiments.schedule import Task

# How long joining a scheduler may take before the address is called unreachable.
CONNECT_TIMEOUT_S = 5
INSTALL_DASK = "pip install 'buflab[cluster]'"
INSTALL_SLURM = "pip install 'buflab[slurm]'"
# A scheduler's address: an optional protocol, a host and a port.
_ADDRESS = re.compile(r"(?:[a-z][a-z0-9+]*://)?[^\s/:]+:\d{1,5}")

# Slurm job settings: key -> (type, what it is). `jobs` is `cluster.scale(jobs=N)`; the rest
# are dask-jobqueue's SLURMCluster arguments (job_extra and prologue under their long names).
SLURM_SETTINGS: dict[str, tuple[type, str]] = {
    "cores": (int, "cores per job"),
    "memory": (str, "memory per job, e.g. 64GB"),
    "walltime": (str, "time limit per job, HH:MM:SS"),
    "queue": (str, "the partition (sbatch -p)"),
    "account": (str, "the account to charge (sbatch -A)"),
    "jobs": (int, "how many jobs to start [default: 1]"),
    "processes": (int, "worker processes per job [default: cores, one run per core]"),
    "prologue": (list, "shell lines run before the workers start, e.g. activating the venv"),
    "job_extra": (list, "more #SBATCH options, e.g. --qos=long"),
    "interface": (str, "the network interface workers listen on, e.g. ib0"),
    "python": (str, "the Python that runs the workers [default: this one]"),
    "local_directory": (str, "workers' scratch directory on the compute nodes"),
    "log_directory": (str, "where the jobs' logs go"),
}
_SLURM_ARGUMENTS = {"prologue": "job_script_prologue", "job_extra": "job_extra_directives"}


class ClusterError(Error):
    """A cluster that cannot be used: a bad --cluster value, Dask missing, an unreachable
    scheduler, workers of another engine build."""


def connect(
    spec: str, *, jobs: int | None = None, slurm: Mapping[str, Any] | None = None
) -> DaskCluster:
    """A Dask executor for `spec` ("local", "slurm" or an address), joined and checked before
    anything runs. Raises ClusterError, one line, when it cannot be."""
    spec = spec.strip()
    kind = "local" if spec == "local" else "slurm" if spec == "slurm" else "address"
    if kind == "address" and not _ADDRESS.fullmatch(spec):
        raise ClusterError(
            f"--cluster {spec!r}: expected local, slurm or a scheduler's address such as "
            "tcp://HOST:8786"
        )
    if jobs is not None and kind != "local":
        raise ClusterError(
            f"--jobs {jobs} with --cluster {spec}: the cluster's workers run the runs; "
            + ("set --slurm jobs=N and cores=C instead" if kind == "slurm" else "drop --jobs")
        )
    if slurm and kind != "slurm":
        raise ClusterError(f"--slurm settings are given with --cluster {spec}, not slurm")
    if importlib.util.find_spec("distributed") is None:
        raise ClusterError(
            f"--cluster {spec} needs Dask, which is not installed here: {INSTALL_DASK}"
        )
    if kind == "local":
        return _local(jobs)
    if kind == "slurm":
        return _slurm(slurm or {})
    return _address(spec)


class DaskCluster(Executor):
    """Tasks on a Dask cluster through `client`; `cluster`, when this process started it,
    is closed with it."""

    def __init__(self, client: Any, cluster: Any, workers: int, where: str) -> None:
        super().__init__()
        self.client, self.cluster, self.workers = client, cluster, workers
        self.description = where
        if importlib.util.find_spec("bokeh") is not None:
            self.description += f"; dashboard: {client.dashboard_link}"
        self._build = made_here()["engine_build"]

    def run(self, tasks: Sequence[Task], on_run: OnRun) -> None:
        # start-up time: Dask only when a cluster is used
        from distributed import wait as dask_wait

        futures = {
            self.client.submit(
                run_batch,
                [scenario_json(run.scenario) for run in task.runs],
                pure=False,
                retries=0,
                priority=len(tasks) - index,  # higher first: tasks come longest first
            ): task
            for index, task in enumerate(tasks)
        }
        pending = set(futures)
        try:
            while pending:
                if self.stopping:
                    raise KeyboardInterrupt
                try:
                    with self.client.as_current():  # not the process's default client
                        done, pending = dask_wait(pending, POLL_S, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    continue
                for future in done:
                    task = futures[future]
                    for run, record in zip(task.runs, self._records(future, task), strict=True):
                        on_run(run, record)
        except BaseException:
            self.client.cancel(list(pending), force=True)
            raise

    def _records(self, future: Any, task: Task) -> list[dict[str, Any]]:
        """The task's records, or a failure for each run saying why there are none."""
        if future.status != "finished":
            error = future.exception() if future.status == "error" else None
            if type(error).__name__ == "KilledWorker":
                why = "its worker died each time it ran it (Dask's allowed-failures)"
            elif error is not None:
                why = f"{type(error).__name__}: {str(error).strip().splitlines()[0]}"
            else:
                why = f"its task was {future.status} on the cluster"
            return failed_records(task, why)
        records = future.result()
        for record in records:
            if record.get("engine_build") != self._build:
                record["error"] = (
                    f"made on {record.get('host')} by engine build {record.get('engine_build')}, "
                    f"not this machine's {self._build}: install the same buflab on the workers"
                )
                record.pop("summary", None)
        return records

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


def _local(jobs: int | None) -> DaskCluster:
    # start-up time: Dask only when a cluster is used
    from distributed import Client, LocalCluster

    workers = jobs or os.cpu_count() or 1
    with _workers_ignore_ctrl_c(), workers_without_main(), _any_dashboard_port():
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,  # one run per process, as the local pool
            processes=True,
            memory_limit=0,  # the runs' memory is checked before they start, as in the pool
            dashboard_address=":8787",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster, set_as_default=False)
    where = f"Dask LocalCluster, {format_count(workers, 'worker')}"
    return DaskCluster(client, cluster, workers, where)


def _address(address: str) -> DaskCluster:
    # start-up time: Dask only when a cluster is used
    from distributed import Client

    _reachable(address)
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError):
        raise ClusterError(
            f"--cluster {address}: no Dask scheduler answered within {CONNECT_TIMEOUT_S} s; "
            f"{_START_ONE}"
        ) from None
    try:
        _check_workers(client, address)
    except BaseException:
        client.close()
        raise
    workers = max(1, sum(client.nthreads().values()))
    count = len(client.nthreads())
    where = f"Dask scheduler {address}, {format_count(count, 'worker')}"
    return DaskCluster(client, None, workers, where)


_START_ONE = "start one with `dask scheduler` (and workers with `dask worker ADDRESS`)"


def _reachable(address: str) -> None:
    """Whether anything listens at a TCP-based address, asked of the network directly: a
    refused connection or an unknown host is said at once, where Dask would retry until its
    timeout."""
    protocol, _, rest = address.rpartition("://")
    if protocol not in ("", "tcp", "tls", "ws", "wss"):
        return
    host, _, port = rest.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except socket.gaierror:
        raise ClusterError(f"--cluster {address}: no such host {host!r}") from None
    except TimeoutError:
        raise ClusterError(
            f"--cluster {address}: no answer within {CONNECT_TIMEOUT_S} s (a firewall, or the "
            "wrong address?)"
        ) from None
    except OSError as error:
        reason = error.strerror or _first_line(error)
        raise ClusterError(f"--cluster {address}: {reason.lower()}; {_START_ONE}") from None


def _check_workers(client: Any, where: str) -> None:
    """Refuse workers whose engine build differs from this machine's: their results would be
    of another engine."""
    here = made_here()
    for worker, made in client.run(made_here).items():
        if made["engine_build"] != here["engine_build"]:
            raise ClusterError(
                f"--cluster {where}: worker {worker} on {made['host']} runs engine build "
                f"{made['engine_build']} (buflab {made['buflab_version']}), this machine "
                f"{here['engine_build']} (buflab {here['buflab_version']}): install the same "
                "buflab on both"
            )


def slurm_settings(given: Mapping[str, Any]) -> dict[str, Any]:
    """Slurm settings checked against `SLURM_SETTINGS`: each key known, each value of its
    type (a list of strings for prologue and job_extra; one string becomes a list of one; a
    number written as text, as on the command line, is read as one)."""
    checked: dict[str, Any] = {}
    for key, value in given.items():
        if key not in SLURM_SETTINGS:
            raise ClusterError(
                f"--slurm {key}: unknown setting; expected one of {', '.join(SLURM_SETTINGS)}"
            )
        kind, what = SLURM_SETTINGS[key]
        if kind is list and isinstance(value, str):
            value = [value]
        if kind is int and isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        ok = (
            isinstance(value, int) and not isinstance(value, bool) and value >= 1
            if kind is int
            else isinstance(value, list) and all(isinstance(v, str) for v in value)
            if kind is list
            else isinstance(value, str) and value.strip() != ""
        )
        if not ok:
            expected = {int: "a whole number of at least 1", list: "a list of strings"}
            raise ClusterError(
                f"--slurm {key}={value!r}: expected {expected.get(kind, 'a string')} ({what})"
            )
        checked[key] = value
    return checked


def slurm_cluster(settings: Mapping[str, Any]) -> Any:
    """dask-jobqueue's SLURMCluster for these settings (no job submitted yet); settings not
    given come from dask-jobqueue's own configuration (~/.config/dask/jobqueue.yaml)."""
    if importlib.util.find_spec("dask_jobqueue") is None:
        raise ClusterError(
            f"--cluster slurm needs dask-jobqueue, which is not installed here: {INSTALL_SLURM}"
        )
    # start-up time: Dask only when a cluster is used
    import dask
    from dask_jobqueue import SLURMCluster

    settings = slurm_settings(settings)
    arguments = {
        _SLURM_ARGUMENTS.get(key, key): value for key, value in settings.items() if key != "jobs"
    }
    for needed in ("cores", "memory"):
        if needed not in arguments and dask.config.get(f"jobqueue.slurm.{needed}") is None:
            raise ClusterError(
                f"--cluster slurm: give the {needed} per job (--slurm cores=32 --slurm "
                "memory=64GB, or a [slurm] table in --slurm-config FILE)"
            )
    cores = arguments.get("cores", dask.config.get("jobqueue.slurm.cores"))
    arguments.setdefault("processes", cores)  # one single-threaded worker per core
    try:
        with _any_dashboard_port():
            return SLURMCluster(**arguments)
    except (ValueError, TypeError) as error:
        raise ClusterError(f"--cluster slurm: {_first_line(error)}") from None


def _slurm(given: Mapping[str, Any]) -> DaskCluster:
    # start-up time: Dask only when a cluster is used
    from distributed import Client

    cluster = slurm_cluster(given)
    jobs = int(given.get("jobs", 1))
    processes = int(given.get("processes") or given.get("cores") or 1)
    try:
        cluster.scale(jobs=jobs)
        client = Client(cluster, set_as_default=False)
    except BaseException:
        cluster.close()
        raise
    workers = jobs * processes
    return DaskCluster(
        client, cluster, workers, f"Dask on Slurm, {jobs} jobs ({workers} workers) requested"
    )


@contextmanager
def _any_dashboard_port() -> Iterator[None]:
    """Dask's dashboard port taken (by another cluster): Dask serves it on another port and
    warns; the link printed is the one it chose, so the warning says nothing more."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        yield


class _workers_ignore_ctrl_c:
    """Ctrl-C reaches every process of the terminal's group: workers started while SIGINT is
    ignored keep ignoring it (Python leaves an ignored SIGINT alone, and so does asyncio), so
    only this process reacts, cancels and prints one line; the workers end when the cluster
    is closed. Only the main thread may change a signal's handler; elsewhere nothing is done
    (the workers then print Dask's own messages on Ctrl-C)."""

    def __enter__(self) -> None:
        self._saved = None
        if threading.current_thread() is threading.main_thread():
            self._saved = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            signal.signal(signal.SIGINT, self._saved)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
