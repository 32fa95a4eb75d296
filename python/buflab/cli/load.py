"""`buflab load`: the offered load of a scenario's traffic, optionally the measured potential
load and the users for a target load.

The numbers are the experiments layer's (`buflab.experiments.load`); this module reads the
options and prints the table. It must not know how a load is computed.
"""

from __future__ import annotations

import math
from typing import Any

import click
from rich.table import Table

from buflab.cli.common import BadInput, scenario_of, set_option
from buflab.cli.console import stdout
from buflab.engine.units import format_percent, format_rate


@click.command(name="load")
@click.argument("file")
@set_option
@click.option(
    "--target",
    type=click.FloatRange(min=0, min_open=True),
    help="A target offered load, e.g. 1.25: print the users that give it.",
)
@click.option(
    "--traffic",
    "traffic_index",
    type=click.IntRange(min=0),
    help="With --target: the closed_loop or repeated_downloads entry whose users to change "
    "[default: the first].",
)
@click.option(
    "--potential",
    is_flag=True,
    help="Also measure the potential load: a run with the bottleneck 100 times faster and an "
    "unlimited buffer.",
)
@click.option(
    "--seeds", type=click.IntRange(min=1), default=1, show_default=True, help="With --potential."
)
def load_command(
    file: str,
    overrides: tuple[str, ...],
    target: float | None,
    traffic_index: int | None,
    potential: bool,
    seeds: int,
) -> None:
    """Offered load of FILE's traffic (its mean rate with no drops and no queueing), per
    traffic entry and in total; optionally the measured potential load and the number of
    users for a target load."""
    # start-up time: the load model imports numpy and pandas only when the command runs
    from buflab.experiments import load

    tree = scenario_of(file, overrides)
    offered = load.offered_load(tree)
    stdout.print(_load_table(offered))
    if len(offered["links"]) > 1:
        stdout.print(_links_table(offered["links"]))
    if offered["capped"]:
        stdout.print("The total is capped by what the server machines' links can carry.")
    if potential:
        measured = load.potential_load(tree, seeds=seeds)
        runs = f"{seeds} runs" if seeds > 1 else "one run"
        link = format_rate(offered["bottleneck_bps"])
        stdout.print(
            f"potential load: {format_percent(measured)} of {link} (measured, {runs} with the "
            "bottleneck 100 times faster and an unlimited buffer)"
        )
    if target is not None:
        if traffic_index is None:
            kinds = [row["kind"] for row in offered["traffic"]]
            found = [i for i, kind in enumerate(kinds) if kind in load.CLOSED_LOOP_KINDS]
            if not found:
                raise BadInput("--target needs a closed_loop or repeated_downloads entry")
            traffic_index = found[0]
        try:
            users = load.users_for_load(tree, target, traffic=traffic_index)
        except ValueError as error:
            raise BadInput(str(error)) from None
        stdout.print(
            f"users for {format_percent(target)} offered load: {users:,} "
            f"(traffic.{traffic_index}, the other entries unchanged)"
        )


def _load_table(offered: dict[str, Any]) -> Any:
    def rate(value: float) -> str:
        return format_rate(value) if math.isfinite(value) else "unbounded"

    def share(value: float) -> str:
        return format_percent(value) if math.isfinite(value) else "unbounded"

    caption = (
        "Mean rates with no drops and no queueing, headers included; active: the fraction of "
        "time a user is downloading; unbounded: long-lived flows that neither the access link "
        "nor the window holds below the bottleneck rate"
    )
    if any(row["link_share"] == 0 for row in offered["traffic"]):
        caption += "; – under rate and load: traffic that does not cross this link"
    on = format_rate(offered["bottleneck_bps"])
    if len(offered["links"]) > 1:
        on = f"{offered['summary_link']} ({on}), the summary link"
    table = Table(title=f"Offered load on {on}", caption=caption)
    table.add_column("traffic", justify="right")
    table.add_column("kind", no_wrap=True)
    for header in ("flows", "each", "active", "rate", "load"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in offered["traffic"]:
        active = row.get("active_fraction")
        crosses = row["link_share"] > 0
        table.add_row(
            str(row["traffic"]),
            row["kind"],
            f"{row['count']:,}",
            rate(row["per_flow_bps"]),
            "–" if active is None else format_percent(active),
            rate(row["rate_bps"]) if crosses else "–",
            share(row["load"]) if crosses else "–",
        )
    table.add_row("total", "", "", "", "", rate(offered["rate_bps"]), share(offered["load"]))
    return table


def _links_table(links: list[dict[str, Any]]) -> Any:
    """Every monitored link's offered load; the largest is the load factor ρ (thesis §5.1)."""
    most = next(row for row in links if row["max"])
    rho = format_percent(most["load"]) if math.isfinite(most["load"]) else "unbounded"
    table = Table(
        title=f"Load factor ρ = {rho}, on {most['name']}",
        caption="Offered load of every link: the traffic crossing it with no drops and no "
        "queueing, headers included; *: the most loaded link, whose load is ρ",
    )
    table.add_column("link", no_wrap=True)
    for header in ("rate", "offered", "load"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in links:
        offered = row["offered_bps"]
        table.add_row(
            f"{row['name']}*" if row["max"] else row["name"],
            format_rate(row["rate_bps"]),
            format_rate(offered) if math.isfinite(offered) else "unbounded",
            format_percent(row["load"]) if math.isfinite(row["load"]) else "unbounded",
        )
    return table
