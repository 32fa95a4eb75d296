"""Sweeps: plan, resume after lost runs, tables, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from buflab.cli import cli
from buflab.engine.scenario import load_scenario
from buflab.experiments.sweep import MADE_BY, Plan, SweepConflict, Vary, run_id, run_sweep
from conftest import TINY_SCENARIO


def tiny_plan(runs: int = 1, **base_overrides: object) -> Plan:
    base = load_scenario(TINY_SCENARIO, base_overrides)
    return Plan(base, [Vary.parse("network.bottleneck.buffer=5pkt,50pkt")], runs)


def test_plan_is_the_product_of_values_and_seeds() -> None:
    base = load_scenario(TINY_SCENARIO, {"seed": 10})
    plan = Plan(
        base,
        [Vary.parse("network.bottleneck.buffer=5pkt,50pkt"), Vary.parse("traffic.0.flows=2,4,8")],
        runs_per_point=2,
    )
    assert len(plan.runs) == 2 * 3 * 2
    assert plan.seeds() == [10, 11]  # seed, seed + 1
    assert len({run.id for run in plan.runs}) == len(plan.runs)
    first = plan.runs[0]
    assert first.scenario["traffic"][0]["flows"] == 2
    assert first.scenario["network"]["bottleneck"]["buffer"] == "5pkt"
    assert base["traffic"][0]["flows"] == 4, "the base scenario is not modified"


def test_run_ids_ignore_the_order_of_vary_options() -> None:
    assert run_id({"a.x": 1, "b.y": "2pkt"}, 3) == run_id({"b.y": "2pkt", "a.x": 1}, 3)
    assert run_id({"a.x": 1}, 3) != run_id({"a.x": 1}, 4)
    assert run_id({"network.access.rate": "1Gbps"}, 1) != run_id(
        {"network.bottleneck.rate": "1Gbps"}, 1
    )


@pytest.mark.parametrize("text", ["buffer", "buffer=", "=1,2", "buffer=1,,2"])
def test_bad_vary_options(text: str) -> None:
    from buflab.engine import ScenarioError

    with pytest.raises(ScenarioError, match="--vary"):
        Vary.parse(text)


@pytest.mark.engine
def test_resume_runs_only_what_is_missing(tmp_path: Path) -> None:
    plan = tiny_plan()
    first = run_sweep(plan, tmp_path, jobs=2)
    assert (first.executed, first.skipped) == (2, 0)
    files = sorted((tmp_path / "runs").glob("*.json"))
    assert len(files) == 2
    kept, lost = files
    kept_mtime = kept.stat().st_mtime_ns
    lost.unlink()

    second = run_sweep(plan, tmp_path, jobs=2)
    assert (second.executed, second.skipped) == (1, 1)
    assert lost.exists()
    assert kept.stat().st_mtime_ns == kept_mtime, "a finished run is never redone"

    results = pd.read_csv(tmp_path / "results.csv")
    assert len(results) == 2
    assert {"run", "network.bottleneck.buffer", "seed", "utilization", "drop_rate"} <= set(
        results.columns
    )
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert summary["network.bottleneck.buffer"].tolist() == ["5pkt", "50pkt"]
    assert summary["runs"].tolist() == [1, 1]
    record = json.loads(lost.read_text())
    assert record["id"] == lost.stem
    assert set(record) == {"id", "point", "seed", "scenario", "summary", "key", *MADE_BY}

    # A half-written run file (a copy cut short, a disk that filled), or one that is not a
    # run record, is run again rather than read or refused.
    for damaged in (lost.read_text()[:40], "[]", "\udcff"):
        lost.write_text(damaged, errors="surrogateescape")
        third = run_sweep(plan, tmp_path, jobs=1)
        assert (third.executed, third.skipped) == (1, 1), damaged
        assert json.loads(lost.read_text())["id"] == lost.stem


@pytest.mark.engine
def test_a_changed_scenario_does_not_reuse_old_runs(tmp_path: Path) -> None:
    run_sweep(tiny_plan(), tmp_path, jobs=1)
    with pytest.raises(SweepConflict, match="different scenario"):
        run_sweep(tiny_plan(duration="4s"), tmp_path, jobs=1)


@pytest.mark.engine
def test_sweep_command(tmp_path: Path, tiny_file: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "sweep", str(tiny_file), "--vary", "network.bottleneck.buffer=2pkt,20pkt",
            "--vary", "traffic.0.flows=1,4", "--runs", "2", "--jobs", "2", "--out", str(tmp_path),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "8 runs simulated, 0 found" in result.stdout
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert len(summary) == 4
    assert summary["runs"].tolist() == [2, 2, 2, 2]
    assert summary["utilization_ci95"].notna().all()
    for name in ("sweep.png", "sweep.svg", "results.csv"):
        assert (tmp_path / name).stat().st_size > 0
    again = CliRunner().invoke(
        cli,
        [
            "sweep", str(tiny_file), "--vary", "traffic.0.flows=1,4",
            "--vary", "network.bottleneck.buffer=2pkt,20pkt", "--runs", "2", "--out", str(tmp_path),
        ],
    )  # fmt: skip
    assert "0 runs simulated, 8 found" in again.stdout, "--vary order does not change run ids"


def _descendants(pid: int) -> set[int]:
    """Every live process whose parent chain leads to `pid` (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def test_a_sweep_killed_with_sigkill_leaves_no_process_and_resumes(tmp_path: Path) -> None:
    """kill -9 of a sweep's main process mid-sweep: its workers (and multiprocessing's
    resource tracker) are gone within seconds instead of running on under pid 1, every run
    file it finished reads whole (one being written stays a temporary file), and the same
    command then runs exactly the runs that were lacking and clears the temporaries."""
    import os
    import signal
    import subprocess
    import sys
    import time

    scenario = tmp_path / "slow.toml"
    # Each run takes about two seconds (5 minutes of a 1 Gb/s link): long enough to be
    # killed in the middle of the sweep.
    scenario.write_text(
        'duration = "300s"\n[network]\nbottleneck = { rate = "1Gbps", buffer = "100pkt" }\n'
        'rtt = "20ms..40ms"\n[[traffic]]\nkind = "long_lived"\nflows = 20\n'
    )
    out = tmp_path / "out"
    buflab = str(Path(sys.executable).parent / "buflab")
    buffers = "network.bottleneck.buffer=5pkt,10pkt,20pkt,40pkt"
    argv = [buflab, "sweep", str(scenario), "--vary", buffers, "--jobs", "2", "--out", str(out)]
    sweep = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(_descendants(sweep.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    children = _descendants(sweep.pid)
    assert len(children) >= 2, "the workers started"
    assert sweep.poll() is None, "killed mid-sweep, not after it"
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    deadline = time.monotonic() + 10
    alive = set(children)
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if Path(f"/proc/{pid}").exists() and _not_zombie(pid)}
        time.sleep(0.1)
    assert not alive, f"orphans left running: {alive}"
    # Whatever was being written is a temporary file at most; every finished run file reads.
    for finished in (out / "runs").glob("*.json"):
        json.loads(finished.read_text())
    done_before = len(list((out / "runs").glob("*.json")))
    assert done_before < 4, "some runs were lacking"
    again = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{4 - done_before} runs simulated, {done_before} found" in again.stdout
    assert len(pd.read_csv(out / "results.csv")) == 4
    assert os.path.getsize(out / "summary.csv") > 0
    assert not list(out.glob("**/.*.tmp")) and not list(out.glob("**/.*.partial"))


def _not_zombie(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_table_write_that_fails_keeps_the_old_table(tmp_path: Path) -> None:
    """Tables are written to a temporary file and renamed: a write that fails midway (a full
    disk, Ctrl-C) leaves the previous table whole and no temporary file behind."""
    from buflab.engine.files import write_atomically

    table = tmp_path / "results.csv"
    table.write_text("old,table\n1,2\n")

    def half_then_fail(path: Path) -> None:
        path.write_text("new,tab")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(table, half_then_fail)
    assert table.read_text() == "old,table\n1,2\n"
    assert list(tmp_path.iterdir()) == [table]
    write_atomically(table, lambda path: path.write_text("new,table\n"))
    assert table.read_text() == "new,table\n"


def test_ctrl_c_between_a_run_file_and_its_row_counts_the_file(tmp_path: Path) -> None:
    """A Ctrl-C that lands after a run's file is written but before the run store has its row
    (the moment a user who watches OUT/runs would press it): the line counts the run as kept,
    as the tables and a resume do. It said one run fewer (seen in CI: "0 of 6 runs kept" with
    one run file on disk)."""
    from buflab.experiments.store import RunStore
    from buflab.experiments.sweep import SweepInterrupted

    class InterruptedOnFirstRow(RunStore):
        def add(self, row: dict[str, object]) -> None:
            raise KeyboardInterrupt

    out = tmp_path / "out"
    with pytest.raises(SweepInterrupted) as stop:
        run_sweep(tiny_plan(), out, jobs=1, store=InterruptedOnFirstRow(out))
    assert len(list((out / "runs").glob("*.json"))) == 1
    assert stop.value.kept == 1
    assert str(stop.value).startswith("interrupted: 1 of 2 runs kept in")
    assert len(pd.read_csv(out / "results.csv")) == 1


def test_ctrl_c_mid_sweep_keeps_what_finished_and_resumes(tmp_path: Path) -> None:
    """Ctrl-C in the middle of a sweep: exit status 130 and one line saying how many runs are
    kept, the tables written for those, no worker left behind; the same command then runs the
    rest and the tables have every run."""
    import signal
    import subprocess
    import sys
    import time

    scenario = tmp_path / "slow.toml"
    # About two seconds a run (see the SIGKILL test): Ctrl-C lands mid-sweep.
    scenario.write_text(
        'duration = "300s"\n[network]\nbottleneck = { rate = "1Gbps", buffer = "100pkt" }\n'
        'rtt = "20ms..40ms"\n[[traffic]]\nkind = "long_lived"\nflows = 20\n'
    )
    out = tmp_path / "out"
    buflab = str(Path(sys.executable).parent / "buflab")
    buffers = "network.bottleneck.buffer=5pkt,10pkt,20pkt,40pkt,80pkt,160pkt"
    argv = [buflab, "sweep", str(scenario), "--vary", buffers, "--jobs", "2", "--out", str(out)]
    sweep = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((out / "runs").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the first run is on disk
    children = _descendants(sweep.pid)
    assert sweep.poll() is None, "interrupted mid-sweep, not after it"
    sweep.send_signal(signal.SIGINT)
    _, err = sweep.communicate(timeout=60)
    assert sweep.returncode == 130, err
    last = err.strip().splitlines()[-1]
    kept = len(list((out / "runs").glob("*.json")))
    assert last.startswith(f"interrupted: {kept} of 6 runs kept in"), last
    assert 1 <= kept < 6
    assert len(pd.read_csv(out / "results.csv")) == kept, "the tables of what finished"
    time.sleep(1)
    assert not {pid for pid in children if _not_zombie(pid)}, "no worker left running"
    again = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{6 - kept} runs simulated, {kept} found" in again.stdout
    assert len(pd.read_csv(out / "results.csv")) == 6


@pytest.mark.parametrize("how", ["script", "stdin"])
def test_a_sweep_from_a_plain_script_or_stdin_needs_no_main_guard(tmp_path: Path, how: str) -> None:
    """Newcomer issue, item 1: a sweep (and so `buflab.size`) at the top level of a script,
    or piped to Python, died with BrokenProcessPool: spawned workers ran the caller's main
    module again. The sweep runs, once, and says so once."""
    import subprocess
    import sys

    script = tmp_path / "plain.py"
    script.write_text(
        "import buflab\n"
        "from buflab.experiments.sweep import Plan, Vary, run_sweep\n"
        f"plan = Plan(buflab.load_scenario({TINY_SCENARIO!r}),\n"
        "            [Vary.parse('network.bottleneck.buffer=5pkt,50pkt')], 1)\n"
        f"result = run_sweep(plan, {str(tmp_path / 'out')!r}, jobs=2)\n"
        "print('swept', result.executed)\n"
    )
    argv = [sys.executable, str(script)] if how == "script" else [sys.executable, "-"]
    stdin = None if how == "script" else script.read_text()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["swept 2"]


@pytest.mark.engine
def test_a_sweep_from_python_gives_the_per_point_table_with_numbers(tmp_path: Path) -> None:
    """Newcomer issue, item 10: no public sweep function, and varied values only as text
    ("5pkt" sorts after "50pkt"). `buflab.sweep` returns summary.csv's table with each varied
    quantity also as a number, reuses the runs kept in `out`, and takes `--vary` strings."""
    import buflab

    table = buflab.sweep(
        TINY_SCENARIO, {"network.bottleneck.buffer": ["50pkt", "5pkt"]}, out=tmp_path, jobs=1
    )
    numbers = "network.bottleneck.buffer [pkt]"
    assert list(table.columns[:3]) == ["network.bottleneck.buffer", numbers, "runs"]
    assert table[numbers].tolist() == [50.0, 5.0]
    ordered = table.sort_values(numbers)
    assert ordered["network.bottleneck.buffer"].tolist() == ["5pkt", "50pkt"]
    assert ordered["utilization_mean"].iloc[0] <= ordered["utilization_mean"].iloc[1]
    again = buflab.sweep(TINY_SCENARIO, ["network.bottleneck.buffer=50pkt,5pkt"], out=tmp_path)
    pd.testing.assert_frame_equal(again, table)
    rates = buflab.sweep(TINY_SCENARIO, {"network.access.rate": ["100Mbps", "1Gbps"]}, jobs=1)
    assert rates["network.access.rate [bit/s]"].tolist() == [1e8, 1e9]
