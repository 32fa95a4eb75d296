"""The live auto-sizer (thesis ch. 4.3, "real-time buffer sizing"): one run whose bottleneck
buffer is binary-searched while it runs.

The engine does the search (`[autosize]` in a scenario; see docs/scenario.md and
crates/buflab-core/src/autosize.rs): every `interval` after warm-up it measures the
bottleneck's utilization, shrinks the buffer if the step passed and grows it otherwise, and
records the step. This module sets the table up from options, says what the search found,
and draws the trajectory.

    >>> from buflab.experiments.autosize import run_autosize, outcome
    >>> result = run_autosize("examples/dumbbell.toml", 0.98, interval="3s")
    >>> result.autosize            # one row per step
    >>> outcome(result).buffer_pkts

Compare with `buflab.size` (offline bisection, one full run per probe and several seeds):
one interval of a live run is a noisier measurement than a whole run, so a single search
ends anywhere in that noise. The engine's answer is therefore the median of every size the
search converged to (it searches afresh whenever the converged size fails, and with
`recheck` also below a size that keeps passing); a longer `interval` or run steadies it.

The search is the engine's: this module must not redo it, nor know how the steps are
printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buflab.engine.result import Result
from buflab.engine.runner import load_scenario, run, validate
from buflab.engine.scenario import Overrides, Scenario, ScenarioSource, get_key
from buflab.engine.units import parse_time

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Scenario keys of the [autosize] table that the options set.
_OPTION_KEYS = {
    "target": "target_utilization",
    "interval": "interval",
    "settle": "settle",
    "start": "start",
    "tolerance": "tolerance",
    "recheck": "recheck",
}


def autosize_scenario(scenario: Scenario, target: float, **options: Any) -> Scenario:
    """`scenario` (not modified) with its `[autosize]` table turned on for `target`; the
    options `interval`, `settle`, `start`, `tolerance` and `recheck` override the table's keys
    when not None."""
    table = dict(scenario.get("autosize") or {})
    for name, value in {"target": target, **options}.items():
        if name not in _OPTION_KEYS:
            raise TypeError(f"unknown auto-sizer option {name!r}")
        if value is not None:
            table[_OPTION_KEYS[name]] = value
    return {**scenario, "autosize": table}


def run_autosize(
    scenario: ScenarioSource,
    target: float,
    *,
    overrides: Overrides = None,
    emulate: bool = False,
    events_to: str | Path | None = None,
    **options: Any,
) -> Result:
    """Run `scenario` once with the live auto-sizer aiming at `target` utilization; the steps
    are `Result.autosize`. Options as `autosize_scenario`; raises ScenarioError for bad ones.
    With `emulate`, the run is an emulation on real Linux TCP (`buflab.engine.emulation`):
    the same search sets the datapath's buffer through its control channel, in real time.
    With `monitor.events = true`, `events_to` names where the bottleneck's event log goes."""
    tree = autosize_scenario(load_scenario(scenario, overrides=overrides), target, **options)
    if emulate:
        # start-up time: the emulator only when asked for
        from buflab.engine.emulation.runner import emulate as run_emulation

        return run_emulation(tree, events_to=events_to)
    return run(tree, events_to=events_to)


@dataclass(frozen=True)
class Outcome:
    """What a live search found."""

    #: The answer (the summary's autosize_buffer_pkts): the median of the sizes the search
    #: converged to, or None if it never converged.
    buffer_pkts: int | None
    #: Each size the search converged to, in order (several when it widened and came back).
    settled_sizes: list[int]
    #: The search was converged at the end of the run.
    converged_at_end: bool
    #: Steps until it first converged (None if it never did), and its time (s).
    first_converged_step: int | None
    first_converged_s: float | None
    #: The limit the search left for after the last step.
    last_buffer_pkts: int | None
    steps: int


def outcome(result: Result) -> Outcome:
    """Read the trajectory of a run with `[autosize]`."""
    steps = result.autosize
    converged = [bool(c) for c in steps["converged"]]
    # A step that converges the search sets its converged size as the next buffer.
    settled = [
        int(size)
        for size, now, before in zip(
            steps["next_buffer_pkts"], converged, [False, *converged[:-1]], strict=True
        )
        if now and not before
    ]
    first = converged.index(True) if True in converged else None
    answer = result.summary.get("autosize_buffer_pkts")
    return Outcome(
        buffer_pkts=None if answer is None else int(answer),
        settled_sizes=settled,
        converged_at_end=bool(converged and converged[-1]),
        first_converged_step=None if first is None else first + 1,
        first_converged_s=None if first is None else float(steps["time_s"].iloc[first]),
        last_buffer_pkts=int(steps["next_buffer_pkts"].iloc[-1]) if len(steps) else None,
        steps=len(steps),
    )


def pass_threshold(scenario: Scenario) -> float:
    """The utilization a step must reach: tolerance × target, the tolerance the engine's
    default when the scenario gives none."""
    table = validate(scenario)["autosize"]
    return float(table["target_utilization"]) * float(table["tolerance"])


def figure(result: Result, version: str) -> Figure:
    """Buffer limit over time (a step plot: each limit holds until the next step) above the
    utilization of each interval, with the target and the pass threshold."""
    # start-up time: matplotlib only when a figure is drawn, not for a run
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from buflab import plots
    from buflab.analysis import theory
    from buflab.plots.labels import Unit
    from buflab.plots.ticks import plain_linear, plain_log

    plt = plots.plt
    steps = result.autosize
    summary = result.summary
    scenario = result.scenario
    target = float(get_key(scenario, "autosize.target_utilization"))
    threshold = pass_threshold(scenario)
    warmup = float(summary.get("warmup_s", 0.0))
    duration = float(summary.get("duration_s", 0.0))
    times = steps["time_s"].tolist()
    # The scenario's interval (an emulation's steps are stamped when their readings were
    # taken, a moment after they fell due).
    interval = parse_time(str(validate(scenario)["autosize"]["interval"]))

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 7))
    # The limit in force: `start` from 0 to the first step, then each step's next buffer.
    xs = [0.0, *times]
    ys = [int(steps["buffer_pkts"].iloc[0]), *steps["next_buffer_pkts"]] if times else []
    if times and times[-1] < duration:
        xs.append(duration)
        ys.append(ys[-1])
    # Above the answer and the rules, which it meets once it settles.
    top.step(xs, ys, where="post", color="tab:blue", linewidth=1.6, label="buffer limit", zorder=3)
    answer = summary.get("autosize_buffer_pkts")
    if answer is not None:
        top.axhline(
            answer,
            color="tab:orange",
            linewidth=1.2,
            label=f"answer (median of convergences): {answer:,} pkt",
        )
    # The rules of thumb for the scenario, in the style of every figure, for scale.
    facts = theory.LinkFacts.from_scenario(scenario)
    bdp = theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes)
    rules = [("rtt_c", bdp, "")]
    if facts.flows > 1:
        rules.append(("sqrt_n", bdp / math.sqrt(facts.flows), f"N = {facts.flows:,}"))
    for rule, size, detail in rules:
        top.axhline(size, label=plots.rule_label(rule, size, detail), **plots.rule_style(rule))
    top.set_ylabel("buffer (packets)")
    shown = [*ys, *(size for _, size, _ in rules)]
    if shown and max(shown) / max(min(shown), 1) > 10:
        top.set_yscale("log")
        plain_log(top.yaxis, Unit("packets"))
    else:
        top.set_ylim(bottom=0)
        plain_linear(top.yaxis, Unit("packets"))

    colors = ["tab:green" if passed else "tab:red" for passed in steps["passed"]]
    middles = [t - interval / 2 for t in times]
    utilization = [100 * u for u in steps["utilization"]]
    if times:
        # Each interval's utilization held across it.
        bottom.step(
            [times[0] - interval, *times],
            [utilization[0], *utilization],
            where="pre",
            color="lightgray",
            linewidth=1.0,
        )
    bottom.scatter(middles, utilization, c=colors, s=18, zorder=3)
    bottom.axhline(100 * target, color="black", linewidth=1.0)
    # What passes, as a band: a dashed or dotted line here would read as a rule of thumb.
    bottom.axhspan(100 * threshold, 100.5, color="tab:green", alpha=0.08, linewidth=0)
    bottom.set_ylabel("utilization per interval (%)")
    bottom.set_xlabel("time (s)")
    low = min([*utilization, 100 * threshold]) if utilization else 100 * threshold
    bottom.set_ylim(max(0.0, low - 1.0), 100.5)
    for axes in (top, bottom):
        axes.grid(True, alpha=0.3)
        if warmup > 0:
            axes.axvspan(0, warmup, color="gray", alpha=0.12, linewidth=0)
        axes.set_xlim(0, max(duration, *times) if times else duration)
    handles = [
        *top.get_legend_handles_labels()[0],
        Line2D([], [], color="black", linewidth=1.0, label=f"target {100 * target:.4g} %"),
        Patch(color="tab:green", alpha=0.08, label=f"a step passes: ≥ {100 * threshold:.4g} %"),
        Line2D([], [], marker="o", color="tab:green", linestyle="", label="step passed"),
        Line2D([], [], marker="o", color="tab:red", linestyle="", label="step failed"),
    ]
    notes = ["One run: each step's utilization is measured over one interval, no seeds to average."]
    if summary.get("emulated"):
        notes.append(
            "On real Linux TCP (an emulation): each step read the datapath's counts in real "
            "time and set its buffer through the control channel."
        )
    if warmup > 0:
        handles.append(Patch(color="gray", alpha=0.12, label="warm-up"))
        notes.append(f"Shaded: the warm-up ({warmup:g} s), before the first step.")
    top.set_title(f"Live auto-sizer: {interval:g} s steps, target {100 * target:.4g} % utilization")
    setting = plots.Setting.of([scenario], bool(summary.get("emulated")))
    seed = [int(summary.get("seed", 0))]
    footer = plots.footer_text(str(summary.get("name", "")), seed, version, setting)
    labels = [h.get_label() for h in handles]
    return plots.finish(fig, footer, handles, labels, notes, ncol=3)


def save_figure(result: Result, out: str | Path, version: str) -> list[Path]:
    """Write autosize.png and autosize.svg into `out`."""
    from buflab import plots  # start-up time: matplotlib only when a figure is drawn

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return plots.save(figure(result, version), out, "autosize")
