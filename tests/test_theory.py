"""The sizing rules against the thesis's worked numbers (REPRODUCE.md rows F1-F4)."""

from __future__ import annotations

import math

import pytest

import buflab
from buflab.analysis import theory
from buflab.engine.units import (
    Quantity,
    UnitError,
    parse_bytes,
    parse_quantity,
    parse_rate,
    parse_time,
    parse_time_range,
)


@pytest.mark.engine
def test_f1_rule_of_thumb() -> None:
    # 10 Gb/s × 100 ms / (8 × 1000 B) is exactly 125,000: only float rounding may differ.
    rate, rtt, packet = parse_rate("10Gbps"), parse_time("100ms"), parse_bytes("1000B")
    assert theory.bdp_packets(rate, rtt, packet) == pytest.approx(125_000, rel=1e-12)


def test_f2_small_buffers() -> None:
    # 125,000 / √800 = 4419.417…; the thesis prints "≈ 4419", i.e. rounded to the packet,
    # so the tolerance is half a packet.
    packets = theory.sqrt_n_packets(10e9, 0.1, 1000, flows=800)
    assert packets == pytest.approx(4419, abs=0.5)


def test_f3_tiny_buffers_eq_2_1() -> None:
    # W = 83, ρ = 0.75, θρ = 0.70 (θ = 0.70/0.75): log_{4/3}(83² / (2 (1 − θ))) = 37.72.
    # The thesis says "a buffer size of 37 packets", a whole number of packets taken from the
    # same formula, so we accept anything within one packet of 37.
    packets = theory.tiny_buffer_for_utilization(83, load=0.75, utilization=0.70)
    assert packets == pytest.approx(37, abs=1.0)
    assert packets == pytest.approx(theory.tiny_buffer_packets(83, 0.75, 0.70 / 0.75))


def test_f4_poisson_drop_bound() -> None:
    # 0.8^20 = 1.153 %; the thesis's "≈ 1 %" has one significant figure, so the check is
    # that the bound rounds to 1 % at that precision (and is exact to float rounding).
    bound = theory.poisson_drop_bound(0.8, 20)
    assert bound == pytest.approx(0.8**20, rel=1e-12)
    assert round(bound * 100) == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: theory.tiny_buffer_packets(83, 1.0, 0.9), "load"),
        (lambda: theory.tiny_buffer_for_utilization(83, 0.75, 0.80), "below the load"),
        (lambda: theory.poisson_drop_bound(1.2, 20), "load"),
        (lambda: theory.bdp_packets(-1, 0.1, 1000), "rate"),
        (lambda: theory.sqrt_n_packets(1e9, 0.1, 1000, 0), "flows"),
    ],
)
def test_out_of_domain_inputs_say_which(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.engine
def test_link_facts_from_a_normalised_scenario() -> None:
    scenario = {
        "network": {
            "bottleneck": {"rate": "1Gbps"},
            "access": {"rate": "40Mbps"},
            "rtt": "75ms..125ms",
        },
        "traffic": [
            {"kind": "long_lived", "flows": 200, "packet": "1000B", "max_window": "20MB"},
            {"kind": "udp_poisson", "flows": 3, "rate": "1Mbps"},
        ],
    }
    facts = theory.LinkFacts.from_scenario(scenario)
    assert facts.rate_bps == 1e9
    assert facts.rtt_s == pytest.approx(0.1)
    assert facts.flows == 200  # UDP sources are not TCP flows
    # 20 MB of window, but 40 Mb/s × 100 ms = 500 KB = 500 packets per RTT.
    assert facts.wmax_pkts == pytest.approx(500)


@pytest.mark.engine
def test_link_facts_count_the_window_in_segments_of_payload() -> None:
    # max_window is the advertised window in payload bytes: 61,440 B = 64 segments of 960 B,
    # the thesis's W_max of 64 packets of 1000 B (eq. 3.1).
    scenario = {
        "network": {"bottleneck": {"rate": "1Gbps"}, "rtt": "100ms"},
        "traffic": [{"kind": "long_lived", "flows": 10, "packet": "1000B", "max_window": "61440B"}],
    }
    assert theory.LinkFacts.from_scenario(scenario).wmax_pkts == pytest.approx(64)


@pytest.mark.engine
def test_link_facts_of_a_parking_lot_describe_the_summary_hop() -> None:
    # Hop 2 of three, at its own 5 Mb/s: crossed by the main flows and the 2..3 entry only.
    scenario = {
        "network": {
            "topology": "parking_lot",
            "hops": 3,
            "summary_hop": 2,
            "bottleneck": {"rate": "10Mbps"},
            "hop": [{}, {"rate": "5Mbps"}],
            "rtt": "50ms",
        },
        "traffic": [
            {"kind": "long_lived", "flows": 4, "hops": "all"},
            {"kind": "long_lived", "flows": 8, "hops": 1},
            {"kind": "long_lived", "flows": 2, "hops": "2..3"},
            {"kind": "long_lived", "flows": 16, "hops": "3"},
        ],
    }
    facts = theory.LinkFacts.from_scenario(scenario)
    assert (facts.rate_bps, facts.flows) == (5e6, 6)
    scenario["network"]["summary_hop"] = 3
    assert theory.LinkFacts.from_scenario(scenario).flows == 22
    assert theory.LinkFacts.from_scenario(scenario).rate_bps == 10e6


@pytest.mark.engine
def test_link_facts_are_the_engines_and_rtt_c_is_the_auto_sizers_default_start() -> None:
    # Property: the facts Python's formulas take are the engine's, whole: RTT·C from them,
    # rounded up, is the auto-sizer's default first buffer, which the engine computes in
    # integers. 7 Mb/s × 117 ms ÷ (8 × 576 B) = 177.73 → 178, the summary hop's own rate and
    # the packet of the first long-lived entry crossing it (not the first entry's).
    scenario = {
        "network": {
            "topology": "parking_lot",
            "hops": 2,
            "summary_hop": 2,
            "bottleneck": {"rate": "20Mbps"},
            "hop": [{}, {"rate": "7Mbps"}],
            "rtt": "100ms..134ms",
        },
        "traffic": [
            {"kind": "long_lived", "hops": 1, "packet": "1500B"},
            {"kind": "long_lived", "hops": "1..2", "packet": "576B"},
        ],
        "autosize": {"target_utilization": 0.9},
    }
    facts = theory.LinkFacts.from_scenario(scenario)
    assert (facts.rate_bps, facts.packet_bytes, facts.flows) == (7e6, 576, 1)
    bdp = theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes)
    assert bdp == pytest.approx(177.734375, rel=1e-12)
    assert buflab.validate(scenario)["autosize"]["start"] == math.ceil(bdp) == 178


@pytest.mark.engine
@pytest.mark.parametrize("access", ["25Mbps", "2.5Mbps"])
@pytest.mark.parametrize("rtt", ["100ms", "70ms..140ms"])
def test_eq31_over_the_link_facts_gives_the_engines_flows_per_output(access, rtt) -> None:
    # Property: the facts' W_max is the one eq. 3.1 takes (the window, or what the access
    # link carries in the mean RTT: 2.5 Mb/s × 105 ms = 32,812 B), so the formula over the
    # facts gives the flows per output the engine resolved "eq3.1" to (49, 100 or 101).
    scenario = {
        "network": {
            "topology": "switch",
            "rtt": rtt,
            "access": {"rate": access},
            "switch": {"ports": 4, "rate": "250Mbps", "voq_buffer": 3},
        },
        "traffic": [{"kind": "long_lived", "flows_per_output": "eq3.1", "max_window": "61440B"}],
    }
    facts = theory.LinkFacts.from_scenario(scenario)
    wmax_bytes = facts.wmax_pkts * facts.packet_bytes
    assert theory.eq31_flows(facts.rate_bps, facts.rtt_s, wmax_bytes) == facts.flows


@pytest.mark.engine
def test_link_facts_w_max_is_in_whole_segments_as_the_sender_has_them() -> None:
    # 100 KB of window is 104 whole segments of 960 B (the sender never has the 105th in
    # flight), below the 125,000 packets 10 Gb/s access links carry in 100 ms.
    scenario = {
        "network": {"bottleneck": {"rate": "1Gbps"}, "rtt": "100ms"},
        "traffic": [{"kind": "long_lived", "max_window": "100KB"}],
    }
    assert theory.LinkFacts.from_scenario(scenario).wmax_pkts == 104


@pytest.mark.engine
@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("10Gbps", 10e9, "rate"),
        ("100 Mb/s", 100e6, "rate"),
        ("100ms", 0.1, "time"),
        ("12us", 12e-6, "time"),
        ("80KB", 80_000, "bytes"),
        ("64KiB", 65_536, "bytes"),
        ("20MB", 20_000_000, "bytes"),
        ("125pkt", 125, "packets"),
    ],
)
def test_units(text: str, value: float, kind: str) -> None:
    quantity = parse_quantity(text)
    assert quantity.kind == kind
    assert quantity.value == pytest.approx(value, rel=1e-12)


@pytest.mark.engine
def test_a_bad_unit_says_what_the_engine_expected() -> None:
    with pytest.raises(UnitError, match=r"'10Gbs' is not a rate: expected a positive rate such"):
        parse_rate("10Gbs")
    # The engine's reading: whole bytes, and a range's ends in order.
    with pytest.raises(UnitError, match=r"'1.5B' is not a size in bytes: expected a whole number"):
        parse_bytes("1.5B")
    with pytest.raises(UnitError, match=r"'2s..1s' is not a range of times: expected a range"):
        parse_time_range("2s..1s")
    assert parse_time_range("75ms..125ms") == (0.075, 0.125)
    assert math.isclose(parse_time(0.5), 0.5)  # bare numbers are in the base unit
    assert parse_quantity("83", ("packets", "bytes")) == Quantity(83.0, "packets")


# ---- networks of tiny buffers (thesis ch. 5, REPRODUCE.md rows F5 and F6) --------------------


def test_f5_tree_bounds() -> None:
    # Lemma 5.1 is ρ^B and Thm 5.1 n times it, exactly; the buffer for ε is
    # log(n/ε)/log(1/ρ): 6 routers at ρ = 0.9 and 1 % give log 600 / log(10/9) = 60.715.
    assert theory.tree_router_drop_bound(0.9, 10) == pytest.approx(0.9**10, rel=1e-12)
    assert theory.tree_drop_bound(0.9, 10, 6) == pytest.approx(6 * 0.9**10, rel=1e-12)
    assert theory.tree_buffer(0.9, 6, 0.01) == pytest.approx(60.715, abs=5e-4)
    # That buffer brings n·ρ^B to ε exactly: the two are one formula.
    b = theory.tree_buffer(0.7, 4, 0.001)
    assert theory.tree_drop_bound(0.7, b, 4) == pytest.approx(0.001, rel=1e-9)


def test_f6_bjp_bounds() -> None:
    # α = ρe^{1−ρ}: 0.5·e^{0.5} = 0.82436; eq. C.2 per router at Δ = 20 is α^20/(1−α)² = 0.681.
    alpha = theory.bjp_alpha(0.5)
    assert alpha == pytest.approx(0.5 * math.exp(0.5), rel=1e-12)
    assert theory.bjp_router_drop_bound(0.5, 20) == pytest.approx(0.6809, abs=5e-5)
    # Thm 5.2's buffer is B = 2Δ with Δ = 2·log_1/α(n/((1−α)ε)) (eq. C.3), so α^Δ =
    # ((1−α)ε/n)² and the end-to-end bound n·α^Δ/(1−α)² at that buffer is ε²/n, well below
    # ε: the thesis's log carries a factor 2 to spare (exact to float rounding).
    b = theory.bjp_buffer(0.5, 4, 0.01)
    assert theory.bjp_drop_bound(0.5, b / 2, 4) == pytest.approx(0.01**2 / 4, rel=1e-9)
    # Thm 5.3 and its inverse: the θ guaranteed at the buffer asked for θ is θ.
    needed = theory.bjp_tcp_buffer(0.5, 3, 25, 0.9)
    assert theory.bjp_tcp_utilization(0.5, 3, 25, needed) == pytest.approx(0.9, abs=1e-9)
    # Below that buffer the guarantee is smaller, and at a tiny buffer none at all.
    assert theory.bjp_tcp_utilization(0.5, 3, 25, needed / 2) < 0.9
    assert theory.bjp_tcp_utilization(0.8, 3, 25, 40) <= 0


@pytest.mark.parametrize(
    "call",
    [
        lambda: theory.tree_buffer(1.0, 6, 0.01),
        lambda: theory.tree_router_drop_bound(1.2, 10),
        lambda: theory.bjp_alpha(1.0),
        lambda: theory.bjp_buffer(0.0, 4, 0.01),
    ],
)
def test_the_network_bounds_need_a_load_factor_below_1(call) -> None:
    with pytest.raises(ValueError, match="load factor ρ"):
        call()
