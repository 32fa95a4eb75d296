"""The Python API: `run`, `validate`, `load_scenario` and the `Result` of a run.

    >>> import buflab
    >>> result = buflab.run("examples/dumbbell.toml", network__bottleneck__buffer="50pkt", seed=2)
    >>> result.summary["utilization"], result.flows.head()

Keyword overrides use `__` for the dots of a key (`traffic__0__flows=10`); `overrides` takes
a mapping of dotted keys or a list of "KEY=VALUE" strings, as `--set` does on the command line.
Keyword overrides are applied after `overrides`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine import core, run_engine, scenario_json
from buflab.scenario import (
    Overrides,
    Scenario,
    ScenarioSource,
    apply_overrides,
    kwargs_overrides,
)
from buflab.scenario import load_scenario as _load


@dataclass
class Result:
    """One finished run: the summary, per-flow and per-interval tables, and the scenario run."""

    summary: dict[str, Any]
    flows: pd.DataFrame
    timeseries: pd.DataFrame
    events: pd.DataFrame | None
    scenario: Scenario

    @classmethod
    def from_engine(cls, raw: dict[str, Any], scenario: Scenario) -> Result:
        events = raw.get("events")
        return cls(
            summary=dict(raw["summary"]),
            flows=pd.DataFrame(raw["flows"]),
            timeseries=pd.DataFrame(raw["timeseries"]),
            events=None if events is None else _events_frame(events),
            scenario=scenario,
        )

    def to_dir(self, out: str | Path, csv: bool = False) -> Path:
        """Write summary.json, scenario.json and the tables as Parquet (and CSV if asked)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (out / "scenario.json").write_text(json.dumps(self.scenario, indent=2, default=str) + "\n")
        for name, table in self.tables().items():
            table.to_parquet(out / f"{name}.parquet", index=False)
            if csv:
                table.to_csv(out / f"{name}.csv", index=False)
        return out

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables this result has, by file name (events only when they were recorded)."""
        tables = {"flows": self.flows, "timeseries": self.timeseries}
        if self.events is not None:
            tables["events"] = self.events
        return tables


def _events_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(columns)
    # Event logs have millions of rows and three distinct event names.
    if "event" in frame:
        frame["event"] = frame["event"].astype("category")
    return frame


def load_scenario(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Scenario:
    """The scenario tree from a path, TOML text or dict, with overrides applied (not validated)."""
    return apply_overrides(_load(scenario, overrides), kwargs_overrides(kw))


def validate(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Scenario:
    """The scenario as the engine normalises it (defaults filled in); raises ScenarioError."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    return core().validate(scenario_json(tree))


def run(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Result:
    """Run one scenario to completion; raises ScenarioError for invalid input."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    return Result.from_engine(run_engine(scenario_json(tree)), tree)
