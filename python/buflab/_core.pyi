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

def run(scenario_json: str) -> dict[str, Any]:
    """Run one scenario to completion (releases the GIL while simulating).

    Returns a dict with:
      "summary":    dict[str, float | int | str]  (see docs/scenario.md, "Results")
      "flows":      dict[str, list]  columns, one row per flow
      "timeseries": dict[str, list]  columns, one row per monitor interval
      "transfers":  dict[str, list]  columns, one row per connection of closed-loop traffic
                    (one file each); empty without such traffic. Older builds omit the key,
                    which `Result.from_engine` reads as an empty table.
      "links":      dict[str, list]  columns, one row per monitored link in path order: the
                    dumbbell's bottleneck, every hop of the parking lot, or every output line
                    of the switch. Older builds omit
                    the key, which `Result.from_engine` reads as an empty table.
      "ports":      dict[str, list]  columns, one row per port of the switch topology's router
                    (its input's VOQs and its output line); empty on the other topologies.
                    Older builds omit the key, which `Result.from_engine` reads as empty.
      "autosize":   dict[str, list]  columns, one row per step of the live auto-sizer
                    (`[autosize]`); empty without it. Older builds omit the key, which
                    `Result.from_engine` reads as an empty table.
      "events":     dict[str, list] | None  the bottleneck queue event log (on the parking
                    lot, `network.summary_hop`'s) when `monitor.events = true`
    Raises ScenarioError for invalid input.
    """
