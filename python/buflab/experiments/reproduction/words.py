"""What the report says, before it is HTML or Markdown: the title, the lines under it, how to
read a verdict, the summary's counts and each published number's cells. Both documents
(`html`, `markdown`) are made from these, so they cannot say different things.

It must not know either format.
"""

from __future__ import annotations

import datetime
from collections import Counter

from buflab.experiments.report import Comparison, comparison_cells, metric_label
from buflab.experiments.reproduction.collect import Gathered, RecipeOutcome, RowOutcome
from buflab.experiments.reproduction.verdict import AGREES, DISAGREES, NEAR, NOT_YET, judge

TITLE = "buflab: the published results, reproduced"

READING = (
    f"Each row is a published result: the claim as published, buflab's figure (the mean over "
    f"a point's seeds, ± its 95 % interval when there are several), and a verdict. "
    f"**{AGREES}**: within the published band (read off a plot), or, for a claim without a "
    f'number ("fewer drops"), the whole interval on the claimed side. **{NEAR}**: outside '
    f"the band but within twice it or with the interval reaching into it; for a claim, the "
    f"interval touching the value. **{DISAGREES}**: neither. **{NOT_YET}**: nothing to judge "
    f"yet (no recipe, the recipe refused, or the point not run at this scale). A row's verdict "
    f"is its worst number's. Formula rows (F1–F4, F7, F8) are computed live by buflab's own "
    f"code each time the report is made."
)


def scale_note(scale: str) -> str:
    """What a verdict at this scale is about."""
    if scale == "full":
        return (
            "Scale **full**: every recipe as written, the published setting; the bands are "
            "meant for this size."
        )
    return (
        f"Scale **{scale}**: each recipe's `[scale.{scale}]` table (shorter runs, fewer seeds "
        f"and points; its comment says what it scales and why). Every band was set for the "
        f"full-size recipe, so at this scale a verdict is about the shape of the result, "
        f"not its last point; a recipe without a `{scale}` table ran as written (its scale "
        f"says full)."
    )


def meta_lines(g: Gathered, command: str) -> list[str]:
    """The lines under the title: what made it, when and how long it took."""
    runs = sum(r.planned for r in g.recipes())
    reused = sum(r.reused for r in g.recipes())
    made = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Made by `{command}` with buflab {g.version} (engine build {g.engine_build}) on {made}.",
        f"Scale {g.scale}; {len(g.recipes())} recipes, {runs:,} runs: {g.executed:,} simulated "
        f"now and {reused:,} reused; this report took {duration(g.seconds)}.",
    ]
    if g.interrupted:
        lines.append(
            f"**Interrupted**: {g.interrupted}. The rows after it show what had finished; "
            "running the same command again finishes the rest."
        )
    return lines


def counts(rows: list[RowOutcome]) -> list[tuple[str, int]]:
    """How many rows have each verdict, every verdict listed."""
    found = Counter(row.verdict for row in rows)
    return [(verdict, found[verdict]) for verdict in (AGREES, NEAR, DISAGREES, NOT_YET)]


def number_tally(outcome: RowOutcome) -> str:
    """A row's numbers by verdict: "3 agree, 1 near"; "–" with none."""
    found = Counter(judge(c) for _, c in outcome.numbers)
    words = {AGREES: "agree", NEAR: "near", DISAGREES: "disagree", NOT_YET: "not run"}
    parts = [f"{found[v]} {words[v]}" for v in (AGREES, NEAR, DISAGREES, NOT_YET) if found[v]]
    return ", ".join(parts) or "–"


def duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def verdict_text(c: Comparison) -> str:
    """A number's verdict as its cell says it: "not run" for a point that did not run."""
    verdict = judge(c)
    return "not run" if verdict == NOT_YET else verdict


def number_cells(recipe: str, c: Comparison) -> list[str]:
    """One published number as table cells: where, what, published, buflab, verdict, source."""
    point, published, measured = comparison_cells(c)
    where = f"{recipe}: {point}" if recipe and point else (recipe or point)
    return [
        where,
        metric_label(c.published.metric),
        published,
        measured,
        verdict_text(c),
        c.published.source,
    ]


NUMBER_HEADER = ["where", "metric", "published", "buflab", "verdict", "source"]


def not_yet_text(outcome: RowOutcome) -> str | None:
    """Why a row has nothing to judge, or None when it has numbers."""
    refused = [r for r in outcome.recipes if r.refused]
    if outcome.numbers:
        return None
    if refused:
        return "; ".join(f"`{r.name}` did not run: {r.refused}" for r in refused)
    if outcome.row.open:
        return outcome.row.open.capitalize()
    if outcome.recipes:
        return "Its recipes check no published number: their figures are compared by eye."
    return "No recipe claims this row yet."


def recipe_facts(r: RecipeOutcome) -> list[tuple[str, str]]:
    """A recipe's scale, command, version and costs, as (name, value) pairs."""
    made = f"{r.executed:,} simulated now, {r.reused:,} reused" if r.planned else "none"
    return [
        ("scale", r.scale),
        ("command", r.command),
        ("version", r.version),
        ("runs", f"{r.planned:,} ({made})"),
        (
            "wall time",
            f"{duration(r.seconds)} in this report; its runs took "
            f"{duration(r.run_seconds)} of simulation when they ran",
        ),
    ]


def disagreeing_recipes(outcome: RowOutcome) -> list[str]:
    """The recipes with a number that disagrees: the report points to their notes."""
    names = [name for name, c in outcome.numbers if name and judge(c) == DISAGREES]
    return list(dict.fromkeys(names))
