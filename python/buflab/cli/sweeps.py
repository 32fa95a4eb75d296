"""`buflab sweep` and `buflab reproduce`: a sweep of any scenario file, or of a shipped recipe
compared with the published numbers.

It reads options and prints; the sweep, its report, thresholds and comparisons are the
experiments layer's (`buflab.experiments`), which it hands the console's progress bar. It
must not know how a sweep runs or what a recipe holds.
"""

from __future__ import annotations

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
    jobs_option,
    refuse_with_emulate,
    runs_executor,
    runs_option,
    runs_or_emulations,
    scale_option,
    scaled_name,
    set_option,
    timing_notes,
    vary_option,
)
from buflab.cli.console import frame_table, progress_bar, stderr, stdout


@click.command()
@click.argument("file")
@vary_option(
    "A key and its values; several --vary give every combination. The first is the "
    "x axis of the plot. Adds to (or replaces) the file's [sweep.vary]."
)
@runs_option
@jobs_option
@cluster_options
@set_option
@click.option(
    "--out",
    callback=check_out_dir,
    required=True,
    type=click.Path(path_type=Path),
    help="Output directory.",
)
def sweep(
    file: str,
    varies: tuple[str, ...],
    runs: int | None,
    jobs: int | None,
    cluster: str | None,
    slurm: tuple[str, ...],
    slurm_config: Path | None,
    overrides: tuple[str, ...],
    out: Path,
) -> None:
    """Run FILE for every combination of the --vary values, R seeds each, in parallel
    (longest runs first), on this machine or a Dask cluster (--cluster).

    Each finished run is saved at once in OUT/runs/ and in the run store OUT/store/ (`buflab
    runs OUT`); running the same command again skips them, so an interrupted sweep resumes,
    here or on a cluster. Writes results.csv, summary.csv and sweep.png/svg.
    """
    # start-up time: sweeps import pandas and matplotlib only when the command runs
    from buflab.engine.runner import load_scenario, validate
    from buflab.experiments import recipes
    from buflab.experiments.report import run_and_report
    from buflab.experiments.sweep import Vary
    from buflab.experiments.threshold import write_thresholds

    tree = load_scenario(file, overrides=overrides)
    scenario, header = recipes.split_header(tree)
    plan = header.plan(scenario, [Vary.parse(text) for text in varies], runs)
    if not plan.varies:
        raise BadInput("nothing to sweep: give at least one --vary KEY=V1,V2,...")
    for note in timing_notes(validate(scenario)):
        stderr.print(f"note: {note} (the base scenario)")
    title = f"{Path(file).stem}: utilization and drop rate"
    with runs_executor(cluster, jobs, slurm, slurm_config) as executor, exit_when_interrupted():
        report = run_and_report(
            plan, header, out, jobs, "sweep", title, progress_bar, executor=executor
        )
    stdout.print(report.view.table(title))
    thresholds, figures = write_thresholds(report.view, out, "sweep", __version__)
    report.figures.extend(figures)
    _print_thresholds(report.view, thresholds)
    _print_written(report, out)


def _print_thresholds(view: Any, frame: Any) -> None:
    """The `[sweep.threshold]` table, when the recipe asks for one."""
    # start-up time: the threshold module imports pandas and matplotlib
    from buflab.experiments.threshold import threshold_table

    if frame is not None:
        stdout.print()
        stdout.print(threshold_table(view, frame))


def _print_beside(done: Any) -> None:
    """--emulate: each point's metrics simulated / on Linux, and the threshold lines both
    ways, when the recipe has them."""
    # start-up time: the report module imports pandas and matplotlib
    import pandas as pd
    from rich.table import Table

    from buflab.experiments.report import format_metric

    if done.beside is None:
        return
    view = done.report.view

    def pair(row: Any, metric: str) -> str:
        shown = [row[f"{side}_{metric}"] for side in ("sim", "real")]
        return " / ".join("–" if pd.isna(v) else format_metric(metric, float(v)) for v in shown)

    table = Table(title="simulated / on Linux, same points and seeds (beside_simulated.csv)")
    for key in view.plan.keys:
        table.add_column(key)
    for metric in view.header.metrics:
        table.add_column(metric.replace("_", " "), justify="right")
    for _, row in done.beside.iterrows():
        cells = [str(row[key]) for key in view.plan.keys]
        table.add_row(*cells, *(pair(row, m) for m in view.header.metrics))
    stdout.print()
    stdout.print(table)
    if done.thresholds_beside is not None:
        lines = done.thresholds_beside
        table = Table(
            title="smallest passing buffer, simulated / on Linux",
            caption="none: no buffer tried passed",
        )
        keys = [c for c in lines.columns if not c.startswith(("sim_", "real_"))]
        for key in [*keys, "minimum", "utilization"]:
            table.add_column(key, justify="right" if key == "utilization" else "left")
        for _, row in lines.iterrows():
            minimum = " / ".join(
                "none" if pd.isna(row[f"{side}_minimum"]) else str(row[f"{side}_minimum"])
                for side in ("sim", "real")
            )
            table.add_row(*(str(row[k]) for k in keys), minimum, pair(row, "utilization"))
        stdout.print(table)


def _print_written(report: Any, out: Path, emulated: bool = False) -> None:
    outcome = report.outcome
    made = "emulated on real TCP" if emulated else "simulated"
    files = [out / "results.csv", out / "summary.csv", out / "store", *report.figures]
    extra = (
        "published.csv",
        "threshold.csv",
        "bounds.csv",
        "interarrival.csv",
        "beside_simulated.csv",
    )
    files += [out / name for name in extra if (out / name).exists()]
    stdout.print(
        f"{outcome.executed} runs {made}, {outcome.skipped} found in {out / 'runs'}; "
        f"wrote {', '.join(map(str, files))}"
    )


@click.command()
@click.argument("name", required=False)
@jobs_option
@cluster_options
@runs_option
@set_option
@vary_option("Run only these values of a varied key (or case), e.g. to try a recipe quickly.")
@click.option(
    "--out",
    callback=check_out_dir,
    type=click.Path(path_type=Path),
    help="[default: out/NAME, and a digest of --set and --vary when given]",
)
@click.option("--list", "list_recipes", is_flag=True, help="List the shipped recipes and exit.")
@scale_option
@emulate_option(
    "Run the recipe's points on real Linux TCP (`buflab emulate`, needs root), one at a time; "
    "kept in OUT/runs apart from simulated runs [default OUT: out/emulate-NAME]."
)
def reproduce(
    name: str | None,
    jobs: int | None,
    cluster: str | None,
    slurm: tuple[str, ...],
    slurm_config: Path | None,
    runs: int | None,
    overrides: tuple[str, ...],
    varies: tuple[str, ...],
    out: Path | None,
    list_recipes: bool,
    scale: str,
    emulated: bool,
) -> None:
    """Reproduce a published figure with a shipped recipe (e.g. headline, t1) or a recipe
    file, and print the published numbers beside buflab's.

    Finished runs are kept in OUT/runs and reused, so an interrupted reproduction resumes.

    With --emulate, every run is an emulation on real Linux TCP (`buflab emulate`, needs
    root), one at a time, each taking its duration in real time, and the same points are
    then simulated (OUT/simulated, same seeds) and printed beside them
    (OUT/beside_simulated.csv); a recipe the emulator cannot realise (a switch, a network
    of routers, an optical FIFO, rates above what the datapath forwards) is refused in one
    line saying why.
    """
    # start-up time: recipes and sweeps import pandas and matplotlib only when the command runs
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
    if emulated:
        refuse_with_emulate(jobs, cluster, bool(slurm or slurm_config))
    out = out or default_out(
        "emulate" if emulated else "", scaled_name(name, scale), overrides, varies
    )
    parsed = [Vary.parse(text) for text in varies]
    with (
        emulation_notes(emulated),
        runs_or_emulations(emulated, cluster, jobs, slurm, slurm_config) as executor,
        exit_when_interrupted(),
    ):
        done = run_recipe(
            name,
            out,
            jobs=jobs,
            runs=runs,
            overrides=overrides,
            varies=parsed,
            progress=progress_bar,
            cluster=executor,
            emulate=emulated,
            scale=scale,
        )
    report = done.report
    stdout.print(report.view.table(f"{Path(name).stem}: {report.view.plan.base.get('name', '')}"))
    _print_thresholds(report.view, done.thresholds)
    _print_beside(done)
    if done.comparisons:
        stdout.print()
        stdout.print(comparison_table(done.comparisons, "published beside buflab"))
    if done.bounds is not None:
        stdout.print()
        stdout.print(frame_table(done.bounds, "bounds beside the measurements (bounds.csv)"))
    if done.paragraph:
        stdout.print()
        stdout.print(done.paragraph)
        stdout.print()
    _print_written(report, out, emulated)
