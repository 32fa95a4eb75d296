"""`buflab run`, and the commands that read finished runs: `analyze` (the queue rebuilt from
the event log) and `traces` (per-flow TCP traces).

It reads options and prints: the run is the engine layer's (`buflab.engine.runner`), the
analyses and figures those of the analysis and plots layers, the tables the console's. It
must not know how any of them is computed.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from buflab import __version__
from buflab.analysis.theory import LinkFacts, aimd_convergence_s
from buflab.cli.common import (
    EXIT_INTERRUPTED,
    BadInput,
    check_out_dir,
    point_option,
    scenario_of,
    set_option,
    timing_notes,
)
from buflab.cli.console import (
    analysis_table,
    links_table,
    ports_table,
    rebuild_table,
    simulated_time_bar,
    stderr,
    stdout,
    summary_table,
    traces_table,
    transfers_table,
)
from buflab.engine.scenario import get_key
from buflab.engine.units import format_time, parse_time, parse_time_range

if TYPE_CHECKING:  # start-up time: the result module imports pandas
    from buflab.engine.result import Result


@click.command()
@click.argument("file")
@set_option
@point_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="Write results to this directory (with monitor.events = true, the event log streams "
    "into it as the run goes; with traced flows, traces.png shows them; with QCN reaction "
    "points, rates.png their rates).",
)
@click.option("--csv", is_flag=True, help="With --out: also write the tables as CSV.")
def run(
    file: str,
    overrides: tuple[str, ...],
    points: tuple[str, ...],
    as_json: bool,
    out: Path | None,
    csv: bool,
) -> None:
    """Run the scenario in FILE once and print its summary (and, on a parking lot, every hop;
    on a switch, every port; with closed-loop traffic, completion times and throughput by file
    size). FILE may name a shipped recipe (t6); it runs the recipe's base point, or the one
    --point picks."""
    # start-up time: results are pandas tables, imported only when a run is made
    from buflab.analysis.transfers import by_size_bin
    from buflab.engine.pcap import PCAP_FILE, write_simulated
    from buflab.engine.runner import prepare
    from buflab.engine.runner import run as run_scenario
    from buflab.engine.wall_time import announcement, estimate
    from buflab.experiments.store import RunStore, store_one

    # The event log streams straight into OUT, so a long run's log never sits in memory.
    events_to = out / "events.parquet" if out is not None else None
    scenario = scenario_of(file, overrides, points)
    if not get_key(scenario, "monitor.events", False):
        events_to = None
    elif events_to is None:
        # Without a destination the log would be kept in memory and thrown away (gigabytes
        # for a long fast run).
        raise BadInput("monitor.events = true: give --out, where the event log goes")
    # A store in OUT that this buflab cannot extend is refused before the run, not after it.
    store = RunStore(out) if out is not None else None
    # A long run says so up front, with the time it should take, and shows its progress.
    # The scenario is read and validated once (seconds on a file of 100,000 traffic entries).
    ready = prepare(scenario)
    wall = estimate(ready.normalized, ready.link_facts)
    if note := warmup_note(ready.normalized, LinkFacts(**ready.link_facts)):
        stderr.print(f"note: {note}")
    for note in timing_notes(ready.normalized):
        stderr.print(f"note: {note}")
    try:
        if wall.announced:
            stderr.print(f"note: {announcement(wall)}")
            with simulated_time_bar(wall.simulated_s) as update:
                result = run_scenario(ready, events_to=events_to, progress=update)
        else:
            result = run_scenario(ready, events_to=events_to)
    except KeyboardInterrupt:
        # Nothing half-done is written: a streamed event log stays `events.parquet.partial`.
        click.echo("interrupted: the run was stopped; no results were written", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if out is not None and store is not None:
        result.to_dir(out, csv=csv)
        store_one(store, ready.normalized, result.summary)
        if ready.normalized["monitor"]["pcap"]:
            # The capture is the event log's arrivals, with synthesized headers.
            captured = write_simulated(
                out / "events.parquet", out / PCAP_FILE, result.flows, ready.normalized["traffic"]
            )
            stdout.print(f"{captured:,} packets captured in {out / PCAP_FILE}")
        if len(result.traces) > 0 or len(result.rates) > 0:
            # start-up time: matplotlib only when there is a figure to draw
            from buflab.plots import Setting, footer_text
            from buflab.plots.rates import write_rate_figure
            from buflab.plots.traces import write_trace_figure

            summary = result.summary
            setting = Setting.of([ready.normalized])
            footer = footer_text(str(summary["name"]), [int(summary["seed"])], __version__, setting)
            warmup_s = float(summary["warmup_s"])
            write_trace_figure({"": result.traces}, out, footer, warmup_s=warmup_s)
            end_s = float(summary["duration_s"])
            bottleneck_bps = float(summary["bottleneck_rate_bps"])
            write_rate_figure(result.rates, end_s, bottleneck_bps, out, footer, warmup_s)
    if as_json:
        click.echo(json.dumps(result.summary))
        return
    stdout.print(summary_table(result.summary))
    # One monitored link is the summary's own; several (a parking lot's hops) get a table, and
    # a switch's ports one with their inputs beside their outputs.
    if len(result.ports) > 0:
        summary_port = get_key(result.scenario, "network.switch.summary_port", 1)
        stdout.print(ports_table(result.ports, summary_port))
    elif len(result.links) > 1:
        stdout.print(links_table(result.links, summary_row(result)))
    if len(result.transfers) > 0:
        stdout.print(transfers_table(by_size_bin(result.transfers)))
    if out is not None:
        stdout.print(f"results in {out}/")


def summary_row(result: Result) -> int:
    """The row (hop, from 1) of the links table that the summary describes: a parking lot's
    `network.summary_hop`, a graph's `network.summary_link` (the first monitored link by
    default), or the one link."""
    name = get_key(result.scenario, "network.summary_link", None)
    if name is not None:
        rows = result.links[result.links["name"] == name]
        return int(rows["hop"].iloc[0]) if len(rows) else 1
    return int(get_key(result.scenario, "network.summary_hop", 1))


def warmup_note(normalized: dict[str, Any], facts: LinkFacts | None = None) -> str | None:
    """A warning when the warm-up is shorter than the time long-lived flows need to share
    the link (`theory.aimd_convergence_s`): fairness and utilization measured before then
    still carry the start (a 10 Gb/s run of 2,000 flows with 10 s of warm-up gave Jain 0.49)."""
    facts = LinkFacts.from_scenario(normalized) if facts is None else facts
    need = aimd_convergence_s(
        facts.rate_bps, facts.rtt_s, facts.packet_bytes, facts.flows, facts.wmax_pkts
    )
    warmup = parse_time(normalized["warmup"])
    if facts.flows == 0 or warmup >= need:
        return None
    return (
        f"warm-up {format_time(warmup)} is shorter than the {format_time(need)} the "
        f"{facts.flows:,} long-lived flows need to settle to a fair share (five sawtooth "
        "cycles of their fair window): fairness and utilization may still show their start; "
        f"consider --set warmup={math.ceil(need)}s"
    )


def _run_dirs(command: Callable[..., None]) -> Callable[..., None]:
    """The RUN_DIR... arguments and their --label, of the commands that read finished runs."""
    command = click.option(
        "--label",
        "labels",
        multiple=True,
        help="A name for each RUN_DIR in the table and plots, in order [default: the directory].",
    )(command)
    return click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")(command)


@click.command()
@_run_dirs
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="Where to write analysis.png/.svg and cdfs.csv [default: the RUN_DIR, or "
    "out/analysis for several].",
)
@click.option(
    "--band",
    metavar="LO..HI",
    help="Also print the share of inter-arrival times in this range, e.g. 10us..13us (the "
    "NetBump seed's measure of pacing).",
)
def analyze(
    runs: tuple[str, ...], labels: tuple[str, ...], out: Path | None, band: str | None
) -> None:
    """Rebuild the recorded queue from the event log of each RUN_DIR (a `buflab run --out`
    directory of a scenario with monitor.events = true: the bottleneck's, or a bump's with
    monitor.events_at) and check it against the run's summary (or the bump's row); print the
    inter-arrival, burst and queueing-delay distributions and plot their CDFs, the runs
    overlaid."""
    # start-up time: pandas and matplotlib only when the command runs
    import pandas as pd

    from buflab.analysis.queue import analyze as analyze_log
    from buflab.analysis.queue import cdf_frame, check_summary
    from buflab.plots import Setting, footer_text
    from buflab.plots.queue import save_analysis_figure

    names = _run_names(runs, labels)
    gaps = parse_time_range(band) if band is not None else None
    analyses = {}
    for name, run in zip(names, runs, strict=True):
        try:
            analysis = analyses[name] = analyze_log(run)
        except FileNotFoundError as error:
            raise BadInput(error.strerror) from None
        summary_file = Path(run) / "summary.json"
        if summary_file.exists():
            links_file = Path(run) / "links.parquet"
            links = pd.read_parquet(links_file) if links_file.exists() else None
            bumps_file = Path(run) / "bumps.parquet"
            bumps = pd.read_parquet(bumps_file) if bumps_file.exists() else None
            summary = json.loads(summary_file.read_text())
            checks = check_summary(analysis, summary, links, bumps)
            stdout.print(rebuild_table(checks, f"{name}: the queue rebuilt from its event log"))
    stdout.print(analysis_table(analyses, gaps))
    out = out or (
        Path(runs[0]) if len(runs) == 1 and Path(runs[0]).is_dir() else Path("out/analysis")
    )
    out.mkdir(parents=True, exist_ok=True)
    cdf_frame(analyses).to_csv(out / "cdfs.csv", index=False)
    facts = [a.facts for a in analyses.values()]
    scenarios = ", ".join(dict.fromkeys(f.scenario for f in facts))
    read = [Path(run) / "scenario.json" for run in runs]
    setting = Setting.of([json.loads(p.read_text()) for p in read if p.exists()])
    footer = footer_text(scenarios, sorted({f.seed for f in facts}), __version__, setting)
    paths = save_analysis_figure(analyses, out, footer)
    stdout.print(f"CDFs in {out / 'cdfs.csv'}; plots {', '.join(str(p) for p in paths)}")


def _run_names(runs: tuple[str, ...], labels: tuple[str, ...]) -> list[str]:
    """The name of each RUN_DIR: its --label, or the directory's name; unique."""
    if labels and len(labels) != len(runs):
        raise BadInput(
            f"--label: got {len(labels)} labels for {len(runs)} RUN_DIRs; expected one each"
        )
    names = list(labels) or [Path(run).name or str(run) for run in runs]
    if len(set(names)) != len(names):
        raise BadInput(f"two runs share a name ({', '.join(names)}); name them with --label")
    return names


@click.command()
@_run_dirs
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="Where to write traces.png/.svg [default: the RUN_DIR, or out/traces for several].",
)
def traces(runs: tuple[str, ...], labels: tuple[str, ...], out: Path | None) -> None:
    """Overlay the per-flow TCP traces of each RUN_DIR (a `buflab run --out` directory of a
    scenario with monitor.trace_flows): congestion window, cumulative throughput, Jain's
    fairness index and smoothed RTT over time, e.g. paced against unpaced (the pacing study's
    plots). Prints per run the traced flows' bytes, fairness and the first drop."""
    # start-up time: pandas and matplotlib only when the command runs
    import pandas as pd

    from buflab.plots import Setting, footer_text
    from buflab.plots.traces import write_trace_figure

    names = _run_names(runs, labels)
    frames, summaries, scenarios_read = {}, {}, []
    for name, run in zip(names, runs, strict=True):
        path = Path(run) / "traces.parquet"
        if not Path(run).is_dir():
            raise BadInput(f"{run}: no such run directory; expected one written by `run --out`")
        if not path.exists():
            raise BadInput(
                f"{path}: no traces; run the scenario with monitor.trace_flows set and --out"
            )
        frames[name] = pd.read_parquet(path)
        summary_file = Path(run) / "summary.json"
        summaries[name] = json.loads(summary_file.read_text()) if summary_file.exists() else {}
        scenario_file = Path(run) / "scenario.json"
        if scenario_file.exists():
            scenarios_read.append(json.loads(scenario_file.read_text()))
    stdout.print(traces_table(frames, summaries))
    out = out or (
        Path(runs[0]) if len(runs) == 1 and Path(runs[0]).is_dir() else Path("out/traces")
    )
    out.mkdir(parents=True, exist_ok=True)
    scenarios = ", ".join(dict.fromkeys(str(s.get("name", "?")) for s in summaries.values()))
    seeds = sorted({int(s["seed"]) for s in summaries.values() if "seed" in s})
    setting = Setting.of(scenarios_read) if scenarios_read else None
    warmups = {float(s["warmup_s"]) for s in summaries.values() if "warmup_s" in s}
    # One warm-up shared by every run is shaded; runs that differ are left unshaded.
    warmup_s = warmups.pop() if len(warmups) == 1 else 0.0
    footer = footer_text(scenarios, seeds, __version__, setting)
    paths = write_trace_figure(frames, out, footer, warmup_s=warmup_s)
    stdout.print(f"plots {', '.join(str(p) for p in paths)}")
