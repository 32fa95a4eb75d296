"""Transfers of closed-loop traffic: the `Result.transfers` table and its summaries by size.

Every input is a dict of columns made here, shaped like the engine's "transfers" table, so
these tests need no closed-loop traffic; they need the engine for the tables' description
(`table_dtypes`), which types every table of a `Result`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.analysis.transfers import COLUMNS, SIZE_BINS, by_size_bin, short_and_long
from buflab.cli import cli
from buflab.engine.result import Result, table_dtypes
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine

SIZE_LABELS = ["< 30 KB", "30–50 KB", "50–100 KB", "100–200 KB", "200–500 KB", "≥ 500 KB"]


def columns(*transfers: tuple[int, float | None]) -> dict[str, list[Any]]:
    """The engine's columns for transfers given as (bytes, fct_s); fct_s None = incomplete."""
    table: dict[str, list[Any]] = {name: [] for name in table_dtypes("transfers")}
    for index, (size, fct) in enumerate(transfers):
        complete = fct is not None
        start = 10.0 + index
        table["flow"].append(index)
        table["traffic"].append(0)
        table["conn"].append(1)
        table["start_s"].append(start)
        table["end_s"].append(start + fct if complete else math.nan)
        table["bytes"].append(size)
        table["fct_s"].append(fct if complete else math.nan)
        table["throughput_bps"].append(size * 8 / fct if complete else math.nan)
        table["retransmits"].append(0)
        table["timeouts"].append(0)
        table["complete"].append(complete)
    return table


def frame(*transfers: tuple[int, float | None]) -> pd.DataFrame:
    return result_from({"transfers": columns(*transfers)}).transfers


def result_from(extra: dict[str, Any]) -> Result:
    """A Result from an engine dict: a minimal summary, flows and timeseries, plus `extra`."""
    raw = {
        "summary": {"name": "hand-made", "seed": 1, "utilization": 0.5},
        "flows": {"flow": [0], "goodput_bps": [1e6]},
        "timeseries": {"time_s": [1.0], "utilization": [0.5]},
        **extra,
    }
    return Result.from_engine(raw, scenario={"name": "hand-made"})


def row(table: pd.DataFrame, label: str) -> pd.Series:
    (match,) = table.index[table["bin"] == label]
    return table.loc[match]


# --- size bins ---------------------------------------------------------------------------


def test_size_bins_run_from_below_30_kb_to_above_500_kb() -> None:
    # Fig. 4.6's outer bars are "< 30KB" and "> 500KB"; KB is 1000 bytes.
    assert SIZE_BINS[:2] == (0, 30_000) and SIZE_BINS[-2:] == (500_000, math.inf)
    assert by_size_bin(frame((1, 1.0)))["bin"].tolist() == SIZE_LABELS


@pytest.mark.parametrize(
    ("size", "label"),
    [
        (29_999, "< 30 KB"),
        (30_000, "30–50 KB"),
        (49_999, "30–50 KB"),
        (50_000, "50–100 KB"),
        (200_000, "200–500 KB"),
        (499_999, "200–500 KB"),
        (500_000, "≥ 500 KB"),
        (50_000_000, "≥ 500 KB"),
    ],
)
def test_a_bin_holds_its_lower_edge_and_not_its_upper(size: int, label: str) -> None:
    table = by_size_bin(frame((size, 1.0)))
    assert row(table, label)["transfers"] == 1
    assert table["transfers"].sum() == 1, "each transfer is in exactly one bin"


def test_every_bin_has_a_row_even_without_transfers() -> None:
    table = by_size_bin(frame((40_000, 1.0)))
    assert len(table) == len(SIZE_BINS) - 1
    empty = row(table, "≥ 500 KB")
    assert (empty["transfers"], empty["completed"]) == (0, 0)
    assert math.isnan(empty["fct_mean_s"]) and math.isnan(empty["throughput_mean_bps"])


def test_custom_bins_are_labelled_by_their_edges() -> None:
    table = by_size_bin(frame((500, 1.0), (1_500, 1.0)), bins=(0, 1_000, 2_000))
    assert table["bin"].tolist() == ["< 1 KB", "1–2 KB"]
    assert table["transfers"].tolist() == [1, 1]


def test_bins_must_be_increasing_edges() -> None:
    with pytest.raises(ValueError, match="increasing"):
        by_size_bin(frame((1, 1.0)), bins=(0, 50_000, 30_000))
    with pytest.raises(ValueError, match="increasing"):
        by_size_bin(frame((1, 1.0)), bins=(0,))


# --- statistics --------------------------------------------------------------------------


def test_incomplete_transfers_count_but_are_not_timed() -> None:
    # Two finished 40 KB files (1 s and 3 s) and one still running when the run ended.
    table = by_size_bin(frame((40_000, 1.0), (40_000, 3.0), (40_000, None)))
    mid = row(table, "30–50 KB")
    assert (mid["transfers"], mid["completed"]) == (3, 2)
    assert mid["fct_mean_s"] == 2.0
    assert mid["fct_p50_s"] == 2.0
    assert mid["throughput_mean_bps"] == pytest.approx((320_000 + 320_000 / 3) / 2)


def test_a_bin_with_only_incomplete_transfers_has_no_statistics() -> None:
    only = row(by_size_bin(frame((600_000, None))), "≥ 500 KB")
    assert (only["transfers"], only["completed"]) == (1, 0)
    for statistic in ("fct_mean_s", "fct_p50_s", "fct_p99_s", "throughput_mean_bps"):
        assert math.isnan(only[statistic]), statistic


def test_percentiles_interpolate_between_completion_times() -> None:
    # Completion times 1, 2, …, 100 s: p50 is halfway between the 50th and 51st, p99 is
    # 1 % of the way from the 99th to the 100th (linear interpolation, pandas' default).
    table = by_size_bin(frame(*[(10_000, float(t)) for t in range(1, 101)]))
    small = row(table, "< 30 KB")
    assert small["fct_p50_s"] == pytest.approx(50.5)
    assert small["fct_p99_s"] == pytest.approx(99.01)
    assert small["fct_mean_s"] == pytest.approx(50.5)


def test_short_and_long_thresholds_are_strict() -> None:
    # IMC 2008: short < 50 KB, long > 1,000 KB; the edges themselves are in neither.
    table = short_and_long(
        frame((49_999, 1.0), (50_000, 1.0), (1_000_000, 1.0), (1_000_001, 4.0), (2_000_000, None))
    )
    assert table["bin"].tolist() == ["short (< 50 KB)", "long (> 1,000 KB)"]
    assert table["transfers"].tolist() == [1, 2]
    assert table["completed"].tolist() == [1, 1]
    assert table["fct_mean_s"].tolist() == [1.0, 4.0]


@pytest.mark.parametrize("summarise", [by_size_bin, short_and_long])
def test_no_transfers_give_a_table_with_the_columns_and_no_rows(summarise) -> None:
    table = summarise(result_from({}).transfers)
    assert len(table) == 0
    assert list(table.columns) == list(COLUMNS)
    assert table.dtypes.astype(str).to_dict() == COLUMNS


# --- Result.transfers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [{}, {"transfers": {}}, {"transfers": {name: [] for name in table_dtypes("transfers")}}],
    ids=["no key", "no columns", "no rows"],
)
def test_a_run_without_transfers_has_an_empty_typed_table(
    extra: dict[str, Any], tmp_path: Path
) -> None:
    result = result_from(extra)
    assert len(result.transfers) == 0
    assert result.transfers.dtypes.astype(str).to_dict() == table_dtypes("transfers")
    assert list(result.transfers.columns) == list(table_dtypes("transfers"))
    assert "transfers" not in result.tables()
    result.to_dir(tmp_path, csv=True)
    assert not list(tmp_path.glob("transfers.*")), "no file for an empty table"


def test_transfers_come_out_in_column_order_typed_and_written(tmp_path: Path) -> None:
    given = columns((40_000, 0.5), (2_000_000, None))
    shuffled = dict(reversed(list(given.items())))  # the engine's order must not matter
    result = result_from({"transfers": shuffled})
    transfers = result.transfers
    assert list(transfers.columns) == list(table_dtypes("transfers"))
    assert transfers.dtypes.astype(str).to_dict() == table_dtypes("transfers")
    assert transfers["complete"].tolist() == [True, False]
    assert math.isnan(transfers["end_s"].iloc[1]) and math.isnan(transfers["fct_s"].iloc[1])
    assert transfers["throughput_bps"].iloc[0] == 640_000.0
    assert list(result.tables()) == ["flows", "timeseries", "transfers"]
    result.to_dir(tmp_path, csv=True)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "transfers.parquet"), transfers)
    assert (tmp_path / "transfers.csv").exists()


def test_columns_the_engine_adds_are_kept_after_the_known_ones() -> None:
    given = columns((40_000, 0.5))
    given["syn_retries"] = [0]
    assert list(result_from({"transfers": given}).transfers.columns) == [
        *table_dtypes("transfers"),
        "syn_retries",
    ]


# --- the command line --------------------------------------------------------------------


def test_run_prints_the_bins_and_json_stays_the_summary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = result_from({"transfers": columns((40_000, 0.5), (600_000, None))})
    monkeypatch.setattr("buflab.engine.runner.run", lambda *args, **kwargs: result)
    scenario = tmp_path / "any.toml"  # read, but not run: the run is the hand-made result
    scenario.write_text(TINY_SCENARIO)

    readable = CliRunner().invoke(cli, ["run", str(scenario)])
    assert readable.exit_code == 0, readable.output
    assert "transfers by file size" in readable.stdout
    for label in SIZE_LABELS:
        assert label in readable.stdout, label

    as_json = CliRunner().invoke(cli, ["run", str(scenario), "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == result.summary, "exactly the summary object"


def test_run_without_transfers_prints_no_bins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("buflab.engine.runner.run", lambda *args, **kwargs: result_from({}))
    scenario = tmp_path / "any.toml"
    scenario.write_text(TINY_SCENARIO)
    readable = CliRunner().invoke(cli, ["run", str(scenario)])
    assert readable.exit_code == 0, readable.output
    assert "utilization" in readable.stdout
    assert "transfers by file size" not in readable.stdout


def test_closed_loop_run_returns_transfers(tmp_path: Path) -> None:
    # Through the real engine: one user, constant 3,840 B files (four 960 B segments), RTT
    # 100 ms, uncongested: every download takes the handshake and one data round trip, 2 RTT,
    # plus microseconds of serialization.
    scenario = {
        "duration": "5s",
        "network": {
            "bottleneck": {"rate": "1Gbps", "buffer": "unlimited"},
            "access": {"rate": "1Gbps"},
            "rtt": "100ms",
        },
        "traffic": [
            {
                "kind": "closed_loop",
                "start": "0s",
                "file_size": {"dist": "constant", "value": "3840B"},
                "think": {"dist": "constant", "value": "1s"},
            }
        ],
    }
    result = buflab.run(scenario)
    done = result.transfers[result.transfers["complete"]]
    assert len(done) == 4  # starts at 0, 1.2, 2.4, 3.6 s; the fifth (4.8 s) is still open
    assert done["fct_s"].between(0.2, 0.2001).all()
    result.to_dir(tmp_path)
    assert (tmp_path / "transfers.parquet").exists()
