"""Sweeps on a Dask cluster (`--cluster`): the same results as the local process pool (and
a report's runs reused there), a killed worker's run retried, a failing run reported once,
Ctrl-C keeping what finished, and the bad inputs (an unreachable scheduler, Slurm without
dask-jobqueue, Slurm settings).

Every cluster here is a `distributed.LocalCluster` of two workers on this machine running the
tiny scenario (well under a second a run), except where a run must last long enough to be
killed or interrupted mid-way (about two seconds: 300 simulated seconds of a 1 Gb/s link).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.engine.scenario import load_scenario
from buflab.experiments.backends import open_executor
from buflab.experiments.cluster import ClusterError, DaskCluster, connect, slurm_cluster
from buflab.experiments.schedule import Task
from buflab.experiments.sweep import Plan, PlannedRun, RunsFailed, Vary, run_sweep
from conftest import TINY_SCENARIO
from test_cli import assert_one_line_error
from test_sweep import _descendants, _not_zombie

pytestmark = pytest.mark.engine

# The columns that measure the machine, not the model: wall time and peak memory.
MACHINE_COLUMNS = ["wall_s", "peak_rss_mib"]
# About two seconds a run (as in test_sweep's Ctrl-C test): long enough to act mid-run.
SLOW_SCENARIO = (
    'duration = "300s"\n[network]\nbottleneck = { rate = "1Gbps", buffer = "100pkt" }\n'
    'rtt = "20ms..40ms"\n[[traffic]]\nkind = "long_lived"\nflows = 20\n'
)


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[DaskCluster]:
    """One two-worker LocalCluster shared by the tests that only run on it."""
    with connect("local", jobs=2) as executor:
        yield executor


def tiny_plan(runs: int = 2) -> Plan:
    base = load_scenario(TINY_SCENARIO)
    return Plan(base, [Vary.parse("network.bottleneck.buffer=5pkt,20pkt,50pkt")], runs)


def results(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "results.csv").drop(columns=MACHINE_COLUMNS)


def test_the_pool_and_a_local_cluster_give_identical_results(
    tmp_path: Path, local_cluster: DaskCluster
) -> None:
    """Where a run ran changes nothing it computed: the same sweep on the process pool and
    on a LocalCluster writes the same results.csv and summary.csv, cell for cell (the wall
    time and memory columns aside), and the same run-store keys. Exact equality: runs are
    deterministic and results travel as the same Python numbers."""
    pool = run_sweep(tiny_plan(), tmp_path / "pool", jobs=2)
    dask = run_sweep(tiny_plan(), tmp_path / "dask", executor=local_cluster)
    assert (pool.executed, dask.executed) == (6, 6)
    pd.testing.assert_frame_equal(results(tmp_path / "pool"), results(tmp_path / "dask"))
    machine = [f"{c}_{s}" for c in MACHINE_COLUMNS for s in ("mean", "ci95")]
    summaries = [
        pd.read_csv(tmp_path / d / "summary.csv").drop(columns=machine) for d in ("pool", "dask")
    ]
    pd.testing.assert_frame_equal(*summaries)
    keys = [sorted(buflab.runs.open(tmp_path / d)["key"]) for d in ("pool", "dask")]
    assert keys[0] == keys[1] and len(keys[0]) == 6


def test_a_cluster_sweep_resumes_on_the_pool(tmp_path: Path, local_cluster: DaskCluster) -> None:
    """Workers send results back and this process writes them: a sweep begun on a cluster
    is finished by the pool (and the other way round) from the same run files."""
    plan = tiny_plan()
    run_sweep(Plan(plan.base, plan.varies, 1), tmp_path, executor=local_cluster)
    finished = run_sweep(plan, tmp_path, jobs=2)
    assert (finished.executed, finished.skipped) == (3, 3)
    again = run_sweep(plan, tmp_path, executor=local_cluster)
    assert (again.executed, again.skipped) == (0, 6)


@pytest.mark.parametrize("where", ["pool", "cluster"])
def test_a_run_that_fails_is_reported_once_and_the_others_finish(
    where: str, local_cluster: DaskCluster
) -> None:
    """A run that raises on its worker (here a scenario the engine refuses, sent as it is)
    is answered once with its error, not retried, and the runs of the same task and of
    other tasks finish. On both executors: the pool and Dask keep the same contract."""
    good = load_scenario(TINY_SCENARIO, {"duration": "2s"})
    bad = {**good, "network": {**good["network"], "bottleneck": {"rate": "fast"}}}
    runs = [PlannedRun(f"run{i}", {}, 1, scenario) for i, scenario in enumerate([good, bad, good])]
    tasks = [Task((runs[0], runs[1]), 1.0), Task((runs[2],), 1.0)]
    answered: list[tuple[str, dict]] = []
    executor = local_cluster if where == "cluster" else open_executor(2)
    try:
        executor.run(tasks, lambda run, record: answered.append((run.id, record)))
    finally:
        if where == "pool":
            executor.close()
    assert sorted(run_id for run_id, _ in answered) == ["run0", "run1", "run2"]
    records = dict(answered)
    assert "summary" in records["run0"] and "summary" in records["run2"]
    assert records["run1"]["error"].startswith("ScenarioError: ")
    assert "network.bottleneck.rate" in records["run1"]["error"]
    assert "Traceback" in records["run1"]["traceback"]


def test_a_failed_run_is_kept_with_its_scenario_and_run_again_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_cluster: DaskCluster
) -> None:
    """A sweep with a failing run: the others are written and tabled, the failure is one
    line naming the run, its point and its error, and OUT/failed/<id>.json holds its scenario
    and traceback. The client's own check of each point is what normally refuses such a
    scenario before anything runs; it is bypassed here so that the run fails on a worker."""
    from buflab.experiments import sweep as sweep_module

    checked = sweep_module._validate_points
    plan = Plan(
        load_scenario(TINY_SCENARIO),
        [Vary.parse("network.bottleneck.rate=10Mbps,fast")],
        1,
    )

    def only_the_first_point(runs: list, pending: list) -> dict:
        normalized = checked(runs[:1], pending[:1])
        return {run.id: normalized[runs[0].id] for run in runs}

    monkeypatch.setattr(sweep_module, "_validate_points", only_the_first_point)
    with pytest.raises(RunsFailed) as failure:
        run_sweep(plan, tmp_path, executor=local_cluster)
    message = str(failure.value)
    assert message.startswith("1 of 2 runs failed, run rate-fast_seed-1")
    assert "network.bottleneck.rate = fast" in message and "ScenarioError" in message
    assert "\n" not in message
    saved = json.loads(next((tmp_path / "failed").glob("*.json")).read_text())
    assert saved["scenario"]["network"]["bottleneck"]["rate"] == "fast"
    assert "ScenarioError" in saved["error"] and "Traceback" in saved["traceback"]
    assert len(pd.read_csv(tmp_path / "results.csv")) == 1, "the run that finished is tabled"
    with pytest.raises(RunsFailed, match="^1 of 2 runs failed"):
        run_sweep(plan, tmp_path, executor=local_cluster)  # the failed run is tried again
    assert len(list((tmp_path / "runs").glob("*.json"))) == 1


def test_a_killed_worker_loses_only_its_run_which_is_retried(tmp_path: Path) -> None:
    """SIGKILL to a LocalCluster worker process while it runs: Dask gives its task to
    another worker (the nanny restarts the killed one), the sweep finishes every run, and
    the results are those of an undisturbed sweep on the process pool, run for run."""
    scenario = load_scenario(SLOW_SCENARIO)
    plan = Plan(scenario, [Vary.parse("network.bottleneck.buffer=5pkt,10pkt,20pkt,40pkt")], 1)
    outcome: dict[str, object] = {}
    with connect("local", jobs=2) as cluster:
        pids = cluster.client.run(os.getpid)

        thread = _sweep_in_background(plan, tmp_path / "dask", cluster, outcome)
        deadline = time.monotonic() + 60
        busy: list[str] = []
        while not busy and time.monotonic() < deadline:
            busy = [worker for worker, keys in cluster.client.processing().items() if keys]
            time.sleep(0.1)
        assert busy, "a worker was running a task"
        os.kill(pids[busy[0]], signal.SIGKILL)  # mid-run: a run takes about two seconds
        thread.join(timeout=300)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["done"].executed == 4
    run_sweep(plan, tmp_path / "pool", jobs=2)
    pd.testing.assert_frame_equal(results(tmp_path / "dask"), results(tmp_path / "pool"))


def test_ctrl_c_on_a_cluster_sweep_keeps_what_finished_and_resumes_on_the_pool(
    tmp_path: Path,
) -> None:
    """Ctrl-C (SIGINT to the terminal's process group, workers included) in a `--cluster
    local` sweep: exit status 130, one line saying how many runs are kept, no Dask traceback,
    the tables of what finished, no worker left; the same command without --cluster then runs
    only the rest."""
    scenario = tmp_path / "slow.toml"
    # About a second a run: Ctrl-C still lands mid-sweep, and the resume stays short on a
    # loaded machine.
    scenario.write_text(SLOW_SCENARIO.replace('"300s"', '"150s"'))
    out = tmp_path / "out"
    buflab_command = str(Path(sys.executable).parent / "buflab")
    buffers = "network.bottleneck.buffer=5pkt,10pkt,20pkt,40pkt,80pkt,160pkt"
    argv = [buflab_command, "sweep", str(scenario), "--vary", buffers, "--out", str(out)]
    sweep = subprocess.Popen(
        [*argv, "--cluster", "local", "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not list((out / "runs").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the first run is on disk
    children = _descendants(sweep.pid)
    assert sweep.poll() is None, "interrupted mid-sweep, not after it"
    os.killpg(sweep.pid, signal.SIGINT)
    _, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    last = err.strip().splitlines()[-1]
    kept = len(list((out / "runs").glob("*.json")))
    assert last.startswith(f"interrupted: {kept} of 6 runs kept in"), last
    assert 1 <= kept < 6
    assert len(pd.read_csv(out / "results.csv")) == kept, "the tables of what finished"
    time.sleep(1)
    assert not {pid for pid in children if _not_zombie(pid)}, "no worker left running"
    again = subprocess.run([*argv, "--jobs", "2"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"{6 - kept} runs simulated, {kept} found" in again.stdout


def _sweep_in_background(
    plan: Plan, out: Path, executor: object, outcome: dict[str, object]
) -> threading.Thread:
    """Runs the sweep on a started thread, leaving its tables in `outcome["done"]` or what it
    raised in `outcome["error"]`, for the test's assertions."""

    def sweep() -> None:
        try:
            outcome["done"] = run_sweep(plan, out, executor=executor)  # type: ignore[arg-type]
        except BaseException as error:  # reported by the test's assertion
            outcome["error"] = error

    thread = threading.Thread(target=sweep)
    thread.start()
    return thread


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_scheduler_is_one_line_and_nothing_starts(
    tmp_path: Path, tiny_file: Path
) -> None:
    """A scheduler address where nothing listens: one line naming the address and how to
    start a scheduler, exit status 2, and no output directory made."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        ["sweep", str(tiny_file), "--vary", "network.bottleneck.buffer=5pkt,10pkt",
         "--cluster", address, "--out", str(out)],
    )  # fmt: skip
    assert_one_line_error(result, address, "dask scheduler")
    assert not out.exists(), "nothing started"


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        (["--cluster", "nowhere"], ("--cluster 'nowhere'", "local, slurm", "tcp://HOST")),
        (["--cluster", "tcp://127.0.0.1:1", "--jobs", "2"], ("--jobs 2", "drop --jobs")),
        (["--slurm", "cores=4"], ("--slurm", "without --cluster slurm")),
        (["--cluster", "slurm", "--slurm", "cores=four"], ("cores='four'", "whole number")),
        (["--cluster", "slurm", "--slurm", "gpus=1"], ("--slurm gpus", "cores, memory")),
        (["--cluster", "slurm", "--slurm", "memory=8GB"], ("give the cores per job",)),
    ],
)
def test_bad_cluster_options_are_one_line(
    tiny_file: Path, tmp_path: Path, options: list[str], fragments: tuple[str, ...]
) -> None:
    """Each bad --cluster / --slurm use is one line naming the option and what was
    expected, before anything runs."""
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        ["sweep", str(tiny_file), "--vary", "network.bottleneck.buffer=5pkt,10pkt", *options,
         "--out", str(out)],
    )  # fmt: skip
    assert_one_line_error(result, *fragments)
    assert not out.exists()


def test_slurm_without_dask_jobqueue_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--cluster slurm` where dask-jobqueue is not installed names the package to install.
    (The development set-up installs it, so its absence is simulated.)"""
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "dask_jobqueue" else found(name, *a),
    )
    with pytest.raises(ClusterError, match=r"needs dask-jobqueue.*pip install 'buflab\[slurm\]'"):
        connect("slurm", slurm={"cores": 4, "memory": "8GB"})


def test_slurm_settings_become_the_job_script(tmp_path: Path) -> None:
    """The Slurm settings (options or a config file's [slurm] table) are what the job script
    asks for: partition, account, time, memory, cores, extra #SBATCH lines, the prologue,
    and one single-threaded worker process per core. Nothing is submitted (no Slurm here):
    the script is read from dask-jobqueue's SLURMCluster before scaling."""
    cluster = slurm_cluster(
        {
            "cores": 4,
            "memory": "8GB",
            "walltime": "02:00:00",
            "queue": "short",
            "account": "netlab",
            "job_extra": "--qos=long",
            "prologue": ["source ~/buflab/.venv/bin/activate"],
            "log_directory": str(tmp_path),
        }
    )
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    for line in ("#SBATCH -p short", "#SBATCH -A netlab", "#SBATCH -t 02:00:00",
                 "#SBATCH --qos=long", "#SBATCH --cpus-per-task=4",
                 "source ~/buflab/.venv/bin/activate", "--nworkers 4", "--nthreads 1"):  # fmt: skip
        assert line in script, (line, script)


def test_the_slurm_config_file_is_read_and_options_override_it(tmp_path: Path) -> None:
    """--slurm-config's [slurm] table gives the settings and --slurm overrides them; a file
    without the table is one line."""
    from buflab.cli.common import BadInput, slurm_settings

    config = tmp_path / "slurm.toml"
    config.write_text('[slurm]\ncores = 32\nmemory = "64GB"\nqueue = "long"\n')
    settings = slurm_settings(("queue=short", "jobs=4"), config)
    assert settings == {"cores": 32, "memory": "64GB", "queue": "short", "jobs": "4"}
    config.write_text("cores = 32\n")
    with pytest.raises(BadInput, match=r"expected a \[slurm\] table"):
        slurm_settings((), config)


def test_workers_of_another_engine_build_are_refused(local_cluster: DaskCluster) -> None:
    """A record from a worker running another engine build is not taken as a result: it is
    reported as the run's failure, naming both builds (a cluster whose workers differ when it
    is joined is refused the same way)."""
    scenario = load_scenario(TINY_SCENARIO, {"duration": "1s"})
    run = PlannedRun("only", {}, 1, scenario)
    future = local_cluster.client.submit(lambda: [{"summary": {}, "engine_build": "0.0.0+old",
                                                   "host": "elsewhere"}], pure=False)  # fmt: skip
    future.result()
    record = local_cluster._records(future, Task((run,), 1.0))[0]
    assert "summary" not in record
    assert "0.0.0+old" in record["error"] and "elsewhere" in record["error"]


def test_a_report_runs_on_a_cluster_and_is_reused_on_the_pool(tmp_path: Path) -> None:
    """`buflab report --cluster local`: the recipe's runs go to the cluster's workers, and the
    same report on this machine's pool then simulates nothing: a cluster changes where runs
    happen, never what they are (P5 at ci scale: ten runs of a few seconds in all)."""
    args = ["report", "--scale", "ci", "--only", "P5", "--runs-in", str(tmp_path / "runs")]
    runner = CliRunner()
    on_cluster = runner.invoke(
        cli, [*args, "--out", str(tmp_path / "a"), "--cluster", "local", "--jobs", "2"]
    )
    assert on_cluster.exit_code == 0, on_cluster.output
    assert "running on Dask LocalCluster" in on_cluster.stderr
    assert "10 runs simulated" in on_cluster.output
    on_pool = runner.invoke(cli, [*args, "--out", str(tmp_path / "b"), "--jobs", "1"])
    assert on_pool.exit_code == 0, on_pool.output
    assert "0 runs simulated" in on_pool.output
    assert "all finished before: nothing to simulate" in on_pool.stderr


def test_a_size_curve_on_a_local_cluster_probes_as_on_the_pool(
    tmp_path: Path, tiny_file: Path
) -> None:
    """`buflab size --vary` with `--cluster local`: its searches (run at once, sharing the
    cluster) probe the same buffers with the same utilizations and give the same answers as
    on the process pool, and every probe is a row of the one run store in OUT."""
    tables, probes = {}, {}
    for where in ("pool", "cluster"):
        out = tmp_path / where
        extra = ["--cluster", "local"] if where == "cluster" else []
        result = CliRunner().invoke(
            cli,
            ["size", str(tiny_file), "--target-utilization", "0.9", "--vary", "flows=2,8",
             "--high", "16", "--set", "duration=3s", "--jobs", "2", *extra, "--out", str(out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        tables[where] = pd.read_csv(out / "sizes.csv")[["traffic.0.flows", "buffer_pkts", "probes"]]
        stored = buflab.runs.open(out)
        assert len(stored) == tables[where]["probes"].sum()
        probes[where] = stored.sort_values(["directory", "run"])[
            ["directory", "run", "utilization"]
        ]
    pd.testing.assert_frame_equal(tables["pool"], tables["cluster"])
    pd.testing.assert_frame_equal(
        probes["pool"].reset_index(drop=True), probes["cluster"].reset_index(drop=True)
    )


def test_a_killed_pool_worker_loses_only_its_run_which_is_retried(tmp_path: Path) -> None:
    """The process pool keeps the cluster's contract: SIGKILL to one of its worker processes
    mid-run breaks the Python pool whole, so every task that was in it goes to a new pool;
    the sweep finishes every run, with the results of a sweep nobody disturbed."""
    from buflab.experiments.pool import LocalPool

    scenario = load_scenario(SLOW_SCENARIO)
    plan = Plan(scenario, [Vary.parse("network.bottleneck.buffer=5pkt,10pkt,20pkt,40pkt")], 1)
    outcome: dict[str, object] = {}
    with LocalPool(2) as pool:
        thread = _sweep_in_background(plan, tmp_path / "killed", pool, outcome)
        deadline = time.monotonic() + 60
        workers: list = []
        while len(workers) < 2 and time.monotonic() < deadline:
            current = pool._pool  # the pool of the moment, and CPython's list of its processes
            workers = list(getattr(current, "_processes", {}).values()) if current else []
            time.sleep(0.1)
        assert workers, "the pool started its workers"
        time.sleep(0.5)  # mid-run: a run takes about two seconds
        os.kill(workers[0].pid, signal.SIGKILL)
        thread.join(timeout=300)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["done"].executed == 4
    run_sweep(plan, tmp_path / "calm", jobs=2)
    pd.testing.assert_frame_equal(results(tmp_path / "killed"), results(tmp_path / "calm"))
