"""The smallest buffer that meets a target utilization, found by bisection.

The thesis's testbed had an automatic tool for this (ch. 4.3): binary search over the buffer
size, probing each size and keeping the smaller half when the target was met. `minimum_buffer`
does the same offline: each probe is `runs` seeds of the scenario with the buffer set to a
whole number of packets, and it passes when their mean utilization reaches the target.

Bisection assumes utilization grows with the buffer. It does not always: seeds differ, and
synchronisation can make a larger buffer do worse. Every probe is kept, and any pair where the
larger buffer's mean utilization is below the smaller one's by more than their 95 %
intervals together is reported as a contradiction rather than hidden. (Bisection itself never
sees a larger buffer fail where a smaller one passed: it only probes between the largest
failure and the smallest success so far, so the means are the only witness.)

Probes are sweep runs written to OUT/runs, so an interrupted search resumes where it stopped
and a repeated one costs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from buflab import theory
from buflab.engine import ScenarioError, core, scenario_json
from buflab.scenario import Scenario
from buflab.stats import mean_ci
from buflab.sweep import Plan, Vary, run_sweep

DEFAULT_KEY = "network.bottleneck.buffer"
# Doubling past RTT·C this many times before giving up: 16·RTT·C holds any TCP window the
# rule of thumb is about, so a target missed there is out of reach of buffering.
MAX_DOUBLINGS = 4


@dataclass(frozen=True)
class Probe:
    """One buffer size tried: the mean utilization over its seeds and whether it passed."""

    buffer_pkts: int
    utilization: float
    ci95: float
    passed: bool


@dataclass
class Sizing:
    """The outcome of a search: the minimum buffer (None if even the largest probe failed),
    every probe in the order run, and the probes that contradict monotonicity."""

    target: float
    buffer_pkts: int | None
    probes: list[Probe] = field(default_factory=list)

    @property
    def contradictions(self) -> list[tuple[Probe, Probe]]:
        """(smaller, larger) pairs whose utilization fell as the buffer grew, by more than
        the two 95 % intervals together (any fall, with one seed per probe)."""
        return [
            (small, large)
            for small in self.probes
            for large in self.probes
            if small.buffer_pkts < large.buffer_pkts
            and small.utilization - large.utilization > _margin(small, large)
        ]


def _margin(a: Probe, b: Probe) -> float:
    return math.hypot(*(0.0 if math.isnan(p.ci95) else p.ci95 for p in (a, b)))


def minimum_buffer(
    scenario: Scenario,
    target: float,
    out: str | Path,
    *,
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    on_probe: Callable[[Probe], None] | None = None,
) -> Sizing:
    """Bisect over whole packets for the smallest `key` buffer with mean utilization ≥ target.

    The search starts from `high` packets (default RTT·C of the scenario's bottleneck, rounded
    up), doubling it up to four times until it passes; a buffer of 0 packets is taken to
    fail, so the answer is at least 1.
    """
    if not 0 < target <= 1:
        raise ScenarioError(f"--target-utilization {target}: expected a fraction in (0, 1]")
    if high is None:
        facts = theory.LinkFacts.from_scenario(core().validate(scenario_json(scenario)))
        high = math.ceil(theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes))
    if high < 1:
        raise ScenarioError(f"upper buffer {high}: expected at least 1 packet")
    sizing = Sizing(target, None)

    def probe(buffer_pkts: int) -> bool:
        plan = Plan(scenario, [Vary(key, (f"{buffer_pkts}pkt",))], runs)
        utilizations = run_sweep(plan, out, jobs).results["utilization"].astype(float).tolist()
        mean, ci95 = mean_ci(utilizations)
        result = Probe(buffer_pkts, mean, ci95, mean >= target)
        sizing.probes.append(result)
        if on_probe:
            on_probe(result)
        return result.passed

    low = 0  # the largest buffer known to miss (a buffer of 0 packets is taken to miss)
    for _ in range(MAX_DOUBLINGS + 1):
        if probe(high):
            break
        low, high = high, high * 2
    else:
        return sizing  # even the largest buffer misses the target
    while high - low > 1:
        middle = (low + high) // 2
        if probe(middle):
            high = middle
        else:
            low = middle
    sizing.buffer_pkts = high
    return sizing
