"""The rows of the report: the published results buflab sets out to reproduce (`rows.toml`,
shipped with the package so that the report needs nothing outside it), and which shipped
recipes reproduce each.

A recipe claims its rows in its header comment, "Reproduction target S2" or "Reproduction
targets T1 and T3": a new recipe file is found without an edit to the row list. A recipe
that claims no row of the list (the AQM, DCTCP and QCN recipes) is reported after the rows,
as a result beyond the list.

It must not run anything.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources

from buflab.engine import ScenarioError
from buflab.experiments import recipes

ROW_KEYS = {"id", "section", "experiment", "claim", "check", "command", "open"}
# "Reproduction target S1", "Reproduction targets T1 and T3 (drop rate vs buffer)": the ids up
# to the end of the clause.
_CLAIM = re.compile(r"Reproduction targets?\s+([^.(;:]*)")
_ID = re.compile(r"\b[A-Z]{1,2}\d{1,2}\b")


@dataclass(frozen=True)
class Row:
    """One published result: its id, the section of the list, the experiment, the published
    claim, the live check of a formula row (`formulas.CHECKS`), what is missing while no
    recipe claims it, and the recipes that do."""

    id: str
    section: str
    experiment: str
    claim: str
    check: str | None = None
    command: str | None = None  # the command that shows a formula row on the terminal
    open: str | None = None
    recipes: tuple[str, ...] = field(default=())


def claimed_rows(name: str) -> list[str]:
    """The row ids a shipped recipe's header comment names as its reproduction targets."""
    text = resources.files(recipes.__name__).joinpath(f"{name}.toml").read_text()
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line.lstrip("# "))
    found = _CLAIM.search(" ".join(header))
    return _ID.findall(found.group(1)) if found else []


def load_rows(text: str | None = None) -> list[Row]:
    """The row list (`rows.toml`, or `text` in its format), each with the shipped recipes
    that claim it, in name order."""
    if text is None:
        text = resources.files(__name__.rsplit(".", 1)[0]).joinpath("rows.toml").read_text()
    entries = tomllib.loads(text).get("row", [])
    claims: dict[str, list[str]] = {}
    for name in recipes.names():
        for row_id in claimed_rows(name):
            claims.setdefault(row_id, []).append(name)
    rows = []
    for index, entry in enumerate(entries):
        unknown = set(entry) - ROW_KEYS
        if unknown:
            raise ScenarioError(f"row.{index}.{sorted(unknown)[0]}: unknown key")
        rows.append(Row(**entry, recipes=tuple(claims.get(entry["id"], ()))))
    return rows


def unclaimed_recipes(rows: list[Row]) -> list[str]:
    """Shipped recipes that no row of the list names: results beyond the list."""
    claimed = {name for row in rows for name in row.recipes}
    return [name for name in recipes.names() if name not in claimed]
