"""`buflab theory`: the buffer sizing rules for a link given by options or by a scenario.

The rules are the analysis layer's (`buflab.analysis.theory`); this module reads the link's
facts from options or from a scenario (the engine's facts of it) and prints the table. It
must not know the rules' formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click
from rich.table import Table

from buflab.analysis import theory
from buflab.cli.common import BadInput, set_option
from buflab.cli.console import stdout
from buflab.engine.scenario import load_scenario
from buflab.engine.units import (
    UnitError,
    format_bytes,
    format_percent,
    format_rate,
    format_time,
    parse_bytes,
    parse_quantity,
    parse_rate,
    parse_time_range,
)


@click.command(name="theory")
@click.argument("file", required=False)
@set_option
@click.option("--rate", help="Bottleneck rate, e.g. 10Gbps.")
@click.option("--rtt", help="Mean two-way delay, e.g. 100ms (a range a..b uses its mean).")
@click.option("--flows", type=click.IntRange(min=1), help="Long-lived flows N.")
@click.option("--packet", help="Packet size, e.g. 1000B [default: 1000B].")
@click.option(
    "--wmax", help="Largest window W_max for eq. 2.1: packets (83, 83pkt) or bytes (64KB)."
)
@click.option("--load", type=float, help="Peak offered load ρ (0..1), for eq. 2.1 and ρ^B.")
@click.option(
    "--target",
    type=float,
    help="Target link utilization θρ for eq. 2.1, e.g. 0.70 (the thesis's θ is target/load).",
)
@click.option("--buffer", help="A buffer for the Poisson bound ρ^B, e.g. 20pkt.")
def theory_command(
    file: str | None,
    overrides: tuple[str, ...],
    rate: str | None,
    rtt: str | None,
    flows: int | None,
    packet: str | None,
    wmax: str | None,
    load: float | None,
    target: float | None,
    buffer: str | None,
) -> None:
    """Buffer sizes from the rules of thumb, for a link given by options or by a scenario FILE.

    With FILE, the link (rate, mean RTT, flows, packet size, W_max) is read from the
    scenario; options given explicitly take precedence.
    """
    facts = _theory_inputs(file, overrides, rate, rtt, flows, packet, wmax)
    table, notes = _theory_rows(facts, load, target, buffer)
    stdout.print(table)
    for note in notes:
        stdout.print(note)


def _theory_inputs(
    file: str | None,
    overrides: tuple[str, ...],
    rate: str | None,
    rtt: str | None,
    flows: int | None,
    packet: str | None,
    wmax: str | None,
) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    if file is not None or overrides:
        known = theory.LinkFacts.from_scenario(load_scenario(file or {}, overrides))
        facts = dict(vars(known))
    given = {
        "rate_bps": _option("--rate", rate, parse_rate),
        "rtt_s": _option("--rtt", rtt, lambda t: sum(parse_time_range(t)) / 2),
        "flows": flows,
        "packet_bytes": _option("--packet", packet, parse_bytes),
    }
    facts.update({key: value for key, value in given.items() if value is not None})
    facts.setdefault("packet_bytes", 1000.0)
    if wmax is not None:
        quantity = _option("--wmax", wmax, lambda t: parse_quantity(t, ("packets", "bytes")))
        facts["wmax_pkts"] = (
            quantity.value if quantity.kind == "packets" else quantity.value / facts["packet_bytes"]
        )
    missing = [
        name for name, key in (("--rate", "rate_bps"), ("--rtt", "rtt_s")) if key not in facts
    ]
    if missing:
        raise BadInput(f"theory needs {' and '.join(missing)} (or a scenario FILE)")
    return facts


def _option(name: str, text: str | None, parse: Callable[[str], Any]) -> Any:
    if text is None:
        return None
    try:
        return parse(text)
    except UnitError as error:
        raise BadInput(f"{name}: {error}") from None


def _theory_rows(
    facts: dict[str, Any], load: float | None, target: float | None, buffer: str | None
) -> tuple[Any, list[str]]:
    rate, rtt, packet = facts["rate_bps"], facts["rtt_s"], facts["packet_bytes"]
    flows, wmax = facts.get("flows"), facts.get("wmax_pkts")
    table = Table(
        title=f"Buffer sizes for {format_rate(rate)}, RTT {format_time(rtt)}, {packet:g} B packets"
    )
    table.add_column("rule")
    table.add_column("formula")
    table.add_column("buffer", justify="right")
    notes: list[str] = []

    def add(rule: str, formula: str, packets: float) -> None:
        table.add_row(rule, formula, f"{packets:,.1f} pkt = {format_bytes(packets * packet)}")

    try:
        bdp = theory.bdp_packets(rate, rtt, packet)
        add("rule of thumb", "RTT·C", bdp)
        if flows:
            add(f"small buffers, N = {flows:,}", "RTT·C/√N", bdp / math.sqrt(flows))
        else:
            notes.append("RTT·C/√N: give --flows N.")
        tiny = None
        if load is not None and target is not None and wmax is not None and math.isfinite(wmax):
            tiny = theory.tiny_buffer_for_utilization(wmax, load, target)
            add(
                f"tiny buffers, W = {wmax:,.0f} pkt, ρ = {load:g}, θρ = {target:g}",
                "log_{1/ρ}(W²/(2(1−θ))) (eq. 2.1)",
                tiny,
            )
        else:
            notes.append("eq. 2.1: give --wmax, --load and --target.")
        if load is not None:
            size = _option("--buffer", buffer, lambda t: parse_quantity(t, ("packets", "bytes")))
            if size is not None:
                pkts = size.value if size.kind == "packets" else size.value / packet
            else:
                pkts = math.ceil(tiny) if tiny is not None else None
            if pkts is not None:
                bound = theory.poisson_drop_bound(load, pkts)
                table.add_row(
                    f"Poisson arrivals, ρ = {load:g}, B = {pkts:g} pkt",
                    "drop rate ≤ ρ^B",
                    f"drop rate ≤ {format_percent(bound)}",
                )
    except ValueError as error:  # out of a rule's domain, e.g. a load above 1
        raise BadInput(str(error)) from None
    return table, notes
