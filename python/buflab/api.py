"""The Python API: `run`, `validate`, `load_scenario` and the `Result` of a run.

    >>> import buflab
    >>> result = buflab.run("examples/dumbbell.toml", network__bottleneck__buffer="50pkt", seed=2)
    >>> result.summary["utilization"], result.flows.head()

Closed-loop traffic adds `result.transfers`, one row per file transfer; `buflab.transfers`
summarises it by file size. `result.links` has one row per monitored link: the dumbbell's
bottleneck, or every hop of a parking lot (whose summary describes `network.summary_hop`).
A scenario with `[autosize]` adds `result.autosize`, one row per step of the live auto-sizer
(`buflab.autosize` runs one and plots it).

Keyword overrides use `__` for the dots of a key (`traffic__0__flows=10`); `overrides` takes
a mapping of dotted keys or a list of "KEY=VALUE" strings, as `--set` does on the command line.
Keyword overrides are applied after `overrides`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
from buflab.sizing import Sizing, minimum_buffer

# The transfers table: one row per connection of closed-loop traffic, each carrying one file.
# Long-lived and UDP traffic have none, so the columns and their types are fixed here to keep
# an empty table usable (`transfers[transfers["complete"]]`, `.astype`, Parquet) like a full one.
TRANSFER_COLUMNS: dict[str, str] = {
    "flow": "int64",  # the user's slot, as in the flows table
    "traffic": "int64",  # index of its [[traffic]] entry
    "conn": "int64",  # connection number within the flow, from 1
    "start_s": "float64",  # the client opened the connection (SYN, or first data)
    "end_s": "float64",  # the client had the last byte; nan if incomplete
    "bytes": "int64",  # file size
    "fct_s": "float64",  # end_s - start_s; nan if incomplete
    "throughput_bps": "float64",  # bytes * 8 / fct_s; nan if incomplete
    "retransmits": "int64",  # the server's, on this connection
    "timeouts": "int64",
    "complete": "bool",  # the last byte arrived before the run ended
}

# The links table: one row per monitored link, in path order (the dumbbell's bottleneck, the
# parking lot's hops), over the measured time. Typed here so that a result without the table
# (hand-made, or from an older engine) still has it, empty.
LINK_COLUMNS: dict[str, str] = {
    "hop": "int64",  # position on the path, from 1
    "name": "str",  # "bottleneck", or "hop1", "hop2", ... (object under pandas 2)
    "rate_bps": "int64",
    "buffer_pkts": "int64",  # -1 when the buffer is in bytes or unlimited
    "buffer_bytes": "int64",  # -1 when it is in packets or unlimited
    "utilization": "float64",  # fraction of the measured time the link was busy
    "throughput_bps": "float64",  # bits serialized per second, headers included
    "drop_rate": "float64",  # drops / arrivals at its queue
    "drops": "int64",
    "arrivals": "int64",
    "mean_queue_pkts": "float64",  # time-average packets waiting
    "max_queue_pkts": "int64",
    "queue_delay_mean_s": "float64",  # mean wait of an admitted packet
}

# The autosize table: one row per step of the live auto-sizer (`[autosize]`), in time order.
# Empty without it; typed here so that an empty table is usable like a full one.
AUTOSIZE_COLUMNS: dict[str, str] = {
    "time_s": "float64",  # end of the interval, when the step decided
    "buffer_pkts": "int64",  # the buffer limit during the interval
    # The next three over the interval after its first `autosize.settle`:
    "utilization": "float64",  # fraction of the time the bottleneck was busy
    "drops": "int64",  # bottleneck queue drops
    "arrivals": "int64",  # arrivals at the bottleneck queue, admitted or dropped
    "passed": "bool",  # utilization >= tolerance * target
    "next_buffer_pkts": "int64",  # the limit for the next interval
    "converged": "bool",  # the search had converged after this step
}


@dataclass
class Result:
    """One finished run: the summary, per-flow, per-link, per-transfer and per-interval tables,
    the auto-sizer's steps, and the scenario run."""

    summary: dict[str, Any]
    flows: pd.DataFrame
    timeseries: pd.DataFrame
    links: pd.DataFrame
    transfers: pd.DataFrame
    events: pd.DataFrame | None
    scenario: Scenario
    autosize: pd.DataFrame = field(default_factory=lambda: typed_frame(None, AUTOSIZE_COLUMNS))

    @classmethod
    def from_engine(cls, raw: dict[str, Any], scenario: Scenario) -> Result:
        events = raw.get("events")
        return cls(
            summary=dict(raw["summary"]),
            flows=pd.DataFrame(raw["flows"]),
            timeseries=pd.DataFrame(raw["timeseries"]),
            links=typed_frame(raw.get("links"), LINK_COLUMNS),
            transfers=typed_frame(raw.get("transfers"), TRANSFER_COLUMNS),
            events=None if events is None else _events_frame(events),
            scenario=scenario,
            autosize=typed_frame(raw.get("autosize"), AUTOSIZE_COLUMNS),
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
        """The tables this result has, by file name (links, transfers and autosize only when
        there were any, events only when they were recorded)."""
        tables = {"flows": self.flows, "timeseries": self.timeseries}
        if len(self.links) > 0:
            tables["links"] = self.links
        if len(self.transfers) > 0:
            tables["transfers"] = self.transfers
        if len(self.autosize) > 0:
            tables["autosize"] = self.autosize
        if self.events is not None:
            tables["events"] = self.events
        return tables


def _events_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(columns)
    # Event logs have millions of rows and three distinct event names.
    if "event" in frame:
        frame["event"] = frame["event"].astype("category")
    return frame


def typed_frame(columns: dict[str, list[Any]] | None, types: dict[str, str]) -> pd.DataFrame:
    """The `types` columns in order and typed; no table, or one without rows, is an empty
    table. Columns the engine adds beyond these are kept, after them."""
    frame = pd.DataFrame(columns or {})
    if len(frame) == 0:
        frame = frame.reindex(columns=list(types))
    extra = [name for name in frame.columns if name not in types]
    return frame[[*types, *extra]].astype(types)


def load_scenario(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Scenario:
    """The scenario tree from a path, TOML text or dict, with overrides applied (not validated)."""
    return apply_overrides(_load(scenario, overrides), kwargs_overrides(kw))


def validate(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Scenario:
    """The scenario as the engine normalises it (defaults filled in); raises ScenarioError."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    return core().validate(scenario_json(tree))


def size(
    scenario: ScenarioSource,
    target_utilization: float,
    out: str | Path,
    *,
    overrides: Overrides = None,
    **options: Any,
) -> Sizing:
    """The smallest buffer meeting a target mean utilization, by bisection
    (`buflab.sizing.minimum_buffer`; options: key, runs, jobs, high, on_probe). Probes are
    sweep runs kept in OUT/runs, so a repeated search reuses them."""
    return minimum_buffer(
        load_scenario(scenario, overrides=overrides), target_utilization, out, **options
    )


def run(scenario: ScenarioSource, *, overrides: Overrides = None, **kw: Any) -> Result:
    """Run one scenario to completion; raises ScenarioError for invalid input."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    return Result.from_engine(run_engine(scenario_json(tree)), tree)
