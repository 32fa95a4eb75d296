"""A recipe at a smaller scale: the `[scale.ci]` and `[scale.small]` tables of a recipe file.

A recipe as written is its `full` scale, the setting of the published figure. Running every
recipe at full size takes hours, so each recipe also says how it shrinks for a quick look
(`ci`: minutes for all recipes together, the report's test) and a closer one (`small`: under
an hour for all), with a comment saying what is scaled and why:

    [scale.ci]
    runs = 1                                   # seeds per point (default: the recipe's)
    set = { duration = "20s", warmup = "10s" } # scenario overrides, as --set
    vary = { "network.bottleneck.buffer" = ["10pkt", "1000pkt"] }   # fewer swept values

`vary` keeps a subset of a varied key's values (or case names), in the recipe's order: a
scale has fewer points, never other ones, so its figure is the full one with gaps. A
published number whose point a scale leaves out is "not run" at that scale. A scale the file
does not define runs the recipe as written.

It must not know how a recipe runs or is reported: it reads and applies the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buflab.engine import ScenarioError
from buflab.experiments.recipes.tables import known_keys

# Smallest first; `full` is the recipe as written and has no table.
SCALES = ("ci", "small", "full")
FULL = "full"
SCALE_KEYS = {"runs", "set", "vary"}


@dataclass(frozen=True)
class Scale:
    """How a recipe shrinks: seeds per point (None: the recipe's), overrides and the varied
    values kept (key → values)."""

    name: str = FULL
    runs: int | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    varies: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def is_full(self) -> bool:
        return not (self.runs or self.overrides or self.varies)


def check_scale_name(name: str) -> str:
    if name not in SCALES:
        raise ScenarioError(f"scale {name!r}: no such scale; expected one of {', '.join(SCALES)}")
    return name


def read_scales(table: Any, vary: dict[str, list[Any]]) -> dict[str, Scale]:
    """The file's `[scale.NAME]` tables, checked against its `[sweep.vary]`."""
    if not isinstance(table, dict):
        raise ScenarioError(f"scale = {table!r}: expected a table such as [scale.ci]")
    scales = {}
    for name, entry in table.items():
        where = f"scale.{name}"
        if name not in SCALES or name == FULL:
            raise ScenarioError(
                f"{where}: unknown scale; expected ci or small (full is the recipe as written)"
            )
        known_keys(where, entry, SCALE_KEYS)
        runs = entry.get("runs")
        if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
            raise ScenarioError(f"{where}.runs = {runs!r}: expected a whole number of at least 1")
        overrides = entry.get("set", {})
        if not isinstance(overrides, dict):
            raise ScenarioError(f"{where}.set = {overrides!r}: expected a table of dotted keys")
        varies = entry.get("vary", {})
        if not isinstance(varies, dict):
            raise ScenarioError(f"{where}.vary = {varies!r}: expected a table of varied keys")
        for key, values in varies.items():
            if key not in vary:
                raise ScenarioError(
                    f"{where}.vary.{key}: not varied by the recipe; expected one of "
                    f"{', '.join(map(repr, vary))}"
                )
            swept = [str(v) for v in vary[key]]
            if not isinstance(values, list) or not values:
                raise ScenarioError(f"{where}.vary.{key} = {values!r}: expected a non-empty array")
            for value in values:
                if str(value) not in swept:
                    raise ScenarioError(
                        f"{where}.vary.{key}: {value!r} is not among the recipe's values "
                        f"{', '.join(swept)} (a scale keeps a subset of them)"
                    )
        scales[name] = Scale(name, runs, dict(overrides), dict(varies))
    return scales


def chosen(scales: dict[str, Scale], name: str) -> Scale:
    """The scale called `name`; one the file does not define is the recipe as written."""
    return scales.get(check_scale_name(name), Scale(name))
