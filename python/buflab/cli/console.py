"""Terminal output: the progress bar of long work and the tables that summarise a run.

Progress goes to stderr so that stdout stays clean for what a command reports.

It formats what it is given and must not compute any of it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from buflab.engine.units import format_bytes, format_percent, format_rate, format_time

if TYPE_CHECKING:
    import pandas as pd

    from buflab.experiments.sizing import Probe, SizeCurve, Sizing

# A log file or pipe (a long sweep's output kept with nohup, CI) gets 160 columns unless
# COLUMNS says otherwise: rich's default of 80 squeezes the wide sweep tables into ellipses.
# A terminal keeps its own width.
LOG_WIDTH = 160


def _console(stderr: bool = False) -> Console:
    console = Console(stderr=stderr)
    if console.is_terminal or "COLUMNS" in os.environ:
        return console
    return Console(stderr=stderr, width=LOG_WIDTH)


stdout = _console()
stderr = _console(stderr=True)


class EstimatedRemainingColumn(ProgressColumn):
    """The time left as the sweep estimates it (`buflab.experiments.schedule.Eta`: each run's
    estimated cost, corrected by the runs that finished), counting down between updates;
    rich's own guess from the count done so far when no estimate was given. Longest runs go
    first, so a guess from the count alone would run long at the start."""

    def render(self, task: Task) -> Text:
        deadline = task.fields.get("deadline")
        if task.finished:
            return Text("0:00:00", style="progress.remaining")
        if deadline is None:
            remaining = task.time_remaining
            if remaining is None:
                return Text("-:--:--", style="progress.remaining")
        else:
            remaining = max(0.0, deadline - time.monotonic())
        minutes, seconds = divmod(int(remaining), 60)
        hours, minutes = divmod(minutes, 60)
        return Text(f"{hours:d}:{minutes:02d}:{seconds:02d}", style="progress.remaining")


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[..., None]]:
    """A bar with count, elapsed time and ETA; yields `update(done, total, seconds_left)`
    (`seconds_left` the sweep's estimate, or None to let the bar guess from the count).

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
        EstimatedRemainingColumn(),
    )
    # Without an estimate, the ETA comes from the last 10 minutes of finished runs: single
    # runs can take minutes, and rich's default 30 s window would often hold fewer than two.
    progress = Progress(*columns, console=stderr, speed_estimate_period=600)
    task = progress.add_task(description, total=None)
    last_done: list[int] = []

    def update(done: int, total: int, seconds_left: float | None = None) -> None:
        deadline = None if seconds_left is None else time.monotonic() + seconds_left
        if not last_done:
            progress.start()
            # Runs found on disk count as done, but not toward the speed behind the ETA.
            progress.reset(task, total=total, completed=done, deadline=deadline)
        else:
            progress.update(task, total=total, advance=done - last_done[-1], deadline=deadline)
        last_done[:] = [done]

    try:
        yield update
    finally:
        if last_done:
            progress.stop()


@contextmanager
def simulated_time_bar(total_s: float) -> Iterator[Callable[[float], None]]:
    """A bar of simulated seconds for one long run, with elapsed time and ETA; yields
    `update(simulated_s)`."""
    progress = Progress(
        TextColumn("simulated"),
        BarColumn(),
        TextColumn("{task.completed:,.0f} of {task.total:,.0f} s"),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=stderr,
    )
    task = progress.add_task("run", total=total_s)
    progress.start()
    try:
        yield lambda simulated_s: progress.update(task, completed=simulated_s)
    finally:
        progress.stop()


# summary key -> (label, formatter); the order is the order of the printed table.
_SUMMARY_ROWS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("utilization", "utilization", format_percent),
    ("throughput_bps", "throughput", format_rate),
    ("goodput_bps", "goodput", format_rate),
    ("bottleneck_rate_bps", "bottleneck rate", format_rate),
    ("drop_rate", "drop rate", format_percent),
    ("drops", "drops", lambda v: f"{v:,}"),
    ("marks", "ECN marks", lambda v: f"{v:,}"),
    ("mark_rate", "mark rate", format_percent),
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
    ("ecn_reactions", "ECN window reductions", lambda v: f"{v:,}"),
    ("retransmits_per_drop", "retransmits per drop", lambda v: f"{v:.2f}"),
    ("flows", "flows", lambda v: f"{v:,}"),
    ("input_drop_rate", "input drop rate (VOQs)", format_percent),
    ("input_drops", "input drops", lambda v: f"{v:,}"),
    ("voq_mean_pkts", "mean VOQ packets per input", lambda v: f"{v:,.2f} pkt"),
    ("voq_max_pkts", "max VOQ packets per input", lambda v: f"{v:,} pkt"),
    ("fabric_mean_matching", "mean matching size", lambda v: f"{v:.2f} cells"),
    ("events", "events simulated (whole run)", lambda v: f"{v:,}"),
    ("wall_s", "wall-clock time", format_time),
]


def buffer_text(pkts: Any, size: Any) -> str:
    """A buffer limit from its packets and bytes, of which one or neither is set (None, or
    <NA> in a table)."""
    if _is_set(pkts):
        return f"{int(pkts):,} pkt"
    return format_bytes(int(size)) if _is_set(size) else "unlimited"


def _is_set(value: Any) -> bool:
    if value is None:
        return False
    try:
        return not math.isnan(float(value))
    except TypeError:  # pandas' <NA>
        return False


def summary_table(summary: dict[str, Any]) -> Table:
    buffer = buffer_text(summary.get("buffer_pkts"), summary.get("buffer_bytes"))
    title = (
        f"{summary.get('name', '')}: seed {summary.get('seed')}, buffer {buffer}, "
        f"measured {format_time(summary.get('measured_s', 0))} after "
        f"{format_time(summary.get('warmup_s', 0))} warm-up"
    )
    table = Table(title=title, show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    switch = summary.get("ports", 0) > 0
    ecn = summary.get("marks", 0) > 0 or summary.get("ecn_reactions", 0) > 0
    for key, label, formatter in _SUMMARY_ROWS:
        if key not in summary or (key in _SWITCH_ROWS and not switch):
            continue
        if key in _ECN_ROWS and not ecn:
            continue
        table.add_row(label, formatter(summary[key]))
    return table


# Summary rows shown only when a run has ECN marks or reactions (RED with `red_ecn`).
_ECN_ROWS = {"marks", "mark_rate", "ecn_reactions"}


# Summary rows that only a switch run fills.
_SWITCH_ROWS = {
    "input_drop_rate",
    "input_drops",
    "voq_mean_pkts",
    "voq_max_pkts",
    "fabric_mean_matching",
}


def _table(title: str, caption: str, headers: list[str]) -> Table:
    """A table whose first column names the row and whose other columns are right-aligned
    numbers."""
    table = Table(title=title, caption=caption)
    table.add_column(headers[0], no_wrap=True)
    for header in headers[1:]:
        table.add_column(header, justify="right")
    return table


def frame_table(frame: pd.DataFrame, title: str) -> Table:
    """Any table of numbers and names as it is, numbers to 4 significant digits (nan: –)."""
    table = Table(title=title)
    for column in frame.columns:
        numeric = not any(isinstance(value, str) for value in frame[column])
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(_cell_text(value) for value in row))
    return table


def _cell_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def links_table(links: pd.DataFrame, summary_hop: int, title: str = "links") -> Table:
    """A table from `Result.links`: one row per monitored link (a parking lot's hops); the row
    of `summary_hop`, the link the summary describes, is marked."""
    # The mark rate only where some link marks (RED with `red_ecn`).
    marking = "marks" in links.columns and bool((links["marks"] > 0).any())
    headers = ["link", "rate", "buffer", "utilization", "drop rate", "queue", "delay"]
    if marking:
        headers.insert(5, "mark rate")
    table = _table(
        title,
        "over the measured time; queue: mean packets waiting; delay: mean queueing delay; "
        "*: the link the summary describes",
        headers,
    )
    for row in links.itertuples(index=False):
        buffer = buffer_text(row.buffer_pkts, row.buffer_bytes)
        cells = [
            f"{row.name}*" if row.hop == summary_hop else row.name,
            format_rate(row.rate_bps),
            buffer,
            format_percent(row.utilization),
            format_percent(row.drop_rate),
            f"{row.mean_queue_pkts:,.1f} pkt",
            format_time(row.queue_delay_mean_s),
        ]
        if marking:
            cells.insert(5, format_percent(row.mark_rate))
        table.add_row(*cells)
    return table


def ports_table(ports: pd.DataFrame, summary_port: int, title: str = "switch ports") -> Table:
    """A table from `Result.ports`: each port's input (VOQs) beside its output line; the port
    whose output the time series and event log describe is marked."""
    table = _table(
        title,
        "over the measured time; VOQ: packets in the input's VOQs after each slot's arrivals; "
        "queue: mean packets waiting at the output; *: the summary port",
        [
            "port",
            "flows in/out",
            "in drops",
            "VOQ mean",
            "VOQ max",
            "out util.",
            "out drops",
            "queue",
        ],
    )
    for row in ports.itertuples(index=False):
        table.add_row(
            f"{row.port}*" if row.port == summary_port else str(row.port),
            f"{row.flows_in:,}/{row.flows_out:,}",
            format_percent(row.in_drop_rate),
            f"{row.voq_mean_pkts:,.2f}",
            f"{row.voq_max_pkts:,}",
            format_percent(row.out_utilization),
            format_percent(row.out_drop_rate),
            f"{row.out_mean_queue_pkts:,.1f} pkt",
        )
    return table


def transfers_table(bins: pd.DataFrame, title: str = "transfers by file size") -> Table:
    """A table from `buflab.analysis.transfers.by_size_bin` (or `short_and_long`); – where no
    transfer completed."""

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


def transfers_compared_table(bins: pd.DataFrame, title: str) -> Table:
    """A point's rows of `buflab.experiments.compare.transfers_compared`: each size bin's
    transfers simulated / on Linux; – where none completed."""

    def pair(row: Any, name: str, formatter: Callable[[float], str]) -> str:
        shown = [getattr(row, f"{side}_{name}") for side in ("sim", "real")]
        return " / ".join(formatter(v) if math.isfinite(v) else "–" for v in shown)

    table = _table(
        title,
        "simulated / Linux, over the transfers each run started after its warm-up; FCT: "
        "flow completion time; throughput: mean of bytes·8/FCT over the completed ones",
        ["size", "started", "done", "FCT p50", "FCT mean", "throughput"],
    )
    count = "{:,.0f}".format
    for row in bins.itertuples(index=False):
        table.add_row(
            row.bin,
            pair(row, "transfers", count),
            pair(row, "completed", count),
            pair(row, "fct_p50_s", format_time),
            pair(row, "fct_mean_s", format_time),
            pair(row, "throughput_mean_bps", format_rate),
        )
    return table


def rebuild_table(checks: list[tuple[str, float, float]], title: str) -> Table:
    """The queue rebuilt from its event log beside the run's own summary."""
    table = _table(
        title,
        "rebuilt: from the event log alone; =: equal to the summary to the last bit",
        ["metric", "rebuilt", "summary", ""],
    )
    for key, rebuilt, reported in checks:
        text = _SUMMARY_FORMATS.get(key, _plain)
        table.add_row(key, text(rebuilt), text(reported), "=" if rebuilt == reported else "differs")
    return table


def analysis_table(analyses: dict[str, Any], band: tuple[float, float] | None = None) -> Table:
    """Each run's traffic measures from its event log, one column per run; with `band`
    (seconds), the share of inter-arrival times inside it."""
    table = _table(
        "event-log analysis",
        "over the measured time; IAT: gap between successive stored packets; burst: run of "
        "successive arrivals of one flow",
        ["measure", *analyses],
    )
    rows: list[tuple[str, Callable[[Any], str]]] = [
        ("utilization", lambda a: format_percent(a.summary()["utilization"])),
        ("drop rate", lambda a: format_percent(a.summary()["drop_rate"])),
        ("mean queue", lambda a: f"{a.summary()['mean_queue_pkts']:,.1f} pkt"),
        ("IAT p10", lambda a: _seconds(a.interarrival.quantile(0.1) / 1e12)),
        ("IAT p50", lambda a: _seconds(a.interarrival.quantile(0.5) / 1e12)),
        ("IAT p90", lambda a: _seconds(a.interarrival.quantile(0.9) / 1e12)),
        ("IAT min", lambda a: _seconds(a.interarrival.low / 1e12)),
        ("IAT mean", lambda a: _seconds(a.interarrival.mean / 1e12)),
        ("IAT max", lambda a: _seconds(a.interarrival.high / 1e12)),
        ("IAT faster than line", lambda a: format_percent(a.summary()["iat_faster_than_line"])),
        ("burst mean", lambda a: f"{a.bursts.mean:.2f} pkt"),
        ("burst p99", lambda a: f"{a.bursts.quantile(0.99):,.0f} pkt"),
        ("same-flow successors", lambda a: format_percent(a.summary()["same_flow_fraction"])),
        ("queueing delay p50", lambda a: _seconds(a.queue_delay.quantile(0.5) / 1e12)),
        ("queueing delay p99", lambda a: _seconds(a.queue_delay.quantile(0.99) / 1e12)),
    ]
    if band is not None:
        lo, hi = band
        name = f"IAT in {_seconds(lo)}–{_seconds(hi)}"
        rows.append(
            (name, lambda a: format_percent(a.interarrival.fraction_between(lo * 1e12, hi * 1e12)))
        )
    for label, value in rows:
        table.add_row(label, *(value(a) for a in analyses.values()))
    return table


def traces_table(frames: dict[str, pd.DataFrame], summaries: dict[str, dict[str, Any]]) -> Table:
    """Per run: the traced flows, what they had acknowledged by the end, Jain's index of
    those totals, their mean window at the end, and the bottleneck's first drop."""
    # start-up time: the traces module imports pandas and matplotlib
    from buflab.plots.traces import jain_index

    table = _table(
        "flow traces",
        "acknowledged: payload bytes by each traced flow's last trace row; first drop: at the "
        "bottleneck, from the start of the run",
        ["measure", *frames],
    )

    def last_rows(t: pd.DataFrame) -> pd.DataFrame:
        return t.groupby("flow").tail(1)

    def first_drop(s: dict[str, Any]) -> str:
        value = s.get("first_drop_s")
        return "none" if value is None else _seconds(float(value))

    rows: list[tuple[str, Callable[[pd.DataFrame, dict[str, Any]], str]]] = [
        ("traced flows", lambda t, s: f"{t['flow'].nunique():,}"),
        ("acknowledged", lambda t, s: f"{last_rows(t)['acked_bytes'].sum() / 1e6:,.2f} MB"),
        (
            "fairness (Jain)",
            lambda t, s: f"{jain_index(last_rows(t)[['acked_bytes']].T.astype(float)).iloc[0]:.3f}",
        ),
        ("window at the end", lambda t, s: f"{last_rows(t)['cwnd_pkts'].mean():,.1f} seg"),
        ("first drop", lambda t, s: first_drop(s)),
    ]
    for label, value in rows:
        table.add_row(label, *(value(t, summaries[name]) for name, t in frames.items()))
    return table


def _seconds(value: float) -> str:
    return "–" if math.isnan(value) else format_time(value)


def _plain(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:.6g}"


_SUMMARY_FORMATS: dict[str, Callable[[Any], str]] = {key: f for key, _, f in _SUMMARY_ROWS}


# --- buflab size ------------------------------------------------------------------------------


def probe_line(probe: Probe, target: float) -> str:
    """One probe of a buffer search as it finishes; "(on disk)" when no run was simulated."""
    verdict = "meets" if probe.passed else "misses"
    spread = "" if math.isnan(probe.ci95) else f" ± {format_percent(probe.ci95)}"
    reused = "" if probe.simulated else " (on disk)"
    return (
        f"{probe.buffer_pkts:>8,} pkt: utilization {format_percent(probe.utilization)}"
        f"{spread}, {verdict} {format_percent(target)}{reused}"
    )


def answer_lines(sizing: Sizing) -> list[str]:
    """The answer of a search beside the rules of thumb, then eq. 2.1 (or why it does not
    apply), the probes that contradict monotonicity and what the search cost."""
    target = format_percent(sizing.target)
    rules = sizing.rules
    beside = ""
    if rules is not None:
        sqrt_n = "–" if rules.rtt_c_sqrt_n is None else f"{rules.rtt_c_sqrt_n:,.0f} pkt"
        beside = f" (RTT·C = {rules.rtt_c:,.0f} pkt, RTT·C/√N = {sqrt_n})"
    if sizing.buffer_pkts is None:
        lines = [f"no buffer up to {sizing.largest_probe:,} pkt meets {target}{beside}"]
    else:
        lines = [f"minimum buffer: {sizing.buffer_pkts:,} pkt for {target}{beside}"]
        lines.append(precision_line(sizing))
    if rules is not None and rules.eq21 is not None:
        lines.append(f"eq. 2.1 (tiny buffers): {rules.eq21:,.1f} pkt ({rules.eq21_note})")
    elif rules is not None:
        lines.append(f"eq. 2.1 (tiny buffers) does not apply: {rules.eq21_note}")
    lines += _contradiction_lines(sizing)
    reused = sum(1 for probe in sizing.probes if not probe.simulated)
    lines.append(
        f"{len(sizing.probes)} probes ({reused} found on disk) in {format_time(sizing.wall_s)}"
    )
    return lines


def precision_line(sizing: Sizing) -> str:
    """How precise a found answer is (`sizing.precision_text`)."""
    # start-up time: the sizing module imports pandas, which a console need not
    from buflab.experiments.sizing import precision_text

    return f"precision: {precision_text(sizing)}"


def _contradiction_lines(sizing: Sizing) -> list[str]:
    """One line for every probe pair that contradicts monotonicity (with one seed per probe,
    noise near the answer can make many): how many, and the largest fall."""
    pairs = sorted(sizing.contradictions, key=lambda p: p[1].utilization - p[0].utilization)
    if not pairs:
        return []
    small, large = pairs[0]
    count = "1 probe pair" if len(pairs) == 1 else f"{len(pairs)} probe pairs"
    return [
        f"not monotonic: {count} where the larger buffer did worse, the largest fall "
        f"{small.buffer_pkts:,} pkt {format_percent(small.utilization)} against "
        f"{large.buffer_pkts:,} pkt {format_percent(large.utilization)}; add --runs to average "
        "more seeds"
    ]


def sizes_table(curve: SizeCurve) -> Table:
    """The minimum buffer for each value of a curve beside the rules of thumb, in packets."""
    table = _table(
        f"minimum buffer for {format_percent(curve.target)} utilization, by {curve.key}"
        + (f", {curve.label}" if curve.label else ""),
        "buffers in packets; eq. 2.1: the tiny-buffer bound (n/a: does not apply, see below); "
        "probes: buffer sizes tried (simulated or found on disk); wall: this search's "
        "wall-clock time",
        # The key's last part heads the values: the title names it in full, and a long
        # header would squeeze the numbers.
        [curve.key.rsplit(".", 1)[-1], "minimum", "RTT·C", "RTT·C/√N", "eq. 2.1", "probes", "wall"],
    )
    for column in table.columns[1:]:
        column.no_wrap = True  # a number split over two lines misreads
    for point in curve.points:
        table.add_row(str(point.value), *_size_cells(point.sizing))
    return table


def _size_cells(sizing: Sizing) -> list[str]:
    def packets(value: float | None) -> str:
        return "–" if value is None else f"{value:,.1f}"

    if sizing.buffer_pkts is None:
        found = f"none ≤ {sizing.largest_probe:,}"
    else:
        found = f"{sizing.buffer_pkts:,}"
    rules = sizing.rules
    if rules is None:
        theory = ["–", "–", "–"]
    else:
        eq21 = "n/a" if rules.eq21 is None else packets(rules.eq21)
        theory = [packets(rules.rtt_c), packets(rules.rtt_c_sqrt_n), eq21]
    return [found, *theory, f"{len(sizing.probes)}", f"{sizing.wall_s:,.1f} s"]


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
