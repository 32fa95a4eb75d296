"""Unit strings as scenario files write them ("10Gbps", "100ms", "80KB", "125pkt").

The engine parses scenario values itself; this module is for the Python side only: the
`theory` command's options, plot axes and human-readable output. It accepts the spellings the
engine accepts (see docs/scenario.md): decimal prefixes are powers of 1000 (KB = 1000 B,
Gbps = 1e9 b/s), binary ones powers of 1024 (KiB = 1024 B), rates may be written Mb/s and in
any case. A bare number is taken in the base unit (bits/s, seconds, bytes, packets).

It stands on nothing in buflab and must not know scenarios or results: strings in, numbers
out, and back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Rate units are matched in lower case with "/s" read as "ps" (Mb/s = Mbps = mbps).
RATE_UNITS = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12}
TIME_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
}
BYTE_UNITS = {
    "B": 1,
    "bytes": 1,
    "KB": 1000,
    "kB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
}
PACKET_UNITS = {"pkt": 1, "pkts": 1, "packet": 1, "packets": 1, "p": 1}

# kind -> (units, example); the example goes into error messages.
KINDS = {
    "rate": (RATE_UNITS, "10Gbps"),
    "time": (TIME_UNITS, "100ms"),
    "bytes": (BYTE_UNITS, "1000B"),
    "packets": (PACKET_UNITS, "125pkt"),
}

_NUMBER_AND_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*$")


class UnitError(ValueError):
    """A unit string could not be read; the message says what was expected."""


@dataclass(frozen=True)
class Quantity:
    """A number with the kind of unit it was written in, in the kind's base unit."""

    value: float
    kind: str  # one of KINDS


def parse_quantity(text: str | int | float, kinds: tuple[str, ...] = tuple(KINDS)) -> Quantity:
    """Read "10Gbps", "100ms", "80KB", "125pkt" (or a bare number, taken as the first kind)."""
    if isinstance(text, bool):
        raise UnitError(f"{text!r} is not a {_kinds_phrase(kinds)}")
    if isinstance(text, int | float):
        return Quantity(float(text), kinds[0])
    match = _NUMBER_AND_UNIT.match(text)
    if match:
        number, unit = float(match.group(1)), match.group(2)
        if not unit:
            return Quantity(number, kinds[0])
        for kind in kinds:
            units, _ = KINDS[kind]
            key = unit.lower().replace("/s", "ps") if kind == "rate" else unit
            if key in units:
                return Quantity(number * units[key], kind)
    examples = ", ".join(KINDS[k][1] for k in kinds)
    raise UnitError(f"{text!r} is not a {_kinds_phrase(kinds)} (expected e.g. {examples})")


def _kinds_phrase(kinds: tuple[str, ...]) -> str:
    names = {"rate": "rate", "time": "time", "bytes": "size in bytes", "packets": "packet count"}
    return " or ".join(names[k] for k in kinds)


def parse_rate(text: str | int | float) -> float:
    """Bits per second."""
    return parse_quantity(text, ("rate",)).value


def parse_time(text: str | int | float) -> float:
    """Seconds."""
    return parse_quantity(text, ("time",)).value


def parse_bytes(text: str | int | float) -> float:
    """Bytes."""
    return parse_quantity(text, ("bytes",)).value


def parse_time_range(text: str | int | float) -> tuple[float, float]:
    """A time or a uniform range "a..b", in seconds, as (low, high)."""
    if isinstance(text, str) and ".." in text:
        low, high = text.split("..", 1)
        return parse_time(low), parse_time(high)
    value = parse_time(text)
    return value, value


def format_rate(bps: float) -> str:
    return _format_scaled(bps, [(1e12, "Tb/s"), (1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")], "b/s")


def format_time(seconds: float) -> str:
    if seconds == 0 or not math.isfinite(seconds):
        return f"{seconds:g} s"
    return _format_scaled(seconds, [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs")], "ns", floor=1e-9)


def format_bytes(count: float) -> str:
    return _format_scaled(count, [(1e9, "GB"), (1e6, "MB"), (1e3, "KB")], "B")


def format_percent(fraction: float) -> str:
    return f"{100 * fraction:.3g} %" if fraction < 0.001 else f"{100 * fraction:.2f} %"


def _format_scaled(
    value: float, scales: list[tuple[float, str]], base: str, floor: float = 1.0
) -> str:
    for factor, unit in scales:
        if abs(value) >= factor:
            return f"{value / factor:.4g} {unit}"
    return f"{value / floor:.4g} {base}"
