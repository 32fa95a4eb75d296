"""`buflab emulate`: a scenario on real Linux TCP, through the emulator's exact bottleneck.

Read first: `buflab.engine.emulation` (what it builds and guarantees). This module owns the
command line and its output only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from buflab.cli.common import (
    EXIT_INTERRUPTED,
    BadInput,
    check_out_dir,
    point_option,
    scenario_of,
    set_option,
    vary_option,
)
from buflab.cli.console import buffer_text, stderr, stdout
from buflab.engine.scenario import get_key
from buflab.engine.units import format_percent, format_rate, format_time

_ROWS: list[tuple[str, str, Any]] = [
    ("utilization", "utilization", format_percent),
    ("bottleneck_rate_bps", "bottleneck rate", format_rate),
    ("drop_rate", "drop rate", format_percent),
    ("drops", "drops", lambda v: f"{v:,}"),
    ("arrivals", "arrivals", lambda v: f"{v:,}"),
    ("mean_queue_pkts", "mean queue", lambda v: f"{v:.1f} pkt"),
    ("max_queue_pkts", "max queue", lambda v: f"{v:,} pkt"),
    ("queue_delay_mean_s", "mean queueing delay", format_time),
    ("goodput_bps", "goodput", format_rate),
    ("jain_fairness", "Jain fairness", lambda v: f"{v:.3f}"),
    ("retransmits", "retransmits", lambda v: f"{v:,}"),
    ("timeouts", "timeouts (RTOs)", lambda v: f"{v:,}"),
    ("flows", "flows", lambda v: f"{v:,}"),
    ("cc", "congestion control", str),
    ("exact_buffer", "exact buffer (limit held, every frame accounted for)", str),
    ("overruns", "frames the datapath could not take", lambda v: f"{v:,}"),
    ("late_within_1us", "frames sent within 1 µs of their time", format_percent),
    ("late_within_10us", "frames sent within 10 µs of their time", format_percent),
    ("late_p99_s", "lateness p99", format_time),
    ("read_within_10us", "frames read within 10 µs of arriving", format_percent),
    ("datapath_busy_share", "datapath loop turns that moved a frame", format_percent),
    ("generator_late_p99_s", "traffic generator's timers late, p99", format_time),
    ("access_drops", "frames dropped by access links or class queues", lambda v: f"{v:,}"),
    ("faithful", "faithful (99 % within 10 µs, no overrun, generator on time)", str),
    ("kernel_queue_packets", "packets through kernel queues (qdiscs)", lambda v: f"{v:,}"),
]


def summary_table(summary: dict[str, Any]) -> Table:
    buffer = buffer_text(summary["buffer_pkts"], summary["buffer_bytes"])
    title = (
        f"{summary.get('name', '')} on real TCP: seed {summary['seed']}, buffer "
        f"{buffer}, measured {format_time(summary['measured_s'])} after "
        f"{format_time(summary['window_start_s'])} warm-up"
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
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="Write the result's tables as `buflab run --out` does (summary.json, flows, "
    "timeseries, links and, with monitor.trace_flows, traces as Parquet), the datapath's own "
    "report as datapath.json, and, with monitor.events = true, the bottleneck's event log as "
    "events.parquet.",
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
    RTT where the simulator puts it). Needs root. The dumbbell with every traffic kind (long-lived
    flows, closed-loop users, repeated downloads, open-loop arrivals, UDP), sender machines
    and access classes, any queue discipline and random loss, bumps in the wire; other
    scenarios are refused, naming the key."""
    # start-up time: pandas and the emulator only when the command runs
    from buflab.engine.emulation.runner import emulate as run_emulation
    from buflab.engine.emulation.testbed import remove_stale, require_privileges
    from buflab.engine.pcap import PCAP_FILE
    from buflab.engine.runner import validate
    from buflab.experiments.store import RunStore, linux_engine, store_one

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
    events_to = None
    if get_key(scenario, "monitor.events", False):
        if out is None:
            raise BadInput("monitor.events = true: give --out, where the event log goes")
        events_to = out / "events.parquet"
    pcap_to = out / PCAP_FILE if out is not None and get_key(scenario, "monitor.pcap") else None
    try:
        result = run_emulation(scenario, events_to=events_to, pcap_to=pcap_to)
    except KeyboardInterrupt:
        # The run's processes are stopped and its namespaces removed on the way out.
        click.echo("interrupted: the emulation was stopped and its namespaces removed", err=True)
        sys.exit(EXIT_INTERRUPTED)
    for note in result.emulation["notes"]:
        stderr.print(f"note: {note}")
    if out is not None:
        result.to_dir(out)
        normalized, engine = validate(result.scenario), linux_engine()
        store_one(RunStore(out), normalized, result.summary, command="emulate", engine=engine)
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


@click.command()
@click.argument("file")
@vary_option(
    "A key and its values, as for `buflab sweep` (several: every combination; the first "
    "is the x axis of the figure)."
)
@set_option
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="Write compare.csv and compare.png/svg here, and per point compare_pointK.png/svg: "
    "the two runs' utilization and queue over time and their flows' goodputs; with finite "
    "transfers, compare_transfers.csv (each point's size bins both ways).",
)
def compare(
    file: str, varies: tuple[str, ...], overrides: tuple[str, ...], out: Path | None
) -> None:
    """Run the scenario in FILE in the simulator and on real Linux TCP (`buflab emulate`),
    same seed and so the same flows, and print their summary figures side by side: for each
    point of the --vary values, utilization, drop rate, mean queue and Jain's fairness, each
    way and the difference; with finite transfers (closed-loop users, downloads), also the
    offered load `buflab load` estimates beside the load each way carried, and completion
    times by file size both ways. Needs root; each point takes the scenario's duration in
    real time."""
    # start-up time: pandas, matplotlib and the emulator only when the command runs
    from buflab import __version__
    from buflab.cli.console import progress_bar, transfers_compared_table
    from buflab.engine.emulation.testbed import require_privileges
    from buflab.engine.runner import load_scenario
    from buflab.experiments.compare import (
        FIGURES,
        loads_compared,
        store_compared,
        transfers_compared,
        write_compare,
    )
    from buflab.experiments.compare import compare as run_compare
    from buflab.experiments.sweep import Plan, Vary
    from buflab.plots import Setting, footer_text

    require_privileges()
    tree = load_scenario(scenario_of(file, overrides))
    dims = [Vary.parse(text) for text in varies]
    kept: list = []
    with progress_bar(f"{Path(file).stem}: sim and real") as progress:
        frame = run_compare(tree, dims, progress, keep=kept)
    title = f"{tree.get('name', Path(file).stem)}: simulated vs Linux TCP"
    table = Table(title=title)
    for v in dims:
        table.add_column(v.key)
    for name in FIGURES:
        table.add_column(f"{name} sim / real (diff)", justify="right")
    for _, row in frame.iterrows():
        cells = [str(row[v.key]) for v in dims]
        for name in FIGURES:
            fmt = format_percent if name in ("utilization", "drop_rate") else (lambda x: f"{x:.3g}")
            diff = row[f"diff_{name}"]
            shown = (
                f"{diff * 100:+.2f} pt" if name in ("utilization", "drop_rate") else f"{diff:+.3g}"
            )
            cells.append(f"{fmt(row[f'sim_{name}'])} / {fmt(row[f'real_{name}'])} ({shown})")
        table.add_row(*cells)
    stdout.print(table)
    # Finite transfers: the offered load beside what each way carried, and completion times.
    for point, sim, real in kept:
        bins = transfers_compared(point, sim, real)
        if len(bins) == 0:
            continue
        where = ", ".join(f"{name} = {value}" for name, value in point.items())
        loads = loads_compared(sim, real)
        stdout.print(
            f"{where + ': ' if where else ''}offered load {format_percent(loads['offered'])} "
            f"(`buflab load`: no drops, no queueing); carried {format_percent(loads['sim'])} "
            f"simulated, {format_percent(loads['real'])} on Linux"
        )
        stdout.print(
            transfers_compared_table(bins, f"transfers by file size{': ' + where if where else ''}")
        )
    if not frame["real_faithful"].all():
        stderr.print(
            "note: some emulations were not faithful (fewer than 99 % of frames within 10 µs)"
        )
    if out is not None:
        setting = Setting.of(run.scenario for run in Plan(tree, dims, 1).runs)
        seed = [int(tree.get("seed", 1))]
        footer = footer_text(str(tree.get("name", "")), seed, __version__, setting)
        files = write_compare(frame, dims[0].key if dims else None, out, title, footer, kept)
        store_compared(out, kept)
        stdout.print(f"wrote {', '.join(map(str, files))}")
