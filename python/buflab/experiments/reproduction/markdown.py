"""The report as Markdown, for a repository: the same words as the HTML (`words`), its
figures as PNG files in `figures/` beside it, linked by relative paths.

It must not know how the results were gathered.
"""

from __future__ import annotations

from pathlib import Path

from buflab.experiments.reproduction.collect import Gathered, RecipeOutcome, RowOutcome
from buflab.experiments.reproduction.words import (
    NUMBER_HEADER,
    READING,
    TITLE,
    counts,
    disagreeing_recipes,
    meta_lines,
    not_yet_text,
    number_cells,
    number_tally,
    recipe_facts,
    scale_note,
)

FIGURES = "figures"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _anchor(text: str) -> str:
    """GitHub's heading anchor for a row id or recipe heading: lower case, spaces as '-'."""
    return "".join(ch for ch in text.lower().replace(" ", "-") if ch.isalnum() or ch in "-_")


def _summary(rows: list[RowOutcome]) -> str:
    return _table(
        ["row", "experiment", "verdict", "numbers", "recipes (scale)"],
        [
            [
                f"[{o.row.id}](#{_anchor(o.row.id)})",
                o.row.experiment,
                o.verdict,
                number_tally(o),
                ", ".join(f"{r.name} ({r.scale})" for r in o.recipes) or "–",
            ]
            for o in rows
        ],
    )


def _recipe(r: RecipeOutcome, shown: set[str], figures: dict[str, list[str]]) -> str:
    if r.name in shown:
        return f"Recipe `{r.name}`: shown above.\n"
    shown.add(r.name)
    parts = [f"#### Recipe {r.name}\n", f"{r.title}\n"]
    parts.append(
        _table(["", ""], [[k, f"`{v}`" if k == "command" else v] for k, v in recipe_facts(r)])
    )
    if r.refused:
        parts.append(f"**Did not run**: {r.refused}\n")
    parts += [f"![{r.name}]({path})\n" for path in figures.get(r.name, [])]
    if r.paragraph:
        parts.append(f"{r.paragraph}\n")
    notes = "\n".join(f"    {line}" for line in r.notes.splitlines())
    parts.append(f"<details><summary>The notes of {r.name}</summary>\n\n{notes}\n\n</details>\n")
    return "\n".join(parts)


def _row(outcome: RowOutcome, shown: set[str], figures: dict[str, list[str]]) -> str:
    row = outcome.row
    parts = [f"### {row.id}\n", f"{row.experiment} — **{outcome.verdict}**\n"]
    if row.claim:
        parts.append(f"Published: {row.claim}\n")
    why_not = not_yet_text(outcome)
    if why_not:
        parts.append(f"Not yet: {why_not}\n")
    if outcome.numbers:
        parts.append(_table(NUMBER_HEADER, [number_cells(n, c) for n, c in outcome.numbers]))
    if row.check:
        terminal = f"; on the terminal: `{row.command}`" if row.command else ""
        parts.append(f"Computed now by buflab's own code{terminal}.\n")
    disagreeing = disagreeing_recipes(outcome)
    if disagreeing:
        names = ", ".join(f"`{n}`" for n in disagreeing)
        parts.append(
            f"Where buflab disagrees, the notes of {names} (below) say what the source does "
            "not give and what the recipe chose instead.\n"
        )
    parts += [_recipe(r, shown, figures) for r in outcome.recipes]
    return "\n".join(parts)


def markdown_document(g: Gathered, command: str, figures: dict[str, list[str]]) -> str:
    """The report as Markdown; `figures` maps a recipe to its figure paths relative to the
    document."""
    shown: set[str] = set()
    parts = [f"# {TITLE}\n", *[f"{line}\n" for line in meta_lines(g, command)]]
    parts += [f"{scale_note(g.scale)}\n", f"{READING}\n", "## Summary\n"]
    parts.append("Rows of the list: " + " · ".join(f"{v} {n}" for v, n in counts(g.rows)) + "\n")
    parts.append(_summary(g.rows))
    if g.beyond:
        parts.append(
            "Beyond the list: " + " · ".join(f"{v} {n}" for v, n in counts(g.beyond)) + "\n"
        )
        parts.append(_summary(g.beyond))
    section = None
    for outcome in g.rows:
        if outcome.row.section != section:
            section = outcome.row.section
            parts.append(f"## {section}\n")
        parts.append(_row(outcome, shown, figures))
    if g.beyond:
        parts.append("## Beyond the list\n")
        parts += [_row(outcome, shown, figures) for outcome in g.beyond]
    return "\n".join(parts)


def copy_figures(g: Gathered, out: Path) -> dict[str, list[str]]:
    """Each recipe's figures copied into OUT/figures; their paths relative to OUT."""
    folder = out / FIGURES
    folder.mkdir(parents=True, exist_ok=True)
    paths: dict[str, list[str]] = {}
    for recipe in g.recipes():
        for figure in recipe.figures:
            target = folder / figure.name
            target.write_bytes(figure.read_bytes())
            paths.setdefault(recipe.name, []).append(f"{FIGURES}/{figure.name}")
    return paths
