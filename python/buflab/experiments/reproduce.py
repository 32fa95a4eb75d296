"""`buflab reproduce NAME`: run a recipe's sweep, then print and plot what it shows.

Every recipe gets the same table and figure as a sweep; a recipe may also have a reader
below that writes one paragraph comparing its numbers with the published ones.

It returns what it found; printing it is the command line's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd

from buflab import __version__, plots
from buflab.analysis import theory
from buflab.engine import core, scenario_json
from buflab.engine.files import write_atomically
from buflab.engine.scenario import Overrides
from buflab.experiments import beside, live_sizing, recipes
from buflab.experiments.emulator import Emulator, check_emulable
from buflab.experiments.execution import Executor
from buflab.experiments.network import CHECKS
from buflab.experiments.recipes import SweepHeader
from buflab.experiments.recipes.scale import FULL
from buflab.experiments.report import (
    Comparison,
    Progress,
    SweepReport,
    SweepView,
    compare_published,
    comparison_frame,
    point_value,
    run_and_report,
    unshown,
)
from buflab.experiments.sweep import Plan, Vary, run_sweep
from buflab.experiments.threshold import threshold_frame, write_thresholds
from buflab.plots import axis_value


@dataclass
class Reproduction:
    """A finished recipe: its sweep report, the published numbers beside buflab's (also in
    OUT/published.csv) and, for recipes with a reader, a paragraph on what they show."""

    report: SweepReport
    comparisons: list[Comparison]
    paragraph: str | None
    thresholds: pd.DataFrame | None = None  # [sweep.threshold]: also OUT/threshold.csv
    bounds: pd.DataFrame | None = None  # a network recipe's bounds beside its measurements
    # [sweep.autosize]: the live auto-sizer's answer per seed beside the offline grid's (also
    # OUT/live_vs_offline.csv; the live runs are in OUT/live)
    live: live_sizing.LiveVsOffline | None = None
    # --emulate: every point's metrics simulated and on Linux (also OUT/beside_simulated.csv;
    # the simulated runs are in OUT/simulated), and the threshold table both ways
    beside: pd.DataFrame | None = None
    thresholds_beside: pd.DataFrame | None = None


def reproduce(
    name: str,
    out: Path,
    jobs: int | None = None,
    runs: int | None = None,
    overrides: Overrides = None,
    varies: list[Vary] | None = None,
    progress: Progress | None = None,
    cluster: Executor | str | None = None,
    emulate: bool = False,
    scale: str = FULL,
) -> Reproduction:
    """Run a recipe's sweep (`varies` replace the recipe's lists for the same keys, e.g. to
    run fewer buffer sizes; `progress` shows it, as in `run_and_report`; `cluster` runs it on
    Dask, as `run_sweep`'s executor) and compare it with the published numbers. With
    `emulate`, every run is an emulation on real Linux TCP, one at a time
    (`buflab.experiments.emulator`); a recipe with a point the emulator cannot realise is
    refused before anything runs, in one line naming the point and why. `scale` is the
    recipe's `[scale.NAME]` (ci, small) or full, the recipe as written."""
    scenario, header = recipes.load(name, overrides, scale)
    plan = header.plan(scenario, varies or [], runs)
    stem = Path(name).stem
    if emulate:
        points = {json.dumps(run.point, sort_keys=True, default=str): run for run in plan.runs}
        for run in points.values():
            where = ", ".join(f"{key} = {value}" for key, value in run.point.items())
            what = f"reproduce {stem} --emulate" + (f" ({where})" if where else "")
            check_emulable([run.scenario], what)
        cluster = Emulator()
    title = str(scenario.get("name", stem))
    report = run_and_report(
        plan, header, out, jobs, stem, title, progress, executor=cluster, command="reproduce"
    )
    comparisons = compare_published(report.view)
    thresholds, figures = write_thresholds(report.view, out, stem, __version__)
    report.figures.extend(figures)
    reader = READERS.get(stem)
    paragraph = reader(report.view) if reader else None
    live = None
    if header.autosize is not None:  # thesis ch. 4.3: the live tool beside the offline grid
        live_runs = live_sizing.live_plan(scenario, header, plan.runs_per_point)
        description = f"{stem}: live auto-sizer, {len(live_runs.runs)} runs"
        with (progress or unshown)(description) as update:
            outcome = run_sweep(
                live_runs, out / "live", jobs, update, executor=cluster, command="reproduce"
            )
        live = live_sizing.compare(report.view, report.outcome.results, outcome.results, header)
        write_atomically(out / "live_vs_offline.csv", partial(live.table.to_csv, index=False))
        if live.verdict != "not run":
            drawn = live_sizing.figure(live, report.view, __version__)
            report.figures.extend(plots.save(drawn, out, f"{stem}_live"))
            comparisons.append(live.comparison())
        paragraph = live.paragraph()
    if comparisons:
        table = comparison_frame(comparisons)
        write_atomically(out / "published.csv", partial(table.to_csv, index=False))
    bounds = None
    check = CHECKS.get(stem)
    if check is not None:  # thesis ch. 5: each theorem's bound beside the measurements
        found = check(report.view, out, __version__)
        paragraph, bounds = found.paragraph, found.bounds
        report.figures.extend(found.figures)
    done = Reproduction(report, comparisons, paragraph, thresholds, bounds, live)
    if emulate:
        simulated_beside(done, plan, header, out, (stem, title), jobs, progress)
    return done


def simulated_beside(
    done: Reproduction,
    plan: Plan,
    header: SweepHeader,
    out: Path,
    named: tuple[str, str],
    jobs: int | None,
    progress: Progress | None,
) -> None:
    """The emulated recipe's points simulated too (same plan, same seeds: the same flows),
    in OUT/simulated, and paired with the real ones in `done` and OUT/beside_simulated.csv.
    `named` is the recipe's (stem, title): the simulated figure's file and title are the
    emulated one's, its footer says which engine drew it."""
    view = done.report.view
    stem, title = named
    sim = run_and_report(
        plan, header, out / "simulated", jobs, stem, title, progress, command="reproduce"
    )
    done.beside = beside.points_beside(
        view.summary, sim.view.summary, view.plan.keys, view.header.metrics
    )
    write_atomically(out / "beside_simulated.csv", partial(done.beside.to_csv, index=False))
    sim_thresholds = threshold_frame(sim.view)
    if done.thresholds is not None and sim_thresholds is not None:
        done.thresholds_beside = beside.thresholds_beside(
            done.thresholds, sim_thresholds, view.line_keys
        )


# --- readers: one paragraph per recipe, computed from the numbers --------------------------

# Thesis §2.1.4, Fig. 2.3 (reproduction target S1): "utilization remains almost unchanged (above
# 99%) with buffer sizes larger than RTT×C/√N ≈ 4419 packets"; "with access links running at
# 100Mb/s ... buffer size of only 10 packets and achieve close to 80% utilization".
THESIS_FULL = 0.99
THESIS_TINY_BUFFER_PKTS = 10
THESIS_SLOW_ACCESS_AT_TINY = 0.80
# Published numbers are read off a plot: a few points either way count as agreement.
AGREEMENT_BAND = 0.05


# The headline's cases (headline.toml): fast and slow access links, and paced TCP on the fast.
HEADLINE_FAST, HEADLINE_SLOW, HEADLINE_PACED = "fast", "slow", "fast, paced"


def read_headline(view: SweepView) -> str:
    access = next(v for v in view.plan.varies if v.key == "access")
    fast = view.header.label(access.key, HEADLINE_FAST)
    slow = view.header.label(access.key, HEADLINE_SLOW)
    paced = view.header.label(access.key, HEADLINE_PACED)
    buffers = view.plan.varies[0].values
    packets = {b: axis_value(b)[0] for b in buffers}
    facts = theory.LinkFacts.from_scenario(core().validate(scenario_json(view.plan.base)))
    small = theory.sqrt_n_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes, facts.flows)

    def utilization(line: str, buffer: object) -> float:
        return point_value(view, line, buffer, "utilization")

    ordered = sorted(buffers, key=packets.get)
    first_full = next((b for b in ordered if utilization(fast, b) >= THESIS_FULL), None)
    if first_full is None:
        best = max(ordered, key=lambda b: utilization(fast, b))
        full_text = (
            f"With {fast}, utilization never reaches {THESIS_FULL:.0%} in the buffers swept "
            f"(best {utilization(fast, best):.1%} at {packets[best]:,.0f} packets)"
        )
    else:
        relation = "at or below" if packets[first_full] <= small else "above"
        larger = [b for b in ordered if packets[b] > packets[first_full]]
        dips = [b for b in larger if utilization(fast, b) < THESIS_FULL]
        if dips:
            stays = f", but falls below it again at {packets[dips[0]]:,.0f} packets"
        elif larger:
            stays = ", and stays there for every larger buffer"
        else:
            stays = ""
        largest = "" if larger else " (the largest swept)"
        full_text = (
            f"With {fast}, utilization first reaches {THESIS_FULL:.0%} at a buffer of "
            f"{packets[first_full]:,.0f} packets{largest}, {relation} RTT·C/√N ≈ "
            f"{small:,.0f} packets{stays}"
        )

    tiny = min(buffers, key=lambda b: abs(math.log(packets[b] / THESIS_TINY_BUFFER_PKTS)))
    slow_tiny, fast_tiny = utilization(slow, tiny), utilization(fast, tiny)
    difference = slow_tiny - THESIS_SLOW_ACCESS_AT_TINY
    if abs(difference) <= AGREEMENT_BAND:
        verdict = "in line with"
    else:
        verdict = f"{abs(difference) * 100:.0f} points {'above' if difference > 0 else 'below'}"
    drops_slow = point_value(view, slow, tiny, "drop_rate")
    drops_fast = point_value(view, fast, tiny, "drop_rate")
    paced_text = ""
    if HEADLINE_PACED in access.values:
        paced_tiny = utilization(paced, tiny)
        paced_text = (
            f" Paced TCP over the fast links (the window spread over each RTT) gives "
            f"{paced_tiny:.1%} at that buffer, {abs(paced_tiny - fast_tiny) * 100:.0f} points "
            f"{'above' if paced_tiny >= fast_tiny else 'below'} unpaced: pacing in the sender "
            f"does {'what' if paced_tiny >= fast_tiny else 'less than'} the slow access links do."
        )
    return (
        f"{full_text}; the thesis finds above {THESIS_FULL:.0%} for buffers of at least "
        f"RTT·C/√N (≈ 4,419 packets with 800 flows at 10 Gb/s). "
        f"With {slow}, a {packets[tiny]:,.0f}-packet buffer gives {slow_tiny:.1%} utilization "
        f"against {fast_tiny:.1%} with {fast}, {verdict} the thesis's ≈ "
        f"{THESIS_SLOW_ACCESS_AT_TINY:.0%} at {THESIS_TINY_BUFFER_PKTS} packets with 100 Mb/s "
        f"access. At that buffer {drops_slow:.2%} of packets are dropped with slow access and "
        f"{drops_fast:.2%} with fast access.{paced_text}"
    )


# tiny_bump.toml: the headline's fast-access line paced in the hosts or by a bump at each host.
TINY_BUMP_FULL = 0.90


def read_tiny_bump(view: SweepView) -> str:
    pacing = next(v for v in view.plan.varies if v.key == "pacing")
    lines = {case: view.header.label(pacing.key, case) for case in pacing.values}
    buffers = list(view.plan.varies[0].values)
    packets = {b: axis_value(b)[0] for b in buffers}
    ordered = sorted(buffers, key=packets.get)
    tiny = min(buffers, key=lambda b: abs(math.log(packets[b] / THESIS_TINY_BUFFER_PKTS)))
    largest = ordered[-1]

    def value(case: str, buffer: object, metric: str = "utilization") -> float:
        return point_value(view, lines[case], buffer, metric)

    def first_full(case: str) -> str:
        full = next((b for b in ordered if value(case, b) >= TINY_BUMP_FULL), None)
        if full is None:
            return "never"
        later = [b for b in ordered if packets[b] > packets[full]]
        dips = [b for b in later if value(case, b) < TINY_BUMP_FULL]
        again = f" (below it again at {packets[dips[0]]:,.0f})" if dips else ""
        return f"first at {packets[full]:,.0f}{again}"

    at_tiny = ", ".join(f"{lines[c]} {value(c, tiny):.1%}" for c in pacing.values)
    at_largest = ", ".join(f"{lines[c]} {value(c, largest):.1%}" for c in pacing.values)
    reaching = "; ".join(f"{lines[c]} {first_full(c)}" for c in pacing.values)
    drops = ", ".join(f"{lines[c]} {value(c, tiny, 'drop_rate'):.2%}" for c in pacing.values)
    unpaced, host, *bumps = pacing.values
    gains = [value(c, tiny) - value(unpaced, tiny) for c in bumps]
    versus_host = [value(c, tiny) - value(host, tiny) for c in bumps]
    costs = [value(unpaced, largest) - value(c, largest) for c in (host, *bumps)]
    verdict = (
        f"The bumps raise utilization at {packets[tiny]:,.0f} packets by "
        + " and ".join(f"{100 * g:.0f}" for g in gains)
        + " points over unpaced TCP, and end "
        + " and ".join(
            f"{100 * abs(d):.0f} points {'above' if d >= 0 else 'below'}" for d in versus_host
        )
        + " host pacing: pacing in the network, next to unmodified hosts, buys the "
        + "small buffers that pacing in the hosts does"
        if all(g > 0 for g in gains)
        else "The bumps do not raise utilization at tiny buffers over unpaced TCP"
    )
    if all(c > 0 for c in costs):
        verdict += (
            f"; at {packets[largest]:,.0f} packets every paced line is below unpaced TCP (by "
            + ", ".join(f"{100 * c:.1f}" for c in costs)
            + " points), the cost of pacing at large buffers that P2 and P3 show for hosts"
        )
    return (
        f"At a {packets[tiny]:,.0f}-packet buffer, utilization is: {at_tiny} (drop rates: "
        f"{drops}). Utilization of {TINY_BUMP_FULL:.0%} is reached (buffer in packets): "
        f"{reaching}. At {packets[largest]:,.0f} packets: {at_largest}. {verdict}."
    )


# f8.toml: TCP over an optical FIFO against drop-tail of the same size (thesis ch. 6).
F8_QUEUE = "network.bottleneck.queue"
F8_OPTICAL, F8_DROP_TAIL = "optical_fifo", "droptail"
F8_METRIC = "optical.bottleneck.{}_mean"


def read_f8(view: SweepView) -> str:
    """Per buffer size: the hardware beside the utilization, whether each optical run is its
    drop-tail run, and what the fiber did."""
    frame = view.summary
    sizes = list(view.plan.varies[0].values)
    accesses = next(v.values for v in view.plan.varies if v.key == "access")

    def row(size: object, queue: str, access: object) -> pd.Series:
        match = frame[
            (frame[view.x_key] == size) & (frame[F8_QUEUE] == queue) & (frame["access"] == access)
        ]
        return match.iloc[0] if not match.empty else pd.Series(dtype=float)

    def fiber(r: pd.Series, name: str) -> float:
        return float(r.get(F8_METRIC.format(name), math.nan))

    def short(access: object) -> str:
        return view.header.label("access", access).split(" (")[0]

    parts, identical, checks = [], 0, 0
    ahead: dict[object, list[float]] = {access: [] for access in accesses}
    unlike = violations = 0.0
    most_passes = (0.0, "")
    for size in sizes:
        first = row(size, F8_OPTICAL, accesses[0])
        utilizations = []
        for access in accesses:
            optical, tail = row(size, F8_OPTICAL, access), row(size, F8_DROP_TAIL, access)
            checks += 1
            same = all(
                optical.get(f"{m}_mean") == tail.get(f"{m}_mean")
                for m in ("utilization", "drop_rate")
            )
            identical += int(same)
            label = short(access)
            utilizations.append(
                f"{float(optical.get('utilization_mean', math.nan)):.1%} with {label}"
            )
            slots = fiber(optical, "slots")
            ahead[access].append(fiber(optical, "extra_slots") / slots if slots else math.nan)
            unlike += fiber(optical, "unlike_fifo")
            violations += fiber(optical, "violations")
            passes = fiber(optical, "passes_max")
            if passes > most_passes[0]:
                most_passes = (passes, f"N − 1 = {axis_value(size)[0]:.0f}, {label}")
        parts.append(
            f"N − 1 = {axis_value(size)[0]:.0f} packets: {fiber(first, 'lines'):.0f} lines "
            f"(one 2×2 switch each), {fiber(first, 'fiber_slots'):.0f} packet times of fiber "
            f"({fiber(first, 'fiber_km'):.1f} km at the link's rate); utilization "
            + " and ".join(utilizations)
        )
    share = "; ".join(
        f"{100 * min(v):.0f}–{100 * max(v):.0f} % with {short(a)}" for a, v in ahead.items() if v
    )
    verdict = (
        "identical to drop-tail of the same size in utilization and drop rate, as Thm 6.1's "
        "exact emulation says"
        if identical == checks
        else f"identical to drop-tail in {identical} of {checks} runs only"
    )
    return (
        ". ".join(parts)
        + f". Every optical run is {verdict}; the fiber sent another packet than the link's "
        f"FIFO {unlike:.0f} times and broke Appendix E's properties {violations:.0f} times. The "
        f"fiber went through more slots than packet times ({share}): two packets in one packet "
        f"time from different access links, which the chapter's single-input buffer does not "
        f"take, each got a slot of its own. The most loops one packet went through was "
        f"{most_passes[0]:.0f} ({most_passes[1]}): the power budget a real buffer would need."
    )


READERS: dict[str, Callable[[SweepView], str]] = {
    "headline": read_headline,
    "tiny_bump": read_tiny_bump,
    "f8": read_f8,
}
