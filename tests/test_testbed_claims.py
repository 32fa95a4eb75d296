"""The qualitative results of the testbed experiments (thesis ch. 4, IMC §3.1), at a tenth of
their scale so that they run in seconds: a 100 Mb/s bottleneck for the testbed's 1 Gb/s, and
a tenth of the users and access rates, so the ratios that matter (users per bit of capacity,
core rate ÷ access rate, RTT) are the testbed's. The full-size runs are the recipes t1, t5
and t6 (`buflab reproduce t1`).

Each claim compares two settings run with the same seeds, so the random draws (users' file
sizes and think times) are common to both sides and the comparison is sharper than either
number alone.
"""

from __future__ import annotations

from typing import Any

import pytest

import buflab

pytestmark = pytest.mark.engine

SEEDS = (1, 2)


def harpoon(users: int, path: str = "main") -> dict[str, Any]:
    """Thesis §4.1.1: Pareto files of mean 80 KB and shape 1.5, exponential 1 s think times."""
    return {
        "kind": "closed_loop",
        "users": users,
        "tcp": "newreno",
        "packet": "1500B",
        "max_window": "20MB",
        "start": "0s..5s",
        "path": path,
        "file_size": {"dist": "pareto", "mean": "80KB", "shape": 1.5},
        "think": {"dist": "exponential", "mean": "1s"},
    }


def machines(count: int, classes: int, rate: str) -> dict[str, Any]:
    return {
        "machines": count,
        "classes": classes,
        "rate": rate,
        "nic": "100Mbps",
        "buffer": "5000pkt",
    }


FAST = machines(4, 1, "100Mbps")  # flows go straight to the NIC
SLOW = machines(4, 5, "10Mbps")  # PSPacer classes at a tenth of the core rate (T1's 100 Mb/s)


def scaled_testbed(
    users: int, buffer: str, access: dict[str, Any], seed: int, rtt: str = "100ms"
) -> dict[str, Any]:
    return {
        "name": "scaled testbed",
        "seed": seed,
        "duration": "40s",
        "warmup": "15s",
        "network": {
            "topology": "dumbbell",
            "bottleneck": {"rate": "100Mbps", "buffer": buffer},
            "access": access,
            "rtt": rtt,
        },
        "traffic": [harpoon(users)],
    }


def mean_summary(scenarios: list[dict[str, Any]], metric: str) -> float:
    return sum(buflab.run(s).summary[metric] for s in scenarios) / len(scenarios)


def utilization(users: int, buffer: str, access: dict[str, Any]) -> float:
    return mean_summary(
        [scaled_testbed(users, buffer, access, seed) for seed in SEEDS], "utilization"
    )


def test_slow_access_loses_much_less_utilization_to_tiny_buffers() -> None:
    """T1 (thesis Fig 4.4 top): at the thesis's 125 % setting (2,400 users per Gb/s), cutting
    the buffer from 1,000 to 10 packets costs 97 → 86 % with 100 Mb/s access but 98 → 69 %
    with 1 Gb/s access: 11 points against 29. At this scale buflab measures about 10 points
    against 26 (seeds 1–3); the test asks for less than 0.6 times, a margin of about 0.2 over
    what it measures and what the thesis reports (0.38)."""
    users = 240
    fast_cost = utilization(users, "1000pkt", FAST) - utilization(users, "10pkt", FAST)
    slow_cost = utilization(users, "1000pkt", SLOW) - utilization(users, "10pkt", SLOW)
    assert fast_cost > 0.15, fast_cost
    assert slow_cost < 0.6 * fast_cost, (slow_cost, fast_cost)


def test_paced_traffic_drops_far_fewer_packets_at_tiny_buffers() -> None:
    """T5 (IMC Fig 5b): with 1,200 users and a 10-packet buffer, non-paced traffic loses about
    2 % of its packets and paced traffic (200 Mb/s PSPacer classes) under 0.01 %. At this
    scale buflab measures 2.8–3.3 % against none (seeds 1–3). The test asks for more than 1 %
    non-paced and under a third of that paced, so it fails if either side moves by a lot. The
    RTTs are the paper's: 130 ms non-paced, 100 ms plus the class queues paced."""
    non_paced = [scaled_testbed(120, "10pkt", FAST, seed, rtt="130ms") for seed in SEEDS]
    # The t5 recipe's paced setting: five classes that together carry the bottleneck rate.
    paced = [scaled_testbed(120, "10pkt", machines(5, 1, "20Mbps"), seed) for seed in SEEDS]
    non_paced_drops = mean_summary(non_paced, "drop_rate")
    paced_drops = mean_summary(paced, "drop_rate")
    assert non_paced_drops > 0.01, non_paced_drops
    assert paced_drops < non_paced_drops / 3, (paced_drops, non_paced_drops)


def cross_topology(access: dict[str, Any], cross: bool, seed: int) -> dict[str, Any]:
    """Thesis Fig 4.8: two machines, each a router input shared by main and cross users; the
    cross users leave by their own 100 Mb/s output before the bottleneck."""
    scenario = scaled_testbed(120, "30pkt", access, seed)
    scenario["network"]["cross"] = {"rate": "100Mbps", "buffer": "1000pkt"}
    if cross:
        scenario["traffic"].append(harpoon(120, path="cross"))
    return scenario


def p90_gap_ratio(access: dict[str, Any]) -> float:
    """How much adding cross traffic stretches the 90th percentile of the gaps between
    packets stored at the bottleneck (mean over seeds)."""
    ratios = []
    for seed in SEEDS:
        without = buflab.run(cross_topology(access, False, seed)).summary["iat_p90_s"]
        with_cross = buflab.run(cross_topology(access, True, seed)).summary["iat_p90_s"]
        ratios.append(with_cross / without)
    return sum(ratios) / len(ratios)


def test_cross_traffic_changes_the_gaps_with_fast_access_only() -> None:
    """T6 (thesis Fig 4.9, IMC Fig 7): with fast access most gaps are one packet time and
    cross traffic adds "a pronounced second step" (main packets now arrive with cross packets
    between them on the shared NIC); with 200 Mb/s access "no noticeable effect". At this
    scale the 90th percentile gap goes from one packet time (120 µs) to three with fast
    access, and changes by 4–20 % with slow access (seeds 1, 2). The test asks for at least
    a doubling with fast access and under 1.4 times with slow access."""
    fast = p90_gap_ratio(machines(2, 1, "100Mbps"))
    slow = p90_gap_ratio(machines(2, 5, "20Mbps"))
    assert fast >= 2.0, fast
    assert slow < 1.4, slow
