"""Buffer sizing rules from the literature (thesis ch. 2), in packets.

- rule of thumb:  B = RTT·C                                   (Villamizar and Song)
- small buffers:  B = RTT·C/√N for N desynchronised long-lived flows   (Appenzeller et al.)
- tiny buffers:   B ≥ log_{1/ρ}(W_max² / (2(1−θ)))   eq. 2.1 (Enachescu et al.), for paced or
                  slow-access traffic with maximum window W_max packets, on a link whose
                  peak offered load is ρ, to reach θ of that load, i.e. utilization θρ.
- Poisson:        drop rate ≤ ρ^B for Poisson arrivals at load ρ into a buffer of B packets.
- eq. 3.1:        N·W_max/RTT = C: the flows that offer a link 100 % load (thesis §3.1).

Rates are bits/s, times seconds, sizes bytes; results are real numbers of packets (round
up to size a buffer).

Formulas over a link's facts: it must not run anything, nor know how its numbers are shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from buflab.engine.scenario import get_key
from buflab.engine.units import parse_bytes, parse_quantity, parse_rate, parse_time_range


def bdp_packets(rate_bps: float, rtt_s: float, packet_bytes: float) -> float:
    """Rule of thumb RTT·C, in packets of `packet_bytes`."""
    _require_positive(rate=rate_bps, rtt=rtt_s, packet=packet_bytes)
    return rate_bps * rtt_s / (8 * packet_bytes)


def sqrt_n_packets(rate_bps: float, rtt_s: float, packet_bytes: float, flows: int) -> float:
    """Small-buffer rule RTT·C/√N, in packets."""
    _require_positive(flows=flows)
    return bdp_packets(rate_bps, rtt_s, packet_bytes) / math.sqrt(flows)


def tiny_buffer_packets(wmax_pkts: float, load: float, theta: float) -> float:
    """Eq. 2.1: the buffer for utilization θρ with peak load ρ = `load`.

    θ is the thesis's: a fraction of ρ, not of the link (the thesis's example reaches 70 %
    of the link at ρ = 75 %, so θ = 0.70/0.75). Use `tiny_buffer_for_utilization` to give
    the link utilization directly. Returns 0 when the logarithm is negative (any buffer does).
    """
    _require_positive(wmax=wmax_pkts)
    if not 0 < load < 1:
        raise ValueError(f"load ρ = {load} must be between 0 and 1 (exclusive) for eq. 2.1")
    if not 0 < theta < 1:
        raise ValueError(f"θ = {theta} must be between 0 and 1 (exclusive) for eq. 2.1")
    ratio = wmax_pkts**2 / (2 * (1 - theta))
    return max(0.0, math.log(ratio) / math.log(1 / load))


def tiny_buffer_for_utilization(wmax_pkts: float, load: float, utilization: float) -> float:
    """Eq. 2.1 with the target given as link utilization θρ (e.g. 0.70)."""
    if not 0 < utilization < load:
        raise ValueError(
            f"target utilization {utilization} must be above 0 and below the load ρ = {load}"
        )
    return tiny_buffer_packets(wmax_pkts, load, utilization / load)


def poisson_drop_bound(load: float, buffer_pkts: float) -> float:
    """Upper bound ρ^B on the drop rate of Poisson arrivals at load ρ < 1."""
    if not 0 < load < 1:
        raise ValueError(f"load ρ = {load} must be between 0 and 1 (exclusive)")
    if buffer_pkts < 0:
        raise ValueError(f"buffer {buffer_pkts} must not be negative")
    return load**buffer_pkts


def eq31_flows(rate_bps: float, rtt_s: float, wmax_bytes: float) -> int:
    """Eq. 3.1, N·W_max/RTT = C: the flows that together offer a link of `rate_bps` 100 % load
    when each sends a window of `wmax_bytes` (on the wire) every `rtt_s`, rounded up, as the
    engine's `flows_per_output = "eq3.1"` does: 2.5 Gb/s, 100 ms and 64 × 1000 B give 489."""
    _require_positive(rate=rate_bps, rtt=rtt_s, wmax=wmax_bytes)
    # The engine divides integers; the tolerance keeps an exact ratio that floating point
    # puts a hair above a whole number from being rounded up past it.
    return max(1, math.ceil(rate_bps * rtt_s / (8 * wmax_bytes) - 1e-9))


def _require_positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} = {value} must be positive")


@dataclass(frozen=True)
class LinkFacts:
    """What the rules need to know about a scenario's bottleneck and its flows. On a parking
    lot the bottleneck is the hop the run summary describes (`network.summary_hop`), and its
    flows are those of the entries that cross it. On a switch it is one output line, and its
    flows those of one output: the flows in all ÷ the ports."""

    rate_bps: float
    rtt_s: float  # mean two-way propagation delay
    packet_bytes: float
    flows: int  # long-lived flows (the N of RTT·C/√N)
    # Largest window a flow can use: its max window, or what its access link carries in an RTT.
    wmax_pkts: float

    @classmethod
    def from_scenario(cls, scenario: dict[str, Any]) -> LinkFacts:
        """Read from a normalised scenario (`buflab.validate`), where every key is present."""
        low, high = parse_time_range(get_key(scenario, "network.rtt"))
        rtt = (low + high) / 2  # RTTs are uniform on [low, high]
        rate, crosses = _summary_link(scenario)
        long_lived = [
            t for t in scenario.get("traffic", []) if t.get("kind") == "long_lived" and crosses(t)
        ]
        traffic = long_lived[0] if long_lived else {}
        packet = parse_bytes(traffic.get("packet", "1000B"))
        wmax = _window_packets(traffic.get("max_window"), packet)
        access = get_key(scenario, "network.access.rate")
        if access is not None:
            # A source cannot send more than its access link carries in one RTT (thesis §2.1.3).
            wmax = min(wmax, parse_rate(access) * rtt / (8 * packet))
        flows = sum(int(t.get("flows", 1)) for t in long_lived)
        if get_key(scenario, "network.topology") == "switch":
            # Per output: `flows_per_output` (the normalised tree resolves "eq3.1"), or `flows`
            # shared by the ports.
            ports = int(get_key(scenario, "network.switch.ports", 8))
            flows = sum(
                int(t["flows_per_output"])
                if "flows_per_output" in t
                else int(t.get("flows", 1)) // ports
                for t in long_lived
            )
        return cls(
            rate_bps=rate,
            rtt_s=rtt,
            packet_bytes=packet,
            flows=flows,
            wmax_pkts=wmax,
        )


def _summary_link(scenario: dict[str, Any]) -> tuple[float, Callable[[dict[str, Any]], bool]]:
    """The rate of the link a run's summary describes, and which traffic entries cross it: the
    dumbbell's bottleneck, the parking lot's `network.summary_hop`, or a switch's output line
    (every entry crosses some output)."""
    if get_key(scenario, "network.topology") == "switch":
        return parse_rate(get_key(scenario, "network.switch.rate")), lambda entry: True
    rate = parse_rate(get_key(scenario, "network.bottleneck.rate"))
    if get_key(scenario, "network.topology") != "parking_lot":
        return rate, lambda entry: True
    hop = int(get_key(scenario, "network.summary_hop", 1))
    overrides = get_key(scenario, "network.hop", [])
    if hop <= len(overrides) and "rate" in overrides[hop - 1]:
        rate = parse_rate(overrides[hop - 1]["rate"])
    hops = int(get_key(scenario, "network.hops", 1))
    return rate, lambda entry: hop in _hop_span(entry.get("hops", "all"), hops)


def _hop_span(value: Any, hops: int) -> range:
    """The hops, from 1, that a valid `hops` value names: 2, "2", "1..3" or "all"."""
    text = str(value).strip()
    if text == "all":
        return range(1, hops + 1)
    first, _, last = text.partition("..")
    return range(int(first), int(last or first) + 1)


# TCP/IP headers per packet, as the engine's `tcp::HEADER_BYTES`: a `packet` of 1000 B carries
# a segment of 960 B of payload.
TCP_HEADER_BYTES = 40


def _window_packets(window: Any, packet_bytes: float) -> float:
    """`max_window` as packets in flight: it counts payload bytes (the receiver's advertised
    window), so 61,440 B are 64 segments of 960 B, each a 1000 B packet on the wire."""
    if window is None:
        return math.inf
    quantity = parse_quantity(window, ("bytes", "packets"))
    if quantity.kind == "packets":
        return quantity.value
    return quantity.value / max(1.0, packet_bytes - TCP_HEADER_BYTES)
