"""The testbed's two headline contrasts on real Linux TCP (thesis ch. 4, IMC §3.1), at a tenth
of their scale as `test_testbed_claims.py` runs them in the simulator: a 100 Mb/s bottleneck,
a tenth of the users and access rates, the same RTTs. Each setting is one emulation of 40 s
(15 s warm-up), seed 1; the T1 pair takes four and the T5 pair two, about four and a half
minutes in all (measured: 4 min 15 s). Root only (CI runs as root); slow suite.

Each claim compares two settings with the same seed, hence the same users, file sizes and
think times (the generator draws them with the simulator's streams). The tolerances are
wider than the simulator's test: one seed, and an emulation on a shared machine is not
always faithful to the microsecond (each failure prints the run's fidelity figures).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from test_testbed_claims import FAST, SLOW, machines, scaled_testbed

pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (CI runs as root)"),
]

SEED = 1


def emulated(scenario: dict[str, Any]) -> dict[str, Any]:
    from buflab.engine.emulation.runner import emulate

    return emulate(scenario).summary


def fidelity(*summaries: dict[str, Any]) -> list[tuple[float, float, bool]]:
    """Each run's share of frames within 10 µs, its generator's p99 lateness and verdict."""
    return [(s["late_within_10us"], s["generator_late_p99_s"], s["faithful"]) for s in summaries]


def test_slow_access_loses_much_less_utilization_to_tiny_buffers_on_linux() -> None:
    """T1 (thesis Fig 4.4 top): cutting the buffer from 1,000 to 10 packets costs 97 → 86 %
    with 100 Mb/s access (11 points) but 98 → 69 % with 1 Gb/s access (29): a ratio of 0.38.
    Here 240 users at 100 Mb/s, access 100 Mb/s (fast) against 10 Mb/s classes (slow).
    Measured on an idle machine (87–93 % of frames within 10 µs): fast 100.0 → 72.7 % (the
    simulator 99.0 → 72.1 %), slow 100.0 → 88.0 % (97.8 → 84.8 %): costs of 27 and 12
    points, a ratio of 0.44 (the simulator's 0.48, the thesis's 0.38); on a busy machine
    (40–50 % within 10 µs) fast fell to 40.1 %, a ratio of 0.34. Asked: fast access loses
    more than 10 points, and slow access less than 0.6 times what fast loses, the
    simulator's test's bound: it holds on either engine with room (the direction is the
    claim; the size of the fast loss on Linux moves with the machine's timing, so it is
    not pinned)."""
    runs = {
        (name, buffer): emulated(scaled_testbed(240, buffer, access, SEED))
        for name, access in (("fast", FAST), ("slow", SLOW))
        for buffer in ("1000pkt", "10pkt")
    }
    cost = {
        name: runs[(name, "1000pkt")]["utilization"] - runs[(name, "10pkt")]["utilization"]
        for name in ("fast", "slow")
    }
    seen = (cost, fidelity(*runs.values()))
    assert cost["fast"] > 0.10, seen
    assert cost["slow"] < 0.6 * cost["fast"], seen


def test_paced_traffic_drops_far_fewer_packets_at_tiny_buffers_on_linux() -> None:
    """T5 (IMC Fig 5b): with 1,200 users and a 10-packet buffer, non-paced traffic loses about
    2 % of its packets and paced traffic (200 Mb/s PSPacer classes) under 0.01 %. Here 120
    users at 100 Mb/s, non-paced straight to 100 Mb/s NICs with RTT 130 ms, paced through
    five 20 Mb/s classes with RTT 100 ms (the paper's settings, and the t5 recipe's).
    Measured on an idle machine (89–92 % of frames within 10 µs): non-paced 4.8 % (the
    simulator 2.9 %), paced 0 (0); on a busy one non-paced 11.5 %, paced 0.005 %. Asked:
    non-paced above 1 %, paced under a third of it, the simulator's test's bounds: far
    apart on Linux, so only a reversal of the claim fails it."""
    non_paced = emulated(scaled_testbed(120, "10pkt", FAST, SEED, rtt="130ms"))
    paced = emulated(scaled_testbed(120, "10pkt", machines(5, 1, "20Mbps"), SEED))
    seen = (non_paced["drop_rate"], paced["drop_rate"], fidelity(non_paced, paced))
    assert non_paced["drop_rate"] > 0.01, seen
    assert paced["drop_rate"] < non_paced["drop_rate"] / 3, seen
