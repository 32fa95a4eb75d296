"""What every figure carries under its axes, laid out in one way: the legend, notes (how to
read the error bars, a rule that does not apply) and the footer, which says what made the
figure, so that one found later still does: the scenario, the bottleneck's rate, the traffic
and the simulated time (`Setting`), the seeds and the buflab version.

A scenario's name carries the settings it was run with ("dumbbell-100 (traffic.0.flows=400,
duration=3s)"), so footers can be long: they wrap at their separators to the figure's width,
as notes wrap at their words, and the axes are laid out above whatever the band below takes.

It reads a scenario's facts through the engine and draws text; it must not know how the
runs behind a figure were made.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from buflab.engine import core, scenario_json
from buflab.engine.units import format_rate, format_time, parse_time

FOOTER_SIZE = 7.0
NOTE_SIZE = 7.5
LEGEND_SIZE = 8.0
# Space between the blocks of the band below the axes, and around it (pixels at SAVE_DPI).
_GAP_PX = 6.0
_MARGIN_PX = 4.0
WIDTH_USED = 0.98
# The resolution figures are saved at (`plots.save`), and laid out at.
SAVE_DPI = 150

# How a traffic kind's count reads in a footer (plural; `_noun` makes one singular).
_TRAFFIC_NOUNS = {
    "long_lived": "flows",
    "closed_loop": "users",
    "repeated_downloads": "users",
    "udp_cbr": "UDP flows",
    "udp_poisson": "UDP flows",
}
ARRIVALS = "flow arrivals per s"


@dataclass(frozen=True)
class Setting:
    """The settings a footer names besides the scenario, over every run behind a figure: the
    rate of the link the summary describes, the traffic (a count per kind, e.g. flows or
    users) and the simulated time with its warm-up. A value that differs between the runs
    (a swept rate) reads as its range."""

    rates_bps: tuple[float, ...]
    traffic: tuple[tuple[str, tuple[float, ...]], ...]  # (noun, the counts seen), in order
    durations_s: tuple[float, ...]
    warmups_s: tuple[float, ...]
    # The runs were emulations on real TCP (their time was real, not simulated).
    emulated: bool = False

    @classmethod
    def of(cls, scenarios: Iterable[dict[str, Any]], emulated: bool = False) -> Setting:
        """The setting of scenario trees (normalised or not), read by the engine; each
        distinct tree is read once. `emulated`: they ran on real TCP."""
        rates: set[float] = set()
        counts: dict[str, set[float]] = {}
        durations: set[float] = set()
        warmups: set[float] = set()
        seen: set[str] = set()
        for tree in scenarios:
            text = scenario_json(tree)
            if text in seen:
                continue
            seen.add(text)
            normalized = core().validate(text)
            rates.add(float(core().link_facts(text)["rate_bps"]))
            per_kind: dict[str, float] = {}
            for entry in core().traffic_facts(text)["entries"]:
                noun = _TRAFFIC_NOUNS.get(entry["kind"], ARRIVALS)
                count = float(entry["arrivals_per_s"]) if "arrivals_per_s" in entry else 0.0
                per_kind[noun] = per_kind.get(noun, 0.0) + float(entry.get("flows") or count)
            for noun, count in per_kind.items():
                counts.setdefault(noun, set()).add(count)
            durations.add(parse_time(normalized["duration"]))
            warmups.add(parse_time(normalized["warmup"]))
        return cls(
            tuple(sorted(rates)),
            tuple((noun, tuple(sorted(values))) for noun, values in counts.items()),
            tuple(sorted(durations)),
            tuple(sorted(warmups)),
            emulated,
        )

    def parts(self) -> list[str]:
        """ "10 Gb/s bottleneck", "800 flows", "20 s (5 s warm-up)"; ranges where runs differ."""
        parts = []
        if self.rates_bps:
            parts.append(f"{_span(self.rates_bps, format_rate)} bottleneck")
        for noun, counts in self.traffic:
            one = len(counts) == 1 and counts[0] == 1 and noun != ARRIVALS
            parts.append(f"{_span(counts, _count)} {noun.removesuffix('s') if one else noun}")
        if self.durations_s:
            text = _span(self.durations_s, format_time)
            warmups = [w for w in self.warmups_s if w > 0]
            if warmups:
                text += f" ({_span(self.warmups_s, format_time)} warm-up)"
            parts.append(f"{text} {'on real TCP' if self.emulated else 'simulated'}")
        return parts


def _count(value: float) -> str:
    return f"{value:,.10g}"


def _span(values: Sequence[float], text: Any) -> str:
    """One value as text, or the range of several: "20 Mb/s–1 Gb/s", "10–200"; a common unit
    is written once ("2–20 s")."""
    if len(values) == 1:
        return text(values[0])
    low, high = text(min(values)), text(max(values))
    low_number, _, low_unit = low.partition(" ")
    high_number, _, high_unit = high.partition(" ")
    if low_unit == high_unit:
        return f"{low_number}–{high_number}" + (f" {high_unit}" if high_unit else "")
    return f"{low}–{high}"


def footer_text(
    scenario_name: str, seeds: Sequence[int], version: str, setting: Setting | None = None
) -> str:
    """ "scenario NAME · 10 Gb/s bottleneck · 800 flows · 20 s (5 s warm-up) simulated ·
    seeds 1–3 · buflab 0.1.0"."""
    if not seeds:
        seed_text = "seeds none"
    elif len(seeds) == 1:
        seed_text = f"seed {seeds[0]}"
    elif list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        seed_text = f"seeds {seeds[0]}–{seeds[-1]}"
    else:
        seed_text = "seeds " + ", ".join(map(str, seeds))
    parts = [f"scenario {scenario_name}", *(setting.parts() if setting else []), seed_text]
    return " · ".join([*parts, f"buflab {version}"])


def bars_note(seeds: int, point: str = "point") -> str:
    """What a figure's error bars are, or why it has none; `point` names what a marker is."""
    if seeds <= 1:
        return f"One seed per {point}, so no error bars."
    return (
        f"Each {point} is the mean of {seeds} seeds; error bars are 95 % Student-t confidence "
        "intervals of the mean."
    )


def finish(
    fig: Figure,
    footer: str,
    handles: Sequence[Any] = (),
    labels: Sequence[str] = (),
    notes: Sequence[str] = (),
    ncol: int = 2,
) -> Figure:
    """Lay out the band below the axes, bottom up: the footer (grey, wrapped at its " · "),
    the notes (wrapped at words), the legend (centred, `ncol` columns; only with handles);
    then the axes above it (`tight_layout`)."""
    # Text is measured at the resolution it is saved at: hinting makes it some 8 % wider at
    # 150 dpi than at 100, and a line measured at one would overflow at the other.
    fig.set_dpi(SAVE_DPI)
    renderer = fig.canvas.get_renderer()
    height = fig.bbox.height
    width = WIDTH_USED * fig.bbox.width - _MARGIN_PX
    y = _MARGIN_PX
    for text, size, colour, separators in (
        (footer, FOOTER_SIZE, "gray", (" · ", " ")),
        ("\n".join(notes), NOTE_SIZE, "black", (" ",)),
    ):
        if not text:
            continue
        lines = [
            line
            for paragraph in text.split("\n")
            for line in wrap(paragraph, size, width, renderer, separators)
        ]
        block = fig.text(
            _MARGIN_PX / fig.bbox.width,
            y / height,
            "\n".join(lines),
            fontsize=size,
            color=colour,
            va="bottom",
            ha="left",
        )
        y += block.get_window_extent(renderer).height + _GAP_PX
    if handles:
        legend = fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=ncol,
            fontsize=LEGEND_SIZE,
            frameon=False,
            bbox_to_anchor=(0.5, y / height),
        )
        y += legend.get_window_extent(renderer).height + _GAP_PX
    fig.tight_layout(rect=(0, min(y / height, 0.6), 1, 1))
    return fig


def wrap(
    text: str, size: float, width_px: float, renderer: Any, separators: Sequence[str] = (" ",)
) -> list[str]:
    """`text` in lines no wider than `width_px` at font `size`, broken at the first of
    `separators` that makes the pieces fit, a piece too long for a line broken at the next."""
    font = FontProperties(size=size)

    def width(line: str) -> float:
        return renderer.get_text_width_height_descent(line, font, ismath=False)[0]

    if not text or width(text) <= width_px:
        return [text]
    separator, rest = separators[0], separators[1:]
    lines: list[str] = []
    line = ""
    for piece in text.split(separator):
        candidate = f"{line}{separator}{piece}" if line else piece
        if width(candidate) <= width_px:
            line = candidate
            continue
        if line:
            lines.append(line)
        if width(piece) > width_px and rest:
            *full, line = wrap(piece, size, width_px, renderer, rest)
            lines.extend(full)
        else:
            line = piece
    if line:
        lines.append(line)
    return lines
