"""The report as one self-contained HTML file: its style inline, every figure a PNG inside
it (base64), no script and nothing fetched, so it opens in a browser with no network.

Read first: `words` (what it says). It must not know how the results were gathered.
"""

from __future__ import annotations

import base64
import re
from html import escape
from pathlib import Path

from buflab.experiments.reproduction.collect import Gathered, RecipeOutcome, RowOutcome
from buflab.experiments.reproduction.verdict import judge
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

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto;
       padding: 0 1rem; color: #222; }
h1 { font-size: 1.7rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ccc; }
h3 { margin-top: 2rem; } h4 { margin: 1.2rem 0 .3rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 14px; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; white-space: nowrap; }
code, pre { font: 13px/1.4 ui-monospace, monospace; background: #f6f6f6; }
pre { padding: .6rem; overflow-x: auto; white-space: pre-wrap; }
img { max-width: min(100%, 50rem); border: 1px solid #eee; }
.verdict { font-weight: 600; padding: 0 .4rem; border-radius: .3rem; white-space: nowrap; }
.agrees { background: #d8f0d8; color: #135213; }
.near { background: #fbf0c8; color: #6b5000; }
.disagrees { background: #f6d4d4; color: #7d1414; }
.not-yet { background: #e4e4ea; color: #444; }
.claim { margin: .2rem 0 .6rem; }
.facts td:first-child { color: #666; white-space: nowrap; }
"""


def _inline(text: str) -> str:
    """Escaped text with the words' **bold** and `code` marks."""
    text = escape(text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def _verdict(verdict: str, text: str | None = None) -> str:
    shown = escape(text or verdict)
    return f'<span class="verdict {verdict.replace(" ", "-")}">{shown}</span>'


def _figure(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<p><img alt="{escape(alt)}" src="data:image/png;base64,{data}"></p>'


def _numbers(outcome: RowOutcome) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in NUMBER_HEADER)
    body = []
    for recipe, c in outcome.numbers:
        cells = number_cells(recipe, c)
        tds = [f"<td>{escape(cells[0])}</td>", f"<td>{escape(cells[1])}</td>"]
        tds += [f'<td class="num">{escape(cell)}</td>' for cell in cells[2:4]]
        tds += [f"<td>{_verdict(judge(c), cells[4])}</td>", f"<td>{escape(cells[5])}</td>"]
        body.append(f"<tr>{''.join(tds)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _recipe(r: RecipeOutcome, shown: set[str]) -> str:
    """A recipe's block the first time it appears; a link back to it after."""
    if r.name in shown:
        return f'<p>Recipe <a href="#recipe-{r.name}"><code>{r.name}</code></a>: shown above.</p>'
    shown.add(r.name)
    parts = [
        f'<h4 id="recipe-{r.name}">Recipe <code>{escape(r.name)}</code>: {_inline(r.title)}</h4>'
    ]
    facts = "".join(
        f"<tr><td>{escape(k)}</td><td>{_code(k, v)}</td></tr>" for k, v in recipe_facts(r)
    )
    parts.append(f'<table class="facts">{facts}</table>')
    if r.refused:
        parts.append(f"<p><strong>Did not run</strong>: {escape(r.refused)}</p>")
    parts += [_figure(path, f"{r.name}: {r.title}") for path in r.figures]
    if r.paragraph:
        parts.append(f"<p>{escape(r.paragraph)}</p>")
    parts.append(
        f'<details id="notes-{r.name}"><summary>The recipe\'s notes: what it reproduces and '
        f"the settings chosen where the source is silent</summary><pre>{escape(r.notes)}</pre>"
        "</details>"
    )
    return "\n".join(parts)


def _code(key: str, value: str) -> str:
    return f"<code>{escape(value)}</code>" if key == "command" else escape(value)


def _row(outcome: RowOutcome, shown: set[str]) -> str:
    row = outcome.row
    parts = [
        f'<section id="row-{escape(row.id)}">',
        f"<h3>{escape(row.id)} · {escape(row.experiment)} {_verdict(outcome.verdict)}</h3>",
    ]
    if row.claim:
        parts.append(f'<p class="claim"><strong>Published</strong>: {escape(row.claim)}</p>')
    why_not = not_yet_text(outcome)
    if why_not:
        parts.append(f"<p><strong>Not yet</strong>: {_inline(why_not)}</p>")
    if outcome.numbers:
        parts.append(_numbers(outcome))
    if row.check:
        terminal = f"; on the terminal: <code>{escape(row.command)}</code>" if row.command else ""
        parts.append(f"<p>Computed now by buflab's own code{terminal}.</p>")
    disagreeing = disagreeing_recipes(outcome)
    if disagreeing:
        links = ", ".join(
            f'<a href="#notes-{n}">the notes of <code>{n}</code></a>' for n in disagreeing
        )
        parts.append(
            f"<p>Where buflab disagrees, {links} say what the source does not give (settings, "
            "the load model, the pacing model) and what the recipe chose instead.</p>"
        )
    parts += [_recipe(r, shown) for r in outcome.recipes]
    parts.append("</section>")
    return "\n".join(parts)


def _summary(rows: list[RowOutcome]) -> str:
    head = (
        "<tr><th>row</th><th>experiment</th><th>verdict</th><th>numbers</th>"
        "<th>recipes (scale)</th></tr>"
    )
    body = []
    for o in rows:
        recipes = ", ".join(f"{r.name} ({r.scale})" for r in o.recipes) or "–"
        body.append(
            f'<tr><td><a href="#row-{escape(o.row.id)}">{escape(o.row.id)}</a></td>'
            f"<td>{escape(o.row.experiment)}</td><td>{_verdict(o.verdict)}</td>"
            f"<td>{escape(number_tally(o))}</td><td>{escape(recipes)}</td></tr>"
        )
    return f"<table>{head}{''.join(body)}</table>"


def _tally(rows: list[RowOutcome]) -> str:
    return " · ".join(f"{_verdict(v)} {n}" for v, n in counts(rows))


def html_document(g: Gathered, command: str) -> str:
    """The whole report as one HTML file."""
    shown: set[str] = set()
    tally = _tally(g.rows)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(TITLE)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(TITLE)}</h1>",
        *[f"<p>{_inline(line)}</p>" for line in meta_lines(g, command)],
        f"<p>{_inline(scale_note(g.scale))}</p>",
        f"<p>{_inline(READING)}</p>",
        "<h2>Summary</h2>",
        f"<p>Rows of the list: {tally}</p>",
        _summary(g.rows),
    ]
    if g.beyond:
        parts += [
            f"<p>Beyond the list: {_tally(g.beyond)}</p>",
            _summary(g.beyond),
        ]
    section = None
    for outcome in g.rows:
        if outcome.row.section != section:
            section = outcome.row.section
            parts.append(f"<h2>{escape(section)}</h2>")
        parts.append(_row(outcome, shown))
    if g.beyond:
        parts.append("<h2>Beyond the list</h2>")
        parts.append(
            "<p>Recipes that claim no row of the list: the same questions asked of later "
            "work (active queue management, DCTCP, QCN, pacing in the network).</p>"
        )
        parts += [_row(outcome, shown) for outcome in g.beyond]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
