"""Terminal output: the progress bar of long work and the tables that summarise a run.

Progress goes to stderr so that stdout stays clean for what a command reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from buflab.units import format_bytes, format_percent, format_rate, format_time

if TYPE_CHECKING:
    import pandas as pd

stdout = Console()
stderr = Console(stderr=True)


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A bar with count, elapsed time and ETA; yields `update(done, total)`.

    The bar appears at the first update, so checks that fail before any work starts
    (a bad --vary value) print their one-line error without a bar above it.
    """
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    # ETA from the last 10 minutes of finished runs: single runs can take minutes, and rich's
    # default 30 s window would often hold fewer than two finished runs.
    progress = Progress(*columns, console=stderr, speed_estimate_period=600)
    task = progress.add_task(description, total=None)
    last_done: list[int] = []

    def update(done: int, total: int) -> None:
        if not last_done:
            progress.start()
            # Runs found on disk count as done, but not toward the speed behind the ETA.
            progress.reset(task, total=total, completed=done)
        else:
            progress.update(task, total=total, advance=done - last_done[-1])
        last_done[:] = [done]

    try:
        yield update
    finally:
        if last_done:
            progress.stop()


# summary key -> (label, formatter); the order is the order of the printed table.
_SUMMARY_ROWS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("utilization", "utilization", format_percent),
    ("throughput_bps", "throughput", format_rate),
    ("goodput_bps", "goodput", format_rate),
    ("bottleneck_rate_bps", "bottleneck rate", format_rate),
    ("drop_rate", "drop rate", format_percent),
    ("drops", "drops", lambda v: f"{v:,}"),
    ("arrivals", "arrivals", lambda v: f"{v:,}"),
    ("loss_drops", "random-loss drops", lambda v: f"{v:,}"),
    ("mean_queue_pkts", "mean queue", lambda v: f"{v:,.1f} pkt"),
    ("max_queue_pkts", "max queue", lambda v: f"{v:,} pkt"),
    ("mean_queue_bytes", "mean queue (bytes)", format_bytes),
    ("queue_delay_mean_s", "queueing delay mean", format_time),
    ("queue_delay_p50_s", "queueing delay p50", format_time),
    ("queue_delay_p99_s", "queueing delay p99", format_time),
    ("iat_p50_s", "inter-arrival p50", format_time),
    ("iat_faster_than_line", "arriving faster than line rate", format_percent),
    ("burst_mean_pkts", "mean burst of one flow", lambda v: f"{v:,.2f} pkt"),
    ("rtt_mean_s", "mean RTT (propagation)", format_time),
    ("jain_fairness", "Jain fairness", lambda v: f"{v:.3f}"),
    ("retransmits", "retransmits", lambda v: f"{v:,}"),
    ("timeouts", "timeouts", lambda v: f"{v:,}"),
    ("retransmits_per_drop", "retransmits per drop", lambda v: f"{v:.2f}"),
    ("flows", "flows", lambda v: f"{v:,}"),
    ("events", "events simulated", lambda v: f"{v:,}"),
    ("wall_s", "wall-clock time", format_time),
]


def summary_table(summary: dict[str, Any]) -> Table:
    buffer = (
        f"{summary['buffer_pkts']:,} pkt"
        if summary.get("buffer_pkts", -1) >= 0
        else format_bytes(summary.get("buffer_bytes", 0))
    )
    title = (
        f"{summary.get('name', '')}: seed {summary.get('seed')}, buffer {buffer}, "
        f"measured {format_time(summary.get('measured_s', 0))} after "
        f"{format_time(summary.get('warmup_s', 0))} warm-up"
    )
    table = Table(title=title, show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, label, formatter in _SUMMARY_ROWS:
        if key in summary:
            table.add_row(label, formatter(summary[key]))
    return table


def _table(title: str, caption: str, headers: list[str]) -> Table:
    """A table whose first column names the row and whose other columns are right-aligned
    numbers."""
    table = Table(title=title, caption=caption)
    table.add_column(headers[0], no_wrap=True)
    for header in headers[1:]:
        table.add_column(header, justify="right")
    return table


def links_table(links: pd.DataFrame, summary_hop: int, title: str = "links") -> Table:
    """A table from `Result.links`: one row per monitored link (a parking lot's hops); the row
    of `summary_hop`, the link the summary describes, is marked."""
    table = _table(
        title,
        "over the measured time; queue: mean packets waiting; delay: mean queueing delay; "
        "*: the link the summary describes",
        ["link", "rate", "buffer", "utilization", "drop rate", "queue", "delay"],
    )
    for row in links.itertuples(index=False):
        if row.buffer_pkts >= 0:
            buffer = f"{row.buffer_pkts:,} pkt"
        elif row.buffer_bytes >= 0:
            buffer = format_bytes(row.buffer_bytes)
        else:
            buffer = "unlimited"
        table.add_row(
            f"{row.name}*" if row.hop == summary_hop else row.name,
            format_rate(row.rate_bps),
            buffer,
            format_percent(row.utilization),
            format_percent(row.drop_rate),
            f"{row.mean_queue_pkts:,.1f} pkt",
            format_time(row.queue_delay_mean_s),
        )
    return table


def transfers_table(bins: pd.DataFrame, title: str = "transfers by file size") -> Table:
    """A table from `buflab.transfers.by_size_bin` (or `short_and_long`); – where no transfer
    completed."""

    def shown(value: float, formatter: Callable[[float], str]) -> str:
        return formatter(value) if math.isfinite(value) else "–"

    table = _table(
        title,
        "FCT: flow completion time; throughput: mean of bytes·8/FCT; both over the completed "
        "transfers",
        ["size", "transfers", "done", "FCT mean", "FCT p50", "FCT p99", "throughput"],
    )
    for row in bins.itertuples(index=False):
        table.add_row(
            row.bin,
            f"{row.transfers:,}",
            f"{row.completed:,}",
            shown(row.fct_mean_s, format_time),
            shown(row.fct_p50_s, format_time),
            shown(row.fct_p99_s, format_time),
            shown(row.throughput_mean_bps, format_rate),
        )
    return table


def autosize_table(steps: pd.DataFrame, threshold: float, title: str = "auto-sizer steps") -> Table:
    """A table from `Result.autosize`, one row per step as in the table."""
    table = _table(
        title,
        f"time: end of the interval; buffer: the limit during it; utilization, drops, "
        f"arrivals: after its settling time; passed: utilization ≥ {format_percent(threshold)}; "
        "next: the limit set for the next interval; *: converged",
        ["time", "buffer", "utilization", "drops", "arrivals", "passed", "next"],
    )
    for row in steps.itertuples(index=False):
        table.add_row(
            f"{row.time_s:,.1f} s",
            f"{row.buffer_pkts:,} pkt",
            format_percent(row.utilization),
            f"{row.drops:,}",
            f"{row.arrivals:,}",
            "yes" if row.passed else "no",
            f"{row.next_buffer_pkts:,} pkt{'*' if row.converged else ''}",
        )
    return table
