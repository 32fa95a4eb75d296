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

A varied name that is not a key is a *case* dimension: each of its values names a table of
overrides in `[sweep.cases.NAME]`, so one point can change several keys at once:

    [sweep.vary]
    "network.bottleneck.buffer" = ["10pkt", "1000pkt"]
    access = ["fast", "slow"]                 # the cases, in this order
    [sweep.cases.access.fast]
    "network.access" = { rate = "1Gbps" }
    [sweep.cases.access.slow]
    "network.access" = { rate = "100Mbps", machines = 4, classes = 5 }

`metrics` names the summary metrics the table shows (default utilization and drop rate),
`plot` the two its figure draws, top and bottom (the same default; a run with bumps has
each bump's counts as metrics too, `NAME.COLUMN`), and each `[[sweep.published]]` entry is
one published number that `buflab reproduce` prints beside buflab's:

    [[sweep.published]]
    point = { access = "slow", "network.bottleneck.buffer" = "10pkt" }
    metric = "utilization"
    value = 0.86
    band = 0.05                               # read off a plot: agreement within ± band
    source = "thesis Fig 4.4 (top)"

A published *difference* names a second point, `relative_to`: the value compared is the
metric at `point` minus the metric there. A qualitative claim uses `relation = "<"` or `">"`
against `value` instead of a band ("4 machines give smaller bursts than 1": the difference
is below 0).

A figure whose y axis is a threshold ("minimum buffer for 80 % utilization vs switch size",
thesis Fig 3.4) asks for `[sweep.threshold]`: for each line of the sweep (each combination of
the other varied keys), the smallest swept x value whose mean metric reaches the target, and
optionally that value times another varied key (VOQ size × ports = buffer per input port):

    [sweep.threshold]
    metric = "utilization"
    target = 0.80
    times = "network.switch.ports"           # optional
    sqrt_n = true                            # optional: RTT·C/√N of each line beside it

A recipe about the live auto-sizer (thesis ch. 4.3) puts it beside an offline search with
`[sweep.autosize]`: the sweep's grid read by `[sweep.threshold]` is the offline answer per
seed, and one more run per seed of the unvaried scenario, with these `[autosize]` keys (and
optionally its own `duration`), is the live one:

    [sweep.autosize]
    target_utilization = 0.90                # the threshold's target
    duration = "660s"

The shipped recipes are the `*.toml` files beside this module (`buflab reproduce NAME`);
`buflab sweep FILE` reads the same header from any scenario file.

It must not know how a sweep runs or is reported: it turns a recipe into a `Plan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from buflab.engine import ScenarioError
from buflab.engine.scenario import Overrides, Scenario, apply_overrides, load_scenario
from buflab.engine.units import KINDS, UnitError, parse_quantity
from buflab.experiments.recipes.scale import FULL, Scale, chosen, read_scales
from buflab.experiments.recipes.tables import known_keys
from buflab.experiments.sweep import Plan, Vary

HEADER_KEYS = {
    "autosize",
    "runs",
    "vary",
    "labels",
    "theory",
    "cases",
    "metrics",
    "plot",
    "published",
    "threshold",
}
THRESHOLD_KEYS = {"metric", "target", "times", "sqrt_n"}
DEFAULT_METRICS = ("utilization", "drop_rate")
PUBLISHED_KEYS = {"point", "metric", "value", "band", "source", "relative_to", "relation"}
# "≈": within ± band of the value; "<" and ">": a claim without a number (e.g. "fewer drops").
RELATIONS = ("≈", "<", ">")
# Published figures are read off plots: a few points either way is agreement.
DEFAULT_BAND = 0.05


@dataclass(frozen=True)
class TheorySettings:
    """Eq. 2.1 needs a peak load ρ and a target link utilization θρ that a scenario lacks."""

    load: float
    utilization: float


@dataclass(frozen=True)
class Published:
    """One published number: the point it belongs to (varied keys or case names → values),
    the summary metric, the value and the band of agreement around it."""

    point: dict[str, Any]
    metric: str
    value: float
    band: float = DEFAULT_BAND
    source: str = ""
    relative_to: dict[str, Any] | None = None
    relation: str = "≈"

    @classmethod
    def from_table(cls, index: int, table: Any) -> Published:
        where = f"sweep.published.{index}"
        known_keys(where, table, PUBLISHED_KEYS)
        for key in ("point", "metric", "value"):
            if key not in table:
                raise ScenarioError(f"{where}: missing {key}")
        for key in ("point", "relative_to"):
            if key in table and not isinstance(table[key], dict):
                raise ScenarioError(f"{where}.{key} = {table[key]!r}: expected a table")
        if table.get("relation", "≈") not in RELATIONS:
            raise ScenarioError(
                f"{where}.relation = {table['relation']!r}: expected one of {', '.join(RELATIONS)}"
            )
        for key, low in (("value", -math.inf), ("band", 0.0)):
            value = table.get(key, DEFAULT_BAND)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
                expected = "a number" if key == "value" else "a number ≥ 0"
                raise ScenarioError(f"{where}.{key} = {value!r}: expected {expected}")
        return cls(**table)


@dataclass(frozen=True)
class Threshold:
    """Per line of the sweep, the smallest x whose mean `metric` reaches `target`; with
    `times`, also that x multiplied by the line's value of the varied key `times`; with
    `sqrt_n`, the small-buffer rule RTT·C/√N of the line's scenario beside it (a figure of
    minimum buffer against flows, as the pacing seed's buffer-sizing plot)."""

    metric: str
    target: float
    times: str | None = None
    sqrt_n: bool = False

    @classmethod
    def from_table(cls, table: Any, vary: dict[str, list[Any]]) -> Threshold:
        where = "sweep.threshold"
        known_keys(where, table, THRESHOLD_KEYS)
        for key in ("metric", "target"):
            if key not in table:
                raise ScenarioError(f"{where}: missing {key}")
        if not isinstance(table["metric"], str):
            raise ScenarioError(f"{where}.metric = {table['metric']!r}: expected a metric name")
        target = table["target"]
        if isinstance(target, bool) or not isinstance(target, int | float):
            raise ScenarioError(f"{where}.target = {target!r}: expected a number")
        keys = list(vary)
        if not keys or not all(_is_quantity(v) for v in vary[keys[0]]):
            first = f"{keys[0]!r} varies over {vary[keys[0]]!r}" if keys else "nothing is varied"
            raise ScenarioError(
                f"{where}: the x axis (the first varied key) must be numbers or quantities "
                f"(10, 10pkt, 1Gbps) to search; {first}"
            )
        times = table.get("times")
        if times is not None and (times not in keys[1:] or not all(map(_is_number, vary[times]))):
            raise ScenarioError(
                f"{where}.times = {times!r}: expected a varied key with numeric values other "
                f"than the x axis; expected one of {', '.join(map(repr, keys[1:])) or 'none'}"
            )
        sqrt_n = table.get("sqrt_n", False)
        if not isinstance(sqrt_n, bool):
            raise ScenarioError(f"{where}.sqrt_n = {sqrt_n!r}: expected true or false")
        if sqrt_n and not all(str(v).endswith("pkt") for v in vary[keys[0]]):
            raise ScenarioError(
                f"{where}.sqrt_n = true: RTT·C/√N is in packets, so the x axis must be buffers in "
                f"packets (10pkt, 100pkt); {keys[0]!r} varies over {vary[keys[0]]!r}"
            )
        return cls(table["metric"], float(target), times, sqrt_n)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_quantity(value: Any) -> bool:
    if _is_number(value):
        return True
    try:
        parse_quantity(str(value), tuple(KINDS))
    except UnitError:
        return False
    return True


def _table_of(table: dict[str, Any], key: str) -> dict[str, Any]:
    """`sweep.KEY`, a table (empty when absent)."""
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"sweep.{key} = {value!r}: expected a table, e.g. [sweep.{key}]")
    return value


def _theory(theory: Any) -> TheorySettings:
    """`[sweep.theory]`: `load` and `utilization`, both numbers."""
    expected = {"load", "utilization"}
    known_keys("sweep.theory", theory, expected)
    for key in sorted(expected):
        value = theory.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ScenarioError(f"sweep.theory.{key} = {value!r}: expected a number")
    return TheorySettings(load=float(theory["load"]), utilization=float(theory["utilization"]))


def _autosize(table: Any, threshold: Any) -> dict[str, Any] | None:
    """`[sweep.autosize]`: a table whose target is the threshold's (the engine checks the
    rest of its keys as `[autosize]`'s when the live runs are built)."""
    if table is None:
        return None
    where = "sweep.autosize"
    if not isinstance(table, dict) or "target_utilization" not in table:
        raise ScenarioError(f"{where} = {table!r}: expected a table with target_utilization")
    if not isinstance(threshold, dict) or threshold.get("metric") != "utilization":
        raise ScenarioError(
            f"{where}: needs a [sweep.threshold] on utilization, the offline search it is "
            "compared with"
        )
    if table["target_utilization"] != threshold.get("target"):
        raise ScenarioError(
            f"{where}.target_utilization = {table['target_utilization']!r}: expected the "
            f"threshold's target, {threshold.get('target')!r}"
        )
    return dict(table)


@dataclass
class SweepHeader:
    runs: int = 1
    varies: list[Vary] = field(default_factory=list)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    theory: TheorySettings | None = None
    metrics: tuple[str, ...] = DEFAULT_METRICS
    # The figure's two panels (top, bottom): by default utilization and the drop rate.
    plot: tuple[str, str] | None = None
    published: list[Published] = field(default_factory=list)
    threshold: Threshold | None = None
    # `[sweep.autosize]`: the live auto-sizer's `[autosize]` keys (and its run's `duration`).
    autosize: dict[str, Any] | None = None
    # The scale it was read at (`scale`): its varies and runs are already the scale's.
    scale: Scale = field(default_factory=Scale)

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> SweepHeader:
        known_keys("sweep", table, HEADER_KEYS)
        vary = _table_of(table, "vary")
        cases = _table_of(table, "cases")
        labels = _table_of(table, "labels")
        runs = table.get("runs", 1)
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise ScenarioError(f"sweep.runs = {runs!r}: expected a whole number of at least 1")
        for key, values in vary.items():
            if not isinstance(values, list) or not values:
                raise ScenarioError(
                    f"sweep.vary.{key} = {values!r}: expected a non-empty array of values"
                )
            _check_cases(key, values, cases)
        unused = set(cases) - set(vary)
        if unused:
            name = sorted(unused)[0]
            raise ScenarioError(
                f"sweep.cases.{name}: not varied; add {name} = [its case names] to sweep.vary"
            )
        metrics = table.get("metrics", list(DEFAULT_METRICS))
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise ScenarioError(f"sweep.metrics = {metrics!r}: expected an array of metric names")
        plot = table.get("plot")
        two_names = isinstance(plot, list) and len(plot) == 2
        if plot is not None and not (two_names and all(isinstance(m, str) for m in plot)):
            raise ScenarioError(
                f"sweep.plot = {plot!r}: expected two metric names, the top and bottom panels'"
            )
        published = table.get("published", [])
        if not isinstance(published, list):
            raise ScenarioError(f"sweep.published = {published!r}: expected an array of tables")
        theory = table.get("theory")
        threshold = table.get("threshold")
        entries = [Published.from_table(i, entry) for i, entry in enumerate(published)]
        for i, entry in enumerate(entries):
            _check_point(f"sweep.published.{i}", entry, vary)
        return cls(
            runs=runs,
            varies=[Vary(key, tuple(values), cases.get(key)) for key, values in vary.items()],
            labels=labels,
            theory=None if theory is None else _theory(theory),
            metrics=tuple(metrics),
            plot=None if plot is None else (plot[0], plot[1]),
            published=entries,
            threshold=None if threshold is None else Threshold.from_table(threshold, vary),
            autosize=_autosize(table.get("autosize"), threshold),
        )

    def plan(self, scenario: Scenario, extra_varies: list[Vary], runs: int | None) -> Plan:
        """The sweep plan; --vary options replace the header's list for the same key."""
        varies = {vary.key: vary for vary in self.varies}
        for vary in extra_varies:
            cases = varies[vary.key].cases if vary.key in varies else None
            if cases is not None:  # --vary access=slow picks among the recipe's cases
                _check_cases(vary.key, list(vary.values), {vary.key: cases})
            varies[vary.key] = Vary(vary.key, vary.values, cases)
        return Plan(scenario, list(varies.values()), runs or self.runs)

    def point_overrides(self, point: dict[str, Any]) -> dict[str, Any]:
        """The scenario overrides of one point of the sweep (`buflab run --point`): each varied
        key's value, a case dimension's value naming its case."""
        varies = {vary.key: vary for vary in self.varies}
        overrides: dict[str, Any] = {}
        for key, value in point.items():
            if key not in varies:
                varied = ", ".join(varies) or "nothing"
                raise ScenarioError(f"--point {key}: not varied by this file (it varies {varied})")
            vary = varies[key]
            if vary.cases is not None:
                _check_cases(key, [value], {key: vary.cases})
            overrides.update(vary.overrides(value))
        return overrides

    def label(self, key: str, value: Any) -> str:
        """Legend text for a varied value: the recipe's label, else "access.rate = 10Gbps"."""
        default = f"{short_key(key)} = {value}"
        if any(vary.key == key and vary.cases is not None for vary in self.varies):
            default = str(value)  # a case's name says what it is
        return self.labels.get(key, {}).get(str(value), default)


def _check_point(where: str, entry: Published, vary: dict[str, list[Any]]) -> None:
    """A published number's points name varied keys and values the sweep runs, so a typo
    fails before the sweep rather than when its table is printed."""
    for name, point in (("point", entry.point), ("relative_to", entry.relative_to or {})):
        for key, value in point.items():
            if key not in vary:
                raise ScenarioError(
                    f"{where}.{name}: {key!r} is not varied; expected one of "
                    f"{', '.join(map(repr, vary))}"
                )
            if str(value) not in {str(v) for v in vary[key]}:
                raise ScenarioError(
                    f"{where}.{name}.{key} = {value!r}: not among the swept values "
                    f"{', '.join(map(str, vary[key]))}"
                )


def _check_cases(key: str, values: list[Any], cases: dict[str, Any]) -> None:
    """A varied name with a `[sweep.cases.NAME]` table must list only cases defined there."""
    if key not in cases:
        return
    defined = cases[key]
    if not isinstance(defined, dict):
        raise ScenarioError(f"sweep.cases.{key} = {defined!r}: expected a table of cases")
    for value in values:
        if not isinstance(value, str) or value not in defined:
            raise ScenarioError(
                f"sweep.vary.{key}: case {value!r} is not defined; expected one of "
                f"{', '.join(map(repr, defined))} (a table under sweep.cases.{key})"
            )
        if not isinstance(defined[value], dict):
            raise ScenarioError(
                f"sweep.cases.{key}.{value} = {defined[value]!r}: expected a table of overrides "
                '(dotted keys, e.g. "network.access" = { rate = "1Gbps" })'
            )


def short_key(key: str) -> str:
    """The last two segments of a dotted key: enough to tell access.rate from bottleneck.rate."""
    return ".".join(key.split(".")[-2:])


def split_header(tree: Scenario, scale: str = FULL) -> tuple[Scenario, SweepHeader]:
    """The scenario without its `[sweep]` and `[scale]` tables, and the first read as a
    header; at a `scale` other than full, the scale's overrides applied to the scenario and
    its kept values and seeds to the header (`buflab.experiments.recipes.scale`)."""
    scenario = dict(tree)
    table = scenario.pop("sweep", {})
    if not isinstance(table, dict):
        raise ScenarioError(f"sweep = {table!r}: expected a table")
    try:
        header = SweepHeader.from_table(table)
    except TypeError as error:  # an unknown key in [sweep.theory]
        raise ScenarioError(f"sweep.theory: {error}; expected load and utilization") from None
    vary = {v.key: list(v.values) for v in header.varies}
    picked = chosen(read_scales(scenario.pop("scale", {}), vary), scale)
    if picked.overrides:
        scenario = apply_overrides(scenario, picked.overrides)
    kept = {key: {str(v) for v in values} for key, values in picked.varies.items()}
    header.varies = [
        Vary(v.key, tuple(x for x in v.values if str(x) in kept[v.key]), v.cases)
        if v.key in kept
        else v
        for v in header.varies
    ]
    header.runs = picked.runs or header.runs
    header.scale = picked
    return scenario, header


def names() -> list[str]:
    """The shipped recipes."""
    return sorted(
        entry.name.removesuffix(".toml")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".toml")
    )


def describe(name: str) -> str:
    """A shipped recipe's first comment line, which says what it reproduces."""
    text = resources.files(__name__).joinpath(f"{name}.toml").read_text()
    first = next((line for line in text.splitlines() if line.startswith("#")), "# ")
    return first.lstrip("# ").strip().removeprefix(f"{name}:").strip()


def load(
    name_or_path: str, overrides: Overrides = None, scale: str = FULL
) -> tuple[Scenario, SweepHeader]:
    """A shipped recipe by name, or any recipe file by path, at a scale (`scale`: ci, small
    or full); overrides apply to the scenario after the scale's."""
    # A file path wins; a directory of the same name as a recipe (say the `s3/` that
    # `reproduce s3` wrote into the working directory) does not hide the recipe.
    if name_or_path.endswith(".toml") or Path(name_or_path).is_file():
        tree = load_scenario(name_or_path)
    elif name_or_path in names():
        tree = load_scenario(resources.files(__name__).joinpath(f"{name_or_path}.toml").read_text())
    else:
        raise ScenarioError(f"no recipe named {name_or_path!r}; available: {', '.join(names())}")
    scenario, header = split_header(tree, scale)
    return apply_overrides(scenario, overrides), header
