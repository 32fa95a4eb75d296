"""Per-entry RTTs (newcomer issue, item 9): a traffic entry may draw its flows' RTTs from its
own range or distribution instead of `network.rtt`, as the pacing seed's mixed-RTT experiment
needs (100 ms and 280 ms flows side by side)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import buflab
from buflab.experiments.load import offered_load
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine

MIXED = (
    TINY_SCENARIO
    + """
[[traffic]]
kind = "long_lived"
flows = 4
packet = "1000B"
rtt = "280ms"
"""
)


def test_each_entry_draws_its_own_rtts() -> None:
    """The first entry keeps network.rtt (20–40 ms), the second draws exactly 280 ms."""
    flows = buflab.run(MIXED, duration="2s", warmup="1s").flows
    first, second = flows[flows["traffic"] == 0], flows[flows["traffic"] == 1]
    assert first["rtt_s"].between(0.020, 0.040).all()
    assert (second["rtt_s"] == 0.280).all()


def test_a_choice_of_rtts_draws_each_with_its_weight() -> None:
    """`{ dist = "choice" }`: 200 flows, 100 ms three times as often as 280 ms. The share of
    100-ms flows is binomial (standard error 3.1 % at n = 200): 0.75 ± 0.15 is about 5σ."""
    scenario = buflab.load_scenario(TINY_SCENARIO)
    scenario["traffic"][0]["flows"] = 200
    scenario["traffic"][0]["rtt"] = {
        "dist": "choice", "values": ["100ms", "280ms"], "weights": [3, 1],
    }  # fmt: skip
    flows = buflab.run(scenario, duration="1s", warmup="0.5s").flows
    assert set(flows["rtt_s"].round(6)) == {0.1, 0.28}
    assert abs((flows["rtt_s"] < 0.2).mean() - 0.75) < 0.15


def test_the_rules_of_thumb_use_the_flows_own_rtts() -> None:
    """RTT·C takes the mean RTT of the long-lived flows crossing the link, weighted by their
    number: (4 × 30 ms + 4 × 280 ms) / 8 = 155 ms, not network.rtt's 30 ms."""
    facts = buflab.theory.LinkFacts.from_scenario(buflab.load_scenario(MIXED))
    assert facts.rtt_s == pytest.approx(0.155)
    assert facts.flows == 8


def test_the_offered_load_averages_over_each_entrys_rtts() -> None:
    """A window-limited flow offers max_window per RTT (below its access rate here), averaged
    over its entry's RTTs: for network.rtt's 20–40 ms the mean of 1/RTT over 16 bin
    midpoints, for the second entry exactly 1/280 ms."""
    window_limited = MIXED.replace('packet = "1000B"\n', 'packet = "1000B"\nmax_window = "10KB"\n')
    rows = offered_load(buflab.load_scenario(window_limited))["traffic"]
    near, far = rows[0]["per_flow_bps"], rows[1]["per_flow_bps"]
    midpoints = 0.020 + 0.020 * (np.arange(16) + 0.5) / 16
    assert far / near == pytest.approx((1 / 0.280) / np.mean(1 / midpoints), rel=1e-12)
    assert math.isfinite(near)


@pytest.mark.parametrize(
    ("rtt", "fragment"),
    [
        ("5", "traffic.1.rtt: got 5; expected a time or range"),
        ('{ dist = "choice", values = [] }', "traffic.1.rtt.values"),
        ('{ dist = "choice", values = ["1ms"], weights = [1, 2] }', "traffic.1.rtt.weights"),
        ('{ dist = "sometimes" }', "traffic.1.rtt.dist"),
        ('"1ms"', 'traffic.1.rtt: got "1ms"; expected a smallest RTT of at least twice'),
    ],
)
def test_a_bad_rtt_is_one_line_naming_it(rtt: str, fragment: str) -> None:
    """Each bad `rtt` names the key; one below twice the bottleneck's delay (5 ms here) would
    leave the flows' access links a negative delay."""
    text = MIXED.replace('rtt = "280ms"', f"rtt = {rtt}").replace(
        'access = { rate = "100Mbps" }',
        'access = { rate = "100Mbps" }\nbottleneck.delay = "5ms"',
    )
    text = text.replace('bottleneck = { rate = "10Mbps", buffer = "20pkt" }\n', "").replace(
        'bottleneck.delay = "5ms"',
        'bottleneck = { rate = "10Mbps", buffer = "20pkt", delay = "5ms" }',
    )
    with pytest.raises(buflab.ScenarioError) as error:
        buflab.validate(text)
    assert fragment in str(error.value)
    assert "\n" not in str(error.value)
