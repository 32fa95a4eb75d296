"""`buflab report`: every published result buflab sets out to reproduce, in one document.

`rows` is the list of published results (shipped as `rows.toml`) and which recipes claim
each; `formulas` computes the formula rows live; `collect` runs (or reuses) every recipe at
a scale and judges each published number (`verdict`); `words` is what the report says,
`html` and `markdown` its two forms. `write_report` writes both.

It must not know the command line.
"""

from __future__ import annotations

from pathlib import Path

from buflab.engine.files import write_atomically
from buflab.experiments.reproduction.collect import Gathered
from buflab.experiments.reproduction.html import html_document
from buflab.experiments.reproduction.markdown import copy_figures, markdown_document


def write_report(g: Gathered, out: Path, command: str) -> tuple[Path, Path]:
    """OUT/report.html (self-contained) and OUT/report.md with its figures in OUT/figures."""
    out.mkdir(parents=True, exist_ok=True)
    html, md = out / "report.html", out / "report.md"
    figures = copy_figures(g, out)
    write_atomically(html, lambda path: Path(path).write_text(html_document(g, command)))
    write_atomically(md, lambda path: Path(path).write_text(markdown_document(g, command, figures)))
    return html, md
