"""The Python API on the real engine, with tiny scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import buflab
from buflab.engine import table_descriptions
from buflab.engine.result import table_dtypes
from buflab.experiments.sweep import DEFAULT_SEED
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine

FLOW_COLUMNS = [
    "flow", "traffic", "kind", "tcp", "cc", "rtt_s", "start_s", "goodput_bps", "delivered_bytes",
    "sent_packets", "retransmits", "timeouts", "ecn_reactions", "cwnd_pkts", "ssthresh_pkts",
    "srtt_s", "machine", "class", "input", "output",
]  # fmt: skip
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TIMESERIES_COLUMNS = [
    "time_s", "throughput_bps", "utilization", "queue_pkts", "queue_max_pkts", "arrivals", "drops",
]  # fmt: skip


def test_run_returns_tables_and_the_scenario_it_ran() -> None:
    result = buflab.run(TINY_SCENARIO, network__bottleneck__buffer="10pkt", seed=3)
    assert 0 < result.summary["utilization"] <= 1
    assert result.summary["buffer_pkts"] == 10
    assert list(result.flows.columns) == FLOW_COLUMNS
    assert len(result.flows) == 4
    assert list(result.timeseries.columns) == TIMESERIES_COLUMNS
    # The dumbbell's links table is its one bottleneck, the summary's own link.
    assert list(result.links.columns) == list(table_dtypes("links"))
    assert result.links["name"].tolist() == ["bottleneck"]
    assert result.links["utilization"].iloc[0] == result.summary["utilization"]
    assert result.events is None, "events are recorded only on request"
    assert result.scenario["network"]["bottleneck"]["buffer"] == "10pkt"
    assert result.scenario["seed"] == 3


def test_every_table_has_the_columns_and_dtypes_the_engine_describes() -> None:
    # Between them, every table has rows: the switch has ports (and no auto-sizer), the
    # closed-loop dumbbell has transfers, and the auto-sizer's steps and flow traces, the
    # NetBump example its bumps, the QCN example its reaction points' rates, and the dumbbell
    # buffered in fiber its optical tables.
    switch = buflab.run(EXAMPLES / "switch.toml", duration="1s", warmup="0.5s")
    closed = buflab.run(
        EXAMPLES / "closed_loop.toml",
        duration="6s",
        warmup="2s",
        overrides={"autosize.target_utilization": 0.9, "autosize.interval": "1s"},
        monitor__trace_flows=[0, 1],
    )
    bumps = buflab.run(EXAMPLES / "netbump.toml", duration="0.2s", warmup="0.1s")
    qcn = buflab.run(EXAMPLES / "qcn.toml", duration="0.4s", warmup="0.1s")
    optical = buflab.run(
        EXAMPLES / "dumbbell.toml",
        duration="2s",
        warmup="1s",
        overrides={
            "network.bottleneck.buffer": "31pkt",
            "network.bottleneck.queue": "optical_fifo",
        },
    )
    codel = buflab.run(
        EXAMPLES / "dumbbell.toml",
        duration="2s",
        warmup="1s",
        overrides={"network.bottleneck.queue": "codel"},
    )
    described = table_descriptions()
    with_rows = set()
    for result in (switch, closed, bumps, qcn, optical, codel):
        summary = [column["name"] for column in described["summary"]["columns"]]
        assert list(result.summary) == summary
        for name in described.keys() - {"summary"}:
            frame = getattr(result, name)
            assert frame.dtypes.astype(str).to_dict() == table_dtypes(name), name
            assert list(frame.columns) == list(table_dtypes(name)), name
            if len(frame) > 0:
                with_rows.add(name)
    assert with_rows == described.keys() - {"summary"}


def test_same_seed_same_numbers() -> None:
    first = buflab.run(TINY_SCENARIO).summary
    second = buflab.run(TINY_SCENARIO).summary
    # Wall time and the process's peak memory are measurements of the run, not results.
    for varying in ("wall_s", "peak_rss_mib"):
        first.pop(varying)
        second.pop(varying)
    assert first == second


def test_events_and_to_dir(tmp_path: Path) -> None:
    result = buflab.run(TINY_SCENARIO, overrides=["monitor.events=true"])
    assert isinstance(result.events, pd.DataFrame)
    assert set(result.events["event"].unique()) <= {"enqueue", "dequeue", "drop"}
    result.to_dir(tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text()) == result.summary
    events = pd.read_parquet(tmp_path / "events.parquet")
    assert len(events) == len(result.events)
    assert not list(tmp_path.glob("*.csv")), "CSV only when asked"


def test_validate_fills_defaults() -> None:
    normalised = buflab.validate(TINY_SCENARIO)
    assert "monitor" in normalised
    without_seed = buflab.load_scenario(TINY_SCENARIO)
    del without_seed["seed"]
    assert buflab.validate(without_seed)["seed"] == DEFAULT_SEED, "sweeps count seeds from it"
    with pytest.raises(buflab.ScenarioError, match="network.bottleneck.buffer"):
        buflab.validate(TINY_SCENARIO, network__bottleneck__buffer="ten")


def test_every_layer_and_its_modules_resolve_after_import_buflab() -> None:
    """Newcomer issue, item 2: `buflab.analysis.queue.analyze(...)`, as the README writes it,
    raised AttributeError after `import buflab`, and `dir(buflab)` listed almost nothing. In
    a fresh interpreter (here, nothing was imported before), every documented name resolves
    and `dir()` shows the API, the layers and their modules."""
    import subprocess
    import sys

    probe = (
        "import buflab\n"
        "assert callable(buflab.analysis.queue.analyze)\n"
        "assert callable(buflab.analysis.transfers.by_size_bin)\n"
        "assert callable(buflab.experiments.sweep.run_sweep)\n"
        "assert callable(buflab.theory.sqrt_n_packets) and callable(buflab.run)\n"
        "names = set(dir(buflab))\n"
        "assert {'run', 'validate', 'emulate', 'Error', 'analysis', 'theory'} <= names, names\n"
        "assert {'queue', 'theory', 'transfers'} <= set(dir(buflab.analysis))\n"
        "try:\n"
        "    buflab.analysis.no_such_module\n"
        "except AttributeError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "module 'buflab.analysis' has no attribute 'no_such_module'"


def test_a_run_written_to_a_directory_reads_back_as_the_same_result(tmp_path: Path) -> None:
    """Newcomer issue, item 10: there was no way to load a run directory back into a
    `Result`. `buflab.load_run(DIR)` gives back the summary, the scenario and every table
    `to_dir` wrote, equal to the run's own; a directory without a run is one MissingFile."""
    import pandas as pd

    result = buflab.run(TINY_SCENARIO, overrides={"monitor.trace_flows": [0]})
    back = buflab.load_run(result.to_dir(tmp_path / "run"))
    assert back.summary == result.summary
    assert back.scenario == result.scenario
    for name, table in result.tables().items():
        pd.testing.assert_frame_equal(getattr(back, name), table, check_dtype=False, obj=name)
    assert len(back.traces) > 0 and back.events_file is None
    with pytest.raises(buflab.MissingFile, match="no run here"):
        buflab.load_run(tmp_path)
