"""The result of a run: `Result`, and the types of every table it carries.

`Result` is what `buflab.run` returns: the summary, the per-flow, per-link, per-port,
per-transfer, per-step and per-trace tables, the event log (in memory or streamed to a file)
and the scenario run; `to_dir` writes it as `buflab run --out` does. The engine describes
every table (`buflab.engine.table_descriptions`); `table_dtypes` gives a table's columns and
their dtypes from that description, and `typed_frame` applies them, so that an empty table is
as usable as a full one. This module turns the engine's columns into DataFrames; it must not
know how a run is started (`buflab.engine.runner`) or what is done with its result.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine import MissingFile, OutputError, table_descriptions
from buflab.engine.events import (
    LogFacts,
    batch_frame,
    events_csv,
    with_seconds,
    write_events,
)
from buflab.engine.scenario import Scenario


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
    autosize: pd.DataFrame = field(default_factory=lambda: empty_table("autosize"))
    ports: pd.DataFrame = field(default_factory=lambda: empty_table("ports"))
    traces: pd.DataFrame = field(default_factory=lambda: empty_table("traces"))
    bumps: pd.DataFrame = field(default_factory=lambda: empty_table("bumps"))
    rates: pd.DataFrame = field(default_factory=lambda: empty_table("rates"))
    optical: pd.DataFrame = field(default_factory=lambda: empty_table("optical"))
    optical_lines: pd.DataFrame = field(default_factory=lambda: empty_table("optical_lines"))
    aqm: pd.DataFrame = field(default_factory=lambda: empty_table("aqm"))
    # The queue the event log records (`monitor.events_at`): name, rate_bps, buffer_pkts,
    # buffer_bytes and fifo (whether it sends in arrival order), as the engine reports it.
    events_queue: dict[str, Any] = field(default_factory=dict)
    # The event log streamed to a file (`run(..., events_to=...)`), in place of `events`, and
    # the queue's facts that reading either needs (`buflab.engine.events.LogFacts`).
    events_file: Path | None = None
    events_facts: LogFacts | None = None
    # An emulated run's own report (`buflab.engine.emulation`): the datapath's counts and
    # fidelity (`datapath`), the notes on keys mapped to their nearest Linux setting
    # (`notes`), and the run's time 0 on the monotonic clock (`epoch_ps`). None when simulated.
    emulation: dict[str, Any] | None = None

    @classmethod
    def from_engine(cls, raw: dict[str, Any], scenario: Scenario) -> Result:
        """The result of the engine's `raw` output. Every run has flows and a time series,
        taken as they come; any other table it lacks (a hand-made result, or one from an older
        engine) is an empty table with the described columns."""
        events = raw.get("events")

        def table(name: str) -> pd.DataFrame:
            return typed_frame(raw.get(name), table_dtypes(name))

        return cls(
            summary=dict(raw["summary"]),
            flows=pd.DataFrame(raw["flows"]),
            timeseries=pd.DataFrame(raw["timeseries"]),
            links=table("links"),
            transfers=table("transfers"),
            events=None if events is None else with_seconds(batch_frame(events)),
            scenario=scenario,
            autosize=table("autosize"),
            ports=table("ports"),
            traces=table("traces"),
            bumps=table("bumps"),
            rates=table("rates"),
            optical=table("optical"),
            optical_lines=table("optical_lines"),
            aqm=table("aqm"),
            events_queue=dict(raw.get("events_queue") or {}),
        )

    @classmethod
    def from_dir(cls, path: str | Path) -> Result:
        """A result written by `to_dir` (or `buflab run --out`) read back: the summary, the
        scenario, every table (a table the directory lacks is empty, with its columns) and,
        if there is one, the event log as `events_file`. A directory that holds no run is one
        MissingFile naming it."""
        path = Path(path)
        summary_file, scenario_file = path / "summary.json", path / "scenario.json"
        if not summary_file.is_file() or not scenario_file.is_file():
            raise MissingFile(f"{path}: no run here; expected summary.json and scenario.json")

        def table(name: str) -> pd.DataFrame:
            file = path / f"{name}.parquet"
            frame = pd.read_parquet(file) if file.is_file() else None
            return typed_frame(None if frame is None else frame.to_dict("list"), table_dtypes(name))

        events = path / "events.parquet"
        return cls(
            summary=json.loads(summary_file.read_text()),
            flows=table("flows"),
            timeseries=table("timeseries"),
            links=table("links"),
            transfers=table("transfers"),
            events=None,
            scenario=json.loads(scenario_file.read_text()),
            autosize=table("autosize"),
            ports=table("ports"),
            traces=table("traces"),
            bumps=table("bumps"),
            rates=table("rates"),
            optical=table("optical"),
            optical_lines=table("optical_lines"),
            aqm=table("aqm"),
            events_file=events if events.is_file() else None,
        )

    def to_dir(self, out: str | Path, csv: bool = False) -> Path:
        """Write summary.json, scenario.json and the tables as Parquet (and CSV if asked), the
        event log as events.parquet (events.csv too, if asked, written batch by batch). A
        directory that cannot be written raises OutputError naming it."""
        try:
            return self._write_dir(Path(out), csv)
        except OSError as error:
            why = error.strerror or str(error)
            raise OutputError(f"{out}: cannot write the results there ({why})") from None

    def _write_dir(self, out: Path, csv: bool) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (out / "scenario.json").write_text(json.dumps(self.scenario, indent=2, default=str) + "\n")
        for name, table in self.tables().items():
            table.to_parquet(out / f"{name}.parquet", index=False)
            if csv:
                table.to_csv(out / f"{name}.csv", index=False)
        self._write_events(out / "events.parquet", csv)
        if self.emulation is not None:
            (out / "datapath.json").write_text(
                json.dumps(self.emulation["datapath"], indent=2) + "\n"
            )
        return out

    def _write_events(self, path: Path, csv: bool) -> None:
        if self.events_file is not None and self.events_file.resolve() != path.resolve():
            shutil.copyfile(self.events_file, path)
        elif self.events is not None and self.events_facts is not None:
            write_events(self.events, path, self.events_facts)
        if csv and path.exists():
            events_csv(path, path.with_suffix(".csv"))

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables this result has, by file name (links, ports, transfers, autosize, traces,
        bumps, rates, the optical tables and aqm only when there were any; the event log is apart,
        see `events` and `events_file`)."""
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
        if len(self.bumps) > 0:
            tables["bumps"] = self.bumps
        if len(self.rates) > 0:
            tables["rates"] = self.rates
        if len(self.optical) > 0:
            tables["optical"] = self.optical
            tables["optical_lines"] = self.optical_lines
        if len(self.aqm) > 0:
            tables["aqm"] = self.aqm
        return tables


def table_dtypes(name: str) -> dict[str, str]:
    """The columns of result table `name` ("flows", "links", ...) and their pandas dtypes, in
    order, as the engine describes them (`_core.tables()`)."""
    return {column["name"]: column["dtype"] for column in table_descriptions()[name]["columns"]}


def empty_table(name: str) -> pd.DataFrame:
    """Result table `name` without rows: its columns, typed."""
    return typed_frame(None, table_dtypes(name))


def typed_frame(columns: dict[str, list[Any]] | None, types: dict[str, str]) -> pd.DataFrame:
    """The `types` columns in order and typed; no table, or one without rows, is an empty
    table. Columns the engine adds beyond these are kept, after them."""
    frame = pd.DataFrame(columns or {})
    if len(frame) == 0:
        frame = frame.reindex(columns=list(types))
    extra = [name for name in frame.columns if name not in types]
    return frame[[*types, *extra]].astype(types)
