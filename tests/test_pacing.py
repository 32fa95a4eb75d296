"""Paced TCP and per-flow traces from Python: the traces table, its pacing rate against the
pacer's formula, sampling by interval, the figure, and bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.plots.traces import jain_index, on_grid

pytestmark = pytest.mark.engine

# One flow, 10 Mb/s, 100 ms, 1000 B packets, held to 10 segments by the receiver's window.
ONE_FLOW = {
    "name": "paced-one",
    "duration": "10s",
    "network": {"bottleneck": {"rate": "10Mbps", "buffer": "100pkt"}, "rtt": "100ms"},
    "monitor": {"trace_flows": [0]},
    "traffic": [{"kind": "long_lived", "flows": 1, "max_window": "9600B", "pacing": "window"}],
}


def test_traces_follow_the_pacing_formula() -> None:
    traces = buflab.run(ONE_FLOW).traces
    assert len(traces) > 50
    assert list(traces["flow"].unique()) == [0]
    assert traces["time_s"].is_monotonic_increasing
    assert traces["acked_bytes"].is_monotonic_increasing
    paced = traces[traces["srtt_s"] > 0]
    # Window pacing: rate = min(cwnd, 10 segments) × 1000 B × 8 ÷ srtt (the pacer's formula,
    # tcp/pacer.rs), to floating-point rounding.
    window = np.minimum(paced["cwnd_pkts"], 10.0)
    expected = window * 8000.0 / paced["srtt_s"]
    assert np.allclose(paced["pacing_rate_bps"], expected, rtol=1e-9)
    # Before the first RTT sample the flow is not paced.
    assert (traces.loc[traces["srtt_s"] == 0, "pacing_rate_bps"] == 0).all()


def test_sack_flows_count_acknowledged_bytes_as_newreno_flows_do() -> None:
    # Window-limited with no loss, the two senders send the same segments at the same times,
    # so their traces must acknowledge the same payload (SACK flows once reported 0).
    def last_acked(tcp: str) -> int:
        scenario = {**ONE_FLOW, "traffic": [{**ONE_FLOW["traffic"][0], "tcp": tcp}]}
        return int(buflab.run(scenario).traces["acked_bytes"].iloc[-1])

    newreno = last_acked("newreno")
    # 10 segments of 960 B per round trip of about 0.1 s for 10 s: close to 960 KB.
    assert 800_000 < newreno < 1_000_000
    assert last_acked("sack") == newreno


def test_unpaced_flow_has_no_pacing_rate() -> None:
    scenario = {**ONE_FLOW, "traffic": [{**ONE_FLOW["traffic"][0], "pacing": "off"}]}
    traces = buflab.run(scenario).traces
    assert len(traces) > 0 and (traces["pacing_rate_bps"] == 0).all()


def test_trace_interval_keeps_one_row_per_flow_per_period() -> None:
    scenario = {
        **ONE_FLOW,
        "monitor": {"trace_flows": "all", "trace_interval": "500ms"},
        "traffic": [{"kind": "long_lived", "flows": 3, "start": "0s..1s"}],
    }
    traces = buflab.run(scenario).traces
    assert sorted(traces["flow"].unique()) == [0, 1, 2]
    period = (traces["time_s"] // 0.5).astype(int)
    assert not pd.concat([traces["flow"], period], axis=1).duplicated().any()
    # 10 s of ACK-clocked flows: a row in (nearly) every period of every flow.
    assert len(traces) >= 3 * 18


def test_no_traces_unless_asked() -> None:
    scenario = {**ONE_FLOW, "monitor": {}}
    result = buflab.run(scenario)
    assert len(result.traces) == 0
    assert "traces" not in result.tables()


@pytest.mark.parametrize(
    ("monitor", "fragments"),
    [
        ({"trace_flows": [1]}, ("monitor.trace_flows", "1", "from 0 to 0")),
        ({"trace_flows": "some"}, ("monitor.trace_flows", '"all"')),
        ({"trace_flows": [-1]}, ("monitor.trace_flows", "-1")),
    ],
)
def test_bad_trace_flows_name_the_key(monitor, fragments) -> None:
    with pytest.raises(buflab.ScenarioError) as err:
        buflab.run({**ONE_FLOW, "monitor": monitor})
    for fragment in fragments:
        assert fragment in str(err.value)


def test_bad_pacing_names_the_choices() -> None:
    scenario = {**ONE_FLOW, "traffic": [{**ONE_FLOW["traffic"][0], "pacing": "on"}]}
    with pytest.raises(buflab.ScenarioError) as err:
        buflab.run(scenario)
    assert "traffic.0.pacing" in str(err.value) and "window" in str(err.value)


def test_ack_pacing_is_a_boolean_and_spreads_the_window() -> None:
    """Receiver-side ACK pacing from Python: a non-boolean value names the key; on, the
    unpaced sender's window of 10 reaches the bottleneck spread over the RTT instead of as a
    train spaced by the bottleneck's own 0.8 ms service time (the Rust validation test checks
    the gaps one by one): after the first second, the median arrival gap grows from 0.8 ms
    to the ACK pacer's ≈ 8 ms (100 ms ÷ (1.2 × 10))."""
    flow = {**ONE_FLOW["traffic"][0], "pacing": "off"}
    with pytest.raises(buflab.ScenarioError) as err:
        buflab.run({**ONE_FLOW, "traffic": [{**flow, "ack_pacing": "yes"}]})
    assert "traffic.0.ack_pacing" in str(err.value) and "yes" in str(err.value)

    def median_gap_ms(ack_pacing: bool) -> float:
        scenario = {**ONE_FLOW, "monitor": {"events": True}}
        events = buflab.run({**scenario, "traffic": [{**flow, "ack_pacing": ack_pacing}]}).events
        arrivals = events[(events["event"] == "enqueue") & (events["time_s"] > 1.0)]
        return float(np.median(np.diff(arrivals["time_ps"]))) / 1e9

    assert median_gap_ms(False) == pytest.approx(0.8, abs=0.01)
    assert 7.0 < median_gap_ms(True) < 10.0


def test_run_out_writes_the_traces_and_their_figure(tmp_path: Path) -> None:
    path = tmp_path / "paced.toml"
    path.write_text(
        'name = "paced-one"\nduration = "5s"\n'
        '[network]\nrtt = "100ms"\n[network.bottleneck]\nrate = "10Mbps"\n'
        "[monitor]\ntrace_flows = [0]\n"
        '[[traffic]]\nkind = "long_lived"\nflows = 1\npacing = "linux"\n'
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    traces = pd.read_parquet(out / "traces.parquet")
    assert len(traces) > 0 and (traces["pacing_rate_bps"] > 0).any()
    assert (out / "traces.png").stat().st_size > 0


def test_on_grid_reads_the_last_row_at_or_before_each_time() -> None:
    traces = pd.DataFrame(
        {"time_s": [1.0, 3.0, 2.0], "flow": [0, 0, 1], "cwnd_pkts": [4.0, 8.0, 5.0]}
    ).sort_values("time_s")
    grid = np.array([0.5, 1.0, 2.5, 3.0])
    frame = on_grid(traces, "cwnd_pkts", grid)
    assert np.isnan(frame[0].iloc[0]) and list(frame[0].iloc[1:]) == [4.0, 4.0, 8.0]
    assert np.isnan(frame[1].iloc[1]) and list(frame[1].iloc[2:]) == [5.0, 5.0]


def test_jain_index_bounds() -> None:
    # Equal shares: 1. One flow with everything among four: 1/4. Flows without a value yet
    # are left out of n.
    shares = pd.DataFrame(
        {0: [5.0, 8.0, 1.0], 1: [5.0, 0.0, np.nan], 2: [5.0, 0.0, np.nan], 3: [5.0, 0.0, np.nan]}
    )
    assert list(jain_index(shares)) == pytest.approx([1.0, 0.25, 1.0])


def recipe_point(name: str, **point: Any) -> dict[str, Any]:
    """A shipped recipe's scenario at one point of its sweep (keys with dots as `__`)."""
    from buflab.engine.scenario import apply_overrides
    from buflab.experiments import recipes

    base, header = recipes.load(name)
    wanted = {key.replace("__", "."): value for key, value in point.items()}
    return apply_overrides(base, header.point_overrides(wanted))


def test_p1_paced_flow_loses_later_and_gets_ahead() -> None:
    """REPRODUCE.md P1 at full size (20 simulated seconds of one 5 Mb/s flow, about a second
    to run): the paced flow's first loss comes later in slow start and it has delivered more
    by the end. Deterministic (one RTT, start at 0 s); the margins measured are 309 ms and
    0.24 Mb/s, so the test asks for a tenth of each, room for model changes that keep the
    effect."""
    unpaced = buflab.run(recipe_point("p1", traffic__0__pacing="off")).summary
    paced = buflab.run(recipe_point("p1", traffic__0__pacing="window")).summary
    assert paced["first_drop_s"] > unpaced["first_drop_s"] + 0.03
    assert paced["goodput_bps"] > unpaced["goodput_bps"] + 24e3


def test_p2_pacing_trades_throughput_for_fairness() -> None:
    """REPRODUCE.md P2, the spread start, for 30 s instead of 60 (seeds 1-3 measured: paced
    utilization 83-84 % against 96-97 %, Jain's index 0.93 against 0.82): Aggarwal et al.'s
    result, lower throughput and better fairness when 50 flows pace. Seed 1 only; the
    margins asked (5 points each) are under half of those seen."""
    runs = {}
    for pacing in ("off", "window"):
        scenario = recipe_point("p2", traffic__0__pacing=pacing, start="spread")
        scenario["duration"] = "30s"
        scenario["monitor"] = {}
        runs[pacing] = buflab.run(scenario).summary
    assert runs["window"]["utilization"] < runs["off"]["utilization"] - 0.05
    assert runs["window"]["jain_fairness"] > runs["off"]["jain_fairness"] + 0.05
