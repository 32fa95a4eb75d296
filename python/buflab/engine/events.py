"""The queue event log on disk: one Parquet file per run, written while the run goes.

With `monitor.events = true` the engine reports every enqueue (write), dequeue (read), drop and
ECN mark at the bottleneck queue (on the parking lot, `network.summary_hop`'s), like the NetFPGA
router's event capture (thesis app. A). The engine hands the events over in batches of about
a quarter million; `EventLogWriter` appends each batch to the file as a row group, so a run of
hundreds of millions of events needs no more memory than one batch. The file is written as
`events.parquet.partial` and renamed when the run ends: a file named `events.parquet` is
complete.

Columns (one row per event, in time order):

| column | type | meaning |
|---|---|---|
| time_ps | int64 | when, in picoseconds (exact; `time_s` is added when read) |
| event | category | `enqueue`, `dequeue` (service starts), `drop`, `mark` or `purge` (see below) |
| flow, seq | uint32 | the packet's flow and sequence number |
| size | uint32 | the packet's size on the wire, bytes |
| queue_pkts, queue_bytes | int64 | waiting after the event (the packet in service not counted) |

A `mark` row says that a packet was marked ECN Congestion Experienced by the queue's
discipline, and follows that packet's own row at the same time, packet and occupancy: its
`enqueue` when the discipline marks at arrival (RED with `red_ecn`, PIE with `pie_ecn`, step
marking), its `dequeue` when it marks as it sends (CoDel with `codel_ecn`, FQ-CoDel). It is not
an arrival of its own and not a drop; logs of drop-tail queues have none. A `purge` row is a
packet that a discipline holding its packets dropped from its queue (`drop_head`; CoDel's
drops at dequeue; FQ-CoDel's from its fattest queue): a drop, but not an arrival (its enqueue
came earlier), with the occupancy after it.

Packets leave in the order they arrived except under FQ-CoDel (`fifo` false in the facts): a
reader then matches each dequeue with its enqueue by flow and sequence number.

The file's metadata (`buflab` key, JSON) holds what rebuilding the queue needs beyond the
events: the link's rate, the measured window, the time-series interval and the buffer.

It must not know what the log is for: `buflab.analysis.queue` reads the queue out of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from buflab import __version__
from buflab.engine.units import parse_time

EVENT_NAMES = ("enqueue", "dequeue", "drop", "mark", "purge")
ENQUEUE, DEQUEUE, DROP, MARK, PURGE = range(5)
METADATA_KEY = b"buflab"
PS_PER_S = 10**12

# The engine's raw batch columns (little-endian bytes) and their numpy types.
_RAW_TYPES = {
    "time_ps": "<u8",
    "event": "u1",
    "flow": "<u4",
    "seq": "<u4",
    "size": "<u4",
    "queue_pkts": "<u8",
    "queue_bytes": "<u8",
}
_SCHEMA = pa.schema(
    [
        ("time_ps", pa.int64()),
        ("event", pa.dictionary(pa.int8(), pa.string())),
        ("flow", pa.uint32()),
        ("seq", pa.uint32()),
        ("size", pa.uint32()),
        ("queue_pkts", pa.int64()),
        ("queue_bytes", pa.int64()),
    ]
)


# Times, sequence numbers and occupancies change by small steps from row to row: delta
# encoding then light zstd makes the file about 5 bytes an event and costs less time than the
# simulation (dictionary encoding, Parquet's default, suits only the event names).
_DELTA = "DELTA_BINARY_PACKED"
_ENCODING: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 1,
    "use_dictionary": ["event"],
    "column_encoding": {
        "time_ps": _DELTA,
        "flow": "PLAIN",
        "seq": _DELTA,
        "size": "PLAIN",
        "queue_pkts": _DELTA,
        "queue_bytes": _DELTA,
    },
}


@dataclass(frozen=True)
class LogFacts:
    """What the log's reader needs to know about the queue and the run besides the events."""

    rate_bps: int
    window_start_ps: int
    window_end_ps: int
    interval_ps: int
    # The log file's metadata keeps -1 for a unit the buffer is not in (and both for
    # unlimited), where a run's summary has null.
    buffer_pkts: int
    buffer_bytes: int
    link: str
    scenario: str
    seed: int
    version: str
    # Whether the queue sends its packets in the order they arrived (not so under FQ-CoDel);
    # logs written before the field existed are of FIFO queues.
    fifo: bool = True

    @staticmethod
    def limit(value: int | None) -> int:
        """A buffer limit as a run reports it (None when unset) as the log's metadata keeps
        it."""
        return -1 if value is None else int(value)

    @classmethod
    def from_run(
        cls, summary: dict[str, Any], scenario: dict[str, Any], queue: dict[str, Any]
    ) -> LogFacts:
        """From a run's summary, its validated scenario and the engine's facts of the queue the
        log records (`Result.events_queue`: the summary link, or a bump's). Durations in
        seconds are exact whole picoseconds, so rounding them back loses nothing."""
        return cls(
            rate_bps=int(queue["rate_bps"]),
            window_start_ps=round(summary["warmup_s"] * PS_PER_S),
            window_end_ps=round(summary["duration_s"] * PS_PER_S),
            interval_ps=round(parse_time(scenario["monitor"]["interval"]) * PS_PER_S),
            buffer_pkts=cls.limit(queue["buffer_pkts"]),
            buffer_bytes=cls.limit(queue["buffer_bytes"]),
            link=str(queue["name"]),
            scenario=str(summary["name"]),
            seed=int(summary["seed"]),
            version=__version__,
            fifo=bool(queue.get("fifo", True)),
        )

    def serialization_ps(self, size: np.ndarray) -> np.ndarray:
        """Serialization time of packets of `size` bytes, rounded up to the picosecond as the
        engine rounds it."""
        bits_ps = size.astype(np.int64) * 8 * PS_PER_S
        return -(-bits_ps // self.rate_bps)


def batch_frame(raw: dict[str, bytes]) -> pd.DataFrame:
    """An engine batch (raw little-endian columns) as a frame with the file's columns."""
    columns = {name: np.frombuffer(raw[name], dtype=t) for name, t in _RAW_TYPES.items()}
    frame = pd.DataFrame(
        {
            "time_ps": columns["time_ps"].astype(np.int64),
            "event": pd.Categorical.from_codes(columns["event"].astype(np.int8), EVENT_NAMES),
            "flow": columns["flow"],
            "seq": columns["seq"],
            "size": columns["size"],
            "queue_pkts": columns["queue_pkts"].astype(np.int64),
            "queue_bytes": columns["queue_bytes"].astype(np.int64),
        }
    )
    return frame


class EventLogWriter:
    """The engine's event sink: appends each batch to `path` as a Parquet row group."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(self.partial, _SCHEMA, **_ENCODING)

    def __call__(self, raw: dict[str, bytes]) -> None:
        # Straight from the engine's buffers to Arrow, without a DataFrame in between: this
        # runs once per quarter million events, inside the simulation's time.
        columns = {name: np.frombuffer(raw[name], dtype=t) for name, t in _RAW_TYPES.items()}
        event = pa.DictionaryArray.from_arrays(
            pa.array(columns["event"].view(np.int8)), pa.array(EVENT_NAMES)
        )
        arrays = [
            pa.array(columns["time_ps"].view(np.int64)),
            event,
            pa.array(columns["flow"]),
            pa.array(columns["seq"]),
            pa.array(columns["size"]),
            pa.array(columns["queue_pkts"].view(np.int64)),
            pa.array(columns["queue_bytes"].view(np.int64)),
        ]
        self._write(pa.Table.from_arrays(arrays, schema=_SCHEMA))

    def append(self, frame: pd.DataFrame) -> None:
        self._write(
            pa.Table.from_pandas(frame[_SCHEMA.names], schema=_SCHEMA, preserve_index=False)
        )

    def _write(self, table: pa.Table) -> None:
        self._writer.write_table(table)

    def close(self, facts: LogFacts) -> Path:
        """Finishes the file with the queue's facts and gives it its final name."""
        self._writer.add_key_value_metadata({METADATA_KEY: json.dumps(asdict(facts)).encode()})
        self._writer.close()
        os.replace(self.partial, self.path)
        return self.path

    def abandon(self) -> Path:
        """Closes what was written (a readable file of the events so far) under the
        `.partial` name, for a run that did not finish."""
        self._writer.close()
        return self.partial


class EventLogCollector:
    """An event sink that keeps the batches in memory, for `buflab.run` without a file."""

    def __init__(self) -> None:
        self.frames: list[pd.DataFrame] = []

    def __call__(self, raw: dict[str, bytes]) -> None:
        self.frames.append(batch_frame(raw))

    def frame(self) -> pd.DataFrame:
        """The whole log, with `time_s`."""
        if not self.frames:
            return with_seconds(batch_frame({name: b"" for name in _RAW_TYPES}))
        return with_seconds(pd.concat(self.frames, ignore_index=True))


def with_seconds(frame: pd.DataFrame) -> pd.DataFrame:
    """The log with `time_s` after `time_ps`, for reading (the file keeps picoseconds only)."""
    frame.insert(1, "time_s", frame["time_ps"] / PS_PER_S)
    return frame


def write_events(frame: pd.DataFrame, path: str | Path, facts: LogFacts) -> Path:
    """Writes a log held in memory to a file as a streamed run would have."""
    writer = EventLogWriter(path)
    writer.append(frame)
    return writer.close(facts)


def read_facts(path: str | Path) -> LogFacts:
    """The queue's facts stored with a log file."""
    metadata = pq.read_metadata(path).metadata or {}
    if METADATA_KEY not in metadata:
        raise ValueError(f"{path}: not a buflab event log (no {METADATA_KEY.decode()} metadata)")
    return LogFacts(**json.loads(metadata[METADATA_KEY]))


def read_events(path: str | Path) -> pd.DataFrame:
    """A whole log as one frame, with `time_s` added (for logs that fit in memory; use
    `iter_batches` otherwise)."""
    return with_seconds(pq.read_table(path).to_pandas())


def events_csv(path: str | Path, csv: str | Path) -> None:
    """The log as CSV (time_s added), written batch by batch."""
    with open(csv, "w", newline="") as out:
        for i, batch in enumerate(iter_batches(path)):
            with_seconds(batch).to_csv(out, index=False, header=i == 0)


def iter_batches(path: str | Path, rows: int = 1 << 20) -> Iterator[pd.DataFrame]:
    """The log in order, a frame of at most `rows` events at a time."""
    with pq.ParquetFile(path) as log:
        for batch in log.iter_batches(batch_size=rows):
            yield batch.to_pandas()
