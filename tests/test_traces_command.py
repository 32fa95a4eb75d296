"""`buflab traces RUN_DIR...`: the table of each run's traced flows, read from the
traces.parquet and summary.json that `buflab run --out` wrote, the figure, --label, and its
errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from buflab.cli import cli
from buflab.engine.units import format_time
from conftest import TINY_SCENARIO
from test_cli import assert_one_line_error

pytestmark = pytest.mark.engine

TRACED = ["--set", "monitor.trace_flows=[0, 1]"]


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three `buflab run --out` directories of the tiny scenario: flows 0 and 1 traced
    (`unpaced`), the same with window pacing (`paced`), and a run tracing nothing."""
    base = tmp_path_factory.mktemp("traces")
    scenario = base / "tiny.toml"
    scenario.write_text(TINY_SCENARIO)
    commands = {
        "unpaced": TRACED,
        "paced": [*TRACED, "--set", "traffic.0.pacing=window"],
        "untraced": [],
    }
    dirs = {}
    for name, options in commands.items():
        dirs[name] = base / name
        result = invoke("run", scenario, *options, "--out", dirs[name])
        assert result.exit_code == 0, result.output
    return dirs


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The cells of the printed table by their first cell, the header row under "measure"."""
    rows = {}
    for line in stdout.splitlines():
        for bar in ("│", "┃"):
            if line.startswith(bar):
                cells = [cell.strip() for cell in line.strip(bar).split(bar)]
                rows[cells[0]] = cells[1:]
    return rows


def expected_column(run: Path) -> dict[str, str]:
    """What the table must say of a run, computed here from its files: each traced flow's
    last trace row gives what it had acknowledged and its window at the end, Jain's index is
    (Σx)² / (n·Σx²) over those totals, and the first drop is the summary's."""
    traces = pd.read_parquet(run / "traces.parquet")
    last = traces.groupby("flow").tail(1)
    acked = last["acked_bytes"].astype(float)
    jain = acked.sum() ** 2 / (len(acked) * (acked**2).sum())
    first_drop = json.loads((run / "summary.json").read_text())["first_drop_s"]
    return {
        "traced flows": f"{traces['flow'].nunique()}",
        "acknowledged": f"{acked.sum() / 1e6:,.2f} MB",
        "fairness (Jain)": f"{jain:.3f}",
        "window at the end": f"{last['cwnd_pkts'].mean():,.1f} seg",
        "first drop": "none" if first_drop is None else format_time(first_drop),
    }


def test_the_trace_rows_are_the_traced_flows_only(runs: dict[str, Path]) -> None:
    """`monitor.trace_flows = [0, 1]` of a 4-flow run records flows 0 and 1 and no other,
    in time order, each flow's acknowledged bytes never falling: what the command reads."""
    traces = pd.read_parquet(runs["unpaced"] / "traces.parquet")
    assert sorted(traces["flow"].unique()) == [0, 1]
    assert traces["time_s"].is_monotonic_increasing
    for _, rows in traces.groupby("flow"):
        assert rows["acked_bytes"].is_monotonic_increasing
        assert rows["acked_bytes"].iloc[-1] > 0


def test_traces_prints_a_run_and_draws_it_in_its_directory(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """One RUN_DIR: the table's column is named after the directory and each figure in it
    is the one computed from the run's own files (exact, as the table rounds them); the
    figure is written into the RUN_DIR (`run --out` drew one there too, so it is removed
    first), its legend naming each traced flow and its footer the scenario and seed."""
    run = tmp_path / "tiny-run"
    shutil.copytree(runs["unpaced"], run)
    for suffix in ("png", "svg"):
        (run / f"traces.{suffix}").unlink()
    result = invoke("traces", run)
    assert result.exit_code == 0, result.output
    rows = table_rows(result.stdout)
    assert rows["measure"] == ["tiny-run"]
    for measure, value in expected_column(run).items():
        assert rows[measure] == [value], measure
    assert rows["traced flows"] == ["2"]
    assert {"traces.png", "traces.svg"} <= {path.name for path in run.iterdir()}
    svg = (run / "traces.svg").read_text()
    assert "tiny-run, flow 0" in svg and "tiny-run, flow 1" in svg
    assert "scenario tiny · 10 Mb/s bottleneck · 4 flows" in svg and "seed 1" in svg


def test_labels_name_the_runs_in_the_table_and_the_figure(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Two RUN_DIRs with --label: the columns are the labels in the order given (not the
    directories' names), each filled from its own run (pacing changes what the flows
    acknowledged, so a swapped or repeated column shows), and the figure written to --out
    names the flows by label."""
    out = tmp_path / "out"
    result = invoke(
        "traces", runs["unpaced"], runs["paced"], "--label", "A", "--label", "B", "--out", out
    )
    assert result.exit_code == 0, result.output
    rows = table_rows(result.stdout)
    assert rows["measure"] == ["A", "B"]
    unpaced, paced = expected_column(runs["unpaced"]), expected_column(runs["paced"])
    assert unpaced["acknowledged"] != paced["acknowledged"]
    for measure in unpaced:
        assert rows[measure] == [unpaced[measure], paced[measure]], measure
    svg = (out / "traces.svg").read_text()
    for name in ("A, flow 0", "A, flow 1", "B, flow 0", "B, flow 1"):
        assert name in svg
    assert "unpaced" not in svg


@pytest.mark.parametrize("which", ["untraced", "missing"])
def test_a_run_without_traces_is_one_line_before_anything_is_written(
    runs: dict[str, Path], tmp_path: Path, which: str
) -> None:
    """A RUN_DIR with no traces.parquet (a run that traced no flow: the file and the key to
    set are named) or no run at all (the directory is named as missing) is one `error:` line,
    exit status 2, even after a good RUN_DIR, and no table or figure is made."""
    bad = runs["untraced"] if which == "untraced" else tmp_path / "no-such-run"
    out = tmp_path / "out"
    result = invoke("traces", runs["unpaced"], bad, "--out", out)
    if which == "untraced":
        expected = (f"{bad / 'traces.parquet'}: no traces", "monitor.trace_flows")
    else:
        expected = (f"{bad}: no such run directory",)
    assert_one_line_error(result, *expected)
    assert result.stdout == ""
    assert not out.exists()


LABEL_ERRORS = [
    (["--label", "A"], "--label: got 1 labels for 2 RUN_DIRs; expected one each"),
    (["--label", "A", "--label", "A"], "two runs share a name (A, A)"),
]


@pytest.mark.parametrize(("labels", "message"), LABEL_ERRORS)
def test_labels_that_do_not_name_each_run_once_are_refused(
    runs: dict[str, Path], tmp_path: Path, labels: list[str], message: str
) -> None:
    """One --label for two RUN_DIRs, or two runs given one name, exit with status 2 and say
    which, before any run is read or anything written."""
    out = tmp_path / "out"
    result = invoke("traces", runs["unpaced"], runs["paced"], *labels, "--out", out)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert message in result.stderr
    assert result.stdout == "" and not out.exists()


@pytest.mark.parametrize(("labels", "message"), LABEL_ERRORS)
def test_label_errors_are_one_error_line(
    runs: dict[str, Path], tmp_path: Path, labels: list[str], message: str
) -> None:
    """Bad input is one `error: …` line (cli/common.py), the label errors included."""
    out = tmp_path / "out"
    result = invoke("traces", runs["unpaced"], runs["paced"], *labels, "--out", out)
    assert_one_line_error(result, message)
