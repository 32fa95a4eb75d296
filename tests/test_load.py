"""Offered load, potential load and users for a target load (buflab.experiments.load)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.engine import core, scenario_json
from buflab.experiments.load import (
    TcpPath,
    _distribution,
    download_time,
    offered_load,
    potential_load,
    slow_start_rounds,
    unconstrained,
    users_for_load,
)

# 50 users on 20 Mb/s, RTTs 50..150 ms, 10 Mb/s access links: lognormal files (mean 50 KB),
# exponential think times (0.5 s). Offered load ≈ 108 %. Each run takes well under a second.
SMALL = {
    "duration": "60s",
    "warmup": "10s",
    "network": {
        "bottleneck": {"rate": "20Mbps"},
        "access": {"rate": "10Mbps"},
        "rtt": "50ms..150ms",
    },
    "traffic": [
        {
            "kind": "closed_loop",
            "users": 50,
            "file_size": {"dist": "lognormal", "mean": "50KB", "sigma": 1.0},
            "think": {"dist": "exponential", "mean": "0.5s"},
        }
    ],
}


@pytest.mark.engine
def test_udp_offered_load_is_exact():
    # Property: flows × rate, per entry and in total; tolerance: float rounding only.
    scenario = {
        "network": {"bottleneck": {"rate": "10Mbps"}},
        "traffic": [
            {"kind": "udp_poisson", "flows": 3, "rate": "2.5Mbps"},
            {"kind": "udp_cbr", "rate": "1Mbps", "packet": "500B"},
        ],
    }
    load = offered_load(scenario)
    assert [row["rate_bps"] for row in load["traffic"]] == [7.5e6, 1e6]
    assert load["rate_bps"] == 8.5e6
    assert load["load"] == pytest.approx(0.85, rel=1e-12)


def test_slow_start_rounds():
    # Property: exact round counts of slow start from IW, doubling, capped by max_window.
    assert slow_start_rounds(4, 4, 10_000) == 1  # the initial window
    assert slow_start_rounds(12, 4, 10_000) == 2  # 4 + 8
    assert slow_start_rounds(13, 4, 10_000) == 3  # 4 + 8 + 1
    assert slow_start_rounds(30, 4, 8) == 5  # 4 + 8 + 8 + 8 + 2: capped at 8 per round
    assert slow_start_rounds(1, 3, 1) == 1
    with pytest.raises(ValueError):
        slow_start_rounds(0, 4, 10)


@pytest.mark.parametrize(
    ("segments", "handshake", "rtts"),
    [(4, True, 2.0), (4, False, 1.0), (12, True, 3.0), (12, False, 2.0), (13, True, 4.0)],
)
def test_download_time_counts_round_trips(segments, handshake, rtts):
    # Property: with an unbounded access link, an initial-window file takes 2 RTT with the
    # handshake and 1 without; 12 segments with IW 4 take 3 RTT with it. Tolerance: float
    # rounding only.
    path = TcpPath(
        1000,
        960,
        initial_window=4,
        max_window=20_833,
        access_bps=math.inf,
        handshake=handshake,
        delayed_ack=False,
    )
    assert download_time(segments * 960, 0.1, path) == pytest.approx(rtts * 0.1, rel=1e-12)


@pytest.mark.engine
@pytest.mark.parametrize("handshake", [True, False])
def test_download_time_matches_the_engine_file_by_file(handshake):
    # Property: with an unconstrained bottleneck, each completed transfer's completion time
    # is download_time of its size at its flow's RTT. Tolerance: 1 ms, for what the model
    # leaves out (40 B handshake and ACK packets, the bottleneck's serialization); the
    # round trips it counts are 50..150 ms each.
    scenario = {
        **SMALL,
        "duration": "20s",
        "warmup": "0s",
        "traffic": [dict(SMALL["traffic"][0], handshake=handshake, users=10)],
    }
    result = buflab.run(unconstrained(scenario))
    done = result.transfers[result.transfers["complete"]].merge(
        result.flows[["flow", "rtt_s"]], on="flow"
    )
    assert len(done) > 50
    facts = core().traffic_facts(scenario_json(scenario))
    path = TcpPath.from_facts(facts["entries"][0], facts["access_bps"])
    assert (path.access_bps, path.mss_bytes, path.initial_window) == (10e6, 960, 4)
    sizes, rtts = done["bytes"], done["rtt_s"]
    model = [download_time(b, rtt, path)[()] for b, rtt in zip(sizes, rtts, strict=True)]
    assert np.max(np.abs(done["fct_s"].to_numpy() - model)) < 1e-3


@pytest.mark.engine
def test_empirical_sizes_are_drawn_as_the_engine_draws_them():
    # Property: 30 % of draws are exactly the first point, the rest uniform up to 5000 B
    # (mean 2400 B). Tolerance: 1 % of the mean and 0.01 of the probability, both over 7
    # standard errors of 200k draws.
    cdf = {"dist": "empirical", "cdf": [["1000B", 0.3], [5000, 1.0]]}
    scenario = {**SMALL, "traffic": [{"kind": "closed_loop", "file_size": cdf}]}
    (entry,) = core().traffic_facts(scenario_json(scenario))["entries"]
    mean, sample = _distribution(entry["file_size"])
    draws = sample(np.random.default_rng(1), 200_000)
    assert mean == 2400.0
    assert abs(draws.mean() / 2400 - 1) < 0.01
    assert abs((draws == 1000).mean() - 0.3) < 0.01
    assert draws.min() == 1000 and draws.max() <= 5000


@pytest.mark.engine
def test_closed_loop_offered_load_is_linear_in_users():
    # Property: per-user rate is independent of the number of users (the same seeded draws),
    # so 30 users offer exactly 3 times what 10 do. Tolerance: float rounding (1e-12).
    ten = offered_load(SMALL, overrides={"traffic.0.users": 10})
    thirty = offered_load(SMALL, overrides={"traffic.0.users": 30})
    assert thirty["load"] == pytest.approx(3 * ten["load"], rel=1e-12)
    row = ten["traffic"][0]
    assert 0 < row["active_fraction"] < 1
    assert row["goodput_bps"] < row["rate_bps"]  # headers are on the wire, not in goodput


@pytest.mark.engine
def test_long_lived_offered_load():
    # Property: window-limited flows send max_window/MSS full packets per RTT (averaged over
    # the RTT range: E[1/RTT] over 50..150 ms is ln 3 / 0.1 s); with 20 MB windows and fast
    # access links nothing limits a flow below the link, so the load is unbounded.
    # Tolerance: 0.2 %, the midpoint rule's error on E[1/RTT] with 16 bins.
    scenario = {
        "network": {"bottleneck": {"rate": "100Mbps"}, "rtt": "50ms..150ms"},
        "traffic": [{"kind": "long_lived", "flows": 10, "max_window": "64KB"}],
    }
    per_flow = (64_000 // 960) * 1000 * 8 * math.log(3) / 0.1
    load = offered_load(scenario)
    assert load["rate_bps"] == pytest.approx(10 * per_flow, rel=2e-3)
    greedy = offered_load(scenario, overrides={"traffic.0.max_window": "20MB"})
    assert greedy["load"] == math.inf
    assert greedy["traffic"][0]["limit_bps"] > 100e6


@pytest.mark.engine
def test_switch_offered_load_is_per_output_line():
    # Property: on a switch the link is one output line. eq. 3.1's flows_per_output offer it
    # 100 % (at the mean RTT; the offered load averages 1/RTT over 75..125 ms, E[1/RTT] =
    # ln(5/3)/0.05 s, 2.2 % above 1/100 ms), and a UDP entry's flows spread over the 4
    # outputs. Tolerance: 0.2 %, the midpoint rule's error.
    switch = {
        "network": {
            "topology": "switch",
            "access": {"rate": "25Mbps"},
            "rtt": "75ms..125ms",
            "switch": {"ports": 4, "rate": "250Mbps", "voq_buffer": 3},
        },
        "traffic": [
            {"kind": "long_lived", "flows_per_output": "eq3.1", "max_window": "61440B"},
            {"kind": "udp_cbr", "flows": 8, "rate": "5Mbps"},
        ],
    }
    load = offered_load(switch)
    assert load["bottleneck_bps"] == 250e6
    tcp, udp = load["traffic"]
    assert tcp["count"] == 49  # ⌈250 Mb/s × 100 ms ÷ (64 × 1000 B × 8)⌉
    assert tcp["load"] == pytest.approx(49 * 64 * 8000 * math.log(5 / 3) / 0.05 / 250e6, rel=2e-3)
    assert udp["rate_bps"] == 8 * 5e6 / 4
    # `buflab load` on the switch example (it once failed looking for a bottleneck).
    example = Path(__file__).parent.parent / "examples" / "switch.toml"
    result = CliRunner().invoke(cli, ["load", str(example)])
    assert result.exit_code == 0, result.output
    assert "Offered load on 250 Mb/s" in result.output


@pytest.mark.engine
def test_potential_load_agrees_with_offered_load():
    # Property: the potential load (three 60 s runs on a 100x bottleneck with an unlimited
    # buffer) agrees with the analytic offered load. Tolerance: 15 %. The model matches the
    # engine file by file (above); what differs is sampling: 50 users draw their RTTs from
    # 50..150 ms (the model averages over the range) and a minute of files their sizes.
    # Over 20 seeds single runs were within 8 % and their mean within 1 %.
    offered = offered_load(SMALL)["load"]
    assert offered == pytest.approx(1.075, rel=0.02)
    assert potential_load(SMALL, seeds=3) == pytest.approx(offered, rel=0.15)


@pytest.mark.engine
def test_users_for_load():
    # Property: the offered-load answer offers the target to within one user's share; the
    # bisection on measured potential load lands within 15 % of it (the tolerance above).
    users = users_for_load(SMALL, 0.5)
    per_user = offered_load(SMALL)["traffic"][0]["load"] / 50
    assert abs(offered_load(SMALL, overrides={"traffic.0.users": users})["load"] - 0.5) <= per_user
    measured = users_for_load(SMALL, 0.5, method="potential", seeds=3, rel_tol=0.05)
    assert measured == pytest.approx(users, rel=0.15)
    with pytest.raises(ValueError, match="not a closed_loop"):
        users_for_load({**SMALL, "traffic": [{"kind": "long_lived"}]}, 0.5)


@pytest.mark.engine
def test_load_command(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(
        'duration = "20s"\nwarmup = "5s"\n[network]\nbottleneck = { rate = "20Mbps" }\n'
        'rtt = "100ms"\n[[traffic]]\nkind = "closed_loop"\nusers = 50\n'
        '[[traffic]]\nkind = "udp_cbr"\nrate = "1Mbps"\n'
    )
    result = CliRunner().invoke(cli, ["load", str(path), "--target", "1.25", "--potential"])
    assert result.exit_code == 0, result.output
    for fragment in ("Offered load on 20 Mb/s", "closed_loop", "udp_cbr", "potential load:"):
        assert fragment in result.output
    assert "users for 125.00 % offered load" in result.output
    bad = CliRunner().invoke(cli, ["load", str(path), "--target", "1", "--traffic", "1"])
    assert bad.exit_code == 2
    assert "not a closed_loop" in bad.stderr


@pytest.mark.engine
def test_open_loop_offered_load_is_the_requested_load_plus_headers() -> None:
    # load 0.5 of 10 Mb/s with constant 12,500 B files (14 segments of 960 B; 13 hold only
    # 12,480): each file also carries 14 × 40 B of headers and a 40 B SYN-ACK, 600 B in all,
    # so the offered load on the wire is 0.5 × (12,500 + 600) / 12,500 exactly.
    scenario = {
        "network": {"bottleneck": {"rate": "10Mbps"}},
        "traffic": [
            {
                "kind": "open_loop",
                "load": 0.5,
                "file_size": {"dist": "constant", "value": "12500B"},
            }
        ],
    }
    result = offered_load(scenario)
    assert result["load"] == pytest.approx(0.5 * 13_100 / 12_500, rel=1e-12)


@pytest.mark.engine
def test_offered_load_is_on_the_summary_link_from_the_entries_crossing_it(tmp_path) -> None:
    # Property: on a parking lot the link is network.summary_hop at its own rate, which only
    # the entries whose hops include it load; on the dumbbell cross traffic leaves by its own
    # link before the bottleneck. UDP rates make both exact.
    lot = {
        "network": {
            "topology": "parking_lot",
            "hops": 2,
            "summary_hop": 2,
            "bottleneck": {"rate": "10Mbps"},
            "hop": [{}, {"rate": "5Mbps"}],
        },
        "traffic": [
            {"kind": "udp_cbr", "flows": 2, "rate": "1Mbps", "hops": "all"},
            {"kind": "udp_cbr", "flows": 3, "rate": "1Mbps", "hops": 1},
        ],
    }
    load = offered_load(lot)
    assert load["bottleneck_bps"] == 5e6
    assert [row["rate_bps"] for row in load["traffic"]] == [2e6, 0.0]
    assert load["load"] == 0.4
    dumbbell = {
        "network": {"bottleneck": {"rate": "10Mbps"}, "access": {"machines": 1}},
        "traffic": [
            {"kind": "udp_cbr", "flows": 2, "rate": "1Mbps"},
            {"kind": "udp_cbr", "flows": 3, "rate": "1Mbps", "path": "cross"},
        ],
    }
    load = offered_load(dumbbell)
    assert [row["link_share"] for row in load["traffic"]] == [1.0, 0.0]
    assert load["rate_bps"] == 2e6
    path = tmp_path / "cross.toml"
    path.write_text(
        '[network]\nbottleneck = { rate = "10Mbps" }\naccess = { machines = 1 }\n'
        '[[traffic]]\nkind = "udp_cbr"\nrate = "1Mbps"\n'
        '[[traffic]]\nkind = "udp_cbr"\nrate = "1Mbps"\npath = "cross"\n'
    )
    printed = CliRunner().invoke(cli, ["load", str(path)])
    assert printed.exit_code == 0, printed.output
    # The cross entry's row: no active fraction (UDP), and neither rate nor load on the link.
    (row,) = [line for line in printed.output.splitlines() if line.startswith("│       1 ")]
    assert row.count("–") == 3 and "does not cross" in printed.output
