"""Buffer sizing rules from the literature (thesis ch. 2), in packets.

- rule of thumb:  B = RTT·C                                   (Villamizar and Song)
- small buffers:  B = RTT·C/√N for N desynchronised long-lived flows   (Appenzeller et al.)
- tiny buffers:   B ≥ log_{1/ρ}(W_max² / (2(1−θ)))   eq. 2.1 (Enachescu et al.), for paced or
                  slow-access traffic with maximum window W_max packets, on a link whose
                  peak offered load is ρ, to reach θ of that load, i.e. utilization θρ.
- Poisson:        drop rate ≤ ρ^B for Poisson arrivals at load ρ into a buffer of B packets.
- eq. 3.1:        N·W_max/RTT = C: the flows that offer a link 100 % load (thesis §3.1).
- networks (thesis ch. 5), with Poisson ingress at load factor ρ (the largest offered load
  of any link) and routes of at most n routers:
  - tree, Lemma 5.1 / Thm 5.1: each router drops at most ρ^B, a route at most n·ρ^B, so
    B ≥ log_{1/ρ}(n/ε) reaches a drop rate ε;
  - any topology under the Bounded Jitter Policy, Thm 5.2 (Appendix C): with
    α = ρe^{1−ρ}, each router with jitter bound Δ drops at most α^Δ/(1−α)² (eq. C.2), so
    Δ ≥ 2·log_{1/α}(n/((1−α)ε)) and a buffer B = 2Δ reach ε;
  - with TCP, Thm 5.3 (Appendix D): B ≥ 4·log_{1/α}(nW/((1−α)(1−θ))) gives effective
    utilization θ to flows of window W; solved for θ, θ = 1 − nW·α^{B/4}/(1−α).

Rates are bits/s, times seconds, sizes bytes; results are real numbers of packets (round
up to size a buffer).

Formulas over a link's facts: it must not run anything, nor know how its numbers are shown.
The facts of a scenario's link are the engine's (`LinkFacts.from_scenario` asks it): this
module must not read a scenario's keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from buflab.engine import core, scenario_json


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


def _load_factor(load: float, where: str) -> None:
    if not 0 < load < 1:
        raise ValueError(
            f"load factor ρ = {load:g} must be between 0 and 1 (exclusive) for {where}"
        )


def _positive_int(**values: float) -> None:
    for name, value in values.items():
        if not value >= 1:
            raise ValueError(f"{name} = {value:g} must be at least 1")


def tree_router_drop_bound(load: float, buffer_pkts: float) -> float:
    """Lemma 5.1: a router of a tree with Poisson ingress at load factor ρ and a buffer of B
    packets drops at most ρ^B of what reaches it."""
    _load_factor(load, "Lemma 5.1")
    return poisson_drop_bound(load, buffer_pkts)


def tree_drop_bound(load: float, buffer_pkts: float, routers: int) -> float:
    """Thm 5.1: a packet crossing at most n routers of such a tree is dropped with
    probability at most n·ρ^B (above 1: no bound)."""
    _positive_int(routers=routers)
    return routers * tree_router_drop_bound(load, buffer_pkts)


def tree_buffer(load: float, routers: int, drop: float) -> float:
    """Thm 5.1: the buffer B ≥ log_{1/ρ}(n/ε) that holds a tree's drop rate to ε."""
    _load_factor(load, "Thm 5.1")
    _positive_int(routers=routers)
    if not 0 < drop < 1:
        raise ValueError(f"drop rate ε = {drop:g} must be between 0 and 1 (exclusive)")
    return max(0.0, math.log(routers / drop) / math.log(1 / load))


def bjp_alpha(load: float) -> float:
    """α = ρ·e^{1−ρ} of Thm 5.2: below 1 for ρ < 1, and close to 1 near it."""
    _load_factor(load, "Thm 5.2")
    return load * math.exp(1 - load)


def bjp_router_drop_bound(load: float, jitter_pkts: float) -> float:
    """Eq. C.2: a router under BJP with jitter bound Δ (packet times) drops at most
    α^Δ/(1−α)² of what reaches it (above 1: no bound)."""
    alpha = bjp_alpha(load)
    if jitter_pkts < 0:
        raise ValueError(f"jitter bound Δ = {jitter_pkts:g} must not be negative")
    return alpha**jitter_pkts / (1 - alpha) ** 2


def bjp_drop_bound(load: float, jitter_pkts: float, routers: int) -> float:
    """Thm 5.2 (Appendix C): a packet crossing at most n BJP routers is dropped with
    probability at most n·α^Δ/(1−α)²."""
    _positive_int(routers=routers)
    return routers * bjp_router_drop_bound(load, jitter_pkts)


def bjp_buffer(load: float, routers: int, drop: float) -> float:
    """Thm 5.2: the buffer B = 2Δ ≥ 4·log_{1/α}(n/((1−α)ε)) that holds the drop rate of any
    topology under BJP to ε."""
    alpha = bjp_alpha(load)
    _positive_int(routers=routers)
    if not 0 < drop < 1:
        raise ValueError(f"drop rate ε = {drop:g} must be between 0 and 1 (exclusive)")
    return max(0.0, 4 * math.log(routers / ((1 - alpha) * drop)) / math.log(1 / alpha))


def bjp_tcp_buffer(load: float, routers: int, wmax_pkts: float, theta: float) -> float:
    """Thm 5.3: the buffer B ≥ 4·log_{1/α}(nW/((1−α)(1−θ))) that gives TCP flows of window
    W packets an effective utilization θ (throughput ÷ offered load) under BJP."""
    alpha = bjp_alpha(load)
    _positive_int(routers=routers)
    _require_positive(wmax=wmax_pkts)
    if not 0 < theta < 1:
        raise ValueError(f"θ = {theta:g} must be between 0 and 1 (exclusive)")
    ratio = routers * wmax_pkts / ((1 - alpha) * (1 - theta))
    return max(0.0, 4 * math.log(ratio) / math.log(1 / alpha))


def bjp_tcp_utilization(load: float, routers: int, wmax_pkts: float, buffer_pkts: float) -> float:
    """Thm 5.3 solved for θ: the effective utilization a buffer of B packets guarantees,
    1 − nW·α^{B/4}/(1−α) (at or below 0: the theorem guarantees nothing at this B)."""
    alpha = bjp_alpha(load)
    _positive_int(routers=routers)
    _require_positive(wmax=wmax_pkts)
    return 1 - routers * wmax_pkts * alpha ** (buffer_pkts / 4) / (1 - alpha)


def eq31_flows(rate_bps: float, rtt_s: float, wmax_bytes: float) -> int:
    """Eq. 3.1, N·W_max/RTT = C: the flows that together offer a link of `rate_bps` 100 % load
    when each sends a window of `wmax_bytes` (on the wire) every `rtt_s`, rounded up, as the
    engine's `flows_per_output = "eq3.1"` does: 2.5 Gb/s, 100 ms and 64 × 1000 B give 489."""
    _require_positive(rate=rate_bps, rtt=rtt_s, wmax=wmax_bytes)
    # The engine divides integers; the tolerance keeps an exact ratio that floating point
    # puts a hair above a whole number from being rounded up past it.
    return max(1, math.ceil(rate_bps * rtt_s / (8 * wmax_bytes) - 1e-9))


# Sawtooth cycles a rule of thumb gives AIMD flows to share a link fairly after slow start:
# each cycle halves the gap between two flows' windows (additive increase, multiplicative
# decrease), so five leave about 3 % of it.
CONVERGENCE_CYCLES = 5


def aimd_convergence_s(
    rate_bps: float, rtt_s: float, packet_bytes: float, flows: int, wmax_pkts: float
) -> float:
    """Seconds long-lived AIMD flows need to settle to a fair share after their start: five
    sawtooth cycles, each W/2 round trips for the fair-share window W = C·RTT/N packets
    (or the flows' largest window if that is smaller). 0 without flows."""
    if flows <= 0 or rtt_s <= 0:
        return 0.0
    window = min(bdp_packets(rate_bps, rtt_s, packet_bytes) / flows, wmax_pkts)
    return CONVERGENCE_CYCLES * (window / 2) * rtt_s


def _require_positive(**values: float) -> None:
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} = {value} must be positive")


@dataclass(frozen=True)
class LinkFacts:
    """What the rules need to know about a scenario's bottleneck and its flows: the link the
    run summary describes (on a parking lot `network.summary_hop`, on a switch one output
    line, whose flows are those of one output) and the long-lived flows crossing it."""

    rate_bps: float
    rtt_s: float  # mean two-way propagation delay
    packet_bytes: float
    flows: int  # long-lived flows (the N of RTT·C/√N)
    # Largest window a flow can use: its max window, or what its access link carries in an RTT.
    wmax_pkts: float
    # Links the run monitors (its links table's rows), for the wall-time estimate.
    monitored_links: int = 1

    @classmethod
    def from_scenario(cls, scenario: dict[str, Any]) -> LinkFacts:
        """The facts of a scenario (a tree, normalised or not) as the engine computes them
        from the validated scenario (`buflab._core.link_facts`); raises ScenarioError."""
        return cls(**core().link_facts(scenario_json(scenario)))
