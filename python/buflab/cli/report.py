"""`buflab report`: every published result buflab sets out to reproduce, in one HTML document
and its Markdown twin.

It reads options and prints; gathering the rows and writing the documents are the
experiments layer's (`buflab.experiments.reproduction`). It must not know what a row holds.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from buflab.cli.common import (
    EXIT_INTERRUPTED,
    SCALES,
    BadInput,
    check_out_dir,
    cluster_options,
    jobs_option,
    runs_executor,
)
from buflab.cli.console import progress_bar, stderr, stdout
from buflab.engine.units import format_count

if TYPE_CHECKING:
    from buflab.experiments.reproduction.collect import RecipeOutcome, ReportWork


@click.command(name="report")
@click.option(
    "--scale",
    type=click.Choice(SCALES),
    default="small",
    show_default=True,
    help="Each recipe's size: ci (minutes for all), small (under an hour on two cores) or "
    "full (the recipes as written, the published settings: hours).",
)
@click.option(
    "--only",
    metavar="ID,...",
    help="Only these rows (F1, S2, T5, …) or recipes beyond the list (aqm, qcn, …).",
)
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="Where report.html, report.md and figures/ go [default: out/report-SCALE].",
)
@click.option(
    "--runs-in",
    "root",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    default=Path("out"),
    show_default=True,
    help="Where each recipe keeps its runs, ROOT/NAME (full) or ROOT/NAME-SCALE, as "
    "`buflab reproduce NAME --scale SCALE` does: finished runs there are reused.",
)
@jobs_option
@cluster_options
def report(
    scale: str,
    only: str | None,
    out: Path | None,
    root: Path,
    jobs: int | None,
    cluster: str | None,
    slurm: tuple[str, ...],
    slurm_config: Path | None,
) -> None:
    """Run (or reuse) every recipe at one scale and write one self-contained document of the
    published results beside buflab's: per row the claim, buflab's figure with its 95 %
    interval, the verdict, the recipe's figure, the exact command, the version and the wall
    time, with a summary of the verdicts at the top.

    Runs already in the recipes' directories are reused, so running it again simulates
    nothing new. Ctrl-C keeps every finished run and still writes the report of what
    finished. With --cluster the runs go to Dask workers (the hours of --scale full spread
    over a cluster), each recipe's in turn.
    """
    # start-up time: the report imports pandas and matplotlib only when the command runs
    from buflab.experiments.reproduction import write_report
    from buflab.experiments.reproduction.collect import gather, unknown_ids, work_of_report
    from buflab.experiments.reproduction.words import counts, duration

    wanted = None
    if only is not None:
        wanted = [name.strip() for name in only.split(",") if name.strip()]
        unknown = unknown_ids(wanted) if wanted else ["(nothing)"]
        if unknown:
            raise BadInput(
                f"--only {unknown[0]}: no row or recipe of that name; expected row ids such as "
                "F1, S2, T5, P4 or a recipe beyond the list (see `buflab reproduce --list`)"
            )
    out = out or Path("out") / f"report-{scale}"
    command = f"buflab report --scale {scale}" + (f" --only {','.join(wanted)}" if wanted else "")

    def finished(r: RecipeOutcome) -> None:
        what = r.refused or f"{r.planned} runs, {r.executed} simulated, {r.reused} reused"
        stderr.print(f"{r.name} ({r.scale}): {what}, {duration(r.seconds)}")

    with runs_executor(cluster, jobs, slurm, slurm_config) as executor:
        # Announced before anything runs: at full scale the report takes hours.
        stderr.print(work_line(work_of_report(scale, root, wanted), command, executor.workers))
        gathered = gather(scale, root, wanted, jobs, executor, progress_bar, finished)
    html, md = write_report(gathered, out, command)
    tally = ", ".join(f"{verdict} {n}" for verdict, n in counts(gathered.rows))
    stdout.print(f"rows of the list: {tally}")
    if gathered.beyond:
        stdout.print(
            f"beyond the list: {', '.join(f'{v} {n}' for v, n in counts(gathered.beyond))}"
        )
    stdout.print(
        f"{format_count(gathered.executed, 'run')} simulated in {duration(gathered.seconds)}; "
        f"wrote {html}, {md}"
    )
    if gathered.interrupted:
        click.echo(gathered.interrupted, err=True)
        sys.exit(EXIT_INTERRUPTED)


def work_line(work: ReportWork, command: str, workers: int) -> str:
    """The line announcing what the report will run and about how long it takes."""
    # start-up time: the experiments layer (pandas) only when the command runs
    from buflab.experiments.reproduction.words import duration

    runs = f"{work.planned:,} runs in {format_count(len(work.recipes), 'recipe')}"
    left = work.planned - work.finished
    if left == 0:
        return f"{command}: {runs}, all finished before: nothing to simulate"
    # The formula knows packets, not a switch's scheduler, and an idle machine's speed.
    formula = len(work.recipes) - len(work.measured)
    basis = []
    if work.measured:
        basis.append(f"{format_count(len(work.measured), 'recipe')} from earlier runs here")
    if formula:
        basis.append(
            f"{format_count(formula, 'recipe')} from the engine's formula (idle machine, switches "
            "run longer)"
        )
    reused = f", {work.finished:,} finished before (reused)" if work.finished else ""
    return (
        f"{command}: {runs}{reused}; {left:,} to simulate, about "
        f"{duration(work.seconds(workers))} on {format_count(workers, 'worker')} "
        f"(estimated: {', '.join(basis)}); "
        "Ctrl-C keeps every finished run and the same command goes on from there"
    )
