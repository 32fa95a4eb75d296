"""Unit strings as scenario files write them ("10Gbps", "100ms", "80KB", "125pkt").

Reading one is the engine's: `parse_quantity` asks its parser (`buflab._core.parse_quantity`,
crates/buflab-base/src/units.rs), so a string means here exactly what it means in a scenario
(docs/scenario.md: decimal prefixes are powers of 1000, KB = 1000 B and Gbps = 1e9 b/s, binary
ones powers of 1024, KiB = 1024 B; rates may be written Mb/s and in any case). A bare number,
or a string that is only a number, is taken in the base unit (bits/s, seconds, bytes,
packets): options and plot axes may give one. This module owns only that and the way back,
numbers written for people (`format_*`).

It is for the Python side: the `theory` command's options, plot axes and human-readable
output. It stands on the engine's door alone and must not know scenarios or results: strings
in, numbers out, and back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from buflab.engine import core
from buflab.engine.errors import UnitError

# The kinds of quantity, each with the phrase its errors name it by.
KINDS = {"rate": "rate", "time": "time", "bytes": "size in bytes", "packets": "packet count"}

_BARE_NUMBER = re.compile(r"^\s*[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?\s*$")


@dataclass(frozen=True)
class Quantity:
    """A number with the kind of unit it was written in, in the kind's base unit."""

    value: float
    kind: str  # one of KINDS


def parse_quantity(text: str | int | float, kinds: tuple[str, ...] = tuple(KINDS)) -> Quantity:
    """Read "10Gbps", "100ms", "80KB", "125pkt" as the first of `kinds` the engine reads it as
    (a bare number is taken as the first kind)."""
    if isinstance(text, bool):
        raise UnitError(f"{text!r} is not a {_kinds_phrase(kinds)}")
    if isinstance(text, int | float):
        return Quantity(float(text), kinds[0])
    if _BARE_NUMBER.match(text):
        return Quantity(float(text), kinds[0])
    expected = []
    for kind in kinds:
        try:
            return Quantity(core().parse_quantity(text, kind), kind)
        except ValueError as error:  # the engine's message completes "expected …"
            expected.append(str(error))
    raise UnitError(f"{text!r} is not a {_kinds_phrase(kinds)}: expected {'; or '.join(expected)}")


def _kinds_phrase(kinds: tuple[str, ...]) -> str:
    return " or ".join(KINDS[k] for k in kinds)


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
        try:
            return core().parse_range(text, "time")
        except ValueError as error:
            raise UnitError(f"{text!r} is not a range of times: expected {error}") from None
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


def format_count(n: int, noun: str) -> str:
    """`n` things, with thousands separators: "1 worker", "2,279 runs"."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def format_percent(fraction: float) -> str:
    return f"{100 * fraction:.3g} %" if fraction < 0.001 else f"{100 * fraction:.2f} %"


def _format_scaled(
    value: float, scales: list[tuple[float, str]], base: str, floor: float = 1.0
) -> str:
    for factor, unit in scales:
        if abs(value) >= factor:
            return f"{value / factor:.4g} {unit}"
    return f"{value / floor:.4g} {base}"
