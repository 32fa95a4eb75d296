"""Bumps in the wire (`[[network.bump]]`): their keys and errors, the bumps table, the event
log at a bump, sweeps' bump metrics, and the seed's HULL-like trigger end to end. The pacers'
and virtual queue's exact arithmetic is tested in the `buflab-queue` crate, the invariants on
random dumbbells with bumps in the engine's validation suite (`bumps.rs`)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

import buflab
from buflab.analysis.bumps import bump_metrics
from buflab.analysis.queue import analyze, check_summary
from buflab.engine import ScenarioError

pytestmark = pytest.mark.engine

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "netbump.toml"

BASE: dict[str, Any] = {
    "duration": "2s",
    "warmup": "0.5s",
    "network": {"bottleneck": {"rate": "10Mbps", "buffer": "20pkt"}, "rtt": "20ms..40ms"},
    "traffic": [{"kind": "long_lived", "flows": 3, "packet": "1000B"}],
}


def with_bumps(*bumps: dict[str, Any], **network: Any) -> dict[str, Any]:
    scenario = copy.deepcopy(BASE)
    scenario["network"]["bump"] = list(bumps)
    scenario["network"].update(network)
    return scenario


@pytest.mark.parametrize(
    ("bump", "key", "message"),
    [
        ({"pacer": "fast"}, "network.bump.0.pacer", 'got "fast"; expected one of "none", "delay"'),
        ({"pacer": "delay", "pace_rate": "0Gbps"}, "network.bump.0.pace_rate", "a rate such as"),
        ({"pacer": "delay", "pace_rate": -5}, "network.bump.0.pace_rate", "a rate such as"),
        ({"rate": "0Mbps"}, "network.bump.0.rate", "a positive rate"),
        (
            {"vqueue": {"rate": "1Gbps", "size": "3000B", "threshold": "4500B"}},
            "network.bump.0.vqueue.threshold",
            "at most the virtual queue's size (3000 B)",
        ),
        ({"vqueue": {"rate": "1Gbps"}}, "network.bump.0.vqueue.size", "missing"),
        ({"at": "hop1"}, "network.bump.0.at", 'expected "access" or "bottleneck"'),
        ({"at": "core"}, "network.bump.0.at", 'expected "access" or "bottleneck"'),
        ({"depth": "4500B"}, "network.bump.0.depth", "no such key without a pacer"),
        ({"pacer": "delay", "depth": "4500B"}, "network.bump.0.depth", 'with pacer = "delay"'),
        ({"pacer": "token_bucket", "tick": "1us"}, "network.bump.0.tick", "token_bucket"),
        ({"pacer": "delay", "pace_rate": "1Gbps", "window": 9}, "network.bump.0.window", "measure"),
        ({"pacer": "delay", "pace_rate": "vqueue"}, "network.bump.0.pace_rate", "give the bump a"),
        ({"pacer": "token_thread", "tick": "0us"}, "network.bump.0.tick", "a positive time"),
        ({"pacer": "batch", "pace_rate": "1Gbps"}, "network.bump.0.pace_rate", "takes no rate"),
        (
            {"at": "bottleneck", "pacer": "delay", "paced": "ecn_echo"},
            "network.bump.0.paced",
            'needs the bump at "access"',
        ),
        ({"pacer": "delay", "hold": "1ms"}, "network.bump.0.hold", 'unless paced = "ecn_echo"'),
        ({"classify": "host"}, "network.bump.0.classify", '"flow", "port", "all"'),
        ({"name": "summary"}, "network.bump.0.name", 'other than "summary"'),
        ({"pacer": "delay", "colour": "red"}, "network.bump.0.colour", "unknown key"),
        (
            {"at": "bottleneck", "pacer": "token_thread", "pace_rate": "qcn"},
            "network.bump.0.pace_rate",
            'reaction point sits at "access"',
        ),
        (
            {"pacer": "token_thread", "pace_rate": "1Gbps", "reaction_point": {}},
            "network.bump.0.reaction_point",
            'unless pace_rate = "qcn"',
        ),
        (
            {"pacer": "token_thread", "pace_rate": "qcn", "reaction_point": {"r_ai": "0Mbps"}},
            "network.bump.0.reaction_point.r_ai",
            "a positive rate",
        ),
        (
            {"pacer": "token_thread", "pace_rate": "qcn", "reaction_point": {"gd": 128}},
            "network.bump.0.reaction_point.gd",
            "unknown key",
        ),
        ({"congestion_point": {"q_eq": "0B"}}, "network.bump.0.congestion_point.q_eq", "positive"),
        ({"congestion_point": {}}, "network.bump.0.congestion_point.q_eq", "missing"),
        (
            {"congestion_point": {"q_eq": "9KB", "sample": 1.5}},
            "network.bump.0.congestion_point.sample",
            '"standard" or a probability',
        ),
        (
            {"congestion_point": {"q_eq": "9KB", "sample": "often"}},
            "network.bump.0.congestion_point.sample",
            '"standard" or a probability',
        ),
        (
            {"congestion_point": {"q_eq": "9KB"}, "vqueue": {"rate": "1Gbps", "size": "18KB"}},
            "network.bump.0.classify",
            "the one queue of a port",
        ),
    ],
)
def test_bad_bump_keys_are_one_line_errors_naming_the_key(
    bump: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(ScenarioError) as error:
        buflab.validate(with_bumps(bump))
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith(key), text
    assert message in text, text


def test_a_bump_on_a_link_the_topology_does_not_have_is_refused() -> None:
    lot = with_bumps({"at": "hop3"}, topology="parking_lot", hops=2)
    lot["traffic"][0]["hops"] = "all"
    with pytest.raises(ScenarioError, match=r'network\.bump\.0\.at: got "hop3"; expected .*"hop2"'):
        buflab.validate(lot)
    machines = with_bumps({"at": "access"}, access={"machines": 2})
    with pytest.raises(ScenarioError, match="network.access.machines = 0"):
        buflab.validate(machines)
    twice = with_bumps({"name": "a"}, {"name": "a"})
    with pytest.raises(ScenarioError, match=r"network\.bump\.1\.name: .*no other bump"):
        buflab.validate(twice)
    unknown = with_bumps({"name": "pacer"})
    unknown["monitor"] = {"events": True, "events_at": "pacers"}
    with pytest.raises(ScenarioError, match=r'monitor\.events_at: got "pacers"; .*"pacer"'):
        buflab.validate(unknown)


def test_validate_fills_in_what_each_bump_resolves_to() -> None:
    normalized = buflab.validate(
        with_bumps(
            {"pacer": "modified_token_bucket", "pace_rate": "1Gbps"},
            {"at": "bottleneck", "vqueue": {"rate": "10Mbps", "size": "20KB"}},
        )
    )
    access, shared = normalized["network"]["bump"]
    assert access["name"] == "bump1" and access["at"] == "access"
    assert access["rate"] == "10Gbps", "an access bump forwards at the access link's rate"
    assert (access["depth"], access["tick"], access["cap"]) == ("4500B", "0.0000045s", "0.000005s")
    assert access["paced"] == "all" and "window" not in access
    assert shared["name"] == "bump2" and shared["rate"] == "unbounded"
    assert shared["vqueue"]["threshold"] == "20000B" and shared["vqueue"]["action"] == "mark"
    assert "pace_rate" not in shared, "keys of a pacer only with one"


def test_the_bumps_table_counts_each_entry_over_its_instances() -> None:
    result = buflab.run(
        with_bumps(
            {"name": "pacer", "pacer": "delay", "pace_rate": "5Mbps"},
            {"name": "watch", "at": "bottleneck", "vqueue": {"rate": "10Mbps", "size": "20KB"}},
        )
    )
    rows = result.bumps.set_index("name")
    assert rows.loc["pacer", "instances"] == 3, "one per flow at access"
    assert rows.loc["watch", "instances"] == 1
    # Nothing is refused (unlimited buffers; a marking virtual queue, and no ECN, so no marks
    # either). The unbounded bump in front of the bottleneck holds nothing: what reaches it
    # leaves, but for packets at the window's edges.
    assert (rows["drops"] == 0).all()
    assert abs(rows.loc["watch", "arrivals"] - rows.loc["watch", "departures"]) <= 3
    assert rows.loc["watch", "vq_arrivals"] == rows.loc["watch", "arrivals"]
    assert rows.loc["watch", "vq_marks"] == 0
    # At 5 Mb/s a 1000-B packet takes 1.6 ms: no flow's packets leave its pacer closer.
    assert rows.loc["pacer", "gap_min_s"] >= 1.6e-3 - 1e-12
    assert rows.loc["pacer", "paced"] > 0


def test_the_event_log_at_a_bump_rebuilds_its_queue(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = buflab.run(EXAMPLE, duration="0.4s", warmup="0.1s", events_to=out / "events.parquet")
    result.to_dir(out)
    analysis = analyze(out)
    assert analysis.facts.link == "pacer"
    assert analysis.facts.rate_bps == 10_000_000_000
    checks = check_summary(analysis, result.summary, result.links, result.bumps)
    assert [key for key, _, _ in checks] == [
        "arrivals",
        "drops",
        "mean_queue_pkts",
        "max_queue_pkts",
    ]
    for key, rebuilt, reported in checks:
        assert rebuilt == pytest.approx(reported, rel=1e-9), key
    # The pacer's packets arrive as the host sends them: bursts at the 10 Gb/s line rate.
    assert analysis.interarrival.low == pytest.approx(1514 * 8 / 10e9 * 1e12, rel=1e-6)


def test_sweeps_keep_each_bumps_counts_as_metrics() -> None:
    columns = {
        "name": ["pacer", "monitor"],
        "at": ["access", "access"],
        "instances": [1, 1],
        "vq_overflows": [0, 12],
        "gap_mean_s": [1.2e-5, None],
    }
    metrics = bump_metrics(columns)
    assert metrics["monitor.vq_overflows"] == 12.0
    assert metrics["pacer.gap_mean_s"] == 1.2e-5
    assert math.isnan(metrics["monitor.gap_mean_s"])
    assert "pacer.at" not in metrics and "pacer.instances" not in metrics


def test_an_ecn_echo_puts_a_flow_in_the_paced_set() -> None:
    # Seed §5.2, after HULL: a bump at each host paces a flow only once its ACKs carry
    # ECN-Echo, which the receivers send when a marking queue downstream (here RED with ECN
    # at the bottleneck) marked its packets. Without ECN-capable TCP no ACK carries ECE and
    # nothing is paced.
    def run(ecn: bool) -> Any:
        scenario = with_bumps(
            {"pacer": "delay", "pace_rate": "2Mbps", "paced": "ecn_echo", "hold": "20ms"}
        )
        scenario["network"]["bottleneck"].update(
            {"queue": "red", "red_min_th": 2, "red_max_th": 15, "red_ecn": True}
        )
        scenario["traffic"][0]["ecn"] = ecn
        return buflab.run(scenario).bumps.iloc[0]

    marked, unmarked = run(True), run(False)
    assert marked["paced_joins"] > 0 and marked["paced"] > 0
    assert unmarked["paced_joins"] == 0 and unmarked["paced"] == 0


QCN_EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "qcn.toml"


def test_qcn_reaction_points_share_the_port_and_every_message_is_heard() -> None:
    """The seed's QCN testbed (examples/qcn.toml) with its first settings (feedback on 20 % of
    packets, cuts on the standard's scale of 128): the three sources' limiters end near the
    fair share and the port stays busy. Tolerances: the limiters oscillate around the share
    by about ±15 % of it (their cuts are up to half a rate, their recoveries 5 Mb/s steps), so
    each last rate is checked within 40 % of 333 Mb/s and Jain's index of the goodputs over
    the last 2 s above 0.95; every message reaches a reaction point (each flow has one)."""
    scenario = buflab.load_scenario(QCN_EXAMPLE)
    scenario["duration"] = "3s"
    scenario["warmup"] = "1s"
    scenario["network"]["bump"][0]["reaction_point"] = {"quantization": 128}
    scenario["network"]["bump"][1]["congestion_point"]["sample"] = 0.2
    result = buflab.run(scenario)
    bumps = result.bumps.set_index("name")
    assert bumps.loc["cp", "cp_messages"] > 100
    # Counted over the measured window: equal but for the few in flight across its edges.
    assert abs(int(bumps.loc["rp", "rp_messages"]) - int(bumps.loc["cp", "cp_messages"])) <= 5
    last = result.rates.groupby("class")["rate_bps"].last()
    assert sorted(last.index) == [0, 1, 2]
    share = 1e9 / 3
    assert all(abs(rate - share) < 0.4 * share for rate in last), last
    assert result.summary["jain_fairness"] > 0.95
    assert result.summary["utilization"] > 0.95
