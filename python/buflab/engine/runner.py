"""Running a scenario: `run`, `validate` and `load_scenario`, the front of the engine layer.

`load_scenario` reads a scenario (a path, TOML text or a dict) and applies overrides, keyword
ones (`traffic__0__flows=10`) after `overrides`; `validate` asks the engine for the
normalised scenario; `run` runs it and returns a `Result` (`buflab.engine.result`), streaming
the event log to a file or keeping it in memory when the scenario records one. This module
must not know what a run is for: sweeps, searches and reports are built on it, above.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buflab.engine import ScenarioError, core, run_engine, scenario_json
from buflab.engine.events import EventLogCollector, EventLogWriter, LogFacts
from buflab.engine.memory import check_growth, check_memory
from buflab.engine.result import Result
from buflab.engine.scenario import (
    Overrides,
    Scenario,
    ScenarioSource,
    apply_overrides,
    kwargs_overrides,
    named_with,
    setting_texts,
)
from buflab.engine.scenario import load_scenario as _load


def load_scenario(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Scenario:
    """The scenario tree from a path, TOML text or dict, with overrides applied (not validated)
    and named in its `name` (`named_with`)."""
    tree = apply_overrides(_load(scenario, overrides), kwargs_overrides(kw), copy=False)
    return named_with(tree, setting_texts(overrides) + setting_texts(kwargs_overrides(kw)))


def validate(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Scenario:
    """The scenario as the engine normalises it (defaults filled in); raises ScenarioError."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    return core().validate(scenario_json(tree))


@dataclass(frozen=True)
class Prepared:
    """A scenario read, validated and checked against the machine's memory, ready to run: a
    command that looks at the normalised scenario before running it (for estimates and notes)
    reads and validates it once, not twice (seconds on a file of 100,000 traffic entries)."""

    tree: Scenario
    text: str  # the tree as the engine reads it
    normalized: Scenario
    # The link the summary describes, as the engine reads it (`_core.link_facts`).
    link_facts: dict[str, Any]


def prepare(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Prepared:
    """The scenario ready to run (`run` takes it); raises ScenarioError for invalid input and
    for a run the machine's memory could not hold, before anything runs."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    text = scenario_json(tree)
    normalized, link_facts = core().validate(text, link_facts=True)
    check_memory(normalized)
    check_growth(normalized)
    return Prepared(tree, text, normalized, link_facts)


def run(
    scenario: ScenarioSource | Prepared,
    *,
    overrides: Overrides = None,
    events_to: str | Path | None = None,
    progress: Callable[[float], None] | None = None,
    **kw: Any,
) -> Result:
    """Run one scenario to completion; raises ScenarioError for invalid input. With
    `monitor.events = true`, `events_to` names the Parquet file the event log streams to.
    `progress`, if given, is called with the simulated seconds reached, a few times a
    second. A `Prepared` scenario runs as it is (overrides are then refused)."""
    if isinstance(scenario, Prepared):
        if overrides is not None or kw:
            raise ScenarioError("run: a prepared scenario takes no overrides; prepare with them")
        ready = scenario
    else:
        ready = prepare(scenario, overrides=overrides, **kw)
    tree, text, normalized = ready.tree, ready.text, ready.normalized
    if not normalized["monitor"]["events"]:
        if events_to is not None:
            raise ScenarioError(
                f"events_to={str(events_to)!r}: the scenario records no event log; "
                "set monitor.events = true"
            )
        return Result.from_engine(run_engine(text, progress=progress), tree)
    sink = EventLogWriter(events_to) if events_to is not None else EventLogCollector()
    try:
        raw = run_engine(text, sink, progress)
    except BaseException:
        if isinstance(sink, EventLogWriter):
            sink.abandon()
        raise
    result = Result.from_engine(raw, tree)
    facts = LogFacts.from_run(result.summary, normalized, result.events_queue)
    result.events_facts = facts
    if isinstance(sink, EventLogWriter):
        result.events_file = sink.close(facts)
    else:
        result.events = sink.frame()
    return result


def load_run(path: str | Path) -> Result:
    """A run directory written by `buflab run --out` (or `Result.to_dir`) read back into a
    `Result`, for a notebook: `buflab.load_run("runs/t7-1").flows`."""
    return Result.from_dir(path)
