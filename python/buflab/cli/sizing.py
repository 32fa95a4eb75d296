"""`buflab size` (the smallest buffer by bisection, or a curve of them) and `buflab autosize`
(one run with the live auto-sizer).

It reads options, prints each probe and answer as the search goes (the experiments layer
calls back) and the tables; the searches and figures are the experiments layer's
(`buflab.experiments.size`, `buflab.experiments.autosize`). It must not know how a search
works.
"""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path
from typing import Any

import click

from buflab import __version__
from buflab.cli.common import (
    BadInput,
    check_out_dir,
    cluster_options,
    default_out,
    emulate_option,
    emulation_notes,
    exit_when_interrupted,
    fidelity_line,
    jobs_option,
    refuse_with_emulate,
    runs_option,
    runs_or_emulations,
    scenario_of,
    set_option,
    timing_notes,
)
from buflab.cli.console import (
    answer_lines,
    autosize_table,
    probe_line,
    sizes_table,
    stderr,
    stdout,
)
from buflab.engine.scenario import get_key
from buflab.engine.units import format_percent, format_time


@click.command()
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
@click.option(
    "--precision",
    type=float,
    help="Stop bisecting once the answer is known within this share of itself (0: to one "
    "packet) [default: 0.01]; a probe whose 95 % interval holds the target also stops it.",
)
@runs_option
@jobs_option
@cluster_options
@set_option
@emulate_option(
    "Run the probes on real Linux TCP (`buflab emulate`, needs root), one at a time in real "
    "time; kept in OUT/runs like simulated probes, so an interrupted search resumes."
)
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="[default: out/size-FILE (out/size-emulate-FILE with --emulate), and a digest of "
    "--set, --vary and --key when given]",
)
def size(
    file: str,
    target: float,
    varies: tuple[str, ...],
    key: str,
    high: int | None,
    precision: float | None,
    runs: int | None,
    jobs: int | None,
    cluster: str | None,
    slurm: tuple[str, ...],
    slurm_config: Path | None,
    overrides: tuple[str, ...],
    emulated: bool,
    out: Path | None,
) -> None:
    """The smallest buffer (whole packets) whose mean utilization over --runs seeds meets the
    target, by bisection; each probe is printed as it finishes, and the answer beside RTT·C,
    RTT·C/√N and eq. 2.1. Bisection assumes utilization grows with the buffer; probes that
    contradict it are reported. Writes size.png/svg (the probes) to OUT.

    A probe's --runs seeds run at once, here or on a Dask cluster (--cluster); every run is
    kept in OUT's run store too (`buflab runs OUT`).

    With --vary, one search per value, all at once, each in OUT/KEY-VALUE (a probe line
    names its value), then a table of the answers
    (also OUT/sizes.csv) and size_curve.png/svg: the minimum buffer against the value. A
    second --vary draws one such curve per value of its key, overlaid (e.g. --vary
    flows=1,10,100 --vary traffic.0.pacing=off,window), each kept in OUT/KEY2-VALUE2.

    With --emulate, every probe is an emulation on real Linux TCP, one at a time (the
    datapath owns a core), each taking the scenario's duration.
    """
    # start-up time: searches import pandas and matplotlib only when the command runs
    from buflab.engine.runner import validate
    from buflab.experiments import size as api
    from buflab.experiments.emulator import check_emulable
    from buflab.experiments.sizing import check_target, eq21_notes
    from buflab.experiments.sweep import Vary

    check_target(target)  # before reading FILE: a bad target is the first thing to say
    if len(varies) > 2:
        raise BadInput(
            f"--vary is given {len(varies)} times: a size search varies one key (the x axis) "
            "and at most one more (a curve per value)"
        )
    if emulated:
        refuse_with_emulate(jobs, cluster, bool(slurm or slurm_config))
    scenario = scenario_of(file, overrides)
    # The notes are about the model's timing: real hosts have their own.
    for note in [] if emulated else timing_notes(validate(scenario)):
        stderr.print(f"note: {note} (the base scenario)")
    out = out or default_out("size-emulate" if emulated else "size", file, overrides, varies, key)
    options: dict[str, Any] = {"key": key, "runs": runs or 1, "high": high}
    if precision is not None:
        options["precision"] = precision

    def show_probe(probe: Any) -> None:
        line = probe_line(probe, target)
        stdout.print(f"{probe.label}: {line.lstrip()}" if probe.label else line)

    with (
        emulation_notes(emulated),
        runs_or_emulations(emulated, cluster, jobs, slurm, slurm_config) as executor,
        exit_when_interrupted(),
    ):
        if emulated:
            check_emulable([scenario], f"size {file} --emulate")
        options["cluster"] = executor
        if not varies:
            sizing = api.size(scenario, target, out, on_probe=show_probe, **options)
            for line in answer_lines(sizing):
                stdout.print(line)
            stdout.print(f"wrote {', '.join(map(str, sizing.figures))}")
            return
        searches = math.prod(len(Vary.parse(spec).values) for spec in varies)
        started = time.monotonic()
        done = itertools.count(1)

        def show_answer_of_many(point: Any) -> None:
            # The searches run at once and their answers come in the order of the values,
            # each headed with the overall progress (P3 runs ten searches for minutes).
            elapsed = format_time(time.monotonic() - started)
            stdout.rule(f"{point.label}: search {next(done)} of {searches} done ({elapsed})")
            for line in answer_lines(point.sizing):
                stdout.print(line)

        callbacks = {"on_probe": show_probe, "on_point": show_answer_of_many}
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


@click.command()
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
@emulate_option(
    "Run it on real Linux TCP (`buflab emulate`, needs root): the same search sets the "
    "datapath's buffer through its control channel while the flows run, in real time."
)
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="[default: out/autosize-FILE, and a digest of --set when given; with --emulate, "
    "out/autosize-emulate-FILE]",
)
def autosize(
    file: str,
    target: float,
    interval: str | None,
    start: int | None,
    overrides: tuple[str, ...],
    emulated: bool,
    out: Path | None,
) -> None:
    """Run FILE once with the live auto-sizer (thesis ch. 4.3): after warm-up, every
    --interval the bottleneck buffer shrinks if the interval's utilization met the target and
    grows if not, a binary search over whole packets. Prints every step and the converged
    buffer; writes the tables (autosize.parquet among them) and autosize.png/svg to OUT.
    The other [autosize] keys (settle, tolerance, recheck) take --set autosize.KEY=VALUE.
    With --emulate, on real Linux TCP (the thesis's tool on its NetFPGA router)."""
    # start-up time: the auto-sizer imports pandas and matplotlib only when the command runs
    from buflab.engine.runner import validate
    from buflab.experiments import autosize as live
    from buflab.experiments.sizing import rule_sizes
    from buflab.experiments.store import RunStore, store_one

    scenario = scenario_of(file, overrides)
    out = out or default_out("autosize-emulate" if emulated else "autosize", file, overrides)
    events_to = out / "events.parquet" if get_key(scenario, "monitor.events", False) else None
    with emulation_notes(emulated) as engine:
        result = live.run_autosize(
            scenario, target, interval=interval, start=start, emulate=emulated, events_to=events_to
        )
    for note in (result.emulation or {}).get("notes", []):
        stderr.print(f"note: {note}")
    result.to_dir(out)
    normalized = validate(result.scenario)
    store_one(RunStore(out), normalized, result.summary, command="autosize", engine=engine())
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
    if emulated:
        stdout.print(fidelity_line(result.summary))
    stdout.print(f"results in {out}/; plot: {', '.join(map(str, figures))}")
