"""The run store: every finished run of a sweep, size search or reproduction (and of `buflab
run`, `autosize`, `emulate` and `compare` with `--out`), one row each, in one columnar store
in the command's output directory, `OUT/store/`, queried without opening a run file (`buflab
runs OUT`, `buflab.runs.open(OUT)`).

Why a Parquet dataset and not DuckDB: pyarrow is already one of buflab's dependencies (DuckDB
would add a 30 MB one for every user); a dataset is appended to by writing a new file and
renaming it into place, which is atomic, needs no lock and lets several processes (two
commands, a search's parallel probes) append at once, where a DuckDB file admits one writer;
and every tool reads it as it is (pandas, polars, Arrow, Spark, and DuckDB itself:
`SELECT * FROM 'OUT/store/*.parquet'`). What DuckDB would add, SQL, `--where` covers for what
the store is asked (`buflab.experiments.where`).

A row is keyed by `key`, a digest of the run's validated scenario (every default filled in,
the seed included), so the same run made by two commands has one key. It holds the run's
summary metrics, every scenario key as a column (`network.bottleneck.buffer`,
`traffic.0.flows`, ...; lists as JSON text), the whole validated scenario (`scenario`, JSON),
the sweep's run id, point and seed, and what made it: `engine` (`simulator`, or `linux` and
the kernel's release for an emulation, whose key is then its own), `engine_build`
(`_core.engine_build`), `buflab_version`, `host`, `finished_at`, `command`, the run's
directory relative to OUT, and the scheduler's estimate beside the measured `wall_s` (the
history `schedule.CostModel` fits).

A run made by another engine build is never mixed in: sweeps run it again (its run file is not
taken as done, `buflab.experiments.sweep`), and the store keeps its old row, which `open`
leaves out unless asked for (`all_engines=True`, with `engine_current` saying which is which)
and counts in `frame.attrs["other_engines"]`.

Rows are buffered and written as one file ("part") every `FLUSH_EVERY_RUNS` runs or
`FLUSH_EVERY_S` seconds and when the command ends or is interrupted; a run whose file is in
OUT/runs but whose row never reached the store (a kill -9 between two flushes) is added from
its run file by the next command in OUT (`RunStore.stored` says which rows are there). Past
`COMPACT_ABOVE_PARTS` parts the store is rewritten as one. `FORMAT.json` names the store's
format: a store written by a newer buflab in a format this one does not know is refused, read
or write, with one line.

It must not know how runs are planned or run: rows in, a DataFrame out.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from buflab import __version__
from buflab.engine import Error, core
from buflab.engine.files import write_atomically
from buflab.experiments._worker import made_here
from buflab.experiments.schedule import CostModel, RunCost

STORE = "store"
FORMAT = 1
FORMAT_FILE = "FORMAT.json"
FLUSH_EVERY_RUNS = 200
FLUSH_EVERY_S = 30.0
COMPACT_ABOVE_PARTS = 64
# Where the format is also written in each part's own metadata.
METADATA_KEY = b"buflab.store_format"


class StoreError(Error):
    """A run store that cannot be read or written: missing, damaged or from a newer buflab."""


# What ran a run: the simulator, or (`buflab emulate`, `compare`) real Linux TCP, named with
# its kernel release (`linux_engine`).
SIMULATOR = "simulator"


def run_key(normalized: Mapping[str, Any], engine: str = SIMULATOR) -> str:
    """The store's key of a run: a digest of its validated scenario, seed included, with keys
    sorted (so the order a scenario was written in does not matter), and of what ran it when
    that was not the simulator (an emulation of the same scenario is another run)."""
    text = json.dumps(normalized, sort_keys=True, separators=(",", ":"), default=str)
    if engine != SIMULATOR:
        text = f"{engine}\n{text}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def linux_engine() -> str:
    """What an emulation's runs are made on: "linux" and this kernel's release."""
    return f"linux {os.uname().release}"


def scenario_columns(normalized: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario as columns: one per leaf key, dotted (`traffic.0.flows`); lists of
    scalars and empty tables as JSON text."""
    columns: dict[str, Any] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for key, child in value.items():
                walk(child, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for index, child in enumerate(value):
                walk(child, f"{path}.{index}")
        elif isinstance(value, dict | list):
            columns[path] = json.dumps(value)
        else:
            columns[path] = value

    walk(dict(normalized), "")
    return columns


def store_row(
    *,
    key: str,
    run: str,
    point: Mapping[str, Any],
    normalized: Mapping[str, Any],
    summary: Mapping[str, Any],
    made_by: Mapping[str, Any],
    estimate_s: float,
    cost: tuple[float, float],
    command: str,
    directory: str,
    engine: str = SIMULATOR,
) -> dict[str, Any]:
    """One row of the store (see the module's doc for its columns)."""
    scenario = scenario_columns(normalized)
    row: dict[str, Any] = {
        "key": key,
        "run": run,
        "engine": engine,
        "directory": directory,
        "command": command,
        "point": json.dumps(point, default=str),
        "finished_at": _moment(made_by.get("finished_at")),
        "engine_build": made_by.get("engine_build", ""),
        "buflab_version": made_by.get("buflab_version", ""),
        "host": made_by.get("host", ""),
        "estimated_wall_s": estimate_s,
        "cost_packets": cost[0],
        "cost_flows": cost[1],
    }
    # The summary's name and seed are the scenario's: kept once, as scenario columns.
    row.update({k: v for k, v in summary.items() if k not in scenario and k not in row})
    row.update(scenario)
    row["scenario"] = json.dumps(normalized)
    return row


def _moment(value: Any) -> datetime.datetime:
    """When a run finished: as recorded (a run file holds it as ISO text), or now."""
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.datetime.fromisoformat(value)
        except ValueError:
            pass
    return datetime.datetime.now(datetime.UTC)


class RunStore:
    """The store of the output directory `out` (its rows in OUT/store/): rows are added as
    runs finish and written in parts; safe to share between threads."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.root = self.out / STORE
        check_format(self.root)
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()

    def directory_of(self, path: str | Path) -> str:
        """A run directory as the store names it: relative to OUT ("." for OUT itself)."""
        return os.path.relpath(Path(path), self.out)

    def add(self, row: dict[str, Any]) -> None:
        with self._lock:
            self._rows.append(row)
            due = time.monotonic() - self._last_flush >= FLUSH_EVERY_S
            if len(self._rows) >= FLUSH_EVERY_RUNS or due:
                self._flush_locked()

    def flush(self) -> None:
        """Writes the rows added since the last flush as one part (nothing if none)."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        rows, self._rows = self._rows, []
        self.root.mkdir(parents=True, exist_ok=True)
        _write_format(self.root)
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
        _write_part(self.root / f"part-{stamp}-{uuid.uuid4().hex[:8]}.parquet", rows)
        parts = _parts(self.root)
        if len(parts) > COMPACT_ABOVE_PARTS:
            self._compact(parts)

    def _compact(self, parts: list[Path]) -> None:
        """The parts rewritten as one; the old parts are removed only once it is written (a
        kill in between leaves rows twice, which `open` counts once)."""
        frame = pd.concat([_read_part(part) for part in parts], ignore_index=True)
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
        _write_part(
            self.root / f"part-{stamp}-{uuid.uuid4().hex[:8]}.parquet",
            frame.to_dict("records"),
        )
        for part in parts:
            part.unlink(missing_ok=True)

    def history(self) -> list[tuple[RunCost, float]]:
        """(cost features, measured wall seconds) of every run stored by this engine build:
        what `schedule.CostModel` is fitted on."""
        # start-up time: pyarrow only where the store is read
        import pyarrow.parquet as pq

        names = ["engine_build", "cost_packets", "cost_flows", "wall_s"]
        build = core().engine_build()
        history = []
        for part in _parts(self.root):
            if not set(names) <= set(pq.read_schema(part).names):
                continue
            columns = pq.read_table(part, columns=names).to_pydict()
            for made_by, packets, flows, wall in zip(*columns.values(), strict=True):
                if made_by == build and wall is not None and packets is not None:
                    history.append((RunCost(float(packets), float(flows or 0)), float(wall)))
        return history

    def stored(self) -> set[tuple[str, str]]:
        """(key, engine_build) of every row written, read from those two columns only."""
        # start-up time: pyarrow only where the store is read
        import pyarrow.parquet as pq

        found: set[tuple[str, str]] = set()
        for part in _parts(self.root):
            table = pq.read_table(part, columns=["key", "engine_build"])
            keys, builds = table["key"].to_pylist(), table["engine_build"].to_pylist()
            found.update(zip(keys, builds, strict=True))
        with self._lock:
            found.update((row["key"], row["engine_build"]) for row in self._rows)
        return found


def store_one(
    store: RunStore,
    normalized: Mapping[str, Any],
    summary: Mapping[str, Any],
    *,
    command: str = "run",
    engine: str = SIMULATOR,
) -> None:
    """A run made on its own (`buflab run`, `autosize`, `emulate`, a point of `compare`,
    by `command`, on `engine`) as a row of its output directory's store, written now."""
    cost = RunCost.of(dict(normalized))
    key = run_key(normalized, engine)
    store.add(
        store_row(
            key=key,
            run=f"{command}_seed-{normalized.get('seed')}_{key[:10]}",
            point={},
            normalized=normalized,
            summary=summary,
            made_by=made_here(),
            estimate_s=CostModel().predict(cost),
            cost=(cost.packets, cost.flows),
            command=command,
            directory=".",
            engine=engine,
        )
    )
    store.flush()


def check_format(root: Path) -> None:
    """Refuse a store this buflab cannot read or extend: one written in a newer format, or a
    format file that is not one."""
    path = root / FORMAT_FILE
    if not path.exists():
        return
    try:
        written = json.loads(path.read_text())
        version, by = int(written["format"]), str(written.get("written_by", "another buflab"))
    except (OSError, ValueError, KeyError, TypeError):
        raise StoreError(
            f"{path}: not a buflab run store's format file; move {root} away to start a new store"
        ) from None
    if version > FORMAT:
        raise StoreError(
            f"{root} was written by {by} in store format {version}; this is buflab "
            f"{__version__}, which knows format {FORMAT}: upgrade buflab "
            "(pip install -U buflab), or use another output directory"
        )


def _write_format(root: Path) -> None:
    path = root / FORMAT_FILE
    if not path.exists():
        text = json.dumps({"format": FORMAT, "written_by": f"buflab {__version__}"}) + "\n"
        write_atomically(path, lambda temporary: temporary.write_text(text))


def _parts(root: Path) -> list[Path]:
    # Hidden files are parts being written (`write_atomically`'s temporary names).
    return sorted(root.glob("part-*.parquet"))


def _write_part(path: Path, rows: list[dict[str, Any]]) -> None:
    # start-up time: pyarrow only where the store is written
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame.from_records(rows)
    for column in frame.columns:
        values = frame[column].dropna()
        kinds = {type(value) for value in values}
        if len(kinds) > 1 and not kinds <= {int, float}:
            # A key that is a number in one run and text in another: text, as written.
            frame[column] = [None if pd.isna(v) else str(v) for v in frame[column]]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), METADATA_KEY: str(FORMAT).encode()}
    table = table.replace_schema_metadata(metadata)
    write_atomically(path, partial(pq.write_table, table))


def _read_part(path: Path) -> pd.DataFrame:
    # start-up time: pyarrow only where the store is read
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    written = int((table.schema.metadata or {}).get(METADATA_KEY, b"0"))
    if written > FORMAT:
        raise StoreError(
            f"{path} is in store format {written}; this is buflab {__version__}, which knows "
            f"format {FORMAT}: upgrade buflab (pip install -U buflab)"
        )
    return table.to_pandas()


def store_root(directory: str | Path) -> Path:
    """The store of DIR: DIR/store, or DIR itself when it is one."""
    directory = Path(directory)
    for root in (directory / STORE, directory):
        if (root / FORMAT_FILE).exists() or _parts(root):
            return root
    if not directory.exists():
        raise StoreError(f"{directory}: no such directory")
    raise StoreError(
        f"{directory}: no run store here ({directory / STORE}); sweep, size and reproduce "
        "write one in their output directory"
    )


def open(directory: str | Path, *, all_engines: bool = False) -> pd.DataFrame:
    """Every run stored in DIR (an output directory, or its store) as a DataFrame, one row
    per run (a run stored twice, by two commands, once), oldest first, without opening a run
    file. Runs made by another engine build than this one are left out, and counted in
    `frame.attrs["other_engines"]`; with `all_engines=True` they are in, and the column
    `engine_current` says which rows are this engine's."""
    root = store_root(directory)
    check_format(root)
    parts = [_read_part(part) for part in _parts(root)]
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["key"])
    if len(frame):
        frame = frame.sort_values("finished_at", kind="stable")
        frame = frame.drop_duplicates(["key", "engine_build"], keep="last")
    current = frame["engine_build"] == core().engine_build() if len(frame) else []
    frame = frame.assign(engine_current=current)
    other = int((~frame["engine_current"]).sum()) if len(frame) else 0
    if not all_engines:
        frame = frame[frame["engine_current"]].drop(columns="engine_current")
    frame = frame.reset_index(drop=True)
    frame.attrs["other_engines"] = other
    return frame
