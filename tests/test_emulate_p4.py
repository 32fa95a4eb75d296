"""Recipe P4 (NetBump seed §7.5) on real Linux TCP: one 1 Gb/s flow, unpaced, paced by the
delay-based pacer and by the modified token bucket, the downstream port's overflows counted
by the monitor bump's virtual queue, each point one emulation of 4 s (1 s warm-up), in two
lines: offloads off with the recipe's `batch` bump standing for the host's bursts, and TSO on
with the datapath cutting the kernel's super-packets at the access link as a NIC would (the
`batch` bump dropped: the real offload makes the bursts). Six emulations, about a minute.
Root only (CI runs as root); slow suite.

What must hold whatever the machine's timing: the modified token bucket never lets the
monitor overflow (its output is shaped to σ = 4,500 B at ρ = 977.8 Mb/s, below the virtual
queue's 1 Gb/s drain, so that bucket never holds more than σ: network calculus, and the pacer
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
# The TSO-on line: offloads on, super-packets cut at the access link, no stand-in for the host.
TSO_ON = {
    "emulation.offloads": True,
    "emulation.segment": True,
    "network.bump.0": {"name": "host"},
}


def p4_point(pacer: str, tso: bool) -> dict[str, Any]:
    scenario, header = recipes.load("p4")
    overrides = {**header.point_overrides({"pacer": pacer}), "duration": "4s", "warmup": "1s"}
    return buflab.load_scenario(scenario, overrides={**overrides, **(TSO_ON if tso else {})})


def emulated(scenario: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The monitor's row and the run's summary."""
    from buflab.engine.emulation.runner import emulate

    e = emulate(scenario)
    return e.bumps.set_index("name").loc["monitor"].to_dict(), e.summary


@pytest.mark.parametrize("tso", [False, True], ids=["tso_off", "tso_on"])
def test_p4_pacing_cuts_the_downstream_overflows_on_linux(tso: bool) -> None:
    runs = {pacer: emulated(p4_point(pacer, tso)) for pacer in PACERS}
    overflows = {pacer: row["vq_overflows"] for pacer, (row, _) in runs.items()}
    timing = {
        pacer: (s["utilization"], s["late_within_10us"], s["overruns"], s["faithful"])
        for pacer, (_, s) in runs.items()
    }
    assert overflows["modified_token_bucket"] == 0, (overflows, timing)
    assert overflows["unpaced"] > overflows["delay"], (overflows, timing)
    assert all(row["vq_arrivals"] > 10_000 for row, _ in runs.values()), (overflows, timing)
