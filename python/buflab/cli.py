"""The `buflab` command: run, sweep, theory, size, autosize, load, reproduce, analyze, docs.

Bad input never ends in a traceback: scenario errors (from the engine or from --set),
TOML syntax errors, missing files and bad unit strings print one line, `error: …`, and
exit with status 2. Ctrl-C during a sweep prints how many runs are kept and exits with 130.
"""

from __future__ import annotations

import json
import math
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from buflab import __version__
from buflab.analysis import theory
from buflab.engine import EngineMissing, ScenarioError, core
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

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class BadInput(click.ClickException):
    """Printed as one line, `error: …`, exit status 2."""

    exit_code = EXIT_BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


# Exceptions that mean "the input is wrong", as opposed to a bug in buflab.
_BAD_INPUT = (ScenarioError, UnitError, EngineMissing)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _BAD_INPUT as error:
            raise BadInput(str(error)) from None
        except tomllib.TOMLDecodeError as error:
            raise BadInput(f"invalid TOML: {error}") from None
        except FileNotFoundError as error:
            raise BadInput(f"no such file: {error.filename}") from None


set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario key, e.g. network.bottleneck.buffer=50pkt or traffic.0.flows=10 "
    "(repeatable).",
)
jobs_option = click.option(
    "--jobs", "-j", type=click.IntRange(min=1), help="Parallel runs [default: all cores]."
)
runs_option = click.option(
    "--runs", "-r", type=click.IntRange(min=1), help="Seeds per point: seed, seed+1, …"
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="buflab")
def cli() -> None:
    """buflab: packet-level simulation of router buffers."""


@cli.command()
@click.argument("file")
@set_option
@click.option(
    "--point",
    "points",
    multiple=True,
    metavar="NAME=VALUE",
    help="For a recipe (a file or a shipped name): one point of its sweep, a varied key's value "
    "or a case's name, e.g. --point access='200 Mb/s access' (repeatable; --set applies after).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write results to this directory (with monitor.events = true, the event log streams "
    "into it as the run goes; with traced flows, traces.png shows them).",
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
    from buflab.analysis.transfers import by_size_bin
    from buflab.console import links_table, ports_table, stdout, summary_table, transfers_table
    from buflab.engine.runner import run as run_scenario
    from buflab.engine.scenario import get_key

    # The event log streams straight into OUT, so a long run's log never sits in memory.
    events_to = out / "events.parquet" if out is not None else None
    scenario = _scenario_of(file, overrides, points)
    if not get_key(scenario, "monitor.events", False):
        events_to = None
    result = run_scenario(scenario, events_to=events_to)
    if out is not None:
        result.to_dir(out, csv=csv)
        if len(result.traces) > 0:
            from buflab.plots import footer_text
            from buflab.plots.traces import write_trace_figure

            summary = result.summary
            footer = footer_text(str(summary["name"]), [int(summary["seed"])], __version__)
            write_trace_figure({str(summary["name"]): result.traces}, out, footer)
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
        summary_hop = get_key(result.scenario, "network.summary_hop", 1)
        stdout.print(links_table(result.links, summary_hop))
    if len(result.transfers) > 0:
        stdout.print(transfers_table(by_size_bin(result.transfers)))
    if out is not None:
        stdout.print(f"results in {out}/")


def _run_dirs(command: Callable[..., None]) -> Callable[..., None]:
    """The RUN_DIR... arguments and their --label, of the commands that read finished runs."""
    command = click.option(
        "--label",
        "labels",
        multiple=True,
        help="A name for each RUN_DIR in the table and plots, in order [default: the directory].",
    )(command)
    return click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")(command)


@cli.command()
@_run_dirs
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Where to write analysis.png/.svg and cdfs.csv [default: the RUN_DIR, or "
    "out/analysis for several].",
)
def analyze(runs: tuple[str, ...], labels: tuple[str, ...], out: Path | None) -> None:
    """Rebuild the bottleneck queue from the event log of each RUN_DIR (a `buflab run --out`
    directory of a scenario with monitor.events = true) and check it against the run's summary;
    print the inter-arrival, burst and queueing-delay distributions and plot their CDFs, the
    runs overlaid."""
    import pandas as pd

    from buflab.analysis.queue import analyze as analyze_log
    from buflab.analysis.queue import cdf_frame, check_summary
    from buflab.console import analysis_table, rebuild_table, stdout
    from buflab.plots import footer_text
    from buflab.plots.queue import save_analysis_figure

    names = _run_names(runs, labels)
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
            checks = check_summary(analysis, json.loads(summary_file.read_text()), links)
            stdout.print(rebuild_table(checks, f"{name}: the queue rebuilt from its event log"))
    stdout.print(analysis_table(analyses))
    out = out or (
        Path(runs[0]) if len(runs) == 1 and Path(runs[0]).is_dir() else Path("out/analysis")
    )
    out.mkdir(parents=True, exist_ok=True)
    cdf_frame(analyses).to_csv(out / "cdfs.csv", index=False)
    facts = [a.facts for a in analyses.values()]
    scenarios = ", ".join(dict.fromkeys(f.scenario for f in facts))
    footer = footer_text(scenarios, sorted({f.seed for f in facts}), __version__)
    paths = save_analysis_figure(analyses, out, footer)
    stdout.print(f"CDFs in {out / 'cdfs.csv'}; plots {', '.join(str(p) for p in paths)}")


def _run_names(runs: tuple[str, ...], labels: tuple[str, ...]) -> list[str]:
    """The name of each RUN_DIR: its --label, or the directory's name; unique."""
    if labels and len(labels) != len(runs):
        raise click.UsageError(f"--label given {len(labels)} times for {len(runs)} RUN_DIRs")
    names = list(labels) or [Path(run).name or str(run) for run in runs]
    if len(set(names)) != len(names):
        raise click.UsageError(
            f"two runs share a name ({', '.join(names)}); name them with --label"
        )
    return names


@cli.command()
@_run_dirs
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Where to write traces.png/.svg [default: the RUN_DIR, or out/traces for several].",
)
def traces(runs: tuple[str, ...], labels: tuple[str, ...], out: Path | None) -> None:
    """Overlay the per-flow TCP traces of each RUN_DIR (a `buflab run --out` directory of a
    scenario with monitor.trace_flows): congestion window, cumulative throughput, Jain's
    fairness index and smoothed RTT over time, e.g. paced against unpaced (the pacing study's
    plots). Prints per run the traced flows' bytes, fairness and the first drop."""
    import pandas as pd

    from buflab.console import stdout, traces_table
    from buflab.plots import footer_text
    from buflab.plots.traces import write_trace_figure

    names = _run_names(runs, labels)
    frames, summaries = {}, {}
    for name, run in zip(names, runs, strict=True):
        path = Path(run) / "traces.parquet"
        if not path.exists():
            raise BadInput(
                f"{path}: no traces; run the scenario with monitor.trace_flows set and --out"
            )
        frames[name] = pd.read_parquet(path)
        summary_file = Path(run) / "summary.json"
        summaries[name] = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    stdout.print(traces_table(frames, summaries))
    out = out or (
        Path(runs[0]) if len(runs) == 1 and Path(runs[0]).is_dir() else Path("out/traces")
    )
    out.mkdir(parents=True, exist_ok=True)
    scenarios = ", ".join(dict.fromkeys(str(s.get("name", "?")) for s in summaries.values()))
    seeds = sorted({int(s["seed"]) for s in summaries.values() if "seed" in s})
    paths = write_trace_figure(frames, out, footer_text(scenarios, seeds, __version__))
    stdout.print(f"plots {', '.join(str(p) for p in paths)}")


def _scenario_of(
    file: str, overrides: tuple[str, ...], points: tuple[str, ...] = ()
) -> dict[str, Any]:
    """FILE's scenario (a path, or a shipped recipe's name) with overrides; a recipe's
    `[sweep]` header is left out, since it describes a sweep of the scenario, not the scenario
    (so `buflab run t1.toml` runs its base point and `buflab load t1.toml` reports that point's
    load), except for the `points` picked from it, applied before the overrides."""
    from buflab.engine.scenario import apply_overrides, parse_value
    from buflab.experiments import recipes

    scenario, header = recipes.load(file)
    point = {}
    for text in points:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise ScenarioError(f"--point {text!r}: expected NAME=VALUE, e.g. access=slow")
        point[name.strip()] = parse_value(value.strip())
    scenario = apply_overrides(scenario, header.point_overrides(point))
    return apply_overrides(scenario, list(overrides))


@cli.command()
@click.argument("file")
@click.option(
    "--vary",
    "varies",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="A key and its values; several --vary give every combination. The first is the "
    "x axis of the plot. Adds to (or replaces) the file's [sweep.vary].",
)
@runs_option
@jobs_option
@set_option
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory.")
def sweep(
    file: str,
    varies: tuple[str, ...],
    runs: int | None,
    jobs: int | None,
    overrides: tuple[str, ...],
    out: Path,
) -> None:
    """Run FILE for every combination of the --vary values, R seeds each, in parallel.

    Each finished run is saved at once in OUT/runs/; running the same command again skips
    them, so an interrupted sweep resumes. Writes results.csv, summary.csv and sweep.png/svg.
    """
    from buflab.console import progress_bar, stdout
    from buflab.engine.runner import load_scenario
    from buflab.experiments import recipes
    from buflab.experiments.report import run_and_report
    from buflab.experiments.sweep import Vary
    from buflab.experiments.threshold import write_thresholds

    tree = load_scenario(file, overrides=overrides)
    scenario, header = recipes.split_header(tree)
    plan = header.plan(scenario, [Vary.parse(text) for text in varies], runs)
    if not plan.varies:
        raise BadInput("nothing to sweep: give at least one --vary KEY=V1,V2,...")
    title = f"{Path(file).stem}: utilization and drop rate"
    with _exit_when_interrupted():
        report = run_and_report(plan, header, out, jobs, "sweep", title, progress_bar)
    stdout.print(report.view.table(title))
    thresholds, figures = write_thresholds(report.view, out, "sweep", __version__)
    report.figures.extend(figures)
    _print_thresholds(report.view, thresholds)
    _print_written(report, out)


@contextmanager
def _exit_when_interrupted() -> Iterator[None]:
    """Ctrl-C in a sweep: one line saying what was kept, exit status 130."""
    from buflab.experiments.sweep import SweepInterrupted

    try:
        yield
    except SweepInterrupted as stop:
        click.echo(str(stop), err=True)
        sys.exit(EXIT_INTERRUPTED)


def _print_thresholds(view: Any, frame: Any) -> None:
    """The `[sweep.threshold]` table, when the recipe asks for one."""
    from buflab.console import stdout
    from buflab.experiments.threshold import threshold_table

    if frame is not None:
        stdout.print()
        stdout.print(threshold_table(view, frame))


def _print_written(report: Any, out: Path) -> None:
    from buflab.console import stdout

    outcome = report.outcome
    files = [out / "results.csv", out / "summary.csv", *report.figures]
    files += [out / name for name in ("published.csv", "threshold.csv") if (out / name).exists()]
    stdout.print(
        f"{outcome.executed} runs simulated, {outcome.skipped} found in {out / 'runs'}; "
        f"wrote {', '.join(map(str, files))}"
    )


@cli.command(name="theory")
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
    from buflab.console import stdout

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
        from buflab.engine.runner import validate

        known = theory.LinkFacts.from_scenario(validate(file or {}, overrides=overrides))
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
    from rich.table import Table

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


@cli.command()
@click.argument("file")
@click.option(
    "--target-utilization",
    "target",
    type=float,
    required=True,
    help="Mean utilization a probe must reach, e.g. 0.98.",
)
@click.option(
    "--vary",
    "varies",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="Search once per value of KEY, set as by --set, e.g. traffic.0.flows=1,10,100 "
    "(flows=... when the scenario has one traffic entry); prints a table and writes "
    "sizes.csv and size_curve.png/svg. A second --vary gives one curve per value, "
    "e.g. traffic.0.pacing=off,window.",
)
@click.option("--key", default="network.bottleneck.buffer", show_default=True, help="Buffer key.")
@click.option("--high", type=click.IntRange(min=1), help="First probe (packets) [default: RTT·C].")
@runs_option
@jobs_option
@set_option
@click.option("--out", type=click.Path(path_type=Path), help="[default: out/size-FILE]")
def size(
    file: str,
    target: float,
    varies: tuple[str, ...],
    key: str,
    high: int | None,
    runs: int | None,
    jobs: int | None,
    overrides: tuple[str, ...],
    out: Path | None,
) -> None:
    """The smallest buffer (whole packets) whose mean utilization over --runs seeds meets the
    target, by bisection; each probe is printed as it finishes, and the answer beside RTT·C,
    RTT·C/√N and eq. 2.1. Bisection assumes utilization grows with the buffer; probes that
    contradict it are reported. Writes size.png/svg (the probes) to OUT.

    With --vary, one search per value, each in OUT/KEY-VALUE, then a table of the answers
    (also OUT/sizes.csv) and size_curve.png/svg: the minimum buffer against the value. A
    second --vary draws one such curve per value of its key, overlaid (e.g. --vary
    flows=1,10,100 --vary traffic.0.pacing=off,window), each kept in OUT/KEY2-VALUE2.
    """
    from buflab.console import answer_lines, probe_line, sizes_table, stdout
    from buflab.experiments import size as api
    from buflab.experiments.sizing import check_target, eq21_notes

    check_target(target)  # before reading FILE: a bad target is the first thing to say
    if len(varies) > 2:
        raise BadInput(
            f"--vary is given {len(varies)} times: a size search varies one key (the x axis) "
            "and at most one more (a curve per value)"
        )
    scenario = _scenario_of(file, overrides)
    out = out or Path("out") / f"size-{Path(file).stem}"
    options: dict[str, Any] = {"key": key, "runs": runs or 1, "jobs": jobs, "high": high}

    def show_probe(probe: Any) -> None:
        stdout.print(probe_line(probe, target))

    def show_answer(point: Any) -> None:
        for line in answer_lines(point.sizing):
            stdout.print(line)

    with _exit_when_interrupted():
        if not varies:
            sizing = api.size(scenario, target, out, on_probe=show_probe, **options)
            for line in answer_lines(sizing):
                stdout.print(line)
            stdout.print(f"wrote {', '.join(map(str, sizing.figures))}")
            return
        callbacks = {
            "on_value": lambda name, value: stdout.rule(f"{name} = {value}"),
            "on_probe": show_probe,
            "on_point": show_answer,
        }
        if len(varies) == 1:
            curves = [api.size_curve(scenario, target, out, varies[0], **callbacks, **options)]
        else:
            curves = api.size_curves(
                scenario,
                target,
                out,
                varies[0],
                varies[1],
                **callbacks,
                **options,
            )
    stdout.print()
    for curve in curves:
        stdout.print(sizes_table(curve))
        labelled = [(f"{curve.key} = {p.value}", p.sizing.rules) for p in curve.points]
        for note in eq21_notes(labelled):
            stdout.print(note)
    figures = [out / f"size_curve.{suffix}" for suffix in ("png", "svg")]
    stdout.print(f"wrote {', '.join(map(str, [out / 'sizes.csv', *figures]))}")


@cli.command()
@click.argument("file")
@click.option(
    "--target-utilization",
    "target",
    type=float,
    required=True,
    help="Utilization each interval must reach, e.g. 0.98 (within autosize.tolerance).",
)
@click.option("--interval", help="Simulated time per step, e.g. 3s [default: 3s].")
@click.option(
    "--start", type=click.IntRange(min=1), help="First buffer (packets) [default: RTT·C]."
)
@set_option
@click.option("--out", type=click.Path(path_type=Path), help="[default: out/autosize-FILE]")
def autosize(
    file: str,
    target: float,
    interval: str | None,
    start: int | None,
    overrides: tuple[str, ...],
    out: Path | None,
) -> None:
    """Run FILE once with the live auto-sizer (thesis ch. 4.3): after warm-up, every
    --interval the bottleneck buffer shrinks if the interval's utilization met the target and
    grows if not, a binary search over whole packets. Prints every step and the converged
    buffer; writes the tables (autosize.parquet among them) and autosize.png/svg to OUT.
    The other [autosize] keys (settle, tolerance, recheck) take --set autosize.KEY=VALUE."""
    from buflab.console import autosize_table, stdout
    from buflab.experiments import autosize as live
    from buflab.experiments.sizing import rule_sizes

    scenario = _scenario_of(file, overrides)
    out = out or Path("out") / f"autosize-{Path(file).stem}"
    result = live.run_autosize(scenario, target, interval=interval, start=start)
    result.to_dir(out)
    figures = live.save_figure(result, out, __version__)
    threshold = live.pass_threshold(result.scenario)
    stdout.print(autosize_table(result.autosize, threshold))
    found = live.outcome(result)
    beside = rule_sizes(result.scenario, target)
    sqrt_n = "–" if beside.rtt_c_sqrt_n is None else f"{beside.rtt_c_sqrt_n:,.0f} pkt"
    rules = f"RTT·C = {beside.rtt_c:,.0f} pkt, RTT·C/√N = {sqrt_n}"
    if found.buffer_pkts is None:
        stdout.print(
            f"not converged after {found.steps} steps (next buffer {found.last_buffer_pkts:,} "
            f"pkt): run longer or start nearer ({rules})"
        )
    else:
        sizes = ", ".join(f"{size:,}" for size in found.settled_sizes)
        stdout.print(
            f"converged buffer: {found.buffer_pkts:,} pkt for {format_percent(target)}, the "
            f"median of {len(found.settled_sizes)} convergences ({sizes} pkt; the first after "
            f"{found.first_converged_step} steps, at {found.first_converged_s:,.0f} s) ({rules})"
        )
        if not found.converged_at_end:
            stdout.print(
                f"at the end the search was looking again (next buffer "
                f"{found.last_buffer_pkts:,} pkt)"
            )
    stdout.print(f"results in {out}/; plot: {', '.join(map(str, figures))}")


@cli.command(name="load")
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
    from buflab.console import stdout
    from buflab.experiments import load

    tree = _scenario_of(file, overrides)
    offered = load.offered_load(tree)
    stdout.print(_load_table(offered))
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
    from rich.table import Table

    def rate(value: float) -> str:
        return format_rate(value) if math.isfinite(value) else "unbounded"

    def share(value: float) -> str:
        return format_percent(value) if math.isfinite(value) else "unbounded"

    table = Table(
        title=f"Offered load on {format_rate(offered['bottleneck_bps'])}",
        caption="Mean rates with no drops and no queueing, headers included; active: the "
        "fraction of time a user is downloading; unbounded: long-lived flows that neither "
        "the access link nor the window holds below the bottleneck rate",
    )
    table.add_column("traffic", justify="right")
    table.add_column("kind", no_wrap=True)
    for header in ("flows", "each", "active", "rate", "load"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in offered["traffic"]:
        active = row.get("active_fraction")
        table.add_row(
            str(row["traffic"]),
            row["kind"],
            f"{row['count']:,}",
            rate(row["per_flow_bps"]),
            "–" if active is None else format_percent(active),
            rate(row["rate_bps"]),
            share(row["load"]),
        )
    table.add_row("total", "", "", "", "", rate(offered["rate_bps"]), share(offered["load"]))
    return table


@cli.command()
@click.argument("name", required=False)
@jobs_option
@runs_option
@set_option
@click.option(
    "--vary",
    "varies",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="Run only these values of a varied key (or case), e.g. to try a recipe quickly.",
)
@click.option("--out", type=click.Path(path_type=Path), help="[default: out/NAME]")
@click.option("--list", "list_recipes", is_flag=True, help="List the shipped recipes and exit.")
def reproduce(
    name: str | None,
    jobs: int | None,
    runs: int | None,
    overrides: tuple[str, ...],
    varies: tuple[str, ...],
    out: Path | None,
    list_recipes: bool,
) -> None:
    """Reproduce a published figure with a shipped recipe (e.g. headline, t1) or a recipe
    file, and print the published numbers beside buflab's.

    Finished runs are kept in OUT/runs and reused, so an interrupted reproduction resumes.
    """
    from buflab.console import progress_bar, stdout
    from buflab.experiments import recipes
    from buflab.experiments.report import comparison_table
    from buflab.experiments.reproduce import reproduce as run_recipe
    from buflab.experiments.sweep import Vary

    if list_recipes or name is None:
        if name is None and not list_recipes:
            raise BadInput("give a recipe name or file; shipped: " + ", ".join(recipes.names()))
        for recipe in recipes.names():
            stdout.print(f"{recipe}: {recipes.describe(recipe)}")
        return
    out = out or Path("out") / Path(name).stem
    parsed = [Vary.parse(text) for text in varies]
    with _exit_when_interrupted():
        done = run_recipe(
            name,
            out,
            jobs=jobs,
            runs=runs,
            overrides=overrides,
            varies=parsed,
            progress=progress_bar,
        )
    report = done.report
    stdout.print(report.view.table(f"{Path(name).stem}: {report.view.plan.base.get('name', '')}"))
    _print_thresholds(report.view, done.thresholds)
    if done.comparisons:
        stdout.print()
        stdout.print(comparison_table(done.comparisons, "published beside buflab"))
    if done.paragraph:
        stdout.print()
        stdout.print(done.paragraph)
        stdout.print()
    _print_written(report, out)


@cli.command()
def docs() -> None:
    """Print the scenario reference (markdown) generated from the engine's schema."""
    from buflab.docs import scenario_reference

    click.echo(scenario_reference(core().schema()), nl=False)


def main() -> None:
    cli(prog_name="buflab")
