"""`buflab emulate`: a scenario on real Linux TCP, through the emulator's exact bottleneck.

Read first: `buflab.engine.emulation` (what it builds and guarantees). This module owns the
command line and its output only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from buflab.cli.common import point_option, scenario_of, set_option
from buflab.cli.console import stderr, stdout
from buflab.engine.units import format_percent, format_rate, format_time

_ROWS: list[tuple[str, str, Any]] = [
    ("utilization", "utilization", format_percent),
    ("bottleneck_rate_bps", "bottleneck rate", format_rate),
    ("drop_rate", "drop rate", format_percent),
    ("drops", "drops", lambda v: f"{v:,}"),
    ("arrivals", "arrivals", lambda v: f"{v:,}"),
    ("mean_queue_pkts", "mean queue", lambda v: f"{v:.1f} pkt"),
    ("max_queue_pkts", "max queue", lambda v: f"{v:,} pkt"),
    ("jain_fairness", "Jain fairness", lambda v: f"{v:.3f}"),
    ("retransmits", "retransmits (whole run)", lambda v: f"{v:,}"),
    ("flows", "flows", lambda v: f"{v:,}"),
    ("cc", "congestion control", str),
    ("exact_buffer", "exact buffer (limit held, every frame accounted for)", str),
    ("overruns", "frames the datapath could not take", lambda v: f"{v:,}"),
    ("late_within_1us", "frames sent within 1 µs of their time", format_percent),
    ("late_within_10us", "frames sent within 10 µs of their time", format_percent),
    ("late_p99_s", "lateness p99", format_time),
    ("faithful", "faithful (99 % within 10 µs, no overrun)", str),
]


def summary_table(summary: dict[str, Any]) -> Table:
    title = (
        f"{summary.get('name', '')} on real TCP: seed {summary['seed']}, buffer "
        f"{summary['buffer']}, measured {format_time(summary['measured_s'])} after "
        f"{format_time(summary['warmup_s'])} warm-up"
    )
    table = Table(title=title, show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, label, formatter in _ROWS:
        table.add_row(label, formatter(summary[key]))
    return table


@click.command()
@click.argument("file", required=False)
@set_option
@point_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write summary.json, flows.parquet and datapath.json to this directory.",
)
@click.option(
    "--cleanup",
    is_flag=True,
    help="Only remove the namespaces that killed runs left behind, and exit.",
)
def emulate(
    file: str | None,
    overrides: tuple[str, ...],
    points: tuple[str, ...],
    as_json: bool,
    out: Path | None,
    cleanup: bool,
) -> None:
    """Run the scenario in FILE on real Linux TCP: hosts in network namespaces, the bottleneck
    in buflab's own datapath (an exact buffer, the simulator's discipline code, each flow's
    RTT in delay lines). Needs root. For now: the dumbbell with long-lived flows and a
    drop-tail bottleneck; other scenarios are refused, naming the key."""
    # start-up time: pandas and the emulator only when the command runs
    from buflab.engine.emulation.runner import emulate as run_emulation
    from buflab.engine.emulation.testbed import remove_stale, require_privileges

    require_privileges()
    if cleanup:
        removed = remove_stale()
        stdout.print(
            f"removed {len(removed)} stale namespaces"
            + (f": {', '.join(removed)}" if removed else "")
        )
        return
    if file is None:
        raise click.UsageError("FILE is missing (or give --cleanup)")
    scenario = scenario_of(file, overrides, points)
    result = run_emulation(scenario)
    for note in result.notes:
        stderr.print(f"note: {note}")
    if out is not None:
        result.to_dir(out)
    if as_json:
        click.echo(json.dumps(result.summary))
        return
    stdout.print(summary_table(result.summary))
    if not result.summary["faithful"]:
        stderr.print(
            "note: fewer than 99 % of frames left within 10 µs of their time (or the datapath "
            "missed frames): timing on this machine is noisy; see the fidelity rows"
        )
    if out is not None:
        stdout.print(f"results in {out}/")
