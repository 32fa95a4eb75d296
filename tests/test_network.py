"""General topologies from Python: the shipped network and tree, routes, the summary link, the
load factor a UDP entry's `load` sets, and bad input as one line from the command line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.analysis.network import effective_utilization, ks_distance, network_metrics
from buflab.cli import cli
from buflab.experiments.load import offered_load

pytestmark = pytest.mark.engine

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NETWORK = EXAMPLES / "network.toml"
TREE = EXAMPLES / "tree.toml"
SHORT = {"duration": "4s", "warmup": "1s"}


def test_every_link_of_the_network_has_a_row_and_the_summary_is_the_summary_link() -> None:
    result = buflab.run(NETWORK, **SHORT)
    links = result.links
    # Five duplex ring links and the chord's two directions, in entry order.
    assert links["name"].tolist()[:4] == ["a->b", "b->a", "b->c", "c->b"]
    assert len(links) == 12 and links["hop"].tolist() == list(range(1, 13))
    row = links[links["name"] == "a->b"].iloc[0]
    for key in ("utilization", "drops", "arrivals", "mean_queue_pkts"):
        assert result.summary[key] == row[key], key
    # Sixteen TCP flows share a → b; the chord b → d carries eight of them at half the rate.
    assert row["utilization"] > 0.9
    assert links[links["name"] == "b->d"].iloc[0]["utilization"] > 0.8
    other = buflab.run(NETWORK, network__summary_link="b->d", **SHORT)
    assert other.summary["utilization"] == links[links["name"] == "b->d"].iloc[0]["utilization"]


def test_the_tree_carries_the_load_factor_at_its_root_and_halves_it_level_by_level() -> None:
    # ρ = 0.9 at the root; on a binary tree each level below carries half of the one above.
    # The offered load measured is arrivals × packet ÷ (rate × time): a Poisson count of about
    # 20,000 packets at the root, so ±0.03 is four standard deviations at 0.9.
    result = buflab.run(TREE, duration="20s", warmup="2s")
    links = result.links.set_index("name")
    offered = links["arrivals"] * 8000 / (links["rate_bps"] * result.summary["measured_s"])
    assert offered["r1->exit"] == pytest.approx(0.9, abs=0.03)
    assert offered[["r2->r1", "r3->r1"]].mean() == pytest.approx(0.45, abs=0.03)
    leaves = [f"r{i}->r{(i - 2) // 2 + 1}" for i in range(8, 16)]
    assert offered[leaves].mean() == pytest.approx(0.1125, abs=0.02)
    # Only the root queues enough to drop (its utilization is what is left of ρ).
    assert (links.loc[leaves, "drops"] == 0).all()
    assert links.loc["r1->exit", "utilization"] == pytest.approx(
        offered["r1->exit"] * (1 - links.loc["r1->exit", "drop_rate"]), rel=0.01
    )


def test_run_prints_every_link_and_marks_the_summary_link() -> None:
    args = ["run", str(NETWORK), "--set", "duration=3s", "--set", "warmup=1s"]
    printed = CliRunner().invoke(cli, [*args, "--set", "network.summary_link=c->d"])
    assert printed.exit_code == 0, printed.output
    assert "c->d*" in printed.output and "a->b*" not in printed.output


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "traffic.0.to=nowhere",
            'error: traffic.0.to: got "nowhere"; expected the name of a node of the network',
        ),
        (
            'traffic.1.route=["a","b","a"]',
            'error: traffic.1.route: got a cycle: node "a" comes twice (positions 0 and 2); '
            "expected a path that visits each node once",
        ),
        (
            'network.link.5.to="x"',
            'error: network.link.5.to: got "x"; expected a node of network.node '
            '("a", "b", "c", "d", "e")',
        ),
        (
            "network.summary_link=zz",
            'error: network.summary_link: got "zz"; expected the name of a monitored link',
        ),
    ],
)
def test_bad_network_input_is_one_line(setting: str, message: str) -> None:
    printed = CliRunner().invoke(cli, ["run", str(NETWORK), "--set", setting])
    assert printed.exit_code != 0
    lines = printed.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), printed.output


def test_load_gives_every_link_its_offered_load_and_the_largest_is_rho() -> None:
    # The tree's `load` = 0.9 makes the root's link carry 90 % of its rate, exactly (the
    # rates are whole bits per second: 16 sources of 562,500 b/s on 10 Mb/s).
    offered = offered_load(TREE)
    links = {row["name"]: row for row in offered["links"]}
    assert len(links) == 15 and offered["summary_link"] == "r1->exit"
    assert links["r1->exit"]["load"] == pytest.approx(0.9, rel=1e-9) and links["r1->exit"]["max"]
    assert links["r2->r1"]["load"] == pytest.approx(0.45, rel=1e-9)
    assert sum(row["max"] for row in offered["links"]) == 1
    # On the network, the UDP matrix (weights 2, 1, 1) at ρ = 0.3: e → d → c carries the
    # weight-2 row, 30 % of 10 Mb/s; the chord d → b the weight-1 row, 1.5 Mb/s of 5 Mb/s.
    links = {row["name"]: row for row in offered_load(NETWORK)["links"]}
    assert links["e->d"]["load"] == pytest.approx(0.3, rel=1e-9)
    assert links["d->b"]["offered_bps"] == pytest.approx(1.5e6, rel=1e-9)
    printed = CliRunner().invoke(cli, ["load", str(TREE)])
    assert printed.exit_code == 0, printed.output
    assert "Load factor ρ = 90.00 %, on r1->exit" in printed.output
    assert "r1->exit*" in printed.output


def test_the_network_metrics_read_the_links_and_flows_tables() -> None:
    # Hand-made: two ingress links (arrivals 100 and 300) and one inner link; 4 + 2 + 6 drops
    # in all, so 12 of the 400 packets that entered: 3 %.
    links = {"drops": [4, 2, 6], "arrivals": [100, 300, 390], "drop_rate": [0.04, 2 / 300, 6 / 390]}
    got = network_metrics(links, [True, True, False])
    assert got["network_drop_rate"] == pytest.approx(0.03, rel=1e-12)
    assert got["max_router_drop_rate"] == 0.04
    assert math.isnan(got["effective_utilization"])
    # θ: two long-lived flows of W = 10 segments of 1000 B per 10-ms RTT (8 Mb/s offered
    # each; the second's RTT sample 20 ms: 4 Mb/s) getting 6 and 4 Mb/s: 10 of 12 Mb/s.
    flows = {
        "kind": ["long_lived", "long_lived", "udp_poisson"],
        "traffic": [0, 0, 1],
        "srtt_s": [0.0, 0.02, 0.0],
        "rtt_s": [0.01, 0.01, 0.01],
        "goodput_bps": [6e6, 4e6, 1e9],
    }
    entries = [{"max_window": 10, "mss_bytes": 1000}, {}]
    assert effective_utilization(flows, entries) == pytest.approx(10 / 12, rel=1e-12)


def test_the_two_sample_distance_is_the_largest_gap_between_the_cdfs() -> None:
    # Identical samples: 0. Disjoint: 1. [1, 2, 3, 4] against [3, 4, 5, 6]: at 2 the CDFs are
    # 0.5 and 0, the largest gap.
    assert ks_distance([1, 2, 3], [3, 2, 1]) == 0
    assert ks_distance([1, 2], [5, 6]) == 1
    assert ks_distance([1, 2, 3, 4], [3, 4, 5, 6]) == 0.5
    # Two large samples of one exponential distribution: the distance shrinks like 1/√n
    # (1.36·√(2/n) is the 5 % critical value; n = 20,000 makes it 0.0136).
    rng = np.random.default_rng(1)
    assert ks_distance(rng.exponential(1, 20_000), rng.exponential(1, 20_000)) < 0.0136
    assert ks_distance(rng.exponential(1, 20_000), rng.exponential(1.2, 20_000)) > 0.05


def test_theory_tree_and_bjp_print_the_bounds_and_warn_at_a_load_of_1() -> None:
    printed = CliRunner().invoke(
        cli, ["theory", "--tree", "--load", "0.9", "--buffer", "10", "--routers", "6"]
    )
    assert printed.exit_code == 0, printed.output
    assert "34.87 %" in printed.output and "60.7 pkt" in printed.output
    # From a scenario: the tree example's ρ = 0.9 (its root), n = 4, B = 10.
    printed = CliRunner().invoke(cli, ["theory", "--tree", str(TREE)])
    assert printed.exit_code == 0, printed.output
    assert "ρ = 0.9, n = 4" in " ".join(printed.output.split())
    printed = CliRunner().invoke(
        cli, ["theory", "--bjp", "--load", "0.5", "--routers", "4", "--buffer", "40"]
    )
    assert "0.8244" in printed.output and "68.09 %" in printed.output
    # ρ ≥ 1: one warning line, no crash, no table.
    printed = CliRunner().invoke(cli, ["theory", "--tree", "--load", "1.2", "--routers", "3"])
    assert printed.exit_code == 0
    assert printed.output.strip().startswith("warning: load factor ρ = 1.2 is not below 1")
    assert len(printed.output.strip().splitlines()) == 1
    printed = CliRunner().invoke(cli, ["theory", "--bjp", "--routers", "3"])
    assert printed.exit_code != 0
    assert printed.output.strip() == "error: --tree and --bjp need --load (or a scenario FILE)"


def test_reproduce_f5_puts_lemma_5_1_beside_every_point(tmp_path: Path) -> None:
    # Two buffers at ρ = 0.9, 8 s: Lemma 5.1 holds with room to spare (1-5 % against 35-66 %),
    # so sampling noise cannot make this fail; the table, the figure and the paragraph exist.
    out = tmp_path / "f5"
    args = ["reproduce", "f5", "--out", str(out), "--set", "duration=8s", "--set", "warmup=1s"]
    args += ["--vary", "network.bottleneck.buffer=4pkt,10pkt", "--vary", "traffic.0.load=0.9"]
    printed = CliRunner().invoke(cli, args)
    assert printed.exit_code == 0, printed.output
    bounds = pd.read_csv(out / "bounds.csv")
    assert len(bounds) == 2
    assert (bounds["max_router_drop_rate"] <= bounds["lemma_5_1_bound"]).all()
    assert (bounds["network_drop_rate"] > 0).all()
    assert "Lemma 5.1 holds at 2 of 2 points" in " ".join(printed.output.split())
    assert (out / "f5-bounds.png").exists()


def test_reproduce_f6_keeps_a_flows_gaps_under_bjp_router_after_router(tmp_path: Path) -> None:
    # One buffer, ρ = 0.9, both disciplines, 6 s. Under BJP a flow's gaps at routers 2, 3
    # and 4 are as far from its ingress gaps as the first router's serialization makes them
    # (no gap shorter than a packet time): the distance does not grow. That holds where BJP
    # drops little (B = 40, Δ = 20); at B = 10 it drops a quarter of the flow by the last
    # router, and the thinning alone moves the gaps. The tolerance, 0.02, is the distance two
    # samples of ~8,000 gaps of one distribution exceed 5 % of the time (1.36·√(2/8000)).
    out = tmp_path / "f6"
    args = ["reproduce", "f6", "--out", str(out), "--set", "duration=6s", "--set", "warmup=1s"]
    args += ["--vary", "network.bottleneck.buffer=40pkt", "--vary", "traffic.0.load=0.9"]
    printed = CliRunner().invoke(cli, args)
    assert printed.exit_code == 0, printed.output
    gaps = pd.read_csv(out / "interarrival.csv")
    assert len(gaps) == 8 and set(gaps["queue"]) == {"droptail", "bjp"}
    bjp = gaps[gaps["queue"] == "bjp"].set_index("router")["ks_distance"]
    assert bjp[1] == 0 and bjp[4] <= bjp[2] + 0.02
    bounds = pd.read_csv(out / "bounds.csv")
    row = bounds[bounds["queue"] == "bjp"].iloc[0]
    assert row["jitter_pkts"] == 20 and row["max_router_drop_rate"] <= row["router_bound"]
    for figure in ("f6-bounds.png", "f6-interarrival.png"):
        assert (out / figure).exists()
