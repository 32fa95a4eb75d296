"""The engine layer, the bottom of buflab, and its one door to the compiled engine `buflab._core`.

Everything that needs the engine asks `core()` for it, so a missing build is reported once,
as a sentence that says how to build it, instead of as an ImportError deep in a traceback.
What a scenario or a unit string means is the engine's alone, so reading one needs it too
(`units`, `theory.LinkFacts.from_scenario`); the formulas, formatting and override parsing
work without it. No other module of buflab imports `_core`.

The layer's modules are what the rest of buflab knows of the engine: `units` (the unit
strings scenarios are written in), `scenario` (loading scenarios, overrides), `events` (the
event log on disk), `result` (`Result` and the description of its tables) and `runner`
(`run`, `validate`, `load_scenario`). This layer stands on nothing else in buflab: it must
not know the analyses, plots, experiments or the command line built on it.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import resource
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from buflab.engine.errors import (
    EngineMissing,
    Error,
    EventLogError,
    MissingFile,
    OutputError,
    ScenarioError,
    UnitError,
)
from buflab.engine.lazy import listing, submodule

try:
    from buflab import _core
except ImportError:  # the Rust extension has not been built into this environment
    _core = None

if _core is not None:
    # The engine raises the package's own ScenarioError (a `buflab.Error`), not a class of
    # its own, so that one hierarchy covers every error.
    _core.use_scenario_error(ScenarioError)

__all__ = [
    "EngineMissing",
    "Error",
    "EventLogError",
    "MissingFile",
    "OutputError",
    "ScenarioError",
    "UnitError",
]


def has_engine() -> bool:
    """Whether the compiled engine is installed (a few things work without it)."""
    return _core is not None


def core() -> ModuleType:
    if _core is None:
        raise EngineMissing(
            "the compiled engine buflab._core is not installed; build it with `bash scripts/setup`"
        )
    return _core


# The summary keys `run_engine` adds, after the engine's, described as the engine describes
# its own columns (`_core.tables()`).
PROCESS_SUMMARY_COLUMNS: tuple[dict[str, str], ...] = (
    {
        "name": "peak_rss_mib",
        "dtype": "float64",
        "unit": "MiB",
        "doc": (
            "Peak resident memory of the process that ran it, counting the interpreter and "
            "earlier runs in the same process; like wall_s, it varies between equal runs."
        ),
    },
)


def run_engine(
    scenario_text: str,
    event_sink: Callable[[dict[str, bytes]], None] | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """One engine run, with the run statistics only the process can see added to the summary
    (`PROCESS_SUMMARY_COLUMNS`). `event_sink` receives the event log in batches
    (`buflab.engine.events`) instead of the result; `progress`, the simulated seconds reached,
    a few times a second."""
    raw = core().run(scenario_text, event_sink, progress)
    if raw.get("events_error"):
        raise EventLogError(f"the event log could not be written: {raw['events_error']}")
    raw["summary"]["peak_rss_mib"] = peak_rss_mib()
    return raw


# The summary keys an emulated run (`buflab emulate`) adds after the simulator's, described as
# the engine describes its own columns; a simulated run has none of them.
EMULATION_SUMMARY_COLUMNS: tuple[dict[str, str], ...] = tuple(
    {"name": name, "dtype": dtype, "unit": unit, "doc": doc}
    for name, dtype, unit, doc in (
        ("emulated", "bool", "", "Emulated runs only (`buflab emulate`): True."),
        (
            "window_start_s", "float64", "s",
            "When the measured window began (the warm-up's end, as signalled).",
        ),
        ("window_end_s", "float64", "s", "When it ended (the senders stopped)."),
        ("cc", "object", "", "The Linux congestion control every flow ran."),
        ("mss", "int64", "B", "The MSS set on every socket (TCP_MAXSEG)."),
        ("sink_bytes", "int64", "B", "Bytes the receivers read, whole run."),
        (
            "exact_buffer", "bool", "",
            "The buffer never held more than its limit, and every frame the datapath took "
            "was forwarded, dropped or is still held.",
        ),
        (
            "overruns", "int64", "pkt",
            "Frames the datapath could not take (no free slot): counted, never hidden.",
        ),
        (
            "late_within_1us", "float64", "",
            "Share of the bottleneck's frames in the window sent within 1 µs of their ideal "
            "time.",
        ),
        ("late_within_10us", "float64", "", "The same within 10 µs."),
        ("late_p99_s", "float64", "s", "99th percentile of that lateness."),
        (
            "read_within_10us", "float64", "",
            "Share of the senders' frames in the window that the datapath read within 10 µs "
            "of the kernel writing them into its receive ring (the error in the arrival "
            "times it stamps them with).",
        ),
        (
            "datapath_busy_share", "float64", "",
            "Share of the datapath's loop turns that moved a frame (the rest it polled).",
        ),
        (
            "faithful", "bool", "",
            "At least 99 % of frames within 10 µs, no overrun, and the traffic generator "
            "faithful (generator_faithful): the emulation kept its timing.",
        ),
        (
            "kernel_queue_packets", "int64", "pkt",
            "Packets that went through a kernel queue (qdisc) on any of the run's interfaces.",
        ),
        ("kernel_qdiscs", "object", "", "The qdiscs on the run's interfaces (`noqueue`)."),
        (
            "timeouts_known", "bool", "",
            "Whether the kernel reports RTOs (tcpi_total_rto, Linux 6.7 on); if not, the "
            "timeouts columns are 0.",
        ),
        (
            "generator_late_p99_s", "float64", "s",
            "99th percentile of how late the traffic generator's timers fired (a user's "
            "request, a UDP datagram, a flow's start), on its slowest host.",
        ),
        (
            "generator_cpu_s", "float64", "s",
            "CPU time of the traffic generator's processes, every host together.",
        ),
        (
            "generator_faithful", "bool", "",
            "The traffic generator kept its timing: 99 % of its timers within 1 ms, and no "
            "open-loop arrival without a flow slot.",
        ),
        (
            "transfers_failed", "int64", "",
            "Downloads whose connection failed before the file was in (counted, never "
            "hidden).",
        ),
        (
            "access_drops", "int64", "pkt",
            "Frames dropped before the bottleneck, by the emulated access links or class "
            "queues (full), whole run.",
        ),
    )
)  # fmt: skip


@functools.cache
def table_descriptions() -> dict[str, dict[str, Any]]:
    """Every table a result carries, the summary first, as the engine describes it: name ->
    {"doc": what a row is, "columns": [{"name", "dtype", "unit", "doc"}, ...] in order}, the
    summary's with the keys `run_engine` adds (an emulated run adds
    `EMULATION_SUMMARY_COLUMNS` after them). Read once per process; do not modify it."""
    tables = core().tables()
    tables["summary"]["columns"].extend(dict(column) for column in PROCESS_SUMMARY_COLUMNS)
    return tables


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (MiB): the interpreter and earlier runs in
    the same process included, so it bounds what one run needs from above."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def scenario_json(scenario: dict[str, Any]) -> str:
    """The scenario tree as the JSON text the engine reads."""
    try:
        # allow_nan=False: JSON has no inf/nan, and the engine would report a parse error
        # instead of a key.
        return json.dumps(scenario, allow_nan=False, default=_json_value)
    except _Unwritable as error:
        key = _path_to(scenario, error.value) or "scenario"
        raise ScenarioError(
            f"{key}: got {type(error.value).__name__} {str(error.value)[:60]!r}; expected "
            "strings, numbers, booleans, arrays and tables"
        ) from None
    except RecursionError:
        raise ScenarioError("scenario: a table contains itself (a circular dict)") from None
    except ValueError as error:
        if "Circular reference" in str(error):
            raise ScenarioError("scenario: a table contains itself (a circular dict)") from None
        raise ScenarioError("scenario contains inf or nan, which no key accepts") from None


def _json_value(value: Any) -> Any:
    """What JSON has no type for: numpy numbers as the numbers they are, TOML dates and paths
    as strings (which the engine then rejects with the key's name); anything else (bytes,
    sets, objects) is refused rather than silently turned into a string."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        return value.item()  # a numpy scalar, such as np.int64(2)
    if isinstance(value, datetime.date | datetime.time | os.PathLike):
        return str(value)
    raise _Unwritable(value)


class _Unwritable(Exception):
    """A value of the scenario that JSON cannot hold (`scenario_json` names its key)."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def key_segment(key: str) -> str:
    """A key as a segment of a dotted path in a message, as the engine writes one: as it is
    when a plain name (letters, digits, `_`), else quoted, so that an empty key or one with a
    space or dot is seen; cut to 60 characters with its length given."""
    if key and len(key) <= 60 and all(c.isascii() and (c.isalnum() or c == "_") for c in key):
        return key
    quoted = json.dumps(key[:60], ensure_ascii=False)
    return f"{quoted}… ({len(key)} characters)" if len(key) > 60 else quoted


def _path_to(tree: Any, target: Any, path: str = "") -> str | None:
    """The dotted key at which `target` (the object itself) sits in `tree`, if it does."""
    if tree is target:
        return path
    items = (
        tree.items()
        if isinstance(tree, dict)
        else enumerate(tree)
        if isinstance(tree, list)
        else ()
    )
    for key, child in items:
        segment = key_segment(str(key))
        found = _path_to(child, target, f"{path}.{segment}" if path else segment)
        if found is not None:
            return found
    return None


def __getattr__(name: str) -> Any:
    # Submodules load on first use (`buflab.engine.runner` right after `import buflab`).
    return submodule(__name__, name)


def __dir__() -> list[str]:
    return listing(__name__, globals())
