"""How long a run will take, estimated before it starts, so that a run of days is announced
up front (and shown with its progress) instead of sitting silent.

Read first: `buflab.engine.memory` (its sibling for memory). The estimate counts the packets
the bottleneck links can carry in the simulated time (their rate × duration ÷ the packet
size, the engine's own reading of the scenario: `_core.link_facts`), and divides by a speed
measured, not derived: the benchmark dumbbell moves 3.9 million bottleneck departures per
wall second on a 2-core machine; 3 million leaves room for the rest of a run's events. A
run whose links are not full takes less: the estimate is an upper bound of the usual case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from buflab.engine import core, scenario_json
from buflab.engine.units import parse_time

DEPARTURES_PER_WALL_SECOND = 3_000_000
# Runs estimated above this many wall seconds are announced, with their progress shown.
ANNOUNCE_ABOVE_S = 30.0


@dataclass
class WallTime:
    """A run's estimate: bottleneck packets, simulated and wall seconds."""

    packets: float
    simulated_s: float
    wall_s: float

    @property
    def announced(self) -> bool:
        return self.wall_s > ANNOUNCE_ABOVE_S


def estimate(normalized: dict[str, Any], facts: dict[str, Any] | None = None) -> WallTime:
    """The estimate for a validated scenario (`buflab.engine.runner.validate`), from its link
    facts (`_core.link_facts`, asked for here unless given)."""
    if facts is None:
        facts = core().link_facts(scenario_json(normalized))
    # Every monitored link as busy as the summary's: an upper bound (a tree's leaves carry a
    # fraction of what its root does; a switch's outputs are its ports).
    links = max(1, int(facts.get("monitored_links", 1)))
    simulated_s = parse_time(normalized["duration"])
    packets = facts["rate_bps"] * simulated_s / (8 * facts["packet_bytes"]) * links
    return WallTime(packets, simulated_s, packets / DEPARTURES_PER_WALL_SECOND)


def announcement(w: WallTime) -> str:
    """One line saying what the run will take."""
    return (
        f"this run simulates {w.simulated_s:,.0f} s: about {w.packets:,.0f} packets through its "
        f"bottleneck, roughly {_duration(w.wall_s)} at {DEPARTURES_PER_WALL_SECOND:,} a second; "
        "Ctrl-C stops it"
    )


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds:,.0f} seconds"
