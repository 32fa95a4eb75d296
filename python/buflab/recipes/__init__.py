"""Recipes: scenario files with a `[sweep]` header, one per reproduced figure.

A recipe is an ordinary scenario plus a `[sweep]` table that the engine never sees:

    [sweep]
    runs = 1                                  # seeds per point
    [sweep.vary]                              # the swept keys, first = x axis of the plot
    "network.bottleneck.buffer" = ["10pkt", "100pkt"]
    [sweep.labels."network.access.rate"]      # optional legend text per value
    "10Gbps" = "fast access"
    [sweep.theory]                            # optional: eq. 2.1 settings for the plot
    load = 0.75
    utilization = 0.70

The shipped recipes are the `*.toml` files beside this module (`buflab reproduce NAME`);
`buflab sweep FILE` reads the same header from any scenario file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from buflab.engine import ScenarioError
from buflab.scenario import Overrides, Scenario, apply_overrides, load_scenario
from buflab.sweep import Plan, Vary

HEADER_KEYS = {"runs", "vary", "labels", "theory"}


@dataclass(frozen=True)
class TheorySettings:
    """Eq. 2.1 needs a peak load ρ and a target link utilization θρ that a scenario lacks."""

    load: float
    utilization: float


@dataclass
class SweepHeader:
    runs: int = 1
    varies: list[Vary] = field(default_factory=list)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    theory: TheorySettings | None = None

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> SweepHeader:
        unknown = set(table) - HEADER_KEYS
        if unknown:
            raise ScenarioError(
                f"sweep.{sorted(unknown)[0]}: unknown key; expected one of "
                f"{', '.join(sorted(HEADER_KEYS))}"
            )
        vary = table.get("vary", {})
        for key, values in vary.items():
            if not isinstance(values, list) or not values:
                raise ScenarioError(
                    f"sweep.vary.{key} = {values!r}: expected a non-empty array of values"
                )
        theory = table.get("theory")
        return cls(
            runs=table.get("runs", 1),
            varies=[Vary(key, tuple(values)) for key, values in vary.items()],
            labels=table.get("labels", {}),
            theory=None if theory is None else TheorySettings(**theory),
        )

    def plan(self, scenario: Scenario, extra_varies: list[Vary], runs: int | None) -> Plan:
        """The sweep plan; --vary options replace the header's list for the same key."""
        varies = {vary.key: vary for vary in self.varies}
        varies.update({vary.key: vary for vary in extra_varies})
        return Plan(scenario, list(varies.values()), runs or self.runs)

    def label(self, key: str, value: Any) -> str:
        """Legend text for a varied value: the recipe's label, else "access.rate = 10Gbps"."""
        return self.labels.get(key, {}).get(str(value), f"{short_key(key)} = {value}")


def short_key(key: str) -> str:
    """The last two segments of a dotted key: enough to tell access.rate from bottleneck.rate."""
    return ".".join(key.split(".")[-2:])


def split_header(tree: Scenario) -> tuple[Scenario, SweepHeader]:
    """The scenario without its `[sweep]` table, and that table read as a header."""
    scenario = dict(tree)
    table = scenario.pop("sweep", {})
    if not isinstance(table, dict):
        raise ScenarioError(f"sweep = {table!r}: expected a table")
    try:
        return scenario, SweepHeader.from_table(table)
    except TypeError as error:  # an unknown key in [sweep.theory]
        raise ScenarioError(f"sweep.theory: {error}; expected load and utilization") from None


def names() -> list[str]:
    """The shipped recipes."""
    return sorted(
        entry.name.removesuffix(".toml")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".toml")
    )


def load(name_or_path: str, overrides: Overrides = None) -> tuple[Scenario, SweepHeader]:
    """A shipped recipe by name, or any recipe file by path; overrides apply to the scenario."""
    if name_or_path.endswith(".toml") or Path(name_or_path).exists():
        tree = load_scenario(name_or_path)
    elif name_or_path in names():
        tree = load_scenario(resources.files(__name__).joinpath(f"{name_or_path}.toml").read_text())
    else:
        raise ScenarioError(f"no recipe named {name_or_path!r}; available: {', '.join(names())}")
    scenario, header = split_header(tree)
    return apply_overrides(scenario, overrides), header
