"""Bumps in the wire on real Linux TCP: the `[[network.bump]]` entries run in the emulator's
datapath on the simulator's own bump code (`buflab-queue`), and fill the `bumps` table with
the simulator's columns. What they must do is checked in ideal time, from the bottleneck's
event log (the datapath decides every departure from ideal times; how late it then sent
each frame is its fidelity report, measured and printed, never asserted). The bumps' rules
with made-up times are tested in the `buflab-emu` crate (`bumps.rs`, `segment.rs`)."""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import buflab
from buflab.engine.emulation.plan import plan
from buflab.engine.emulation.testbed import namespaces

pytestmark = pytest.mark.engine
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (CI runs as root)")

PACE_BPS = 50_000_000
FRAME = 1514
# A full-size frame's pacing interval at 50 Mb/s: 242.24 µs, in picoseconds.
INTERVAL_PS = FRAME * 8 * 10**12 // PACE_BPS

PACED: dict[str, Any] = {
    "name": "a paced flow and two monitors on real TCP",
    "duration": "2.5s",
    "warmup": "0.5s",
    "network": {
        "rtt": "2ms",
        "bottleneck": {"rate": "100Mbps", "buffer": "100pkt"},
        "access": {"rate": "1Gbps"},
        "bump": [
            # A token bucket one frame deep at 50 Mb/s on the flow's access link.
            {"name": "pacer", "pacer": "token_bucket", "pace_rate": "50Mbps", "depth": f"{FRAME}B"},
            # Two counting virtual queues in front of the bottleneck, two frames deep: one
            # drained faster than the pacer sends, one slower.
            {
                "name": "fast",
                "at": "bottleneck",
                "vqueue": {"rate": "60Mbps", "size": f"{2 * FRAME}B", "action": "count"},
            },
            {
                "name": "slow",
                "at": "bottleneck",
                "vqueue": {"rate": "40Mbps", "size": f"{2 * FRAME}B", "action": "count"},
            },
        ],
    },
    "traffic": [{"kind": "long_lived", "flows": 1, "packet": f"{FRAME}B"}],
}


def leaky_bucket_overflows(
    times_ps: list[int], sizes: list[int], rate_bps: int, size: int, start_ps: int
) -> int:
    """The overflows of a virtual queue of `size` bytes drained at `rate_bps`, fed these
    packets (the vqueue's own exact arithmetic, bits × picoseconds), counted from `start_ps`."""
    backlog, last, overflows = 0, 0, 0
    for t, n in zip(times_ps, sizes, strict=True):
        backlog = max(0, backlog - rate_bps * (t - last))
        last = t
        after = backlog + n * 8 * 10**12
        if after <= size * 8 * 10**12:
            backlog = after
        elif t >= start_ps:
            overflows += 1
    return overflows


def test_bumps_are_planned_not_refused() -> None:
    p = plan(PACED, ["reno", "cubic"])
    assert any("network.bump" in note for note in p.notes)
    # Cutting super-packets needs them.
    with pytest.raises(buflab.ScenarioError, match=r"emulation\.segment: got True"):
        plan({**PACED, "emulation": {"segment": True}}, ["reno"])


@as_root
def test_a_paced_flow_and_counting_virtual_queues_on_real_tcp(tmp_path: Path) -> None:
    """One Linux flow paced at 50 Mb/s by a token bucket at its access link, through two
    counting virtual queues in front of a 100 Mb/s bottleneck (about 4 s in all):
    - the bumps table has the simulator's columns, one row per entry;
    - consecutive full-size frames left the pacer at least one pacing interval (242.24 µs)
      apart, in ideal time (the bottleneck's arrivals are the pacer's departures shifted by
      the same amount), and, kept backlogged by TCP, most of them exactly that interval;
    - the faster virtual queue never overflows: a (σ = one frame, ρ = 50 Mb/s) shaped stream
      never holds more than one frame in a bucket drained at 60 Mb/s (network calculus), so
      any overflow would be a pacing error; the slower one overflows, and exactly as often as
      the same leaky bucket replayed over the event log's arrivals (counts and log agree);
    - the run leaves no namespace behind.
    The real departures differ from the ideal ones by the datapath's lateness, which the
    summary reports (late_within_10us, late_p99_s) and this test does not assert."""
    from buflab.engine.emulation.runner import emulate

    before = set(namespaces())
    scenario = {**PACED, "monitor": {"events": True}}
    e = emulate(scenario, events_to=tmp_path / "events.parquet")
    assert set(namespaces()) == before
    sim = buflab.run(PACED, overrides={"duration": "0.1s", "warmup": "0s"})
    assert list(e.bumps.columns) == list(sim.bumps.columns)
    rows = e.bumps.set_index("name")
    assert list(rows.index) == ["pacer", "fast", "slow"]
    pacer, fast, slow = rows.loc["pacer"], rows.loc["fast"], rows.loc["slow"]
    assert pacer["paced"] > 1000 and pacer["drops"] == 0
    # Never faster than its rate on average (shorter frames take shorter gaps: 5 % below).
    assert pacer["gap_mean_s"] >= 0.95 * INTERVAL_PS * 1e-12, pacer
    assert e.summary["exact_buffer"]

    s = e.summary
    log = pd.read_parquet(tmp_path / "events.parquet")
    arriving = log[log["event"].isin(["enqueue", "drop"])]
    # Data frames only (the vqueues and the pacer let header-only frames pass beside them).
    # Header-only frames here are 66 B (ACK, FIN) or 74 B (the SYN and its options); a data
    # frame is larger, however little it carries (a short segment counts: the vqueue sees it).
    data = arriving[arriving["size"] > 74]
    times, sizes = data["time_ps"].astype("int64").tolist(), data["size"].astype("int64").tolist()
    full = [
        times[k + 1] - times[k] for k in range(len(times) - 1) if sizes[k] == sizes[k + 1] == FRAME
    ]
    assert len(full) > 1000 and min(full) >= INTERVAL_PS, min(full)
    # Kept backlogged by TCP, the pacer sends back to back at its rate: most gaps are exactly
    # one interval. (The mean is not asserted: when the host is busy, Linux leaves the pacer
    # idle now and then, and a 5 % tolerance on the mean failed on a loaded 2-core host.)
    assert statistics.median(full) == INTERVAL_PS, statistics.median(full)

    # Every frame that reached the bottleneck in the window passed the fast monitor in it
    # (no transit between them: a bump at the bottleneck is unbounded) as data, which its
    # virtual queue saw, or as a control frame, which it let by (the datapath's own test of
    # a TCP payload decides which; the log only has sizes).
    start_ps = round(s["window_start_s"] * 1e12)
    in_window = int((arriving["time_ps"] >= start_ps).sum())
    assert fast["vq_arrivals"] + fast["control"] == in_window, (fast, in_window)
    assert fast["vq_overflows"] == 0
    replayed = leaky_bucket_overflows(times, sizes, 40_000_000, 2 * FRAME, start_ps)
    assert slow["vq_overflows"] > 100 and slow["vq_overflows"] == replayed, (slow, replayed)
