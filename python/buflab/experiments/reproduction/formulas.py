"""The formula rows (F1–F4, F7, F8) computed live, each claim beside what buflab's own code
gives, so that the report shows what the engine and the analysis layer compute today, not
numbers typed in.

- F1–F4: the rules of `buflab theory` (`buflab.analysis.theory`) at the list's settings.
- F7 (Thm 2.1): an 8×8 CIOQ switch at speedup 2 with the OQ-emulating scheduler beside an
  output-queued switch, same flows and seed: the most packets at any input against 2B, and
  the two switches' utilization and drops (exact emulation: identical).
- F8 (Thm 6.1, 6.2): the optical FIFO's construction counted by the engine for N = 4 … 1,024
  and several K against the theorems' line counts and lengths, and request sequences through
  it and an electronic FIFO side by side (`buflab optical check`).

Each check returns `Comparison`s, the published number beside the computed one, judged like
a recipe's (`verdict`). The published values that are formulas (2B, 2·log N − 1) are
computed from the theorem's inputs; the bands say how the list rounds.

It must not know how the report is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from buflab.analysis import theory
from buflab.engine.runner import run
from buflab.engine.scenario import apply_overrides, load_scenario
from buflab.experiments import optical
from buflab.experiments.recipes import Published
from buflab.experiments.report import Comparison

NO_INTERVAL = math.nan  # a formula has no seeds


def _number(
    measured: float,
    metric: str,
    value: float,
    band: float = 0.0,
    relation: str = "≈",
    where: str = "",
    source: str = "",
) -> Comparison:
    point = {"": where} if where else {}
    published = Published(point, metric, value, band, source, None, relation)
    return Comparison(published, measured, NO_INTERVAL)


def rule_of_thumb() -> list[Comparison]:
    """F1: RTT·C at 10 Gb/s, 100 ms, 1000 B: exactly 125,000 packets."""
    bdp = theory.bdp_packets(10e9, 0.100, 1000)
    return [
        _number(
            bdp, "buffer_pkts", 125_000, 0, where="10 Gb/s, 100 ms, 1000 B", source="thesis ch. 2"
        )
    ]


def sqrt_n() -> list[Comparison]:
    """F2: RTT·C/√800 ≈ 4,419 packets (the list rounds to a packet)."""
    small = theory.sqrt_n_packets(10e9, 0.100, 1000, 800)
    return [_number(small, "buffer_pkts", 4_419, 0.5, where="N = 800", source="thesis §2.1.4")]


def tiny_buffers() -> list[Comparison]:
    """F3: eq. 2.1 with W = 83, ρ = 0.75, θρ = 0.70: the list's ≈ 37 (eq. 2.1 gives 37.7:
    the list rounds down, so a band of one packet)."""
    tiny = theory.tiny_buffer_for_utilization(83, 0.75, 0.70)
    return [
        _number(
            tiny,
            "buffer_pkts",
            37,
            1.0,
            where="W = 83, ρ = 0.75, θρ = 0.70",
            source="thesis eq. 2.1",
        )
    ]


def poisson() -> list[Comparison]:
    """F4: ρ^B at ρ = 0.8, B = 20: "≈ 1 %", one significant digit, so ± 0.5 point."""
    bound = theory.poisson_drop_bound(0.8, 20)
    return [_number(bound, "drop_rate", 0.01, 0.005, where="ρ = 0.8, B = 20", source="thesis §2.3")]


# F7's switch: the setting of the S2 recipes (8×8, 2.5 Gb/s, M = 100, eq. 3.1's load), output
# buffers of B = 20 packets, 2 s with every flow started in the first half second: long
# enough for thousands of drops at the outputs, short enough to run each time (seconds).
F7_SWITCH = """
name = "F7: CIOQ at speedup 2 emulating an output-queued switch"
seed = 1
duration = "2s"
warmup = "0.5s"
[network]
topology = "switch"
access = { rate = "25Mbps" }
rtt = "75ms..125ms"
[network.switch]
ports = 8
rate = "2.5Gbps"
scheduler = "oq_emulation"
speedup = 2
output_buffer = 20
load = "uniform"
[[traffic]]
kind = "long_lived"
tcp = "reno"
packet = "1000B"
max_window = "61440B"
flows_per_output = "eq3.1"
start = "0s..0.5s"
"""
F7_BUFFER = 20


def cioq_emulation() -> list[Comparison]:
    """F7: the input occupancy stays within 2B, and the emulating switch's utilization and
    drops are the output-queued switch's exactly."""
    cioq = load_scenario(F7_SWITCH)
    oq = apply_overrides(
        cioq, {"network.switch.scheduler": "output_queued", "network.switch.speedup": None}
    )
    emulated, reference = run(cioq).summary, run(oq).summary
    source = "thesis Thm 2.1 (Chuang et al. 1999)"
    return [
        _number(
            emulated["voq_max_pkts"],
            "voq_max_pkts",
            2 * F7_BUFFER,
            relation="<",
            where=f"speedup 2, B = {F7_BUFFER}: most packets at an input vs 2B",
            source=source,
        ),
        _number(
            emulated["utilization"] - reference["utilization"],
            "utilization",
            0.0,
            where="utilization, emulating minus output-queued",
            source=source,
        ),
        _number(
            float(emulated["input_drops"] - reference["drops"]),
            "drops",
            0.0,
            where="drops, emulating minus output-queued",
            source=source,
        ),
    ]


def optical_fifo() -> list[Comparison]:
    """F8: every construction for N = 4 … 1,024 (K = 1, 2, 4, N/2) has the theorems' lines and
    length; N = 64, K = 1 shown with its numbers; request sequences through the optical and
    an electronic FIFO differ in no slot and break no property."""
    counts = optical.counts_table(1024)
    n64 = counts[(counts["N"] == 64) & (counts["K"] == 1)].iloc[0]
    checks = optical.exactness_table((4, 16, 64, 256), (1, 2), 20_000)
    source = "thesis Thm 6.1, 6.2"
    return [
        _number(
            float(n64["lines"]),
            "lines",
            2 * math.log2(64) - 1,
            where="N = 64: lines vs 2·log N − 1",
            source=source,
        ),
        _number(
            float(n64["fiber_slots"]),
            "fiber_slots",
            64 - 1 + (64 - 2) / 2,
            where="N = 64, K = 1: fiber length vs N − 1 + (N − 2K)/(2K) packet times (≈ 1.5N)",
            source=source,
        ),
        _number(
            float((~counts["holds"]).sum()),
            "constructions",
            0.0,
            where=f"{len(counts)} constructions (N = 4 … 1,024, several K) off the theorems",
            source=source,
        ),
        _number(
            float(checks["mismatches"].sum() + checks["violations"].sum()),
            "slots",
            0.0,
            where=f"{int(checks['slots'].sum()):,} slots of {len(checks)} request sequences: "
            "slots unlike a FIFO, and property breaches",
            source=source,
        ),
    ]


CHECKS: dict[str, Callable[[], list[Comparison]]] = {
    "rule_of_thumb": rule_of_thumb,
    "sqrt_n": sqrt_n,
    "tiny_buffers": tiny_buffers,
    "poisson": poisson,
    "cioq_emulation": cioq_emulation,
    "optical_fifo": optical_fifo,
}
