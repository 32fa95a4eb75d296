"""Recipe P4 (NetBump seed §7.5) on real Linux TCP, as the emulator runs it (`p4_100m`: P4
scaled by ten in time, 100 Mb/s): one flow, unpaced, paced by the delay-based pacer and by the
modified token bucket, the downstream port's overflows counted by the monitor bump's virtual
queue, each point one emulation of 4 s (1 s warm-up), in the recipe's two host lines:
offloads off with a `batch` bump standing for the host's bursts, and TSO on with the datapath
cutting the kernel's super-packets at the access link as a NIC would. Six emulations, about a
minute. Root only (CI runs as root); slow suite.

What must hold whatever the machine's timing: the modified token bucket never lets the
monitor overflow (its output is shaped to σ = 4,500 B at ρ = 97.78 Mb/s, below the virtual
queue's 100 Mb/s drain, so that bucket never holds more than σ: network calculus, and the pacer
and the monitor decide in ideal time); unpaced overflows more than delay-paced (the seed's
direction). Each failure prints the runs' fidelity figures.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

import buflab
from buflab.experiments import recipes

pytestmark = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (CI runs as root)"),
]

PACERS = ("unpaced", "delay", "modified_token_bucket")


def p4_point(pacer: str, host: str) -> dict[str, Any]:
    scenario, header = recipes.load("p4_100m")
    overrides = header.point_overrides({"pacer": pacer, "host": host})
    return buflab.load_scenario(scenario, overrides={**overrides, "duration": "4s", "warmup": "1s"})


def emulated(scenario: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The monitor's row and the run's summary."""
    from buflab.engine.emulation.runner import emulate

    e = emulate(scenario)
    return e.bumps.set_index("name").loc["monitor"].to_dict(), e.summary


@pytest.mark.parametrize("host", ["batch", "tso"])
def test_p4_pacing_cuts_the_downstream_overflows_on_linux(host: str) -> None:
    runs = {pacer: emulated(p4_point(pacer, host)) for pacer in PACERS}
    overflows = {pacer: row["vq_overflows"] for pacer, (row, _) in runs.items()}
    timing = {
        pacer: (s["utilization"], s["late_within_10us"], s["overruns"], s["faithful"])
        for pacer, (_, s) in runs.items()
    }
    assert overflows["modified_token_bucket"] == 0, (overflows, timing)
    assert overflows["unpaced"] > overflows["delay"], (overflows, timing)
    assert all(row["vq_arrivals"] > 5_000 for row, _ in runs.values()), (overflows, timing)
