"""Every row of the report gathered: each recipe run (or its finished runs reused) at one
scale, its published numbers judged, and the formula rows computed.

Each recipe runs as `buflab reproduce NAME --scale SCALE` would, into the same directory
(ROOT/NAME at full scale, ROOT/NAME-ci, ROOT/NAME-small), so the runs it finds there, from
an earlier report or `reproduce`, are reused and a second report runs nothing. One recipe
that cannot run (a bad setting, failed runs) is reported as refused and the others go on;
Ctrl-C keeps every finished run (the sweeps write each at once) and stops at the recipe it
interrupted: the report is still written, with what finished, and `Gathered.interrupted`
says so.

It must not know how the report is drawn.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from buflab import __version__
from buflab.engine import Error, core
from buflab.experiments import recipes
from buflab.experiments.execution import Executor, Interrupted
from buflab.experiments.recipes import describe
from buflab.experiments.recipes.catalogue import header_text
from buflab.experiments.recipes.scale import SCALES
from buflab.experiments.report import Comparison, Progress
from buflab.experiments.reproduce import reproduce
from buflab.experiments.reproduction.formulas import CHECKS
from buflab.experiments.reproduction.rows import Row, load_rows, unclaimed_recipes
from buflab.experiments.reproduction.verdict import judge, worst
from buflab.experiments.schedule import CostModel, RunCost
from buflab.experiments.store import RunStore
from buflab.experiments.sweep import WorkLeft, work_left


@dataclass
class RecipeOutcome:
    """One recipe at one scale: what it reproduces, the command that reproduces it, its
    published numbers beside buflab's, its figures and paragraph, and what it cost."""

    name: str
    title: str
    scale: str  # the scale it ran at: "full" when the recipe defines no table for the asked one
    command: str
    notes: str  # the recipe's header comment: the setting and the choices behind it
    comparisons: list[Comparison] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    paragraph: str | None = None
    seconds: float = 0.0  # this report's wall time on it (runs, tables, figures)
    run_seconds: float = 0.0  # its runs' own wall times, summed, when they ran
    planned: int = 0
    executed: int = 0
    reused: int = 0
    refused: str | None = None  # one line: why it did not run (or stopped)
    # What made its runs: a run made by another engine build is run again, never mixed in.
    version: str = field(
        default_factory=lambda: f"buflab {__version__}, engine build {core().engine_build()}"
    )

    def row_of(self, comparison: Comparison, claimed: list[str]) -> str:
        """The row a published number belongs to, when the recipe claims several: the one its
        source names ("thesis Fig 4.5 top (T3)"), else the first."""
        source = comparison.published.source
        return next((row for row in claimed if re.search(rf"\b{row}\b", source)), claimed[0])


@dataclass
class RowOutcome:
    """A row with its formula numbers, its recipes and their numbers that belong to it."""

    row: Row
    numbers: list[tuple[str, Comparison]]  # (recipe name, or "" for a formula) and number
    recipes: list[RecipeOutcome]

    @property
    def verdict(self) -> str:
        return worst(judge(c) for _, c in self.numbers)


@dataclass
class Gathered:
    """Everything the report shows."""

    scale: str
    rows: list[RowOutcome]
    beyond: list[RowOutcome]  # recipes no row names
    version: str
    engine_build: str
    seconds: float
    interrupted: str | None = None  # the interrupted sweep's line, when Ctrl-C stopped it

    @property
    def executed(self) -> int:
        return sum(r.executed for r in self.recipes())

    def recipes(self) -> list[RecipeOutcome]:
        seen: dict[str, RecipeOutcome] = {}
        for outcome in [*self.rows, *self.beyond]:
            for recipe in outcome.recipes:
                seen.setdefault(recipe.name, recipe)
        return list(seen.values())


def recipe_dir(root: Path, name: str, scale: str) -> Path:
    """Where `buflab reproduce NAME --scale SCALE` keeps its runs by default, under ROOT."""
    return root / (name if scale == "full" else f"{name}-{scale}")


def run_recipe(
    name: str,
    scale: str,
    root: Path,
    jobs: int | None,
    executor: Executor | None,
    progress: Progress | None,
) -> RecipeOutcome:
    """One recipe at `scale` in its directory under `root`: runs what is not there yet."""
    _, header = recipes.load(name, scale=scale)
    ran_at = scale if not header.scale.is_full else "full"
    flag = "" if ran_at == "full" else f" --scale {ran_at}"
    outcome = RecipeOutcome(
        name=name,
        title=describe(name),
        scale=ran_at,
        command=f"buflab reproduce {name}{flag}",
        notes=header_text(name),
    )
    started = time.monotonic()
    try:
        done = reproduce(
            name,
            recipe_dir(root, name, scale),
            jobs,
            progress=progress,
            cluster=executor,
            scale=scale,
        )
    except Error as error:
        outcome.refused = str(error).splitlines()[0]
        return outcome
    finally:
        outcome.seconds = time.monotonic() - started
    result = done.report.outcome
    outcome.comparisons = done.comparisons
    outcome.figures = [path for path in done.report.figures if path.suffix == ".png"]
    outcome.paragraph = done.paragraph
    outcome.planned, outcome.executed, outcome.reused = (
        result.planned,
        result.executed,
        result.skipped,
    )
    if "wall_s" in result.results:
        outcome.run_seconds = float(result.results["wall_s"].sum())
    return outcome


def gather(
    scale: str,
    root: Path,
    only: list[str] | None = None,
    jobs: int | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    on_recipe: Callable[[RecipeOutcome], None] | None = None,
) -> Gathered:
    """Every row (or the rows and beyond-the-list recipes whose ids or names are in `only`),
    with each recipe run once at `scale` though several rows name it."""
    started = time.monotonic()
    rows, wanted = _rows_wanted(only)
    done: dict[str, RecipeOutcome] = {}
    interrupted = None
    outcomes = []
    for row in wanted:
        numbers: list[tuple[str, Comparison]] = []
        if row.check is not None:
            numbers += [("", c) for c in CHECKS[row.check]()]
        for name in row.recipes:
            if name in done:
                continue
            if interrupted is not None:
                done[name] = _not_run(name, scale, "the report was interrupted before it")
                continue
            try:
                done[name] = run_recipe(name, scale, root, jobs, executor, progress)
            except (Interrupted, KeyboardInterrupt) as stop:
                interrupted = str(stop) or "interrupted"
                done[name] = _not_run(name, scale, interrupted)
            if on_recipe is not None:
                on_recipe(done[name])
        recipes_here = [done[name] for name in row.recipes if name in done]
        for recipe in recipes_here:
            claimed = recipe_rows(recipe.name, rows)  # a beyond-the-list recipe: its own name
            numbers += [
                (recipe.name, c) for c in recipe.comparisons if recipe.row_of(c, claimed) == row.id
            ]
        outcomes.append(RowOutcome(row, numbers, recipes_here))
    listed = [o for o in outcomes if o.row.section != "Beyond the list"]
    extra = [o for o in outcomes if o.row.section == "Beyond the list"]
    return Gathered(
        scale,
        listed,
        extra,
        __version__,
        core().engine_build(),
        time.monotonic() - started,
        interrupted,
    )


def _rows_wanted(only: list[str] | None) -> tuple[list[Row], list[Row]]:
    """The list's rows, and those the report shows: every row and beyond-the-list recipe, or
    those whose ids or names are in `only`."""
    rows = load_rows()
    beyond = [
        Row(
            id=name, section="Beyond the list", experiment=describe(name), claim="", recipes=(name,)
        )
        for name in unclaimed_recipes(rows)
    ]
    return rows, [row for row in [*rows, *beyond] if only is None or row.id in only]


@dataclass
class ReportWork:
    """What a report has left to run before it starts: per recipe, its runs planned, those
    finished (reused) and the estimates of the others; `measured` names the recipes estimated
    from this machine's earlier runs of them (the engine's formula for the rest)."""

    recipes: dict[str, WorkLeft]
    measured: list[str]

    @property
    def planned(self) -> int:
        return sum(w.planned for w in self.recipes.values())

    @property
    def finished(self) -> int:
        return sum(w.finished for w in self.recipes.values())

    def seconds(self, workers: int) -> float:
        """Wall seconds on `workers` workers: the recipes run one after the other."""
        return sum(w.seconds(workers) for w in self.recipes.values())


def work_of_report(scale: str, root: Path, only: list[str] | None = None) -> ReportWork:
    """The runs the report at `scale` would make, reading ROOT and writing nothing: each
    recipe's sweep planned as `run_recipe` runs it, its finished runs counted, the others
    estimated from the recipe's earlier runs on this machine at any scale (their run stores
    under ROOT), which know this machine and the recipe's cost per packet (a 32-port MWM
    switch's, say) better than the engine's formula does; a recipe never run here gets the
    formula. (Scaling the formula by how other recipes' runs compared with it would not do:
    that ratio ranges over a factor of ten between recipes.) A recipe the engine refuses is
    left out: the report says why when it comes to it."""
    _, wanted = _rows_wanted(only)
    names = list(dict.fromkeys(name for row in wanted for name in row.recipes))
    work: dict[str, WorkLeft] = {}
    measured = []
    for name in names:
        history = _history(root, name)
        try:
            scenario, header = recipes.load(name, scale=scale)
            plan = header.plan(scenario, [], None)
            work[name] = work_left(plan, recipe_dir(root, name, scale), CostModel.fit(history))
        except Error:
            continue
        if history:
            measured.append(name)
    return ReportWork(work, measured)


def _history(root: Path, name: str) -> list[tuple[RunCost, float]]:
    """This engine build's earlier runs of recipe `name` under ROOT, at every scale: (cost
    features, wall seconds)."""
    history = []
    for scale in SCALES:
        try:
            history += RunStore(recipe_dir(root, name, scale)).history()
        except Error:
            continue  # a store it cannot read: estimated without it
    return history


def _not_run(name: str, scale: str, why: str) -> RecipeOutcome:
    flag = "" if scale == "full" else f" --scale {scale}"
    return RecipeOutcome(
        name,
        describe(name),
        scale,
        f"buflab reproduce {name}{flag}",
        header_text(name),
        refused=why,
    )


def recipe_rows(name: str, rows: list[Row]) -> list[str]:
    """The ids of the rows that name a recipe, in the list's order (its own name if none)."""
    return [row.id for row in rows if name in row.recipes] or [name]


def unknown_ids(only: list[str]) -> list[str]:
    """The ids in `only` that are neither a row nor a recipe beyond the list."""
    rows = load_rows()
    known = {row.id for row in rows} | set(unclaimed_recipes(rows))
    return [name for name in only if name not in known]
