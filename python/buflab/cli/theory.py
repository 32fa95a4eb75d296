"""`buflab theory`: the buffer sizing rules for a link given by options or by a scenario;
with `--tree` or `--bjp`, the bounds of thesis ch. 5 for a network of tiny-buffer routers.

The rules are the analysis layer's (`buflab.analysis.theory`); this module reads the link's
(or the network's) facts from options or from a scenario (the engine's facts of it, and for a
network its load factor from `buflab.experiments.load`) and prints the table. It must not
know the rules' formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click
from rich.table import Table

from buflab.analysis import theory
from buflab.cli.common import BadInput, scenario_of, set_option
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
@click.option(
    "--tree",
    is_flag=True,
    help="A tree of routers with Poisson ingress (thesis §5.2): Lemma 5.1's ρ^B per router, "
    "Thm 5.1's n·ρ^B end to end and its buffer for --drop. ρ is --load, n --routers.",
)
@click.option(
    "--bjp",
    is_flag=True,
    help="Any network under the Bounded Jitter Policy (thesis §5.3): Thm 5.2's bounds with "
    "Δ = B/2 and its buffer for --drop; with --wmax, Thm 5.3 for TCP (--target θ).",
)
@click.option(
    "--routers",
    type=click.IntRange(min=1),
    help="--tree, --bjp: n, the most routers on a route [default: a FILE's longest route].",
)
@click.option(
    "--drop",
    type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
    default=0.01,
    show_default=True,
    help="--tree, --bjp: the end-to-end drop rate ε to size a buffer for.",
)
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
    tree: bool,
    bjp: bool,
    routers: int | None,
    drop: float,
) -> None:
    """Buffer sizes from the rules of thumb, for a link given by options or by a scenario FILE.

    With FILE, the link (rate, mean RTT, flows, packet size, W_max) is read from the
    scenario; options given explicitly take precedence. With --tree or --bjp, the bounds of
    a network of tiny-buffer routers instead (thesis ch. 5): from FILE its load factor ρ (the
    largest offered load of any link), n (its longest route) and B (its routers' buffer).
    """
    if tree or bjp:
        network = _network_inputs(file, overrides, load, routers, buffer, wmax)
        table, notes = _network_rows(network, "tree" if tree else "bjp", drop, target)
        if table.row_count:
            stdout.print(table)
        for note in notes:
            stdout.print(note)
        return
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


def _network_inputs(
    file: str | None,
    overrides: tuple[str, ...],
    load: float | None,
    routers: int | None,
    buffer: str | None,
    wmax: str | None,
) -> dict[str, Any]:
    """ρ, n, B and W of a network: from the options, else from a scenario FILE."""
    found: dict[str, Any] = {}
    if file is not None or overrides:
        # start-up time: the load model imports numpy
        from buflab.engine import core, scenario_json
        from buflab.experiments.load import offered_load

        tree = scenario_of(file, overrides) if file is not None else load_scenario({}, overrides)
        links = offered_load(tree)["links"]
        if links:
            found["load"] = max(row["load"] for row in links)
        facts = core().traffic_facts(scenario_json(tree))
        found["routers"] = facts["longest_route"] or None
        limit = core().validate(scenario_json(tree))["network"].get("bottleneck", {})
        size = _quantity(str(limit.get("buffer", "")))
        if size is not None and size.kind == "packets":
            found["buffer"] = size.value
        tcp = [e for e in facts["entries"] if "max_window" in e]
        if tcp:
            found["wmax"] = float(tcp[0]["max_window"])
    given = {
        "load": load,
        "routers": routers,
        "buffer": None if buffer is None else _packets("--buffer", buffer),
        "wmax": None if wmax is None else _packets("--wmax", wmax),
    }
    found.update({key: value for key, value in given.items() if value is not None})
    missing = [f"--{key}" for key in ("load", "routers") if found.get(key) is None]
    if missing:
        raise BadInput(f"--tree and --bjp need {' and '.join(missing)} (or a scenario FILE)")
    return found


def _quantity(text: str) -> Any:
    try:
        return parse_quantity(text, ("packets", "bytes"))
    except UnitError:
        return None


def _packets(name: str, text: str) -> float:
    """A count of packets: `20`, `20pkt`."""
    size = _option(name, text, lambda t: parse_quantity(t, ("packets",)))
    return float(size.value)


def _network_rows(
    network: dict[str, Any], kind: str, drop: float, target: float | None
) -> tuple[Any, list[str]]:
    """The bounds of thesis ch. 5 for a tree (`kind` "tree") or any network under BJP."""
    rho, n = float(network["load"]), int(network["routers"])
    b, wmax = network.get("buffer"), network.get("wmax")
    where = "a tree, Poisson ingress" if kind == "tree" else "any network under BJP"
    table = Table(title=f"Networks of tiny buffers (thesis ch. 5): {where}, ρ = {rho:g}, n = {n}")
    table.add_column("theorem")
    table.add_column("formula")
    table.add_column("value", justify="right")
    notes: list[str] = []
    if not 0 < rho < 1:
        # The theorems' queues are stable only below 1: a warning line, not an error.
        theorems = "Lemma 5.1 and Thm 5.1" if kind == "tree" else "Thm 5.2 and 5.3"
        notes.append(
            f"warning: load factor ρ = {rho:g} is not below 1, and {theorems} need ρ < 1 "
            "(some link is offered more than it carries); no bound applies"
        )
        return table, notes
    if kind == "tree":
        if b is not None:
            table.add_row(
                f"Lemma 5.1, each router, B = {b:g} pkt",
                "drop ≤ ρ^B",
                format_percent(theory.tree_router_drop_bound(rho, b)),
            )
            table.add_row(
                "Thm 5.1, end to end", "drop ≤ n·ρ^B", _bound(theory.tree_drop_bound(rho, b, n))
            )
        else:
            notes.append("the drop bounds: give --buffer B.")
        table.add_row(
            f"Thm 5.1, buffer for ε = {drop:g}",
            "B ≥ log_1/ρ(n/ε)",
            f"{theory.tree_buffer(rho, n, drop):,.1f} pkt",
        )
        return table, notes
    table.add_row("α", "ρ·e^(1−ρ)", f"{theory.bjp_alpha(rho):.4f}")
    if b is not None:
        jitter = b // 2
        table.add_row(
            f"eq. C.2, each router, B = {b:g} pkt, Δ = {jitter:g}",
            "drop ≤ α^Δ/(1−α)²",
            _bound(theory.bjp_router_drop_bound(rho, jitter)),
        )
        table.add_row(
            "Thm 5.2, end to end",
            "drop ≤ n·α^Δ/(1−α)²",
            _bound(theory.bjp_drop_bound(rho, jitter, n)),
        )
    else:
        notes.append("the drop bounds: give --buffer B (BJP's Δ = B/2, D = Δ).")
    table.add_row(
        f"Thm 5.2, buffer for ε = {drop:g}",
        "B ≥ 4·log_1/α(n/((1−α)ε))",
        f"{theory.bjp_buffer(rho, n, drop):,.1f} pkt",
    )
    if wmax is None:
        notes.append("Thm 5.3 (TCP): give --wmax W (packets) and --target θ or --buffer B.")
        return table, notes
    if target is not None:
        table.add_row(
            f"Thm 5.3, TCP, W = {wmax:g} pkt, buffer for θ = {target:g}",
            "B ≥ 4·log_1/α(nW/((1−α)(1−θ)))",
            f"{theory.bjp_tcp_buffer(rho, n, wmax, target):,.1f} pkt",
        )
    if b is not None:
        theta = theory.bjp_tcp_utilization(rho, n, wmax, b)
        table.add_row(
            f"Thm 5.3, TCP, W = {wmax:g} pkt, B = {b:g} pkt",
            "θ ≥ 1 − nW·α^(B/4)/(1−α)",
            format_percent(theta) if theta > 0 else "none (≤ 0)",
        )
    return table, notes


def _bound(value: float) -> str:
    """A probability bound; 1 or more bounds nothing."""
    return format_percent(value) if value < 1 else f"none ({value:,.3g} ≥ 1)"
