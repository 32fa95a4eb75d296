"""Choosing where a command's runs go: this machine's process pool (the default) or a Dask
cluster, from the command line's `--jobs`, `--cluster` and `--slurm` or the Python API's
`jobs=` and `cluster=`.

Read first: `buflab.experiments.execution` (the contract both keep). It must not know what the
runs are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from buflab.experiments.cluster import ClusterError, connect
from buflab.experiments.execution import Executor
from buflab.experiments.pool import LocalPool


def open_executor(
    jobs: int | None = None,
    cluster: str | None = None,
    slurm: dict[str, Any] | None = None,
) -> Executor:
    """This machine's process pool of `jobs` processes (default: every core), or with
    `cluster` a Dask cluster: "local" (`jobs` workers on this machine), an address
    ("tcp://HOST:PORT"), or "slurm" (workers as Slurm jobs, `slurm` its settings; see
    `buflab.experiments.cluster`). Raises ClusterError, one line, when it cannot."""
    if cluster is None:
        if slurm:
            raise ClusterError("--slurm settings are given without --cluster slurm")
        return LocalPool(jobs)
    return connect(cluster, jobs=jobs, slurm=slurm)


@contextmanager
def executor_for(executor: Executor | str | None, jobs: int | None = None) -> Iterator[Executor]:
    """The executor given, or one opened for the duration (a cluster spec as `open_executor`
    takes, or None for the process pool of `jobs`) and closed after."""
    if isinstance(executor, Executor):
        yield executor
        return
    opened = open_executor(jobs, executor)
    try:
        yield opened
    finally:
        opened.close()
