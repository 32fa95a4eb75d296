"""Figures read like a paper's: every kind of figure buflab draws renders from a tiny run
(so none crashes), and the behaviour behind how they read is checked where it is behaviour:
keys and metrics in words and units, footers naming the bottleneck, the traffic and the
simulated time, error bars explained, one style per rule of thumb in every figure, points of
categorical x values not joined by lines, plain tick labels at 10 Gb/s scale, the analysis
figure's zero and tail, the window axis cut above a slow-start peak, and `reproduce p1`
drawing the traces its catalogue entry promises.

Figures are inspected as matplotlib objects (line styles, scales, texts), not as pixels: what
a reader sees is decided there, and pixels would tie the tests to a font."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

import buflab
from buflab import __version__, plots
from buflab.analysis.queue import analyze
from buflab.cli import cli
from buflab.engine.runner import load_scenario
from buflab.experiments import sizing_plot
from buflab.experiments.compare import compare_figure, detail_figure
from buflab.experiments.recipes import SweepHeader
from buflab.experiments.report import SweepView, run_and_report, theory_marks
from buflab.experiments.sizing import Probe, RuleSizes, SizeCurve, SizePoint, Sizing
from buflab.experiments.sweep import Plan, Vary
from buflab.experiments.threshold import write_thresholds
from buflab.plots import labels
from buflab.plots.caption import Setting, footer_text, wrap
from buflab.plots.queue import analysis_figure
from buflab.plots.rates import rate_figure
from buflab.plots.ticks import plain_log
from buflab.plots.traces import trace_figure, window_limit
from conftest import TINY_SCENARIO

TINY = load_scenario(TINY_SCENARIO)


def _texts(fig: Figure) -> str:
    """Every text a figure shows: titles, axis labels, tick labels, legends, notes, footer."""
    found = [t.get_text() for t in fig.texts]
    for legend in fig.legends:
        found += [t.get_text() for t in legend.get_texts()]
    for ax in fig.axes:
        found += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        found += [t.get_text() for t in ax.texts]
        found += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        if ax.get_legend() is not None:
            found += [t.get_text() for t in ax.get_legend().get_texts()]
    return "\n".join(found)


def _style(fig: Figure, name: str) -> tuple[object, ...]:
    """The (colour, dash pattern) of the first line whose legend label is `name`, alone or
    followed by its size ("RTT·C = 1,250 pkt")."""
    for ax in fig.axes:
        for line in ax.get_lines():
            label = str(line.get_label())
            if label == name or label.startswith(f"{name} "):
                return (line.get_color(), line.get_linestyle())
    raise AssertionError(f"no line labelled {name!r}")


# --- labels: words and units -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "axis", "legend"),
    [
        ("network.bottleneck.buffer", "125pkt", "bottleneck buffer", "buffer 125 pkt"),
        ("network.access.rate", "1Gbps", "access rate", "access 1 Gb/s"),
        ("network.rtt", "90ms..110ms", "round-trip time", "RTT 90–110 ms"),
        ("traffic.0.flows", 400, "flows", "400 flows"),
        ("flows", 2000, "flows", "2,000 flows"),
        ("traffic.2.users", 1200, "users, traffic 2", "1,200 users, traffic 2"),
        ("network.switch.ports", 8, "switch ports", "8 ports"),
        # Not in the table: the key's last segments in words, never the raw key.
        ("traffic.0.think_time", "1s", "think time", "think time 1 s"),
        (
            "network.bottleneck.ecn_bytes",
            "3KB",
            "bottleneck ecn bytes",
            "bottleneck ecn bytes 3 KB",
        ),
    ],
)
def test_keys_read_as_words_with_their_values_in_units(
    key: str, value: object, axis: str, legend: str | None
) -> None:
    """Well-known keys have their own words; any other reads as its last segments with spaces;
    values are formatted in the unit that reads best (1 Gb/s, not 1Gbps or 1e9)."""
    words = labels.key_words(key)
    assert words.axis == axis
    assert labels.legend_label(key, value) == legend
    assert "." not in words.axis and "_" not in words.axis


def test_axes_name_their_unit_chosen_by_the_values() -> None:
    """An axis of rates is in the unit in which its smallest value is at least 1 (20 Mb/s and
    1 Gb/s: Mb/s, so 20 and 1,000); packets are packets; plain numbers have no unit."""
    rates = labels.unit_for("rate", [20e6, 1e9])
    assert rates == labels.Unit("Mb/s", 1e6)
    assert labels.axis_label("network.access.rate", rates) == "access rate (Mb/s)"
    assert labels.axis_label("network.bottleneck.buffer", labels.unit_for("packets", [5])) == (
        "bottleneck buffer (packets)"
    )
    assert labels.axis_label("traffic.0.flows", labels.unit_for(None, [10, 20])) == "flows"
    assert labels.unit_for("time", [0.05, 0.2]) == labels.Unit("ms", 1e-3)


@pytest.mark.parametrize(
    ("metric", "values", "label", "scale"),
    [
        ("utilization", [0.9], "utilization (%)", 100.0),
        ("drop_rate", [0.01], "drop rate (%)", 100.0),
        ("jain_fairness", [0.9], "Jain's fairness index (1 = equal shares)", 1.0),
        ("goodput_bps", [3.1e6, 3.8e6], "goodput (Mb/s)", 1e-6),
        ("first_drop_s", [0.48, 0.79], "time of the first drop (ms)", 1e3),
        ("mean_queue_pkts", [40.0], "mean queue (packets)", 1.0),
        ("pacer.gap_min_s", [2e-6], "pacer gap min (µs)", 1e6),
    ],
)
def test_metrics_read_as_words_in_units(
    metric: str, values: list[float], label: str, scale: float
) -> None:
    """A metric's axis is in words with its unit, values scaled into it (fractions to
    percent, seconds to the unit their largest value reads in)."""
    axis = labels.metric_axis(metric, values)
    assert axis.label == label
    assert axis.scale == pytest.approx(scale)


def test_tick_numbers_are_plain_and_thousands_separated() -> None:
    """No exponent, ever: 10,000 rather than 1e4, 0.00001 rather than 1e-05."""
    texts = [labels.number_text(v) for v in (1e-5, 0.1, 2.5, 1000, 20000, 3e5, 2e6)]
    assert texts == ["0.00001", "0.1", "2.5", "1,000", "20,000", "300,000", "2,000,000"]


def test_a_log_axis_at_10_gbps_scale_has_few_plain_ticks() -> None:
    """The x axis of a search at 10 Gb/s (4,000 to 300,000 packets, under two decades) is
    labelled at 1-2-5 steps in plain thousands, not "1e4", "2e+04", "3e+04 4e+04" run
    together: at most 9 labelled ticks, no "e" in any, minor ticks unlabelled."""
    fig, ax = plots.plt.subplots()
    ax.set_xscale("log")
    ax.set_xlim(4000, 300000)
    plain_log(ax.xaxis, labels.Unit("packets"))
    fig.canvas.draw()
    inside = [x for x in ax.xaxis.get_majorticklocs() if 4000 <= x <= 300000]
    shown = [ax.xaxis.get_major_formatter()(x) for x in inside]
    assert shown == ["5,000", "10,000", "20,000", "50,000", "100,000", "200,000"]
    assert not [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()]
    plots.plt.close(fig)


def test_x_values_spanning_a_decade_go_on_a_log_axis() -> None:
    """Access links of 20 Mb/s to 1 Gb/s crowd at the left of a linear axis; values within a
    decade, or with a zero, which a log axis cannot show, stay linear."""
    assert plots.use_log_x([20e6, 100e6, 1e9])
    assert not plots.use_log_x([1e9, 2e9, 5e9])
    assert not plots.use_log_x([0.0, 10.0, 100.0])


# --- footers and notes -------------------------------------------------------------------------


def test_the_footer_names_the_bottleneck_traffic_and_time_besides_scenario_seeds_version() -> None:
    """The tiny scenario: 10 Mb/s, 4 long-lived flows, 5 s with 1 s of warm-up."""
    setting = Setting.of([TINY])
    footer = footer_text("tiny", [1, 2, 3], "9.9", setting)
    assert footer == (
        "scenario tiny · 10 Mb/s bottleneck · 4 flows · 5 s (1 s warm-up) simulated · "
        "seeds 1–3 · buflab 9.9"
    )


def test_a_setting_that_differs_between_runs_reads_as_its_range() -> None:
    """A sweep over flows and rates: the footer gives each as the range swept, a unit once."""
    scenarios = [
        buflab.engine.scenario.apply_overrides(TINY, {"traffic.0.flows": n, **rate})
        for n, rate in ((2, {}), (8, {"network.bottleneck.rate": "1Gbps"}))
    ]
    parts = Setting.of(scenarios).parts()
    assert parts[:2] == ["10 Mb/s–1 Gb/s bottleneck", "2–8 flows"]
    one = Setting.of([buflab.engine.scenario.apply_overrides(TINY, {"traffic.0.flows": 1})])
    assert one.parts()[1] == "1 flow"


def test_a_long_footer_wraps_at_its_separators_within_the_figure() -> None:
    """A name carrying its settings makes a footer longer than the figure is wide: it breaks
    at " · ", and a piece still too long at its spaces, every line fitting."""
    fig = plots.plt.figure(figsize=(8, 5), dpi=150)
    renderer = fig.canvas.get_renderer()
    name = "dumbbell-100 (" + ", ".join(f"traffic.0.key{k}=value{k}" for k in range(12)) + ")"
    footer = footer_text(name, [1], "0.1", Setting.of([TINY]))
    width = 0.9 * fig.bbox.width
    lines = wrap(footer, 7, width, renderer, (" · ", " "))
    assert len(lines) >= 3
    assert " ".join(lines).replace(" ", "") == footer.replace(" ", "")
    from matplotlib.font_manager import FontProperties

    for line in lines:
        assert renderer.get_text_width_height_descent(line, FontProperties(size=7), False)[0] <= (
            width
        )


def test_error_bars_are_explained() -> None:
    """Several seeds: what the bars are; one: that there are none and why."""
    assert plots.bars_note(3) == (
        "Each point is the mean of 3 seeds; error bars are 95 % Student-t confidence "
        "intervals of the mean."
    )
    assert plots.bars_note(1, "probe") == "One seed per probe, so no error bars."


# --- the sweep figure --------------------------------------------------------------------------


def _line(label: str, n: int) -> plots.Line:
    xs = list(range(n))
    return plots.Line(label, xs, [0.5] * n, [0.01] * n, [0.1] * n, [math.nan] * n)


def test_categorical_points_are_not_joined_by_lines() -> None:
    """Cases (off, window, linux) have nothing between them: their points stand apart, each
    line's beside the other's; numbers on the x axis are joined."""
    ticks = [(0.0, "off"), (1.0, "window"), (2.0, "linux")]
    lines = [_line("a", 3), _line("b", 3)]
    fig = plots.sweep_figure(lines, "pacing", False, [], "footer", "t", ticks)
    drawn = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() == "o"]
    assert drawn and all(line.get_linestyle() == "None" for line in drawn)
    xs = {tuple(line.get_xdata()) for line in drawn}
    assert len(xs) == 2  # the two lines' points are side by side, not on top of each other
    numeric = plots.sweep_figure(lines, "flows", False, [], "footer", "t")
    joined = [line for ax in numeric.axes for line in ax.get_lines() if line.get_marker() == "o"]
    assert joined and all(line.get_linestyle() == "-" for line in joined)


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[SweepView, list, Path]:
    """A sweep of the tiny scenario over two buffers and 2 or 4 flows, two seeds, 2 s."""
    out = tmp_path_factory.mktemp("sweep")
    base = {**TINY, "duration": "2s", "warmup": "0.5s"}
    plan = Plan(
        base,
        [
            Vary("network.bottleneck.buffer", ("10pkt", "200pkt")),
            Vary("traffic.0.flows", (2, 4)),
        ],
        2,
    )
    report = run_and_report(plan, SweepHeader(), out, 1, "sweep", "tiny sweep")
    return report.view, report.figures, out


@pytest.mark.engine
def test_the_sweep_figure_speaks_words_and_explains_its_bars(tiny_sweep) -> None:
    """The sweep of `tiny_sweep` drawn: axis and legend in words and units, the bars
    explained (two seeds), the footer with the setting, the rules in their own styles."""
    view, figures, out = tiny_sweep
    assert {p.name for p in figures} == {"sweep.png", "sweep.svg"}
    marks = theory_marks(view, view.plan.base)
    assert marks == []  # flows vary the lines, so no one RTT·C/√N stands for them all
    from buflab.experiments.report import sweep_footer

    fig = plots.sweep_figure(
        view.lines(), "x", True, marks, sweep_footer(view.plan, __version__), "t",
        notes=[plots.bars_note(2)],
    )  # fmt: skip
    text = _texts(fig)
    assert "2 flows" in text and "4 flows" in text
    assert "traffic.0.flows" not in text
    assert "95 % Student-t" in text
    assert "10 Mb/s bottleneck · 2–4 flows · 2 s (500 ms warm-up) simulated · seeds 1–2" in text
    svg = (out / "sweep.svg").read_text()
    assert "bottleneck buffer (packets)" in svg and "network.bottleneck.buffer" not in svg


def test_each_rule_of_thumb_has_one_style_in_every_figure() -> None:
    """RTT·C, RTT·C/√N and eq. 2.1 are drawn alike in the sweep, search, curve and
    auto-sizer figures (the auto-sizer's is checked in `test_every_figure_kind_renders`)."""
    marks = [
        plots.Mark(100, plots.rule_label("rtt_c", 100), "rtt_c"),
        plots.Mark(10, plots.rule_label("sqrt_n", 10), "sqrt_n"),
        plots.Mark(3, plots.rule_label("eq21", 3), "eq21"),
    ]
    sweep = plots.sweep_figure([_line("a", 3)], "x", False, marks, "f", "t")
    rules = RuleSizes(100.0, 10.0, 100, 3.0, "", 0.5, 10.0)
    sizing = Sizing(0.9, 12, [Probe(100, 0.99, math.nan, True), Probe(12, 0.95, 0.01, True)])
    sizing.rules = rules
    search = sizing_plot.search_figure(sizing, "f", "t")
    curve = SizeCurve(
        "traffic.0.flows",
        0.9,
        [SizePoint(n, TINY, sizing, Path(".")) for n in (10, 100)],
    )
    curves = sizing_plot.curve_figure([curve], "flows", "f", "t")
    for rule in ("rtt_c", "sqrt_n", "eq21"):
        name = plots.RULES[rule].name
        styles = {_style(fig, name) for fig in (sweep, search, curves)}
        assert len(styles) == 1, (rule, styles)
    assert len({_style(sweep, n)[1] for n in ("RTT·C", "RTT·C/√N", "eq. 2.1")}) == 3


def test_the_search_figure_numbers_no_probe_beside_its_point() -> None:
    """Probe numbers piled up at the answer; now the order is a panel of its own, one row
    per probe, and no number is written beside a point."""
    probes = [Probe(b, 0.9 + b / 1e4, math.nan, b >= 700) for b in (1250, 625, 700, 690, 697)]
    sizing = Sizing(0.97, 700, probes, missed_pkts=697, stopped="precision")
    fig = sizing_plot.search_figure(sizing, "f", "t", seeds=3)
    top, order = fig.axes
    assert not top.texts
    rows = [line.get_ydata()[0] for line in order.get_lines() if len(line.get_ydata()) == 1]
    assert rows == [1, 2, 3, 4, 5]
    text = _texts(fig)
    assert "Precision: the minimum lies between 698 and 700 pkt" in text
    assert "mean of 3 seeds" in text


# --- every figure kind renders -----------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[buflab.Result, Path]:
    """The tiny scenario for 3 s with its event log and flows 0 and 1 traced, kept on disk."""
    out = tmp_path_factory.mktemp("run")
    overrides = {"duration": "3s", "monitor.events": True, "monitor.trace_flows": [0, 1]}
    result = buflab.run(TINY, overrides=overrides, events_to=out / "events.parquet")
    result.to_dir(out)
    return result, out


@pytest.mark.engine
def test_every_figure_kind_renders(tiny_run, tiny_sweep, tmp_path: Path) -> None:
    """Each kind of figure from tiny runs, written as PNG and SVG: sweep (above), threshold,
    size search and curve, auto-sizer, traces, QCN rates, analysis, and the simulated-vs-Linux
    comparison (drawn here from two simulated runs). None may raise, and each carries a
    footer naming its setting."""
    result, run_dir = tiny_run
    view, _, _ = tiny_sweep
    footer = footer_text("tiny", [1], __version__, Setting.of([TINY]))
    written = []

    # Threshold: the tiny sweep read for 50 % utilization, one point per number of flows.
    view.header.threshold = buflab.experiments.recipes.Threshold("utilization", 0.5)
    try:
        _, figures = write_thresholds(view, tmp_path, "tiny", __version__)
    finally:
        view.header.threshold = None
    assert "bottleneck buffer" in (tmp_path / "tiny_threshold.svg").read_text()
    written += figures

    sizing = buflab.size(TINY, 0.5, tmp_path / "size", overrides={"duration": "2s"}, high=64)
    written += sizing.figures
    points = [SizePoint(flows, TINY, sizing, tmp_path / "size") for flows in (4, 40)]
    curve = SizeCurve("traffic.0.flows", 0.5, points)
    written += sizing_plot.write_curve_figure(curve, TINY, 1, tmp_path / "curve")
    autosized = buflab.autosize.run_autosize(TINY, 0.9, interval="1s", overrides={"duration": "6s"})
    fig = buflab.autosize.figure(autosized, __version__)
    assert _style(fig, "RTT·C")[1] == plots.RULES["rtt_c"].linestyle
    written += plots.save(fig, tmp_path, "autosize")

    written += plots.save(trace_figure({"": result.traces}, footer, warmup_s=1.0), tmp_path, "tr")
    rates = pd.DataFrame({"time_s": [0.5, 1.0, 0.6], "class": [0, 0, 1], "rate_bps": [5e8] * 3})
    written += plots.save(rate_figure(rates, 2.0, 1e9, footer, 0.1), tmp_path, "rates")
    written += plots.save(analysis_figure({"tiny": analyze(run_dir)}, footer), tmp_path, "an")

    frame = pd.DataFrame(
        {
            "network.access.rate": ["100Mbps"],
            **{f"{way}_{name}": [0.5] for way in ("sim", "real") for name in ("utilization",
               "drop_rate")},
        }
    )  # fmt: skip
    written += plots.save(compare_figure(frame, "network.access.rate", "t", footer), tmp_path, "c")
    written += plots.save(detail_figure(result, result, "t", footer), tmp_path, "d")
    for path in written:
        assert path.stat().st_size > 0, path
    assert len([p for p in written if p.suffix == ".png"]) >= 9


# --- the analysis figure -----------------------------------------------------------------------


@pytest.mark.engine
def test_the_analysis_figure_shows_zero_the_tail_and_the_warm_up(tiny_run) -> None:
    """Panel titles; queueing delays with exactly zero drawn on a linear-then-log axis with
    the share at zero labelled (not a line at a log axis's edge); bursts as a CCDF on a log y
    axis down to the rarest burst; the warm-up shaded on the occupancy panel; one time unit
    on both time axes."""
    _, run_dir = tiny_run
    analysis = analyze(run_dir)
    fig = analysis_figure({"tiny": analysis}, "footer")
    iat, bursts, delay, occupancy = fig.axes
    assert all(ax.get_title() for ax in fig.axes)
    zero = analysis.queue_delay.counts[0] / analysis.queue_delay.count
    assert zero > 0  # the tiny run's queue is often empty
    assert delay.get_xscale() == "symlog"
    assert f"{100 * zero:.3g} % at 0" in [t.get_text() for t in delay.texts]
    assert bursts.get_yscale() == "log"
    rarest = 1 / analysis.bursts.count
    assert bursts.get_ylim()[0] <= rarest
    assert occupancy.patches, "the warm-up is shaded"
    units = {ax.get_xlabel().rsplit("(", 1)[-1] for ax in (iat, delay)}
    assert len(units) == 1


# --- traces ------------------------------------------------------------------------------------


def test_a_slow_start_peak_cuts_the_window_axis_and_is_marked() -> None:
    """A window that shoots to 2,000 segments once and then saws between 50 and 100: the axis
    is cut above the sawtooth, the peak marked with its size and the cut said in a note; a
    sawtooth alone is not cut."""
    grid_times = np.linspace(0, 20, 401)
    sawtooth = 50 + 50 * ((grid_times % 2) / 2)
    spike = sawtooth.copy()
    spike[5:9] = [500, 1000, 2000, 100]
    assert window_limit([sawtooth]) is None
    limit = window_limit([spike])
    assert limit is not None and 100 < limit < 200
    rows = [
        {"time_s": t, "flow": 0, "cwnd_pkts": w, "ssthresh_pkts": 0, "srtt_s": 0.1,
         "pacing_rate_bps": 0.0, "acked_bytes": int(1000 * t)}
        for t, w in zip(grid_times, spike, strict=True)
    ]  # fmt: skip
    fig = trace_figure({"": pd.DataFrame(rows)}, "footer")
    window_axes = fig.axes[0]
    assert window_axes.get_ylim()[1] == pytest.approx(limit)
    assert "2,000" in [t.get_text() for t in window_axes.texts]
    text = _texts(fig)
    assert "cut at" in text
    assert "data acknowledged (MB)" in text and "throughput" not in text


# --- reproduce p1 ------------------------------------------------------------------------------


@pytest.mark.engine
def test_reproduce_p1_draws_the_traces_it_promises(tmp_path: Path) -> None:
    """`reproduce --list` promises P1's cumulative throughput and cwnd: reproducing it (3 s of
    each case) writes p1_traces.png from one traced run per case, kept in OUT/traces/, and a
    second reproduction reuses them."""
    out = tmp_path / "p1"
    args = ["reproduce", "p1", "--set", "duration=3s", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert (out / "p1_traces.png").stat().st_size > 0
    kept = sorted((out / "traces").iterdir())
    assert len(kept) == 3 and all((d / "traces.parquet").exists() for d in kept)
    svg = (out / "p1_traces.svg").read_text()
    for case in ("NewReno (unpaced)", "paced (cwnd / srtt)", "paced (Linux ratios)"):
        assert case in svg
    stamps = [(d / "traces.parquet").stat().st_mtime_ns for d in kept]
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert [(d / "traces.parquet").stat().st_mtime_ns for d in kept] == stamps
