"""The Python API: `run`, `validate`, `load_scenario`, the `Result` of a run, and `size` and
`size_curve` for the smallest buffer meeting a target utilization.

    >>> import buflab
    >>> result = buflab.run("examples/dumbbell.toml", network__bottleneck__buffer="50pkt", seed=2)
    >>> result.summary["utilization"], result.flows.head()

Closed-loop traffic adds `result.transfers`, one row per file transfer; `buflab.transfers`
summarises it by file size. `result.links` has one row per monitored link: the dumbbell's
bottleneck, every hop of a parking lot (whose summary describes `network.summary_hop`), or every
output line of a switch. A switch run adds `result.ports`, one row per port: its input's VOQs
beside its output line (the summary's utilization is then the mean over the outputs).
A scenario with `[autosize]` adds `result.autosize`, one row per step of the live auto-sizer
(`buflab.autosize` runs one and plots it). `monitor.trace_flows` adds `result.traces`: the
traced TCP senders' congestion window, ssthresh, smoothed RTT, pacing rate and bytes
acknowledged over time (`buflab.trace_plots` draws them).

Keyword overrides use `__` for the dots of a key (`traffic__0__flows=10`); `overrides` takes
a mapping of dotted keys or a list of "KEY=VALUE" strings, as `--set` does on the command line.
Keyword overrides are applied after `overrides`.

With `monitor.events = true` the bottleneck's event log is recorded: `run(..., events_to=PATH)`
streams it to a Parquet file as the run goes (memory stays bounded; `result.events_file`),
without a path it is kept in memory as `result.events`. `buflab.analysis.analyze` rebuilds the
queue from it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine import ScenarioError, core, run_engine, scenario_json
from buflab.engine.events import (
    EventLogCollector,
    EventLogWriter,
    LogFacts,
    batch_frame,
    events_csv,
    with_seconds,
    write_events,
)
from buflab.engine.scenario import (
    Overrides,
    Scenario,
    ScenarioSource,
    apply_overrides,
    kwargs_overrides,
)
from buflab.engine.scenario import load_scenario as _load
from buflab.sizing import (
    DEFAULT_KEY,
    Probe,
    SizeCurve,
    SizePoint,
    Sizing,
    VarySpec,
    curve_vary,
    minimum_buffer,
    rule_sizes,
    value_directory,
    value_scenarios,
)
from buflab.sizing import size_curve as sizing_size_curve

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
    "marks": "int64",  # admitted with an ECN mark (CE) by RED; not drops
    "mark_rate": "float64",  # marks / arrivals at its queue
    "arrivals": "int64",
    "mean_queue_pkts": "float64",  # time-average packets waiting
    "max_queue_pkts": "int64",
    "queue_delay_mean_s": "float64",  # mean wait of an admitted packet
}

# The ports table of the switch topology: one row per port, over the measured time, its input
# (the VOQs of the packets arriving there) beside its output line (the same figures as its links
# row). Empty on the other topologies; typed here so that an empty table is usable.
PORT_COLUMNS: dict[str, str] = {
    "port": "int64",  # from 1
    "flows_in": "int64",  # flows entering at this input
    "flows_out": "int64",  # flows leaving by this output
    "in_arrivals": "int64",  # packets reaching the input's VOQs (admitted or dropped)
    "in_drops": "int64",  # VOQ full (under oq_emulation: dropped by the shadow OQ switch)
    "in_drop_rate": "float64",
    "voq_mean_pkts": "float64",  # packets in the input's VOQs after each slot's arrivals, mean
    "voq_max_pkts": "int64",  # ... and largest
    "mux_drops": "int64",  # at the input's multiplexing router (0 when unlimited)
    "out_utilization": "float64",
    "out_throughput_bps": "float64",
    "out_arrivals": "int64",
    "out_drops": "int64",
    "out_drop_rate": "float64",
    "out_mean_queue_pkts": "float64",
    "out_max_queue_pkts": "int64",
    "late_departures": "int64",  # oq_emulation: sent after their shadow OQ slot
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

# The traces table (`monitor.trace_flows`): the traced TCP senders' state after each change (or
# once per `monitor.trace_interval`), in (time, flow) order. Empty without traced flows.
TRACE_COLUMNS: dict[str, str] = {
    "time_s": "float64",
    "flow": "int64",  # as in the flows table
    "cwnd_pkts": "float64",  # congestion window, segments
    "ssthresh_pkts": "float64",
    "srtt_s": "float64",  # smoothed RTT; 0 before the first sample
    "pacing_rate_bps": "float64",  # 0 when the flow does not pace
    "acked_bytes": "int64",  # payload acknowledged since the flow started (all connections)
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
    ports: pd.DataFrame = field(default_factory=lambda: typed_frame(None, PORT_COLUMNS))
    traces: pd.DataFrame = field(default_factory=lambda: typed_frame(None, TRACE_COLUMNS))
    # The event log streamed to a file (`run(..., events_to=...)`), in place of `events`, and
    # the queue's facts that reading either needs (`buflab.engine.events.LogFacts`).
    events_file: Path | None = None
    events_facts: LogFacts | None = None

    @classmethod
    def from_engine(cls, raw: dict[str, Any], scenario: Scenario) -> Result:
        events = raw.get("events")
        return cls(
            summary=dict(raw["summary"]),
            flows=pd.DataFrame(raw["flows"]),
            timeseries=pd.DataFrame(raw["timeseries"]),
            links=typed_frame(raw.get("links"), LINK_COLUMNS),
            transfers=typed_frame(raw.get("transfers"), TRANSFER_COLUMNS),
            events=None if events is None else with_seconds(batch_frame(events)),
            scenario=scenario,
            autosize=typed_frame(raw.get("autosize"), AUTOSIZE_COLUMNS),
            ports=typed_frame(raw.get("ports"), PORT_COLUMNS),
            traces=typed_frame(raw.get("traces"), TRACE_COLUMNS),
        )

    def to_dir(self, out: str | Path, csv: bool = False) -> Path:
        """Write summary.json, scenario.json and the tables as Parquet (and CSV if asked), the
        event log as events.parquet (events.csv too, if asked, written batch by batch)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (out / "scenario.json").write_text(json.dumps(self.scenario, indent=2, default=str) + "\n")
        for name, table in self.tables().items():
            table.to_parquet(out / f"{name}.parquet", index=False)
            if csv:
                table.to_csv(out / f"{name}.csv", index=False)
        self._write_events(out / "events.parquet", csv)
        return out

    def _write_events(self, path: Path, csv: bool) -> None:
        if self.events_file is not None and self.events_file.resolve() != path.resolve():
            shutil.copyfile(self.events_file, path)
        elif self.events is not None and self.events_facts is not None:
            write_events(self.events, path, self.events_facts)
        if csv and path.exists():
            events_csv(path, path.with_suffix(".csv"))

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables this result has, by file name (links, ports, transfers and autosize only
        when there were any; the event log is apart, see `events` and `events_file`)."""
        tables = {"flows": self.flows, "timeseries": self.timeseries}
        if len(self.links) > 0:
            tables["links"] = self.links
        if len(self.ports) > 0:
            tables["ports"] = self.ports
        if len(self.transfers) > 0:
            tables["transfers"] = self.transfers
        if len(self.autosize) > 0:
            tables["autosize"] = self.autosize
        if len(self.traces) > 0:
            tables["traces"] = self.traces
        return tables


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
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    on_probe: Callable[[Probe], None] | None = None,
) -> Sizing:
    """The smallest buffer meeting a target mean utilization, by bisection
    (`buflab.sizing.minimum_buffer`), with the rules of thumb beside it (`Sizing.rules`) and
    OUT/size.png/svg. Probes are sweep runs kept in OUT/runs, so a repeated search reuses
    them."""
    from buflab import sizing_plot  # matplotlib: imported only when there is a figure to draw

    tree = load_scenario(scenario, overrides=overrides)
    sizing = minimum_buffer(
        tree, target_utilization, out, key=key, runs=runs, jobs=jobs, high=high, on_probe=on_probe
    )
    sizing.rules = rule_sizes(tree, target_utilization)
    sizing.figures = sizing_plot.write_search_figure(sizing, tree, runs, Path(out))
    return sizing


def size_curve(
    scenario: ScenarioSource,
    target_utilization: float,
    out: str | Path,
    vary: VarySpec,
    *,
    overrides: Overrides = None,
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    on_value: Callable[[str, Any], None] | None = None,
    on_probe: Callable[[Probe], None] | None = None,
    on_point: Callable[[SizePoint], None] | None = None,
) -> SizeCurve:
    """`size` for each value of another key: `vary=("traffic.0.flows", [1, 10, 100])` (or
    "traffic.0.flows=1,10,100"). Each value's search is kept in OUT/KEY-VALUE with its own
    size.png; OUT/sizes.csv holds `SizeCurve.frame()` and OUT/size_curve.png/svg plots the
    minimum buffer against the value beside RTT·C/√N, RTT·C and eq. 2.1."""
    from buflab import sizing_plot  # matplotlib: imported only when there is a figure to draw

    tree = load_scenario(scenario, overrides=overrides)
    resolved = curve_vary(tree, vary, key)

    def finished(point: SizePoint) -> None:
        label = f"{resolved.key} = {point.value}"
        point.sizing.figures = sizing_plot.write_search_figure(
            point.sizing, point.scenario, runs, point.out, label
        )
        if on_point:
            on_point(point)

    curve = sizing_size_curve(
        tree,
        target_utilization,
        out,
        resolved,
        key=key,
        runs=runs,
        jobs=jobs,
        high=high,
        on_value=on_value,
        on_probe=on_probe,
        on_point=finished,
    )
    curve.figures = sizing_plot.write_curve_figure(curve, tree, runs, Path(out))
    return curve


def size_curves(
    scenario: ScenarioSource,
    target_utilization: float,
    out: str | Path,
    vary: VarySpec,
    series: VarySpec,
    *,
    overrides: Overrides = None,
    on_series: Callable[[SizeCurve], None] | None = None,
    **kw: Any,
) -> list[SizeCurve]:
    """`size_curve` once per value of a second key, the curves overlaid: e.g. the minimum
    buffer against `traffic.0.flows` for `series=("traffic.0.pacing", ["off", "window"])`.
    Each curve lives in OUT/SERIES_KEY-VALUE as `size_curve` leaves it; OUT/sizes.csv has
    every row with the series key's column, OUT/size_curve.png/svg one line per value.
    `on_series(curve)` is called as each curve is done; other keywords go to `size_curve`."""
    from buflab import sizing_plot  # matplotlib: imported only when there is a figure to draw

    tree = load_scenario(scenario, overrides=overrides)
    resolved = curve_vary(tree, series, kw.get("key", DEFAULT_KEY))
    x_key = curve_vary(tree, vary, kw.get("key", DEFAULT_KEY)).key
    if resolved.key == x_key:
        raise ScenarioError(f"--vary {x_key} is given twice: vary two different keys")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    curves: list[SizeCurve] = []
    # Every value is checked by the engine before the first search starts.
    for value, at_value in zip(resolved.values, value_scenarios(tree, resolved), strict=True):
        curve = size_curve(
            at_value, target_utilization, value_directory(out, resolved.key, value), vary, **kw
        )
        curve.series = (resolved.key, value)
        curves.append(curve)
        pd.concat([c.frame() for c in curves]).to_csv(out / "sizes.csv", index=False)
        if on_series:
            on_series(curve)
    sizing_plot.write_curve_figure(curves, tree, kw.get("runs", 1), out)
    return curves


def run(
    scenario: ScenarioSource,
    *,
    overrides: Overrides = None,
    events_to: str | Path | None = None,
    **kw: Any,
) -> Result:
    """Run one scenario to completion; raises ScenarioError for invalid input. With
    `monitor.events = true`, `events_to` names the Parquet file the event log streams to."""
    tree = load_scenario(scenario, overrides=overrides, **kw)
    text = scenario_json(tree)
    normalized = core().validate(text)
    if not normalized["monitor"]["events"]:
        if events_to is not None:
            raise ScenarioError(
                f"events_to={str(events_to)!r}: the scenario records no event log; "
                "set monitor.events = true"
            )
        return Result.from_engine(run_engine(text), tree)
    sink = EventLogWriter(events_to) if events_to is not None else EventLogCollector()
    try:
        raw = run_engine(text, sink)
    except BaseException:
        if isinstance(sink, EventLogWriter):
            sink.abandon()
        raise
    result = Result.from_engine(raw, tree)
    facts = LogFacts.from_summary(result.summary, normalized, _summary_link_name(normalized))
    result.events_facts = facts
    if isinstance(sink, EventLogWriter):
        result.events_file = sink.close(facts)
    else:
        result.events = sink.frame()
    return result


def _summary_link_name(normalized: Scenario) -> str:
    network = normalized["network"]
    if network["topology"] == "parking_lot":
        return f"hop{network['summary_hop']}"
    if network["topology"] == "switch":
        return f"output{network['switch']['summary_port']}"
    return "bottleneck"
