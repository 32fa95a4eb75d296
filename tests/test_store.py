"""The run store (OUT/store, `buflab runs`, `buflab.runs.open`), its `--where` filter, and
the scheduler's order, batches and ETA."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.engine import core, scenario_json
from buflab.engine.scenario import load_scenario
from buflab.experiments.schedule import (
    BATCH_S,
    SHORT_RUN_S,
    TASKS_PER_WORKER,
    CostModel,
    Eta,
    RunCost,
    make_tasks,
)
from buflab.experiments.store import FORMAT_FILE, StoreError, run_key
from buflab.experiments.sweep import Plan, PlannedRun, Vary, run_sweep
from buflab.experiments.where import WhereError, select
from conftest import TINY_SCENARIO
from test_cli import assert_one_line_error

VARY = "network.bottleneck.buffer=5pkt,20pkt,50pkt"
TWO_BUFFERS = "network.bottleneck.buffer=5pkt,20pkt"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny sweep, 3 buffers × 2 seeds, with its run store."""
    out = tmp_path_factory.mktemp("store") / "out"
    plan = Plan(load_scenario(TINY_SCENARIO), [Vary.parse(VARY)], 2)
    run_sweep(plan, out, jobs=2)
    return out


@pytest.mark.engine
def test_the_store_holds_every_run_as_results_csv_does(swept: Path) -> None:
    """`buflab.runs.open(OUT)` has a row per run with the same metrics as results.csv (read
    from the store's Parquet parts, not the run files), every scenario key as a column, and
    what made the run: this engine build and buflab version."""
    stored = buflab.runs.open(swept).set_index("run").sort_index()
    table = pd.read_csv(swept / "results.csv").set_index("run").sort_index()
    assert list(stored.index) == list(table.index)
    for metric in ("utilization", "drop_rate", "retransmits", "seed"):
        assert stored[metric].tolist() == table[metric].tolist(), metric
    assert (
        stored["network.bottleneck.buffer"].tolist() == table["network.bottleneck.buffer"].tolist()
    )
    assert set(stored["traffic.0.flows"]) == {4}
    assert set(stored["engine_build"]) == {core().engine_build()}
    assert set(stored["buflab_version"]) == {buflab.__version__}
    assert set(stored["command"]) == {"sweep"} and set(stored["directory"]) == {"."}
    assert (stored["estimated_wall_s"] > 0).all()


@pytest.mark.engine
def test_the_key_is_a_digest_of_the_validated_scenario_and_seed(swept: Path) -> None:
    """A row's key is the digest of the engine's validated scenario with its seed: the same
    run spelt differently (a default written out) has the same key, another seed another."""
    stored = buflab.runs.open(swept)
    row = stored.iloc[0]
    scenario = json.loads(row["scenario"])
    assert row["key"] == run_key(core().validate(scenario_json(scenario)))
    spelt_out = {**scenario, "network": {**scenario["network"], "loss": 0.0}}
    assert run_key(core().validate(scenario_json(spelt_out))) == row["key"]
    other_seed = core().validate(scenario_json({**scenario, "seed": 99}))
    assert run_key(other_seed) != row["key"]
    assert len(set(stored["key"])) == len(stored)


@pytest.mark.engine
def test_buflab_runs_lists_filters_and_exports(swept: Path, tmp_path: Path) -> None:
    """`buflab runs OUT --where ...` lists the matching runs (a buffer compared as a number
    of packets, with the metric and seed conditions), and --csv / --parquet write exactly
    those rows, every column."""
    csv, parquet = tmp_path / "small.csv", tmp_path / "small.parquet"
    result = CliRunner().invoke(
        cli,
        ["runs", str(swept), "--where", "network.bottleneck.buffer < 50 and seed == 1",
         "--csv", str(csv), "--parquet", str(parquet)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 of 6 runs" in result.stdout
    assert "buffer-5pkt_seed-1" in result.stdout and "buffer-20pkt_seed-1" in result.stdout
    written = pd.read_csv(csv)
    assert sorted(written["network.bottleneck.buffer"]) == ["20pkt", "5pkt"]
    assert set(written["seed"]) == {1}
    assert len(pd.read_parquet(parquet)) == 2
    assert "scenario" in written.columns and "utilization" in written.columns


@pytest.mark.engine
@pytest.mark.parametrize(
    ("where", "buffers"),
    [
        ("network.bottleneck.buffer < 20", ["5pkt"]),
        ("network.bottleneck.buffer <= 20pkt", ["20pkt", "5pkt"]),
        ("network.bottleneck.buffer == 50pkt", ["50pkt"]),
        ("network.bottleneck.buffer < 1KB", []),  # in bytes: no buffer here is in bytes
        ("network.access.rate >= 100Mbps and not network.bottleneck.buffer > 5", ["5pkt"]),
        (
            "(network.bottleneck.buffer = 5pkt or network.bottleneck.buffer = 50pkt)",
            ["50pkt", "5pkt"],
        ),  # fmt: skip
        ("traffic.0.tcp == newreno and network.bottleneck.buffer != 20pkt", ["50pkt", "5pkt"]),
        ("traffic.0.tcp == 'cubic'", []),
        ("utilization > 0 and engine_build != x", ["20pkt", "50pkt", "5pkt"]),
    ],
)
def test_where_compares_quantities_numbers_and_text(
    swept: Path, where: str, buffers: list[str]
) -> None:
    """Each condition selects the buffers it names: quantities as quantities in their kind
    (a bare number in the column's unit), numbers as numbers, text as text."""
    frame = buflab.runs.open(swept)
    chosen = frame[select(frame, where)]
    assert sorted(set(chosen["network.bottleneck.buffer"])) == buffers


@pytest.mark.engine
@pytest.mark.parametrize(
    ("where", "fragment"),
    [
        ("network.bottleneck.bufer < 10", "did you mean network.bottleneck.buffer"),
        ("network.bottleneck.buffer < lots", "expected a number or a quantity"),
        ("utilization > high", "utilization is a number"),
        ("traffic.0.tcp < newreno", "only == and != apply"),
        ("utilization >", "ends too soon"),
        ("utilization > 0.5 seed == 1", "unexpected 'seed'"),
        ("(utilization > 0.5", "not closed"),
        ("utilization ~ 1", "expected KEY OP VALUE"),
        ("utilization > 1 & seed = 2", "unexpected '&'"),
        ('traffic.0.tcp == "cubic', """cannot read '"cubic'"""),
    ],
)
def test_bad_where_is_one_line(swept: Path, where: str, fragment: str) -> None:
    """A --where that cannot be read or applied is one line naming what was expected."""
    result = CliRunner().invoke(cli, ["runs", str(swept), "--where", where])
    assert_one_line_error(result, fragment)


def test_where_on_mixed_kinds_needs_a_unit() -> None:
    """A bare number against a column of packets and bytes is ambiguous: refused, naming
    both kinds; with a unit each row compares in its own kind."""
    frame = pd.DataFrame({"network.bottleneck.buffer": ["10pkt", "64KB", "unlimited"]})
    with pytest.raises(WhereError, match="bytes and packets; give a unit"):
        select(frame, "network.bottleneck.buffer < 100")
    assert select(frame, "network.bottleneck.buffer < 100pkt").tolist() == [True, False, False]
    assert select(frame, "network.bottleneck.buffer > 1MB").tolist() == [False, False, True]


@pytest.mark.engine
def test_a_run_of_another_engine_build_is_run_again_and_flagged(tmp_path: Path) -> None:
    """A run file made by another engine build is not taken as done: the sweep runs it again
    (its tables never mix two engines). The store keeps the old row; `open` leaves it out
    and counts it, `all_engines=True` shows it flagged, and `buflab runs` says so."""
    plan = Plan(load_scenario(TINY_SCENARIO), [Vary.parse(TWO_BUFFERS)], 1)
    run_sweep(plan, tmp_path, jobs=1)
    old = next((tmp_path / "runs").glob("buffer-5pkt*.json"))
    record = json.loads(old.read_text())
    record["engine_build"] = "0.0.1+0123456789abcdef"
    old.write_text(json.dumps(record))
    # The store's row of that run made by the old build, as the old build would have left it.
    frame = buflab.runs.open(tmp_path)
    row = frame[frame["run"] == old.stem].assign(engine_build=record["engine_build"])
    row.to_parquet(tmp_path / "store" / "part-00000000T000000-oldbuild.parquet", index=False)

    again = run_sweep(plan, tmp_path, jobs=1)
    assert (again.executed, again.skipped) == (1, 1)
    assert json.loads(old.read_text())["engine_build"] == core().engine_build()
    current = buflab.runs.open(tmp_path)
    assert len(current) == 2 and current.attrs["other_engines"] == 1
    everything = buflab.runs.open(tmp_path, all_engines=True)
    assert len(everything) == 3
    flagged = everything[~everything["engine_current"]]
    assert flagged["engine_build"].tolist() == [record["engine_build"]]
    listed = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert "1 made by another engine build are left out" in listed.stdout


@pytest.mark.engine
def test_a_lost_store_is_rebuilt_from_the_run_files_without_running(tmp_path: Path) -> None:
    """Rows that never reached the store (a kill between two flushes; here the whole store
    removed) are added from the run files by the next command in OUT, which runs nothing."""
    import shutil

    plan = Plan(load_scenario(TINY_SCENARIO), [Vary.parse(TWO_BUFFERS)], 1)
    run_sweep(plan, tmp_path, jobs=1)
    before = buflab.runs.open(tmp_path).drop(columns=["estimated_wall_s"])
    shutil.rmtree(tmp_path / "store")
    again = run_sweep(plan, tmp_path, jobs=1)
    assert (again.executed, again.skipped) == (0, 2)
    after = buflab.runs.open(tmp_path).drop(columns=["estimated_wall_s"])
    pd.testing.assert_frame_equal(before, after, check_like=True)


@pytest.mark.engine
def test_a_store_written_by_a_newer_buflab_is_refused(tmp_path: Path, tiny_file: Path) -> None:
    """A store in a format this buflab does not know (from a newer buflab) is refused with
    one line naming the version, both by `buflab runs` and by a sweep writing into it, and
    the sweep runs nothing."""
    store = tmp_path / "store"
    store.mkdir()
    (store / FORMAT_FILE).write_text(json.dumps({"format": 99, "written_by": "buflab 9.0.0"}))
    listed = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert_one_line_error(listed, "buflab 9.0.0", "store format 99", "upgrade buflab")
    swept = CliRunner().invoke(
        cli, ["sweep", str(tiny_file), "--vary", VARY, "--out", str(tmp_path)]
    )
    assert_one_line_error(swept, "buflab 9.0.0", "store format 99")
    assert not (tmp_path / "runs").exists()
    (store / FORMAT_FILE).write_text("not json")
    with pytest.raises(StoreError, match="not a buflab run store's format file"):
        buflab.runs.open(tmp_path)


def test_a_directory_without_a_store_is_one_line(tmp_path: Path) -> None:
    """`buflab runs` on a directory no command wrote a store in says so, in one line."""
    result = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert_one_line_error(result, "no run store here")


# --- the scheduler -------------------------------------------------------------------------


def _runs(count: int) -> list[PlannedRun]:
    return [PlannedRun(f"r{i}", {}, i, {}) for i in range(count)]


def test_tasks_go_longest_first_and_short_runs_are_batched() -> None:
    """Long runs are single tasks in decreasing order of estimate; runs under SHORT_RUN_S
    share tasks of at most BATCH_S estimated work (one run alone may exceed it), still
    longest first, and every run is in exactly one task."""
    runs = _runs(300)
    estimates = {run.id: (5.0 + i if i < 5 else 0.01 * (i % 7 + 1)) for i, run in enumerate(runs)}
    tasks = make_tasks(runs, lambda run: estimates[run.id], workers=2)
    assert [t.runs[0].id for t in tasks[:5]] == ["r4", "r3", "r2", "r1", "r0"]
    assert all(len(t.runs) == 1 for t in tasks[:5])
    batches = tasks[5:]
    assert all(t.estimate_s <= BATCH_S + 1e-9 for t in batches)
    assert all(estimates[r.id] < SHORT_RUN_S for t in batches for r in t.runs)
    assert sorted(r.id for t in tasks for r in t.runs) == sorted(r.id for r in runs)
    order = [estimates[r.id] for t in batches for r in t.runs]
    assert order == sorted(order, reverse=True)
    assert len(batches) < 295, "short runs share tasks"


def test_few_short_runs_still_spread_over_every_worker() -> None:
    """Batches are never so large that fewer than TASKS_PER_WORKER tasks per worker remain:
    40 runs of 10 ms on 2 workers are at least 8 tasks, not one."""
    runs = _runs(40)
    tasks = make_tasks(runs, lambda run: 0.01, workers=2)
    assert len(tasks) >= TASKS_PER_WORKER * 2


def test_the_cost_model_fits_earlier_runs() -> None:
    """Fitted on runs whose wall time is 2e-7 s per packet × (1 + flows)^0.5, the model
    predicts a new run within 1 % (the fit is exact on noiseless data up to rounding); with
    too few runs it scales the engine's formula by their median ratio to it."""
    history = []
    for packets in (1e5, 3e5, 1e6, 3e6):
        for flows in (1, 10, 100):
            cost = RunCost(packets, flows)
            history.append((cost, 2e-7 * packets * math.sqrt(1 + flows)))
    model = CostModel.fit(history)
    assert model.coefficients is not None
    new = RunCost(2e6, 50)
    assert model.predict(new) == pytest.approx(2e-7 * 2e6 * math.sqrt(51), rel=0.01)
    few = CostModel.fit(history[:3])
    assert few.coefficients is None
    assert few.predict(new) == pytest.approx(few.scale * 2e6 / 3_000_000)


def test_the_eta_follows_the_runs_that_finished() -> None:
    """The time left is the estimated work left over the workers, scaled by how finished runs
    compared with their estimates, and never less than the longest run left."""
    eta = Eta({"a": 10.0, "b": 10.0, "c": 10.0, "d": 40.0}, workers=2)
    assert eta.seconds_left() == 40.0  # 70 / 2 = 35, but d alone takes 40
    eta.finished("d", 80.0)  # runs take twice their estimate
    assert eta.seconds_left() == pytest.approx(30.0)  # 2 × 30 / 2
    for run in "abc":
        eta.finished(run, 20.0)
    assert eta.seconds_left() == 0.0
