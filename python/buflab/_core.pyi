"""Type stubs for the compiled engine binding (crate `buflab-py`).

The binding is deliberately thin: a scenario goes in as a JSON string (the same tree a TOML
scenario file parses to), results come out as plain dicts of columns. Everything else —
file loading, overrides, DataFrames, plots, sweeps — lives in the Python package.
"""

from typing import Any

class ScenarioError(ValueError):
    """A scenario key has a bad value or is unknown. The message names the key path,
    the value given and what was expected, on one line."""

def version() -> str:
    """The engine version (same as the Python package version)."""

def engine_build() -> str:
    """The engine build, "VERSION+DIGEST": the digest of the engine's source and Cargo.lock,
    the same for the same source on every machine."""

def schema() -> list[dict[str, str]]:
    """Every scenario key the engine understands, in documentation order.

    Each entry has: `section` (e.g. "network.bottleneck", "traffic (kind = long_lived)"),
    `key` (full dotted path, `traffic[].flows` and `network.hop[].rate` for array
    entries), `type`, `default`
    ("required" when there is none) and `doc` (one or two sentences).
    """

def validate(scenario_json: str) -> dict[str, Any]:
    """Check a scenario and return it normalised: every key present, defaults filled in,
    values in canonical units (strings like "100Mbps" kept as given where sensible).
    Raises ScenarioError on the first problem."""

def tables() -> dict[str, dict[str, Any]]:
    """Every table a result carries, the summary first, then the tables in the order `run`
    returns them: name -> {"doc": what a row is and when the table has rows, "columns": a
    list of {"name", "dtype" (the pandas dtype: "int64", "float64", "bool" or "str"), "unit"
    ("s", "bit/s", "pkt", "B", or "" for counts of other things, ratios and labels), "doc"},
    in column order}. The columns of `run`'s tables and the keys of its summary are exactly
    these, in this order (the event log is apart: see `buflab.engine.events`).
    """

def run(scenario_json: str, event_sink: Any = None, progress: Any = None) -> dict[str, Any]:
    """Run one scenario to completion (releases the GIL while simulating). `progress`, if
    given, is called with the simulated seconds reached, at most four times a second.

    Returns a dict with:
      "summary":    dict[str, float | int | str | None]  the keys `tables()["summary"]`
                    describes, in its order (see docs/scenario.md, "Results")
      "flows", "timeseries", "links", "ports", "transfers", "autosize", "traces":
                    dict[str, list]  each table's columns, named and ordered as `tables()`
                    describes them; a table without rows (ports off the switch topology,
                    transfers without finite transfers, autosize without `[autosize]`,
                    traces without `monitor.trace_flows`) has its columns, empty. Older
                    builds omit some tables, which `Result.from_engine` reads as empty.
      "events":     dict[str, bytes] | None  the bottleneck queue event log (on the parking
                    lot, `network.summary_hop`'s) when `monitor.events = true` and no
                    `event_sink` is given: raw little-endian columns (`buflab.engine.events`)
      "events_written": int  events handed to `event_sink`, which receives them in batches of
                    the same form as "events"
      "events_error": str | None  why `event_sink` failed, if it did
    Raises ScenarioError for invalid input.
    """

def link_facts(scenario_json: str) -> dict[str, Any]:
    """What a scenario means for the link its run summary describes (the dumbbell's
    bottleneck, the parking lot's `network.summary_hop`, one output line of the switch),
    computed by the engine from the validated scenario (`buflab_core::scenario::facts`):
    `rate_bps`, `rtt_s` (the mean two-way propagation delay), `packet_bytes` (of the first
    long-lived entry crossing the link, else 1000), `flows` (the long-lived flows crossing
    it; per output on the switch) and `wmax_pkts` (that entry's max window in whole
    segments, or what the access link carries in one mean RTT if less); and
    `monitored_links`, how many links the run monitors (the rows of its links table).
    Raises ScenarioError for invalid input."""

def flow_slots(scenario_json: str, entry: int, first: int, count: int) -> dict[str, list[Any]]:
    """The RTTs and placements of flows `first` .. `first + count - 1` of traffic entry
    `entry`, drawn as the simulator draws them for flows of those ids: columns `rtt_s`,
    `machine` and `class` (-1 without machines), as the flows table's. An emulation's
    open-loop slots need them before the run."""

def traffic_facts(scenario_json: str) -> dict[str, Any]:
    """What the scenario's traffic offers that link, as the engine read it: `link_bps`,
    `rtt_s` ([low, high]), `access_bps` (what one flow's sender can send at),
    `servers_bps` (what the server machines carry at most, or None) and `entries`, one dict
    per traffic entry: `kind`, `flows` (flows or users; per output when given so),
    `link_share` (the fraction of its traffic the link carries, 0 if it does not cross it);
    for TCP kinds `packet_bytes`, `mss_bytes`, `initial_window` and `max_window` (segments),
    `delayed_ack`, and for downloads `handshake`; for UDP `rate_bps` (each flow) and
    `packet_bytes`; for open-loop traffic `arrivals_per_s`; for downloads `file_size`
    (bytes) and for closed-loop users `think` (seconds), each a dict with `dist`, its
    parameters (`value`, `lo`/`hi`, `mean`, `shape`, `sigma` or `cdf`) and `mean`. Raises
    ScenarioError for invalid input."""

def parse_quantity(text: str, kind: str) -> float:
    """A unit string ("10Gbps", "100ms", "80KB", "125pkt") read by the engine's parser, in
    the base unit of `kind`: "rate" (bits/s), "time" (seconds), "bytes" or "packets".
    Raises ValueError whose message says what was expected ("a positive rate such as …")."""

def parse_range(text: str, kind: str) -> tuple[float, float]:
    """A range "lo..hi" of `kind` (or one value, as (value, value)), each end read as
    `parse_quantity` reads it; ValueError if an end does not read or lo > hi."""

def replay_queue_log(
    scenario_json: str,
    path: str,
    rate_bps: int,
    buffer: str,
    window_start_ps: int,
    window_end_ps: int,
    interval_ps: int,
    offset_ps: int,
) -> dict[str, Any]:
    """An emulated run's result rebuilt from its datapath's raw event log at `path`: the
    summary's queue figures, the links row and the time series, as `run` returns them,
    counted by the simulator's own queue monitor (no flows)."""
    ...

class LiveSession:
    """A scenario run in steps and changed as it goes (`buflab_core::live`): the engine of
    `buflab serve`; `buflab.engine.live.LiveRun` is its Python face."""

    def __init__(self, scenario_json: str) -> None: ...
    def run_until(self, t_ps: int) -> None:
        """Runs every event before `t_ps` (at most the end), without the GIL."""
    def reached_ps(self) -> int: ...
    def end_ps(self) -> int: ...
    def apply(self, change_json: str) -> dict[str, Any]:
        """Applies a `[[change]]` entry without `at` now; returns it with its `at`. Raises
        ScenarioError for a bad value, changing nothing."""
    def read(self) -> dict[str, Any]:
        """What changed since the last reading: time_s, interval_s, utilization, goodput_bps,
        arrivals, drops, queue_pkts, queue_bytes, mean_queue_pkts, queue_delay_s,
        buffer_pkts, buffer_bytes, open_flows, windows [(flow, cwnd)], steps, autosizing."""
    def finish(self) -> dict[str, Any]:
        """Runs what is left and returns the result as `run` does."""

class AutoSizer:
    """The live auto-sizer of a scenario's `[autosize]` driven in real time (the emulator's
    `buflab autosize --emulate`): read the bottleneck's counts when `next_at_ps` is due, pass
    them to `tick`, set the limit it returns. Raises ScenarioError without
    `autosize.target_utilization`."""

    def __init__(self, scenario_json: str) -> None: ...
    @property
    def next_at_ps(self) -> int: ...
    def tick(self, now_ps: int, busy_ps: int, arrivals: int, drops: int) -> int | None:
        """A reading (totals since time 0); the next limit at an interval's end, else None."""
    def steps(self) -> dict[str, list[Any]]:
        """The steps so far, as the `autosize` table's columns."""
    def answer(self) -> int | None: ...
