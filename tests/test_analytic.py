"""Simulations checked against theory (DESIGN.md, verification ladder step 2). They are
small enough for the default suite: each runs in well under a second."""

from __future__ import annotations

import pytest

import buflab
from buflab.analysis import theory

pytestmark = pytest.mark.engine

POISSON = """\
name = "poisson"
seed = 1
duration = "300s"
warmup = "10s"

[network]
topology = "dumbbell"
bottleneck = { rate = "10Mbps", buffer = "20pkt" }
rtt = "10ms"

[[traffic]]
kind = "udp_poisson"
flows = 1
rate = "8Mbps"
packet = "1000B"
"""


@pytest.mark.parametrize("buffer", [5, 20])
def test_poisson_drops_stay_under_rho_to_the_b(buffer: int) -> None:
    # F4 in simulation: Poisson arrivals at ρ = 0.8 into B packets of buffer drop at most ρ^B
    # (1.15 % for B = 20). The bound is loose for fixed-size packets (M/D/1), so the check is
    # one-sided; ~290,000 arrivals make the measured rate's noise far smaller than the bound.
    summary = buflab.run(POISSON, network__bottleneck__buffer=f"{buffer}pkt").summary
    assert summary["arrivals"] > 250_000
    assert summary["drop_rate"] <= theory.poisson_drop_bound(0.8, buffer)
    # What is not dropped is carried: utilization = ρ (1 − drop rate). With ~290,000 Poisson
    # arrivals the offered load itself varies by about 0.2 %, hence the 0.005 tolerance.
    assert summary["utilization"] == pytest.approx(0.8 * (1 - summary["drop_rate"]), abs=0.005)


def test_one_flow_with_a_bdp_buffer_fills_the_link() -> None:
    # A single long-lived flow whose buffer is RTT·C keeps the link busy through every halving
    # of its window (the rule-of-thumb argument), so utilization is close to 100 %; 95 % leaves
    # room for the sawtooth's discrete steps.
    bdp = theory.bdp_packets(10e6, 0.1, 1000)
    summary = buflab.run(
        {
            "name": "one-flow-bdp",
            "duration": "120s",
            "warmup": "20s",
            "network": {
                "bottleneck": {"rate": "10Mbps", "buffer": f"{round(bdp)}pkt"},
                "rtt": "100ms",
            },
            "traffic": [{"kind": "long_lived", "flows": 1}],
        }
    ).summary
    assert summary["utilization"] >= 0.95
