"""The parking lot from Python: the shipped example, the per-link table and its files, bad
input, and what `buflab run` prints."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.engine.result import Result, table_dtypes
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "parking_lot.toml"


def assert_link_types(links: pd.DataFrame) -> None:
    types = table_dtypes("links")
    assert list(links.columns) == list(types)
    numbers = {name: kind for name, kind in types.items() if name != "name"}
    assert links[list(numbers)].dtypes.astype(str).to_dict() == numbers
    assert pd.api.types.is_string_dtype(links["name"])


def test_the_example_has_one_links_row_per_hop(tmp_path: Path) -> None:
    result = buflab.run(EXAMPLE)
    hops = result.scenario["network"]["hops"]
    links = result.links
    assert hops == 3 and len(links) == hops
    assert links["hop"].tolist() == [1, 2, 3]
    assert links["name"].tolist() == ["hop1", "hop2", "hop3"]
    assert_link_types(links)
    # Ten main and ten cross flows on each hop keep every hop busy.
    assert (links["utilization"] > 0.9).all(), links
    # The summary describes network.summary_hop (hop 1 here), figure for figure.
    first = links.iloc[0]
    for key in ("utilization", "drops", "arrivals", "drop_rate", "mean_queue_pkts"):
        assert result.summary[key] == first[key], key
    # TCP's bias against multi-hop flows: the main entry (0) gets less than the cross ones.
    mean = result.flows.groupby("traffic")["goodput_bps"].mean()
    assert mean[0] < mean[[1, 2, 3]].min()

    result.to_dir(tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "links.parquet"), links)


def test_summary_hop_chooses_the_summary_row() -> None:
    result = buflab.run(EXAMPLE, network__summary_hop=3, duration="5s", warmup="1s")
    third = result.links.iloc[2]
    assert result.summary["utilization"] == third["utilization"]
    assert result.summary["drops"] == third["drops"]


def test_bad_hops_name_key_value_and_expectation() -> None:
    with pytest.raises(buflab.ScenarioError, match=r'traffic\.1\.hops: got "4"; expected a hop'):
        buflab.validate(EXAMPLE, traffic__1__hops="4")
    with pytest.raises(buflab.ScenarioError, match=r"network\.hops: got 0; expected"):
        buflab.validate(EXAMPLE, network__hops=0)
    on_dumbbell = r'traffic\.0\.hops: got "2"; expected no `hops` on the dumbbell'
    with pytest.raises(buflab.ScenarioError, match=on_dumbbell):
        buflab.validate(TINY_SCENARIO, traffic__0__hops="2")


def test_a_result_without_links_has_an_empty_typed_table() -> None:
    raw = {"summary": {"name": "x"}, "flows": {"flow": [0]}, "timeseries": {"time_s": [1.0]}}
    result = Result.from_engine(raw, scenario={"name": "x"})
    assert len(result.links) == 0
    assert_link_types(result.links)
    assert "links" not in result.tables()


def test_run_prints_every_hop_and_marks_the_summary_hop() -> None:
    args = ["run", str(EXAMPLE), "--set", "duration=5s", "--set", "warmup=1s"]
    printed = CliRunner().invoke(cli, [*args, "--set", "network.summary_hop=2"])
    assert printed.exit_code == 0, printed.output
    assert "hop1 " in printed.stdout and "hop2*" in printed.stdout and "hop3 " in printed.stdout
