"""The queue event log: streamed to Parquet in batches, and the queue rebuilt from it alone.

The rebuilt numbers are compared with the run's own summary and time series with `==`: both
are computed from the same integer picoseconds, so any difference at all means an event is
missing, duplicated or misplaced in the log (or the rebuild misreads one)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import buflab
from buflab.analysis.queue import Distribution, analyze, check_summary
from buflab.cli import cli
from buflab.engine.events import PS_PER_S, EventLogWriter, LogFacts, read_events
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# 100 flows into a 30-packet buffer for 30 s: thousands of drops, ~600,000 events (more than
# two engine batches of 2^18), so batch boundaries are crossed in writing and in reading.
WITH_DROPS = {
    "monitor.events": True,
    "duration": "30s",
    "warmup": "10s",
    "network.bottleneck.buffer": "30pkt",
}


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> buflab.Result:
    out = tmp_path_factory.mktemp("streamed") / "events.parquet"
    return buflab.run(EXAMPLES / "dumbbell.toml", overrides=WITH_DROPS, events_to=out)


def assert_rebuilt_exactly(analysis: object, result: buflab.Result) -> None:
    checks = check_summary(analysis, result.summary)  # type: ignore[arg-type]
    assert len(checks) == 15, "every rebuilt number is one the summary reports"
    assert [c for c in checks if c[1] != c[2]] == []
    pd.testing.assert_frame_equal(
        analysis.series, result.timeseries, check_exact=True, check_dtype=False
    )  # type: ignore[attr-defined]


def test_the_log_streams_in_bounded_batches(streamed: buflab.Result) -> None:
    assert streamed.summary["drops"] > 1000, "the run must exercise drops"
    assert streamed.events is None, "a streamed log is not also kept in memory"
    log = pq.ParquetFile(streamed.events_file)
    groups = [log.metadata.row_group(i).num_rows for i in range(log.num_row_groups)]
    # One row group per engine batch: the engine never held more than 2^18 events.
    assert len(groups) >= 2 and max(groups) <= 1 << 18, groups
    assert not streamed.events_file.with_name("events.parquet.partial").exists()


@pytest.mark.parametrize("batch_rows", [1 << 20, 4_099])
def test_the_queue_rebuilt_from_the_log_matches_the_run_exactly(
    streamed: buflab.Result, batch_rows: int
) -> None:
    # A small, odd batch size puts batch edges everywhere: inside bursts, between a packet's
    # enqueue and its dequeue, across interval boundaries.
    assert_rebuilt_exactly(analyze(streamed.events_file, batch_rows=batch_rows), streamed)


def test_a_log_kept_in_memory_rebuilds_the_same(streamed: buflab.Result, tmp_path: Path) -> None:
    in_memory = buflab.run(EXAMPLES / "dumbbell.toml", overrides=WITH_DROPS)
    assert in_memory.events is not None and in_memory.events_facts is not None
    assert_rebuilt_exactly(analyze(in_memory.events, in_memory.events_facts), in_memory)
    # Streamed or not, and rewritten by to_dir, it is the same log.
    in_memory.to_dir(tmp_path)
    on_disk = read_events(tmp_path / "events.parquet")
    streamed_log = read_events(streamed.events_file)
    assert list(on_disk.columns) == list(streamed_log.columns)
    assert on_disk.equals(streamed_log)


def test_the_parking_lot_logs_its_summary_hop() -> None:
    result = buflab.run(
        EXAMPLES / "parking_lot.toml",
        overrides={"monitor.events": True, "network.summary_hop": 2, "duration": "14s"},
    )
    assert result.events_facts is not None and result.events_facts.link == "hop2"
    assert_rebuilt_exactly(analyze(result.events, result.events_facts), result)


def test_ecn_marks_are_logged_apart_from_drops_and_rebuilt_exactly() -> None:
    # RED with ECN marks thousands of packets: each mark is a row of its own after its
    # packet's enqueue, so the rebuilt arrivals, drops and marks all equal the run's.
    result = buflab.run(
        EXAMPLES / "red_ecn.toml",
        overrides={"monitor.events": True, "duration": "30s", "warmup": "10s"},
    )
    assert result.events is not None and result.events_facts is not None
    assert result.summary["marks"] > 100
    events = result.events["event"]
    assert (events == "mark").sum() >= result.summary["marks"]
    analysis = analyze(result.events, result.events_facts)
    assert analysis.marks == result.summary["marks"]
    assert_rebuilt_exactly(analysis, result)
    # A mark is logged right after the enqueue of the same packet, with the same occupancy.
    marks = np.flatnonzero((events == "mark").to_numpy())
    before = result.events.iloc[marks - 1]
    assert (before["event"] == "enqueue").all()
    for column in ("time_ps", "flow", "seq", "queue_pkts"):
        assert (before[column].to_numpy() == result.events.iloc[marks][column].to_numpy()).all()


@pytest.mark.parametrize("batch_rows", [1 << 20, 997])
def test_drop_head_purges_are_logged_and_rebuilt_exactly(batch_rows: int, tmp_path: Path) -> None:
    # Drop-head holds its packets and drops the oldest one when the buffer is full: each drop
    # is a purge row (not an arrival), and the rebuild, which takes the purged packets out of
    # the FIFO it matches enqueues and dequeues with, equals the run to the last bit, also
    # with batch edges everywhere.
    result = buflab.run(
        EXAMPLES / "dumbbell.toml",
        overrides={**WITH_DROPS, "duration": "15s", "network.bottleneck.queue": "drop_head"},
        events_to=tmp_path / "events.parquet",
    )
    assert result.events_file is not None
    log = read_events(result.events_file)
    measured = log[log["time_ps"] >= result.summary["warmup_s"] * PS_PER_S]["event"]
    assert (measured == "purge").sum() == result.summary["drops"] > 500
    assert (log["event"] == "drop").sum() == 0, "a full drop-head queue admits every arrival"
    assert_rebuilt_exactly(analyze(result.events_file, batch_rows=batch_rows), result)


def scripted_log(flows: list[int], kinds: list[str], gap_ps: int) -> pd.DataFrame:
    n = len(flows)
    return pd.DataFrame(
        {
            "time_ps": np.arange(n, dtype=np.int64) * gap_ps,
            "event": pd.Categorical(kinds, categories=["enqueue", "dequeue", "drop"]),
            "flow": np.array(flows, dtype=np.uint32),
            "seq": np.zeros(n, dtype=np.uint32),
            "size": np.full(n, 125, dtype=np.uint32),
            "queue_pkts": np.zeros(n, dtype=np.int64),
            "queue_bytes": np.zeros(n, dtype=np.int64),
        }
    )


def test_bursts_and_gaps_of_a_scripted_sequence() -> None:
    # The engine's own unit test sequence (monitor/mix.rs): flows 1 1 1 2 1 1 stored 10 µs
    # apart, then a dropped arrival of flow 1. 125 B at 1 Mb/s take 1 ms to send, so every
    # gap is faster than line rate.
    log = scripted_log([1, 1, 1, 2, 1, 1, 1], ["enqueue"] * 6 + ["drop"], 10_000_000)
    facts = LogFacts(10**6, 0, 10**9, 10**9, 10, -1, "bottleneck", "scripted", 1, "test")
    a = analyze(log, facts)
    # Runs 3, 1, 3 (the drop continues the last run); 6 successive pairs, 4 of one flow.
    assert a.bursts.count == 3 and a.bursts.mean == 7 / 3
    assert a.bursts.cdf()["cdf"].tolist() == [1 / 3, 1.0]
    assert (a.pairs, a.same_flow_pairs) == (6, 4)
    # Five gaps between the six stored packets: the drop is not stored.
    assert a.interarrival.count == 5 and a.interarrival.mean == 10_000_000
    assert a.faster_than_line == 5
    assert (a.arrivals, a.drops) == (7, 1)


def test_a_failing_log_raises_its_error_and_keeps_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = []
    write = EventLogWriter._write

    def disk_full_after_one_batch(self: EventLogWriter, table: object) -> None:
        if written:
            raise OSError(28, "No space left on device")
        written.append(table)
        write(self, table)  # type: ignore[arg-type]

    monkeypatch.setattr(EventLogWriter, "_write", disk_full_after_one_batch)
    path = tmp_path / "events.parquet"
    # The sink's own exception comes out of the run, not a wrapped one.
    with pytest.raises(OSError, match="No space left on device"):
        buflab.run(EXAMPLES / "dumbbell.toml", overrides=WITH_DROPS, events_to=path)
    assert not path.exists(), "only a finished log gets the real name"
    partial = tmp_path / "events.parquet.partial"
    assert pq.read_metadata(partial).num_rows == 1 << 18, "the batch before the failure is kept"


def test_an_abandoned_log_is_readable(tmp_path: Path) -> None:
    writer = EventLogWriter(tmp_path / "events.parquet")
    result = buflab.run(TINY_SCENARIO, overrides=["monitor.events=true"])
    assert result.events is not None
    writer.append(result.events)
    partial = writer.abandon()
    assert partial.name == "events.parquet.partial"
    assert not (tmp_path / "events.parquet").exists(), "only a finished log gets the real name"
    assert len(pq.read_table(partial)) == len(result.events)


def test_events_to_without_a_log_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(buflab.ScenarioError, match="monitor.events"):
        buflab.run(TINY_SCENARIO, events_to=tmp_path / "events.parquet")


def test_log_facts_are_exact_picoseconds(streamed: buflab.Result) -> None:
    facts = streamed.events_facts
    assert facts is not None
    assert facts.window_start_ps == 10 * PS_PER_S and facts.window_end_ps == 30 * PS_PER_S
    assert facts.interval_ps == PS_PER_S // 10 and facts.rate_bps == 100_000_000


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_analyze_command_checks_and_plots(tmp_path: Path) -> None:
    runs = []
    for buffer in ("10pkt", "40pkt"):
        out = tmp_path / buffer
        sets = ["--set", "monitor.events=true", "--set", f"network.bottleneck.buffer={buffer}"]
        assert (
            invoke(
                "run",
                EXAMPLES / "dumbbell.toml",
                "--set",
                "duration=6s",
                "--set",
                "warmup=2s",
                *sets,
                "--out",
                out,
            ).exit_code
            == 0
        )
        runs.append(out)
    result = invoke("analyze", *runs, "--out", tmp_path / "fig")
    assert result.exit_code == 0, result.output
    assert "differs" not in result.stdout and "rebuilt" in result.stdout
    assert {"analysis.png", "analysis.svg", "cdfs.csv"} <= {
        p.name for p in (tmp_path / "fig").iterdir()
    }
    cdfs = pd.read_csv(tmp_path / "fig" / "cdfs.csv")
    assert set(cdfs["run"]) == {"10pkt", "40pkt"}
    assert set(cdfs["measure"]) == {"interarrival_s", "burst_pkts", "queue_delay_s"}
    # Each CDF ends at 1.
    assert (cdfs.groupby(["run", "measure"])["cdf"].max().round(12) == 1).all()
    assert json.loads((runs[0] / "summary.json").read_text())["buffer_pkts"] == 10


def test_analyze_without_a_log_says_how_to_record_one(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.toml"
    tiny.write_text(TINY_SCENARIO)
    assert invoke("run", tiny, "--out", tmp_path / "run").exit_code == 0
    result = invoke("analyze", tmp_path / "run")
    assert result.exit_code == 2
    assert "no event log" in result.output and "monitor.events=true" in result.output


def test_a_distribution_keeps_its_extremes_and_the_share_in_a_band() -> None:
    # Gaps of 1, 10, 11, 12 and 30 µs (in ps): exact min and max, and 3 of 5 in 10-13 µs (the
    # band's ends fall between bins, so the bins read off give the exact share here).
    d = Distribution.of_times()
    d.add(np.array([1, 10, 11, 12, 30], dtype=np.int64) * 1_000_000)
    assert (d.low, d.high) == (1e6, 30e6)
    assert d.fraction_between(10e6, 13e6) == pytest.approx(0.6)
    assert d.fraction_between(31e6, 40e6) == 0.0
    assert math.isnan(Distribution.of_times().fraction_between(0, 1))
