"""The result of a run: `Result`, and the description of every table it carries.

`Result` is what `buflab.run` returns: the summary, the per-flow, per-link, per-port,
per-transfer, per-step and per-trace tables, the event log (in memory or streamed to a file)
and the scenario run; `to_dir` writes it as `buflab run --out` does. The `*_COLUMNS` dicts
name and type the tables that may be empty, so an empty table is as usable as a full one;
`typed_frame` applies them. This module turns the engine's columns into DataFrames; it must
not know how a run is started (`buflab.engine.runner`) or what is done with its result.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine.events import (
    LogFacts,
    batch_frame,
    events_csv,
    with_seconds,
    write_events,
)
from buflab.engine.scenario import Scenario

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
