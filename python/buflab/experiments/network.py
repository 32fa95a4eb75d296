"""The theorems of thesis ch. 5 beside what the network recipes measure: each point's bound
beside its measurement (OUT/bounds.csv), a paragraph on what they show, the figures of drop
rate against buffer with the bounds, and the check that BJP keeps a flow's inter-arrival
times (extra runs with the event log at each router of one flow's route).

- `f5` (a tree): Lemma 5.1's ρ^B per router, Thm 5.1's n·ρ^B end to end, and the buffer
  Thm 5.1 asks for a drop rate of 1 %.
- `f6` (a general network, drop-tail against BJP): the tree's bounds for drop-tail (proved
  for trees only) and Thm 5.2's for BJP (eq. C.2, Δ = B/2), and the inter-arrival check.
- `f6_tcp` (paced and unpaced TCP, drop-tail and BJP): Thm 5.3's effective utilization.

It reads a finished sweep (`SweepView`) and the engine's facts of its scenario; the formulas
are `buflab.analysis.theory`'s, the figures `buflab.plots.network`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from buflab import plots
from buflab.analysis import theory
from buflab.analysis.network import interarrival_times, ks_distance
from buflab.engine import core, scenario_json
from buflab.engine.files import write_atomically
from buflab.engine.runner import run
from buflab.engine.scenario import Scenario, apply_overrides
from buflab.experiments.report import SweepView
from buflab.plots.network import BoundCurve, bounds_figure, interarrival_figure

BUFFER = "network.bottleneck.buffer"
LOAD = "traffic.0.load"
QUEUE = "network.bottleneck.queue"
PACING = "traffic.0.pacing"
# The drop rate Thm 5.1's buffer is computed for in the paragraph.
TARGET_DROP = 0.01


@dataclass
class NetworkCheck:
    """What a network recipe adds to its reproduction."""

    paragraph: str
    bounds: pd.DataFrame  # one row per point: measurement beside bound
    figures: list[Path] = field(default_factory=list)


def _points(view: SweepView) -> pd.DataFrame:
    """The sweep's points, the buffer in packets."""
    frame = view.summary.copy()
    frame["B"] = [plots.axis_value(v)[0] for v in frame[BUFFER]]
    return frame


def _facts(view: SweepView) -> dict[str, Any]:
    return core().traffic_facts(scenario_json(view.plan.base))


def _footer(view: SweepView, version: str) -> str:
    return plots.footer_text(str(view.plan.base.get("name", "")), view.plan.seeds(), version)


def _write_bounds(frame: pd.DataFrame, out: Path) -> None:
    write_atomically(out / "bounds.csv", partial(frame.to_csv, index=False))


def _share_below(measured: pd.Series, bound: pd.Series) -> tuple[int, int]:
    """How many points are measured (not nan) and how many of them are at or under the bound."""
    seen = measured.notna()
    return int(seen.sum()), int((measured[seen] <= bound[seen]).sum())


# ---- f5: a tree ---------------------------------------------------------------------------


def check_tree(view: SweepView, out: Path, version: str) -> NetworkCheck:
    """Lemma 5.1 and Thm 5.1 beside a tree's measured drop rates (recipe f5)."""
    n = int(_facts(view)["longest_route"])
    points = _points(view)
    rows = []
    for _, p in points.iterrows():
        rho, b = float(p[LOAD]), float(p["B"])
        rows.append(
            {
                "load": rho,
                "buffer_pkts": b,
                "max_router_drop_rate": p["max_router_drop_rate_mean"],
                "lemma_5_1_bound": theory.tree_router_drop_bound(rho, b),
                "network_drop_rate": p["network_drop_rate_mean"],
                "thm_5_1_bound": theory.tree_drop_bound(rho, b, n),
            }
        )
    frame = pd.DataFrame(rows).sort_values(["load", "buffer_pkts"], ignore_index=True)
    _write_bounds(frame, out)
    seen, under = _share_below(frame["max_router_drop_rate"], frame["lemma_5_1_bound"])
    seen_net, under_net = _share_below(frame["network_drop_rate"], frame["thm_5_1_bound"])
    loose = frame[(frame["max_router_drop_rate"] > 0)]
    ratio = float(np.median(loose["lemma_5_1_bound"] / loose["max_router_drop_rate"]))
    top = frame[frame["load"] == frame["load"].max()]
    example = top.iloc[len(top) // 2]
    needs = []
    for rho, group in frame.groupby("load"):
        enough = group[group["network_drop_rate"] <= TARGET_DROP]["buffer_pkts"]
        reached = f"{enough.min():g}" if len(enough) else "none swept"
        needs.append(
            f"{theory.tree_buffer(float(rho), n, TARGET_DROP):.0f} packets at ρ = {rho:g} "
            f"(smallest swept buffer that reached it: {reached})"
        )
    paragraph = (
        f"Lemma 5.1 holds at {under} of {seen} points: no router of the tree dropped more than "
        f"ρ^B, and Thm 5.1 at {under_net} of {seen_net}: the packets lost anywhere on their "
        f"way from a leaf to the exit stay under n·ρ^B (n = {n} routers). The bounds are far "
        f"from tight: where routers dropped at all, ρ^B is a median {ratio:,.0f} times the "
        f"largest router's drop rate; at ρ = {example['load']:g} and B = "
        f"{example['buffer_pkts']:g}, {example['max_router_drop_rate']:.3%} against "
        f"{example['lemma_5_1_bound']:.1%}. Only the root's link is loaded to ρ; each level "
        f"below carries half, so the network's drop rate is nearly the root's. For a drop rate "
        f"of {TARGET_DROP:.0%}, Thm 5.1 asks B ≥ log_1/ρ(n/ε): " + "; ".join(needs) + "."
    )
    curves_router = _curves_by_load(frame, "max_router_drop_rate", "lemma_5_1_bound")
    curves_net = _curves_by_load(frame, "network_drop_rate", "thm_5_1_bound")
    fig = bounds_figure(
        [
            ("each router: Lemma 5.1, ρ^B", "largest router drop rate", curves_router),
            (f"end to end: Thm 5.1, n·ρ^B (n = {n})", "end-to-end drop rate", curves_net),
        ],
        "A tree of tiny-buffer routers with Poisson ingress: drop rates and their bounds",
        _footer(view, version),
    )
    return NetworkCheck(paragraph, frame, plots.save(fig, out, "f5-bounds"))


def _curves_by_load(
    frame: pd.DataFrame, measured: str, bound: str, queue: str = "droptail", style: str = "--"
) -> list[BoundCurve]:
    """One curve per load of `frame`: `measured` against the buffer beside `bound`."""
    return [
        BoundCurve(
            f"measured, ρ = {rho:g}",
            group["buffer_pkts"].tolist(),
            group[measured].tolist(),
            group[bound].tolist(),
            f"bound, ρ = {rho:g}",
            k,
            "o" if queue == "droptail" else "s",
            style,
        )
        for k, (rho, group) in enumerate(frame.groupby("load"))
    ]


# ---- f6: a general network, drop-tail against BJP -------------------------------------------


def check_bjp(view: SweepView, out: Path, version: str) -> NetworkCheck:
    """Drop-tail beside the tree's bounds and BJP beside Thm 5.2's on a general network, and
    whether each keeps one flow's inter-arrival times (recipe f6)."""
    facts = _facts(view)
    n = int(facts["longest_route"])
    points = _points(view)
    rows = []
    for _, p in points.iterrows():
        rho, b, queue = float(p[LOAD]), float(p["B"]), str(p[QUEUE])
        bjp = queue == "bjp"
        jitter = b // 2  # BJP's default: Δ = B/2, D = Δ (Thm 5.2's B = 2Δ)
        router = theory.bjp_router_drop_bound(rho, jitter) if bjp else rho**b
        rows.append(
            {
                "queue": queue,
                "load": rho,
                "buffer_pkts": b,
                "jitter_pkts": jitter if bjp else math.nan,
                "max_router_drop_rate": p["max_router_drop_rate_mean"],
                "router_bound": router,
                "network_drop_rate": p["network_drop_rate_mean"],
                "network_bound": n * router,
                "bound": "Thm 5.2 (eq. C.2)" if bjp else "tree, Lemma 5.1 (not proved here)",
            }
        )
    frame = pd.DataFrame(rows).sort_values(["queue", "load", "buffer_pkts"], ignore_index=True)
    _write_bounds(frame, out)
    tail = frame[frame["queue"] == "droptail"]
    bjp = frame[frame["queue"] == "bjp"]
    seen_t, under_t = _share_below(tail["max_router_drop_rate"], tail["router_bound"])
    seen_b, under_b = _share_below(bjp["max_router_drop_rate"], bjp["router_bound"])
    vacuous = int((bjp["router_bound"] >= 1).sum())
    paired = tail.merge(bjp, on=["load", "buffer_pkts"], suffixes=("_tail", "_bjp"))
    more = int((paired["network_drop_rate_bjp"] > paired["network_drop_rate_tail"]).sum())
    needs = "; ".join(
        f"{theory.bjp_buffer(float(rho), n, TARGET_DROP):,.0f} packets at ρ = {rho:g}"
        for rho in sorted(frame["load"].unique())
    )
    check = interarrival_check(view, out, version)
    paragraph = (
        f"Drop-tail stays under the tree's bound ρ^B at {under_t} of {seen_t} points: in this "
        f"network, where flows share links and part, no router's drop rate shows the "
        f"burstiness the tree proof rules out and a general topology allows; the tree bound "
        f"did not fail here. BJP stays under Thm 5.2's per-router bound α^Δ/(1−α)² (Δ = B/2) at "
        f"{under_b} of {seen_b} points, a bound that is 1 or more, so says nothing, at "
        f"{vacuous} of them. At the same buffer BJP lost more packets end to end than drop-tail "
        f"at {more} of {len(paired)} points: a router under BJP holds each packet until close "
        f"to its time stamp plus D, so about ρ·D slots are taken ahead at any time, where a "
        f"FIFO of that load holds little. For {TARGET_DROP:.0%} end to end, Thm 5.2 asks "
        f"B ≥ 4·log_1/α(n/((1−α)ε)) (n = {n}): {needs}. {check.paragraph}"
    )
    figures = _bjp_figure(frame, n, view, out, version) + check.figures
    return NetworkCheck(paragraph, frame, figures)


def _bjp_figure(
    frame: pd.DataFrame, n: int, view: SweepView, out: Path, version: str
) -> list[Path]:
    panels = []
    for queue, title, style in (
        ("droptail", "drop-tail, with the tree's bound ρ^B", "--"),
        ("bjp", "BJP (Δ = D = B/2), with Thm 5.2's α^Δ/(1−α)²", ":"),
    ):
        rows = frame[frame["queue"] == queue]
        curves = _curves_by_load(rows, "max_router_drop_rate", "router_bound", queue, style)
        panels.append((title, "largest router drop rate", curves))
    fig = bounds_figure(
        panels,
        f"A general network of tiny-buffer routers (n = {n}): drop-tail and BJP",
        _footer(view, version),
    )
    return plots.save(fig, out, "f6-bounds")


@dataclass
class InterarrivalCheck:
    paragraph: str
    distances: pd.DataFrame  # per case and router of the route: KS distance from the ingress
    figures: list[Path]


def interarrival_check(view: SweepView, out: Path, version: str) -> InterarrivalCheck:
    """At the sweep's highest load and largest buffer, for each swept discipline: the
    inter-arrival times of flow 0 (of traffic entry 0) at every router of its route, from
    runs recording the event log there (one run per router, all alike but for where the log
    is: recording changes nothing), each compared with those at its ingress router by the
    two-sample Kolmogorov–Smirnov distance. Writes OUT/interarrival.csv and the CDFs at the
    ingress and the last router (f6-interarrival.png)."""
    facts = _facts(view)
    route = facts["first_routes"][0]
    point = {LOAD: max(_values(view, LOAD)), BUFFER: _largest_buffer(view)}
    rows, curves = [], {}
    for queue in _values(view, QUEUE):
        scenario = view.header.point_overrides({**point, QUEUE: queue})
        gaps = [_gaps_at(view.plan.base, scenario, link) for link in route]
        for hop, (link, g) in enumerate(zip(route, gaps, strict=True), start=1):
            rows.append(
                {
                    "queue": queue,
                    "router": hop,
                    "link": link,
                    "samples": len(g),
                    "ks_distance": ks_distance(gaps[0], g),
                }
            )
        curves[_queue_label(view, queue)] = {
            f"ingress ({route[0]})": gaps[0],
            f"router {len(route)} ({route[-1]})": gaps[-1],
        }
    frame = pd.DataFrame(rows)
    write_atomically(out / "interarrival.csv", partial(frame.to_csv, index=False))
    last = frame[frame["router"] == len(route)].set_index("queue")["ks_distance"]
    # A link serializes: after the first router no gap is shorter than the shortest one seen
    # there (a packet time), which alone keeps the distance at least the share of ingress gaps
    # that were.
    first = next(iter(curves.values()))
    shortest = min(
        float(np.min(g)) for c in curves.values() for g in list(c.values())[1:] if len(g)
    )
    floor = float(np.mean(np.asarray(list(first.values())[0]) < shortest))
    by_hop = "; ".join(
        f"{_queue_label(view, q)}: "
        + ", ".join(f"{d:.3f}" for d in frame[frame["queue"] == q]["ks_distance"].iloc[1:])
        for q in frame["queue"].unique()
    )
    paragraph = (
        f"One flow's inter-arrival times (flow 0, {len(route)} routers, at ρ = {point[LOAD]:g} "
        f"and B = {point[BUFFER]}): the two-sample Kolmogorov–Smirnov distance from their "
        f"distribution at the ingress router, at routers 2 to {len(route)}, is {by_hop} "
        f"(interarrival.csv); at the last router, "
        + ", ".join(f"{_queue_label(view, q)} {d:.3f}" for q, d in last.items())
        + f". Of that, {floor:.3f} is the serialization floor: {floor:.1%} of the ingress gaps "
        f"are shorter than a packet time ({shortest * 1e6:.0f} µs), which no later router can "
        "reproduce; a distance that stays there from router to router means the flow's gaps "
        "are kept, one that grows, that each router reshapes them."
    )
    fig = interarrival_figure(
        curves,
        f"Flow 0's inter-arrival times at its ingress and its last router (ρ = {point[LOAD]:g}, "
        f"B = {point[BUFFER]})",
        _footer(view, version),
    )
    return InterarrivalCheck(paragraph, frame, plots.save(fig, out, "f6-interarrival"))


def _values(view: SweepView, key: str) -> list[Any]:
    """The values the sweep gives a varied key."""
    return next(list(vary.values) for vary in view.plan.varies if vary.key == key)


def _largest_buffer(view: SweepView) -> Any:
    return max(_values(view, BUFFER), key=lambda v: plots.axis_value(v)[0])


def _queue_label(view: SweepView, queue: str) -> str:
    return {"droptail": "drop-tail", "bjp": "BJP"}.get(queue, queue)


def _gaps_at(base: Scenario, point: dict[str, Any], link: str) -> np.ndarray:
    """Flow 0's inter-arrival times at `link` in a run of `base` at `point`."""
    scenario = apply_overrides(
        base, {**point, "network.summary_link": link, "monitor.events": True}
    )
    return interarrival_times(run(scenario).events, flow=0)


# ---- f6_tcp: TCP over BJP (Thm 5.3) ---------------------------------------------------------


def check_tcp(view: SweepView, out: Path, version: str) -> NetworkCheck:
    """Thm 5.3's effective utilization beside paced and unpaced TCP over drop-tail and BJP
    (recipe f6_tcp)."""
    # start-up time and layering: the load model is this layer's, imported when used
    from buflab.experiments.load import offered_load

    facts = _facts(view)
    n = int(facts["longest_route"])
    wmax = float(facts["entries"][0]["max_window"])
    rho = max(row["load"] for row in offered_load(view.plan.base)["links"])
    points = _points(view)
    rows = []
    for _, p in points.iterrows():
        b = float(p["B"])
        rows.append(
            {
                "queue": str(p[QUEUE]),
                "pacing": str(p[PACING]),
                "buffer_pkts": b,
                "effective_utilization": p["effective_utilization_mean"],
                "thm_5_3_utilization": theory.bjp_tcp_utilization(rho, n, wmax, b),
                "max_router_drop_rate": p["max_router_drop_rate_mean"],
                "retransmits": p["retransmits_mean"],
            }
        )
    frame = pd.DataFrame(rows).sort_values(["queue", "pacing", "buffer_pkts"], ignore_index=True)
    _write_bounds(frame, out)
    best = frame.loc[frame.groupby(["queue", "pacing"])["buffer_pkts"].idxmax()]
    least = frame.loc[frame.groupby(["queue", "pacing"])["buffer_pkts"].idxmin()]
    cases = ", ".join(
        f"{_queue_label(view, r.queue)} {'paced' if r.pacing != 'off' else 'unpaced'} "
        f"{r.effective_utilization:.1%}"
        for r in least.itertuples()
    )
    at_most = ", ".join(
        f"{_queue_label(view, r.queue)} {'paced' if r.pacing != 'off' else 'unpaced'} "
        f"{r.effective_utilization:.1%}"
        for r in best.itertuples()
    )
    guaranteed = frame["thm_5_3_utilization"].max()
    needs = theory.bjp_tcp_buffer(rho, n, wmax, 0.9)
    # Unpaced over BJP at the largest buffer: drops, and what TCP resent anyway.
    burst = frame[(frame["queue"] == "bjp") & (frame["pacing"] == "off")]
    burst = burst[burst["buffer_pkts"] == burst["buffer_pkts"].max()].iloc[0]
    paragraph = (
        f"TCP flows whose windows of W = {wmax:g} segments offer every link ρ = {rho:.2f} "
        f"(n = {n} routers): at the smallest buffer swept ({least['buffer_pkts'].min():g} "
        f"packets) they reach an effective utilization θ (goodput ÷ W per RTT) of {cases}; at "
        f"the largest ({best['buffer_pkts'].max():g}), {at_most}. Thm 5.3 guarantees "
        + (
            f"θ ≥ {guaranteed:.1%} at the largest buffer"
            if guaranteed > 0
            else "nothing at any buffer swept (1 − nW·α^{B/4}/(1−α) ≤ 0)"
        )
        + f"; for θ = 90 % it asks B ≥ 4·log_1/α(nW/((1−α)(1−θ))) = {needs:,.0f} packets. "
        f"Unpaced TCP over BJP at {burst['buffer_pkts']:g} packets: the routers dropped "
        f"{burst['max_router_drop_rate']:.2%} at most, yet the flows resent "
        f"{burst['retransmits']:,.0f} segments: packets that arrive together aim at the same "
        "departure slot, so each later one takes the latest free slot before its elder's and "
        "a burst leaves in reverse order, which TCP reads as loss. Thm 5.3 assumes flows that "
        "send as a Poisson process (§5.3.3); paced, they keep their order far better."
    )
    curves = []
    for k, ((queue, pacing), group) in enumerate(frame.groupby(["queue", "pacing"])):
        label = f"{_queue_label(view, queue)}, {'paced' if pacing != 'off' else 'unpaced'}"
        curves.append(
            BoundCurve(
                label,
                group["buffer_pkts"].tolist(),
                (1 - group["effective_utilization"]).tolist(),
                (1 - group["thm_5_3_utilization"]).tolist(),
                "Thm 5.3: 1 − θ ≤ nW·α^{B/4}/(1−α)",
                k,
                "o",
                ":",
            )
        )
    fig = bounds_figure(
        [("Thm 5.3: 1 − θ ≤ nW·α^{B/4}/(1−α)", "1 − θ: effective utilization lost", curves)],
        f"TCP over {n} tiny-buffer routers, ρ = {rho:.2f}: what Thm 5.3 bounds",
        _footer(view, version),
        floor_label="nothing lost: θ ≥ 1 (on the axis floor)",
    )
    return NetworkCheck(paragraph, frame, plots.save(fig, out, "f6_tcp-bounds"))


CHECKS: dict[str, Callable[[SweepView, Path, str], NetworkCheck]] = {
    "f5": check_tree,
    "f6": check_bjp,
    "f6_tcp": check_tcp,
}
