"""SACK loss recovery (`tcp = "sack"`) as the results report it. The algorithm's own tests are
in Rust (crates/buflab-core/src/tcp/sack/: option.rs, scoreboard.rs and recovery.rs, and the
validation suite); this checks what a user reads."""

from __future__ import annotations

import pytest

import buflab

pytestmark = pytest.mark.engine

# 20 long-lived flows through 100 Mb/s with a 100-packet buffer, 8 % of the 1,250-packet
# bandwidth-delay product: drop-tail takes several packets from a window at a time. About a
# third of a second per run.
SMALL_BUFFER_DUMBBELL = """\
name = "sack-small-buffer"
seed = 1
duration = "60s"
warmup = "20s"

[network]
bottleneck = { rate = "100Mbps", buffer = "100pkt" }
rtt = "75ms..125ms"

[[traffic]]
kind = "long_lived"
flows = 20
tcp = "sack"
start = "0s..5s"
"""


def test_sack_resends_each_drop_once_where_newreno_goes_back_n() -> None:
    sack = buflab.run(SMALL_BUFFER_DUMBBELL)
    newreno = buflab.run(SMALL_BUFFER_DUMBBELL, overrides=["traffic.0.tcp=newreno"])
    assert set(sack.flows["tcp"]) == {"sack"}
    assert set(newreno.flows["tcp"]) == {"newreno"}
    # No timeout fires in the measured 40 s, so every resend answers a drop: the summary (and
    # `buflab run`'s table, two decimals) reads 1.00 although recoveries repair several losses.
    assert sack.summary["timeouts"] == 0
    assert f"{sack.summary['retransmits_per_drop']:.2f}" == "1.00"
    # NewReno on the same network times out (one loss repaired per round trip outlasts the
    # timer) and goes back N over segments the receiver holds: about 2 resends per drop.
    assert newreno.summary["timeouts"] > 0
    assert newreno.summary["retransmits_per_drop"] > 1.5
