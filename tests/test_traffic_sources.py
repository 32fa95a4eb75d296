"""Traffic sources seen in the bottleneck's event log: a `udp_cbr` source's packets reach
the bottleneck evenly spaced at its rate, and `traffic[].jitter` delays each packet of a TCP
flow by at most `jitter` without changing their order.

The event log's times are exact integer picoseconds, so the checks are exact too, but for
the engine's own rounding of a gap to a whole picosecond where the text says so."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import buflab

pytestmark = pytest.mark.engine

PS_PER_S = 10**12


def enqueues(result: buflab.Result, flow: int) -> pd.DataFrame:
    events = result.events
    assert events is not None, "the scenario records the event log"
    return events[(events["event"] == "enqueue") & (events["flow"] == flow)]


# --- udp_cbr ----------------------------------------------------------------------------------

CBR_START_S, CBR_END_S = Fraction(1, 10), Fraction(1)


def cbr_scenario(rate: str, packet: str) -> dict[str, Any]:
    """One CBR source from 0.1 s to 1 s, behind a 1 Gb/s access link, into a 100 Mb/s
    bottleneck: at most 3 % of the bottleneck, and a lone source, so nothing ever waits
    there and a packet's enqueue time is its send time plus a constant (half the RTT and
    one serialization on the access link)."""
    return {
        "name": "cbr",
        "duration": "1s",
        "network": {
            "bottleneck": {"rate": "100Mbps", "buffer": "10pkt"},
            "access": {"rate": "1Gbps"},
            "rtt": "10ms",
        },
        "monitor": {"events": True},
        "traffic": [{"kind": "udp_cbr", "rate": rate, "packet": packet, "start": "0.1s"}],
    }


@pytest.mark.parametrize(
    ("rate", "packet", "rate_bps", "packet_bytes"),
    [
        ("3Mbps", "1000B", 3_000_000, 1000),  # 2,666,666,666⅔ ps: rounded up to a whole ps
        ("2.5Mbps", "1500B", 2_500_000, 1500),  # 4.8 ms exactly
    ],
)
def test_a_cbr_source_reaches_the_bottleneck_evenly_spaced_at_its_rate(
    rate: str, packet: str, rate_bps: int, packet_bytes: int
) -> None:
    """Every gap between the source's successive enqueues at the bottleneck is the same,
    packet_bits / rate to within the engine's rounding of a gap up to a whole picosecond
    (0 ≤ gap − exact < 1 ps; exact in the second case); its packets arrive in order, none is
    lost and none waits (so the spacing is the source's, not the link's); the first arrives
    one access-link crossing after the source's start; and the counts are
    rate × time: the source sends ⌈0.9 s × rate / packet_bits⌉ packets over its 0.9 s
    (337.5 → 338 and 187.5 → 188, no boundary case), and the bottleneck logs the arrivals
    between the first one and the end of the run, that span × rate / packet_bits to within
    one packet."""
    result = buflab.run(cbr_scenario(rate, packet))
    packet_bits = 8 * packet_bytes
    exact_gap_ps = Fraction(packet_bits * PS_PER_S, rate_bps)
    log = enqueues(result, 0)
    times = log["time_ps"].to_numpy()
    gaps = np.unique(np.diff(times))
    assert len(gaps) == 1, f"uneven spacing: {gaps}"
    assert 0 <= int(gaps[0]) - exact_gap_ps < 1
    assert log["seq"].tolist() == list(range(len(log)))
    assert (log["queue_pkts"] == 0).all()
    assert result.summary["drops"] == 0 and result.summary["queue_delay_mean_s"] == 0

    # The first packet leaves at the start and crosses the access link: 5 ms of delay and
    # its serialization at 1 Gb/s.
    one_way_s = Fraction(5, 1000) + Fraction(packet_bits, 10**9)
    assert times[0] == (CBR_START_S + one_way_s) * PS_PER_S

    sent = int(result.flows.loc[0, "sent_packets"])
    assert sent == math.ceil((CBR_END_S - CBR_START_S) * rate_bps / packet_bits)
    span_s = CBR_END_S - Fraction(int(times[0]), PS_PER_S)
    assert abs(len(log) - span_s * rate_bps / packet_bits) <= 1
    # The packets sent in the last one-way delay are still on the access link at the end.
    assert 0 < sent - len(log) <= math.ceil(one_way_s * rate_bps / packet_bits)


# --- send jitter ----------------------------------------------------------------------------

JITTER = "10ms"
JITTER_PS = 10 * 10**9
INITIAL_WINDOW = 20


def jitter_scenario(jitter: str) -> dict[str, Any]:
    """Two TCP flows starting together at 0 s, each sending a first window of 20 segments
    at once, through 100 Mb/s access links into a 20 Mb/s bottleneck whose 1000-packet
    buffer never fills: no loss, so no retransmission, in 1 s."""
    return {
        "name": "jitter",
        "duration": "1s",
        "network": {
            "bottleneck": {"rate": "20Mbps", "buffer": "1000pkt"},
            "access": {"rate": "100Mbps"},
            "rtt": "20ms",
        },
        "monitor": {"events": True},
        "traffic": [
            {
                "kind": "long_lived",
                "flows": 2,
                "start": "0s",
                "initial_window": INITIAL_WINDOW,
                "max_window": "100KB",
                "jitter": jitter,
            }
        ],
    }


def test_jitter_delays_each_send_event_by_at_most_jitter_and_keeps_the_order() -> None:
    """`jitter` = 10 ms: what a send event releases leaves its sender after one uniform delay
    in [0, jitter], back to back, no earlier than the flow's previous packet (sim/path.rs,
    `release`), which keeps it within `jitter` of when it was sent.

    Seen on the first window: each flow's 20 first segments leave at its start, one event,
    the same in both runs (a flow's jitter draws have their own random stream), and follow
    each other over the access link, so with jitter all of them reach the bottleneck later
    than without it by one and the same delay, between 0 and exactly 10 ms (to the
    picosecond): a host late in handling an event sends all it releases late, as Linux sends
    a GSO packet's segments together. The two flows draw from their own streams, so their
    delays differ.

    Order is seen over the whole run: with no loss every data segment crosses the
    bottleneck once, so a flow's sequence numbers at its enqueues must rise strictly. 10 ms
    of jitter is more than ten times the gap between a flow's packets (at most 0.8 ms at
    its 10 Mb/s share), so jitter that reordered would show here at once."""
    plain = buflab.run(jitter_scenario("0s"))
    jittered = buflab.run(jitter_scenario(JITTER))
    for result in (plain, jittered):
        assert result.summary["drops"] == 0 and result.summary["retransmits"] == 0
    pd.testing.assert_series_equal(plain.flows["start_s"], jittered.flows["start_s"])

    delays: list[int] = []
    for flow in (0, 1):
        first = [
            enqueues(run, flow).set_index("seq")["time_ps"].loc[: INITIAL_WINDOW - 1]
            for run in (plain, jittered)
        ]
        assert first[0].index.tolist() == list(range(INITIAL_WINDOW))
        delay = set((first[1] - first[0]).tolist())
        assert len(delay) == 1, f"the first window was split: {sorted(delay)}"
        (d,) = delay
        assert 0 < d <= JITTER_PS, d
        delays.append(d)
    assert delays[0] != delays[1], "the flows' draws must be their own"

    for flow in (0, 1):
        seqs = enqueues(jittered, flow)["seq"].to_numpy()
        assert len(seqs) > 1000
        assert (np.diff(seqs) > 0).all(), "a flow's segments reached the bottleneck out of order"
