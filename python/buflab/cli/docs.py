"""`buflab docs`: the scenario reference (docs/scenario.md), generated from the engine's own
schema and descriptions of its results.

The key tables come from `_core.schema()`, so they cannot drift from what the engine
accepts, and the result tables from `_core.tables()` (through
`buflab.engine.table_descriptions`, which adds the summary keys Python adds), so that every
column is described once, in the engine. The prose around them (units, ranges, what a buffer
counts, the event log, the sweep files, what Python offers for a table) is kept here.
`buflab docs > docs/scenario.md` regenerates the file; a test checks that the committed copy
is current. It must not know anything of buflab but the engine's schema and descriptions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from buflab.engine import EMULATION_SUMMARY_COLUMNS, core, table_descriptions

INTRO = """\
# Scenario reference

A scenario is a TOML file (or the same tree as a Python dict). Every key below is checked
by the engine: an unknown key, a value of the wrong type or out of range is an error that
names the key, the value and what was expected, and suggests the key you probably meant.
Nothing is silently ignored.

```toml
name = "dumbbell-100"
seed = 1
duration = "60s"
warmup = "20s"

[network]
topology = "dumbbell"
bottleneck = { rate = "100Mbps", buffer = "125pkt" }
access = { rate = "1Gbps" }
rtt = "75ms..125ms"

[[traffic]]
kind = "long_lived"
flows = 100
tcp = "newreno"
packet = "1000B"
max_window = "20MB"
start = "0s..5s"
```

Any key can be changed without editing the file: `buflab run FILE --set
network.bottleneck.buffer=50pkt --set traffic.0.flows=10` (a number in a key indexes an
array of tables), or from Python `buflab.run(FILE, network__bottleneck__buffer="50pkt")`.
A `--set` value is read as TOML when it is valid TOML (`400`, `0.5`, `true`, `"x"`) and as a
string otherwise (`50pkt`).

## Units

Quantities are strings with a unit. Only a buffer may be a bare integer (packets).

| kind | units | examples |
|---|---|---|
| rate | `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps`, powers of 1000 (also `Mb/s`, any case) \
| `"100Mbps"`, `"62.5Mbps"` |
| time | `ps`, `ns`, `us` (`µs`), `ms`, `s`, `min`, `h` | `"100ms"`, `"1.5s"` |
| size | `B`; `KB`, `MB`, `GB` (powers of 1000); `KiB`, `MiB`, `GiB` (powers of 1024) \
| `"1000B"`, `"80KB"` = 80,000 B, `"64KiB"` = 65,536 B |
| buffer | a size, or packets: `pkt` (also `pkts`, `packets`), or `"unlimited"` \
| `"125pkt"`, `"80KB"` |

A **range** `"a..b"` (e.g. `rtt = "75ms..125ms"`, `start = "0s..5s"`) draws each flow's value
uniformly between a and b, from the flow's own random stream, so the same seed gives the
same draws.

A **buffer** is a limit on the packets (`"125pkt"`) or bytes (`"80KB"`) *waiting* in the
queue. The packet being serialized onto the link is not counted, as in ns-2's drop-tail
queue: a `"1pkt"` buffer holds one waiting packet while another is being sent.

"""

# The prose of the results section that is not a column's description: the columns, and
# what each table's rows are, come from the engine (`table_descriptions`).
SUMMARY_INTRO = "`buflab run --json` prints this object; `Result.summary` is the same dict."

TABLES_INTRO = """\
`buflab.run()` returns these as pandas DataFrames; `buflab run --out DIR` writes them as
Parquet (and CSV with `--csv`)."""

# What Python offers for a table, after the engine's description of it.
TABLE_NOTES: dict[str, str] = {
    "transfers": "`buflab.analysis.transfers.by_size_bin()` and `short_and_long()` summarise it.",
    "autosize": "`buflab autosize FILE` prints it and plots it.",
    "traces": "`buflab.plots.traces` draws them.",
    "bumps": "In a sweep each row's counts are metrics named `NAME.COLUMN` "
    "(`monitor.vq_overflows`, `pacer.gap_mean_s`).",
    "rates": "`buflab run FILE --out DIR` draws them in `DIR/rates.png` (`buflab.plots.rates`).",
    "optical": "In a sweep each row's figures are metrics named `optical.LINK.COLUMN` "
    "(`optical.bottleneck.fiber_km`). `buflab optical check` runs the construction on its own "
    "(recipe F8), `buflab optical show` steps through its slots.",
}

EVENTS = """\
#### events

Only with `monitor.events = true`: every enqueue, dequeue (service start), drop and ECN mark
(right after the enqueue of the packet RED marked) at the bottleneck queue (or the bump that
`monitor.events_at` names), in time order:
`time_ps` (exact integer picoseconds), `event`, `flow`, `seq`, `size`, `queue_pkts`,
`queue_bytes` (waiting after the event); frames in memory add `time_s`. `buflab run --out DIR`
streams it into `DIR/events.parquet` in batches as the run goes (memory stays bounded; the file
is `events.parquet.partial` until the run ends), with the link's rate, the measured window and
the interval in the file's metadata. `buflab analyze DIR` (`buflab.analysis.queue.analyze`)
rebuilds the queue from it, checks it against the summary (a bump's against its `bumps` row)
and plots the CDFs of inter-arrival times, burst sizes and queueing delays; `--band 10us..13us`
adds the share of inter-arrival times in a range.
"""

SWEEP_FILES = """\
A sweep (`buflab sweep`, `buflab reproduce`) writes `runs/<id>.json` per run, `results.csv`
(one row per run: the varied keys, the seed and every summary value) and `summary.csv` (per
point: `runs`, then `<metric>_mean` and `<metric>_ci95`, the half-width of the 95 % Student-t
confidence interval over seeds; empty with a single seed).
"""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def key_tables(schema: Iterable[dict[str, str]]) -> str:
    """One markdown table per schema section, sections in the engine's order."""
    sections: dict[str, list[dict[str, str]]] = {}
    for entry in schema:
        sections.setdefault(entry["section"], []).append(entry)
    parts = ["## Keys\n"]
    for section, entries in sections.items():
        parts.append(f"### {section or 'top level'}\n")
        parts.append("| key | type | default | meaning |\n|---|---|---|---|")
        for entry in entries:
            default = entry["default"]
            default_cell = "required" if default == "required" else f"`{_cell(default)}`"
            parts.append(
                f"| `{_cell(entry['key'])}` | {_cell(entry['type'])} | {default_cell} "
                f"| {_cell(entry['doc'])} |"
            )
        parts.append("")
    return "\n".join(parts) + "\n"


def column_table(columns: Iterable[dict[str, str]], first: str = "column") -> str:
    """One markdown table of described columns: name, dtype, unit and meaning."""
    rows = [f"| {first} | type | unit | meaning |", "|---|---|---|---|"]
    for column in columns:
        name, unit, doc = (_cell(column[key]) for key in ("name", "unit", "doc"))
        rows.append(f"| `{name}` | {column['dtype']} | {unit} | {doc} |")
    return "\n".join(rows) + "\n"


EMULATION_INTRO = (
    "`buflab emulate` returns the same summary and tables, measured on real Linux TCP: the "
    "bottleneck's figures (summary, `links`, `timeseries`) from the datapath's event log, "
    "counted by the simulator's own queue monitor; each flow's from its socket's `TCP_INFO` "
    "over the measured window (the `flows` table adds `min_rtt_s`, `bytes_acked` over the "
    "whole run and the socket's `error`; `traces` rows are `TCP_INFO` samples). Its summary "
    "adds these keys after the simulator's:"
)


def results_section(tables: dict[str, dict[str, Any]]) -> str:
    """The summary's keys and every table's columns, as the engine describes them (the
    summary first, then the tables in the engine's order), and the event log and sweep files."""
    summary, *others = tables.items()
    parts = [
        "## Results\n",
        "### Summary\n",
        f"{SUMMARY_INTRO} {summary[1]['doc']}\n",
        column_table(summary[1]["columns"], first="key"),
        "### Tables\n",
        f"{TABLES_INTRO}\n",
    ]
    for name, table in others:
        note = f" {TABLE_NOTES[name]}" if name in TABLE_NOTES else ""
        parts += [f"#### {name}\n", f"{table['doc']}{note}\n", column_table(table["columns"])]
    parts += [
        "### Emulated runs\n",
        f"{EMULATION_INTRO}\n",
        column_table(list(EMULATION_SUMMARY_COLUMNS), first="key"),
    ]
    parts += [EVENTS, SWEEP_FILES]
    return "\n".join(parts)


def scenario_reference(schema: Iterable[dict[str, str]], tables: dict[str, dict[str, Any]]) -> str:
    """The whole of docs/scenario.md."""
    return INTRO + key_tables(schema) + results_section(tables)


@click.command()
@click.option(
    "--recipes",
    is_flag=True,
    help="Print instead the catalogue of reproduced results (docs/reproduce.md), made from "
    "the shipped recipes.",
)
def docs(recipes: bool) -> None:
    """Print the scenario reference (markdown) generated from the engine's schema."""
    if recipes:
        # start-up time: the recipes only when asked for
        from buflab.experiments.recipes.catalogue import catalogue

        click.echo(catalogue(), nl=False)
        return
    click.echo(scenario_reference(core().schema(), table_descriptions()), nl=False)
