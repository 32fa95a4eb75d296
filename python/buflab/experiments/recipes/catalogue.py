"""The catalogue of the results buflab reproduces, `docs/reproduce.md`, made from the shipped
recipes themselves so that it cannot drift from them: for each recipe, what it reproduces
(its header comment: the source, the published result, the settings read from the prose), the
published numbers it is checked against, and the command that runs it.

Read first: `buflab.experiments.recipes` (a recipe file and its `[sweep]` header). Plain text
out: it must not run anything.
"""

from __future__ import annotations

from importlib import resources

from buflab.experiments.recipes import Published, describe, load, names

INTRO = """\
# Results buflab reproduces

Generated from the recipes in `python/buflab/experiments/recipes/` by
`buflab docs --recipes > docs/reproduce.md` (a test keeps it in step). Each recipe runs with
`buflab reproduce NAME`, which prints every published number beside buflab's own and writes
the figure; `buflab reproduce --list` lists them. Published figures are read off plots: treat
them as bands, as the recipes do. The sources: "thesis" is Guido Appenzeller's *Sizing Router
Buffers* (Stanford, 2005) with Neda Beheshti's chapters on networks of tiny-buffer routers
and optical buffers, "IMC" the tiny-buffers measurement paper, "pacing" the course
reproduction of Aggarwal et al.'s pacing study, "NetBump" the bump-in-the-wire thesis.

"""


# The comment above a recipe's [scale.ci] and [scale.small] tables starts so.
SCALES_COMMENT = "# Scales for `buflab report`"


def scales_text(name: str) -> str:
    """What a recipe's scales shrink and why: the comment above its `[scale]` tables, after
    its first words ("Scales for `buflab report` (...):"); empty without one."""
    text = resources.files("buflab.experiments.recipes").joinpath(f"{name}.toml").read_text()
    start = text.find(SCALES_COMMENT)
    if start < 0:
        return ""
    lines = []
    for line in text[start:].splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines).split(": ", 1)[-1]


def header_text(name: str) -> str:
    """A recipe's header comment, after its first line, as text."""
    text = resources.files("buflab.experiments.recipes").joinpath(f"{name}.toml").read_text()
    lines = []
    for line in text.splitlines()[1:]:
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    # A comment line that starts with ">" ("> 99 %") would read as a quotation in Markdown.
    return "\n".join(f"\\{line}" if line.startswith(">") else line for line in lines).strip()


def _number(p: Published) -> str:
    relation = "" if p.relation == "≈" else f"{p.relation} "
    percent = p.metric in ("utilization", "drop_rate", "mark_rate") or p.metric.endswith("_rate")
    value = f"{p.value * 100:g} %" if percent else f"{p.value:g}"
    band = f" ± {p.band * 100:g} pt" if percent and p.band else (f" ± {p.band:g}" if p.band else "")
    return f"{relation}{value}{band}"


def _published_table(published: list[Published]) -> str:
    if not published:
        return "No number is checked: the recipe's figure is compared by eye.\n"
    rows = ["| point | metric | published | source |", "|---|---|---|---|"]
    for p in published:
        point = ", ".join(f"{k} = {v}" for k, v in p.point.items()) or "every point"
        if p.relative_to:
            # A difference between two points: this one's metric minus the other's.
            other = ", ".join(f"{k} = {v}" for k, v in p.relative_to.items())
            point = f"{point}, minus {other}"
        rows.append(f"| {point} | `{p.metric}` | {_number(p)} | {p.source} |")
    return "\n".join(rows) + "\n"


def catalogue() -> str:
    """The whole of docs/reproduce.md."""
    parts = [INTRO]
    for name in names():
        _, header = load(name)
        parts += [
            f"## {name}: {describe(name)}\n",
            f"{header_text(name)}\n",
            _published_table(header.published),
            f"Run it: `buflab reproduce {name}` (`--scale ci` or `--scale small` for a shorter "
            f"run: {scales_text(name)})\n",
        ]
    return "\n".join(parts)
