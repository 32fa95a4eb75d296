"""Words and units for what a figure labels, so that axes and legends read like a paper's:
a scenario key on an axis ("network.bottleneck.buffer" → "bottleneck buffer (packets)"), a
varied value in a legend ("network.access.rate = 1Gbps" → "access 1 Gb/s"), a summary
metric on a y axis ("goodput_bps" → "goodput (Mb/s)").

Well-known keys and metrics have their words here. Any other key reads as its last segments
with spaces ("traffic.0.max_window" → "max window"), any other metric as its name with
spaces, its unit read off its suffix (`_s` a time, `_bps` a rate, `_pkts` packets): never
the raw key, never a made-up unit.

Axes keep values in their base unit (packets, bit/s, seconds, bytes) and show them in the unit
that reads best (`Unit`: its name and what a value is divided by), so that a figure's data,
marks and ticks stay in one scale.

It knows scenario keys and metric names, not how they were run or drawn.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from buflab.engine.units import UnitError, format_bytes, format_rate, format_time, parse_quantity


@dataclass(frozen=True)
class Words:
    """A key in words: `axis` names it on an axis (its unit follows in brackets), `legend`
    is a legend entry with `{}` where the value goes."""

    axis: str
    legend: str


# Keys a recipe or an example varies, in words. `traffic.*` stands for any traffic entry.
KEYS: dict[str, Words] = {
    "network.bottleneck.buffer": Words("bottleneck buffer", "buffer {}"),
    "network.bottleneck.rate": Words("bottleneck rate", "bottleneck {}"),
    "network.bottleneck.ecn_threshold": Words("ECN marking threshold", "ECN threshold {}"),
    "network.access.rate": Words("access rate", "access {}"),
    "network.access.machines": Words("source machines", "{} machines"),
    "network.access.classes": Words("access classes", "{} access classes"),
    "network.rtt": Words("round-trip time", "RTT {}"),
    "network.switch.output_buffer": Words("output buffer", "output buffer {}"),
    "network.switch.voq_buffer": Words("VOQ buffer", "VOQ buffer {}"),
    "network.switch.ports": Words("switch ports", "{} ports"),
    "network.switch.load": Words("load pattern", "{} load"),
    "network.switch.speedup": Words("speedup", "speedup {}"),
    "network.switch.scheduler": Words("scheduler", "{}"),
    "traffic.*.flows": Words("flows", "{} flows"),
    "traffic.*.users": Words("users", "{} users"),
    "traffic.*.pacing": Words("pacing", "pacing {}"),
    "traffic.*.tcp": Words("TCP loss recovery", "{}"),
    "traffic.*.cc": Words("congestion control", "{}"),
    "traffic.*.rate": Words("sending rate", "{} per flow"),
    "traffic.*.packet": Words("packet size", "{} packets"),
    "traffic.*.max_window": Words("maximum window", "window {}"),
    "traffic.*.start": Words("start time", "start {}"),
    "duration": Words("duration", "{} runs"),
    "warmup": Words("warm-up", "warm-up {}"),
    "seed": Words("seed", "seed {}"),
}

# Summary metrics in words, without their unit (`metric_axis` adds it).
METRICS: dict[str, str] = {
    "utilization": "utilization",
    "drop_rate": "drop rate",
    "input_drop_rate": "drop rate at the inputs",
    "mark_rate": "ECN mark rate",
    "jain_fairness": "Jain's fairness index",
    "goodput_bps": "goodput",
    "throughput_bps": "throughput",
    "first_drop_s": "time of the first drop",
    "timeouts": "retransmission timeouts",
    "drops": "packets dropped",
    "mean_queue_pkts": "mean queue",
    "max_queue_pkts": "largest queue",
    "voq_mean_pkts": "mean VOQ occupancy",
    "queue_delay_mean_s": "mean queueing delay",
    "fct_short_mean_s": "mean completion time, short flows",
    "fct_long_mean_s": "mean completion time, long flows",
    "burst_mean_pkts": "mean burst",
    "burst_p99_pkts": "99th percentile burst",
    "same_flow_fraction": "successive packets of one flow",
    "iat_faster_than_line": "gaps shorter than line rate",
}

# Metrics that are fractions, drawn in percent; Jain's index stays on its own 0-1 scale.
PERCENT_METRICS = {
    "utilization",
    "drop_rate",
    "input_drop_rate",
    "mark_rate",
    "iat_faster_than_line",
    "same_flow_fraction",
}


@dataclass(frozen=True)
class Unit:
    """How an axis shows values kept in a base unit: the unit's name ("" for plain numbers)
    and what a value is divided by to read in it."""

    name: str
    divisor: float = 1.0

    def bracket(self) -> str:
        return f" ({self.name})" if self.name else ""


# Plain numbers: no unit, nothing divided.
PLAIN = Unit("")


def _pattern(key: str) -> str:
    """A key as `KEYS` names it: a traffic entry's index becomes `*`, the shorthand `flows`
    is the (only) entry's flows."""
    if key == "flows":
        return "traffic.*.flows"
    return re.sub(r"^traffic\.\d+\.", "traffic.*.", key)


def _entry(key: str) -> str:
    """ ", traffic 2" for a key of traffic entry 2 (entry 0 is usually the only one)."""
    match = re.match(r"^traffic\.(\d+)\.", key)
    return f", traffic {match.group(1)}" if match and match.group(1) != "0" else ""


def key_words(key: str) -> Words:
    """A key in words: its own, or its last segments read as words (section names that say
    nothing, `network` and `traffic.N`, left out)."""
    known = KEYS.get(_pattern(key))
    if known is not None:
        entry = _entry(key)
        return Words(known.axis + entry, known.legend + entry)
    parts = [p for p in key.split(".") if p not in ("network", "traffic") and not p.isdigit()]
    words = " ".join(parts[-2:]).replace("_", " ") or key
    return Words(words, f"{words} {{}}")


def value_text(value: object) -> str:
    """A varied value as a reader writes it: "1 Gb/s", "125 pkt", "100 ms", "1,000"; a range
    "90ms..110ms" as "90–110 ms"; names as they are."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return f"{value:,.10g}"
    text = str(value)
    if ".." in text:
        low, _, high = text.partition("..")
        low_text, high_text = value_text(low), value_text(high)
        low_number, _, low_unit = low_text.partition(" ")
        high_number, _, high_unit = high_text.partition(" ")
        if low_unit and low_unit == high_unit:
            return f"{low_number}–{high_number} {high_unit}"
        return f"{low_text}–{high_text}"
    if re.fullmatch(r"[-+]?\d+(\.\d*)?", text):  # a bare number: no unit to read it in
        return f"{float(text):,.10g}"
    try:
        quantity = parse_quantity(text)
    except UnitError:
        return text
    return quantity_text(quantity.value, quantity.kind)


def quantity_text(value: float, kind: str | None) -> str:
    """A number in its kind's base unit as text in the unit that reads best."""
    if kind == "rate":
        return format_rate(value)
    if kind == "time":
        return format_time(value)
    if kind == "bytes":
        return format_bytes(value)
    if kind == "packets":
        return f"{value:,.10g} pkt"
    return f"{value:,.10g}"


def legend_label(key: str, value: object) -> str:
    """A legend entry for one value of a key: "access 1 Gb/s", "400 flows"."""
    return key_words(key).legend.format(value_text(value))


def axis_label(key: str, unit: Unit) -> str:
    """An axis naming a key: "bottleneck buffer (packets)", "access rate (Mb/s)"."""
    return key_words(key).axis + unit.bracket()


# Units a value of each kind may be shown in, largest first: (name, base units per unit).
_SCALES = {
    "rate": [("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3), ("b/s", 1.0)],
    "time": [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)],
    "bytes": [("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1.0)],
}


def unit_for(kind: str | None, values: Iterable[float]) -> Unit:
    """The unit an axis of `kind` shows `values` (base units) in: the largest in which the
    smallest non-zero value is at least 1, so that no tick reads 0.02 Gb/s where 20 Mb/s
    would do, and larger ones grow thousands-separated (1,000 Mb/s)."""
    if kind == "packets":
        return Unit("packets")
    scales = _SCALES.get(kind or "")
    if scales is None:
        return Unit("")
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    smallest = min(finite, default=1.0)
    for name, size in scales:
        if smallest >= size:
            return Unit(name, size)
    name, size = scales[-1]
    return Unit(name, size)


def metric_kind(metric: str) -> str | None:
    """The kind of unit a metric is in, read off its name: "percent", "time", "rate",
    "packets", "bytes" or None (a count, an index)."""
    if metric in PERCENT_METRICS or metric.endswith("_fraction"):
        return "percent"
    for suffix, kind in (("_s", "time"), ("_bps", "rate"), ("_pkts", "packets")):
        if metric.endswith(suffix):
            return kind
    if metric.endswith("_bytes"):
        return "bytes"
    return None


def metric_words(metric: str) -> str:
    """A summary metric in words, without its unit: its own, or its name with the unit
    suffix off and spaces ("pacer.gap_min_s" → "pacer gap min")."""
    if metric in METRICS:
        return METRICS[metric]
    name = metric
    for suffix in ("_s", "_bps", "_pkts", "_bytes", "_fraction"):
        name = name.removesuffix(suffix)
    return name.replace("_", " ").replace(".", " ")


@dataclass(frozen=True)
class MetricAxis:
    """How a metric is drawn: its axis label, what its values are multiplied by (100 for a
    fraction in percent, 1e3 for seconds in ms) and the top of the axis (None: as the data
    need)."""

    label: str
    scale: float = 1.0
    y_max: float | None = None


def metric_axis(metric: str, values: Iterable[float]) -> MetricAxis:
    """A metric's axis: fractions in percent (utilization up to 100 %), Jain's index from 0
    to 1, times and rates in the unit their largest value reads best in."""
    words = metric_words(metric)
    kind = metric_kind(metric)
    finite = [abs(v) for v in values if math.isfinite(v)]
    if kind == "percent":
        return MetricAxis(f"{words} (%)", 100.0, 102.0 if metric == "utilization" else None)
    if metric == "jain_fairness":
        return MetricAxis(f"{words} (1 = equal shares)", 1.0, 1.02)
    if kind in ("time", "rate", "bytes"):
        # By the largest value: axes hold few values, and 1,000 reads better than 0.001.
        unit = _largest_unit(kind, max(finite, default=0.0))
        return MetricAxis(f"{words} ({unit.name})", 1.0 / unit.divisor)
    if kind == "packets":
        return MetricAxis(f"{words} (packets)")
    return MetricAxis(words)


def _largest_unit(kind: str, largest: float) -> Unit:
    """The unit in which `largest` reads between 1 and 1,000 (the smallest unit below)."""
    scales = _SCALES[kind]
    for name, size in scales:
        if largest >= size:
            return Unit(name, size)
    name, size = scales[-1]
    return Unit(name, size) if largest > 0 else Unit(scales[0][0], scales[0][1])


def number_text(value: float) -> str:
    """A tick's number: thousands separated (10,000), no exponent, as few digits as say it."""
    if value == 0:
        return "0"
    if abs(value) >= 1:
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return np.format_float_positional(float(f"{value:.3g}"), trim="-")
