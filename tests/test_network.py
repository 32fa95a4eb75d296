"""General topologies from Python: the shipped network and tree, routes, the summary link, the
load factor a UDP entry's `load` sets, and bad input as one line from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import buflab
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
