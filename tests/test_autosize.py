"""The live auto-sizer from Python: the `autosize` table, what `buflab.autosize` reads from
it, the `buflab autosize` command, and clear errors for bad [autosize] keys. The search itself
is tested in Rust (crates/buflab-core/src/autosize.rs and tests/validation/autosize.rs)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.engine.result import Result, table_dtypes, typed_frame
from buflab.experiments.autosize import (
    autosize_scenario,
    outcome,
    pass_threshold,
    run_autosize,
)
from conftest import TINY_SCENARIO


def steps_frame(rows: list[tuple[float, int, bool, int, bool]]) -> pd.DataFrame:
    """An autosize table from (time, buffer, passed, next, converged) rows."""
    types = table_dtypes("autosize")
    columns: dict[str, list] = {name: [] for name in types}
    for time_s, buffer, passed, next_buffer, converged in rows:
        for name, value in zip(
            types,
            (time_s, buffer, 0.99 if passed else 0.9, 0, 100, passed, next_buffer, converged),
            strict=True,
        ):
            columns[name].append(value)
    return typed_frame(columns, types)


@pytest.mark.engine  # the tables' description
def test_outcome_counts_each_convergence_once() -> None:
    # Converges at 3 (twice in a row it holds), starts afresh when 3 fails, converges at 3
    # again: two convergences of the same size, not one.
    steps = steps_frame(
        [
            (2.0, 4, True, 2, False),
            (3.0, 2, False, 3, True),
            (4.0, 3, True, 3, True),
            (5.0, 3, False, 6, False),
            (6.0, 6, True, 3, False),
            (7.0, 3, True, 1, False),
            (8.0, 1, False, 2, False),
            (9.0, 2, False, 3, True),
        ]
    )
    result = Result(
        summary={"autosize_buffer_pkts": 3},
        flows=pd.DataFrame(),
        timeseries=pd.DataFrame(),
        links=pd.DataFrame(),
        transfers=pd.DataFrame(),
        events=None,
        scenario={},
        autosize=steps,
    )
    found = outcome(result)
    assert found.settled_sizes == [3, 3]
    assert (found.buffer_pkts, found.converged_at_end, found.steps) == (3, True, 8)
    assert (found.first_converged_step, found.first_converged_s) == (2, 3.0)


def test_autosize_scenario_puts_the_options_over_the_file_without_changing_it() -> None:
    scenario = {"duration": "9s", "autosize": {"interval": "2s", "tolerance": 0.99}}
    changed = autosize_scenario(scenario, 0.95, interval="4s", start=None, recheck=5)
    assert changed["autosize"] == {
        "interval": "4s",
        "tolerance": 0.99,
        "target_utilization": 0.95,
        "recheck": 5,
    }
    assert scenario["autosize"] == {"interval": "2s", "tolerance": 0.99}
    with pytest.raises(TypeError, match="confirm"):
        autosize_scenario(scenario, 0.95, confirm=2)


@pytest.mark.engine
def test_the_table_has_one_typed_row_per_step(tmp_path: Path) -> None:
    # TINY: 5 s with 1 s of warm-up; 1-s steps end at 2, 3, 4 and 5 s. RTT·C of 10 Mb/s and
    # a mean RTT of 30 ms in 1000-B packets is 37.5, so the search starts at 38 packets.
    result = run_autosize(TINY_SCENARIO, 0.9, interval="1s")
    steps = result.autosize
    assert list(steps.columns) == list(table_dtypes("autosize"))
    assert dict(steps.dtypes.astype(str)) == table_dtypes("autosize")
    assert steps["time_s"].tolist() == pytest.approx([2.0, 3.0, 4.0, 5.0])
    assert steps["buffer_pkts"].iloc[0] == 38
    assert steps["buffer_pkts"].iloc[1:].tolist() == steps["next_buffer_pkts"].iloc[:-1].tolist()
    # Four 1-s steps from 38 packets cannot converge: the answer is null (None), not -1.
    assert result.summary["autosize_buffer_pkts"] is None
    # The last step ends with the run: its choice is never in force.
    assert result.summary["buffer_pkts"] == steps["buffer_pkts"].iloc[-1]

    result.to_dir(tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "autosize.parquet"), steps)


@pytest.mark.engine
def test_without_autosize_the_table_is_empty_and_the_answer_null() -> None:
    result = buflab.run(TINY_SCENARIO)
    assert len(result.autosize) == 0 and list(result.autosize.columns) == list(
        table_dtypes("autosize")
    )
    assert "autosize" not in result.tables()
    assert result.summary["autosize_buffer_pkts"] is None
    # The normalized scenario has an empty table: off.
    assert buflab.validate(TINY_SCENARIO)["autosize"] == {}


@pytest.mark.engine
def test_validate_states_the_computed_defaults() -> None:
    scenario = buflab.validate(TINY_SCENARIO, overrides={"autosize.target_utilization": 0.9})
    table = scenario["autosize"]
    assert table == {
        "target_utilization": 0.9,
        "interval": "3s",
        "settle": "1s",
        "start": 38,
        "tolerance": 0.995,
        "recheck": 0,
    }


@pytest.mark.engine
def test_the_pass_threshold_takes_the_engines_tolerance() -> None:
    # A scenario that leaves the tolerance out gets the engine's default (0.995).
    scenario = buflab.load_scenario(TINY_SCENARIO, overrides={"autosize.target_utilization": 0.9})
    assert pass_threshold(scenario) == 0.9 * 0.995
    scenario["autosize"]["tolerance"] = 0.98
    assert pass_threshold(scenario) == 0.9 * 0.98


@pytest.mark.engine
def test_api_rejects_autosize_keys_without_a_target() -> None:
    with pytest.raises(buflab.ScenarioError, match=r"autosize\.interval: .*target_utilization"):
        buflab.run(TINY_SCENARIO, overrides={"autosize.interval": "1s"})


def invoke(*args: str | Path):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.engine
def test_cli_prints_the_steps_and_the_answer_and_writes_tables_and_plot(
    tmp_path: Path, tiny_file: Path
) -> None:
    # 20 s of the tiny scenario in 1-s steps: 19 steps, enough to converge from 38 packets
    # (1 + ⌈log2 38⌉ = 7 steps).
    out = tmp_path / "out"
    result = invoke(
        "autosize", tiny_file, "--target-utilization", "0.9", "--interval", "1s",
        "--set", "duration=20s", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    steps = pd.read_parquet(out / "autosize.parquet")
    assert len(steps) == 19
    text = " ".join(result.stdout.split())
    # Every step is printed as it is in the table, in order.
    for row in steps.itertuples(index=False):
        assert f"{row.time_s:,.1f} s │ {row.buffer_pkts:,} pkt" in text
    summary = pd.read_json(out / "summary.json", typ="series")
    assert f"converged buffer: {summary['autosize_buffer_pkts']:,} pkt" in text
    for suffix in ("png", "svg"):
        assert (out / f"autosize.{suffix}").stat().st_size > 0
    # The figure says what made it: the scenario's name with the setting given, the
    # bottleneck, the traffic, the simulated time, the seed.
    assert (
        "scenario tiny (duration=20s) · 10 Mb/s bottleneck · 4 flows · 20 s (1 s warm-up) "
        "simulated · seed 1 · buflab"
    ) in (out / "autosize.svg").read_text()
    # The run is a row of OUT's run store, as every command's runs are.
    stored = buflab.runs.open(out)
    assert list(stored["command"]) == ["autosize"] and list(stored["engine"]) == ["simulator"]
    assert stored["autosize_buffer_pkts"].iloc[0] == summary["autosize_buffer_pkts"]


@pytest.mark.engine
@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("--target-utilization", "1.5"), ("autosize.target_utilization", "1.5", "at most 1")),
        # The tiny scenario measures 4 s: a 10-s step would never end.
        (("--target-utilization", "0.9", "--interval", "10s"), ("autosize.interval", "10s")),
        (("--target-utilization", "0.9", "--interval", "ten"), ("autosize.interval", "ten")),
        (
            ("--target-utilization", "0.9", "--interval", "1s", "--set", "autosize.settle=1s"),
            ("autosize.settle", "shorter than autosize.interval"),
        ),
        (
            ("--target-utilization", "0.9", "--set", "autosize.tolerence=0.9"),
            ("autosize.tolerence", "did you mean `tolerance`"),
        ),
    ],
)
def test_cli_bad_autosize_input_is_one_line(
    tiny_file: Path, tmp_path: Path, args, fragments
) -> None:
    result = invoke("autosize", tiny_file, *args, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
