"""A network run read for the theorems of thesis ch. 5: drop rates per router and end to end,
the effective utilization of window-limited TCP flows (Thm 5.3's θ), and how far a flow's
inter-arrival times at one router are from those at another (a two-sample distance).

Numbers over a run's tables and the engine's facts of its scenario: it must not run anything
(`buflab.experiments.network` runs what these read) nor know how they are shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

# The sweep metrics a network run adds to its summary (`network_metrics`).
NETWORK_METRICS = ("max_router_drop_rate", "network_drop_rate", "effective_utilization")


def network_metrics(
    links: Mapping[str, Sequence[Any]],
    ingress: Sequence[bool],
    flows: Mapping[str, Sequence[Any]] | None = None,
    entries: Sequence[Mapping[str, Any]] = (),
) -> dict[str, float]:
    """The figures of a network run over its measured time, from its `links` table (its
    columns as lists, one row per monitored link, in the order of the engine's `links`
    facts, whose `ingress` flags say which links only traffic entering the network crosses):

    - `max_router_drop_rate`: the largest drop rate of any router's link (Lemma 5.1 bounds
      each one by ρ^B on a tree, eq. C.2 by α^Δ/(1−α)² under BJP);
    - `network_drop_rate`: the packets dropped anywhere ÷ the packets that entered (arrivals
      at the ingress links), the end-to-end drop rate that Thm 5.1 and 5.2 bound by n times a
      router's; nan without ingress links;
    - `effective_utilization` (with `flows` and the `entries` of the traffic facts): the
      long-lived TCP flows' goodput ÷ what their windows offer, W·MSS per RTT, Thm 5.3's θ;
      nan without such flows.
    """
    drops = np.asarray(links["drops"], dtype=float)
    arrivals = np.asarray(links["arrivals"], dtype=float)
    rates = np.asarray(links["drop_rate"], dtype=float)
    entered = float(arrivals[np.asarray(ingress, dtype=bool)].sum()) if len(ingress) else 0.0
    return {
        "max_router_drop_rate": float(rates.max()) if len(rates) else math.nan,
        "network_drop_rate": float(drops.sum()) / entered if entered > 0 else math.nan,
        "effective_utilization": effective_utilization(flows, entries) if flows else math.nan,
    }


def effective_utilization(
    flows: Mapping[str, Sequence[Any]], entries: Sequence[Mapping[str, Any]]
) -> float:
    """Thm 5.3's θ over the long-lived flows: Σ goodput ÷ Σ W·MSS·8 / RTT, W the window the
    receiver allows (max_window segments of the flow's entry) and RTT the flow's own, its
    smoothed RTT at the end of the run (thesis §5.3.3: a flow sends W per RTT, ρ_l = N·W/RTT;
    a BJP router adds about D to every RTT, which the flow's window then offers less over);
    its propagation delay if it has no RTT sample. nan without long-lived flows."""
    offered = goodput = 0.0
    columns = (
        flows["kind"],
        flows["traffic"],
        flows["srtt_s"],
        flows["rtt_s"],
        flows["goodput_bps"],
    )
    for kind, entry, srtt, rtt, bps in zip(*columns, strict=True):
        if kind != "long_lived":
            continue
        facts = entries[int(entry)]
        seconds = float(srtt) if float(srtt) > 0 else float(rtt)
        offered += facts["max_window"] * facts["mss_bytes"] * 8 / seconds
        goodput += float(bps)
    return goodput / offered if offered > 0 else math.nan


def interarrival_times(events: Any, flow: int) -> np.ndarray:
    """The gaps, seconds, between successive arrivals of `flow`'s packets at a queue, from its
    event log (a `Result.events` frame): every arrival, admitted or dropped."""
    rows = events[(events["flow"] == flow) & events["event"].isin(["enqueue", "drop"])]
    return np.diff(rows["time_ps"].to_numpy(dtype=np.int64)) / 1e12


def ks_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """The two-sample Kolmogorov–Smirnov distance: the largest gap between the empirical CDFs
    of `a` and `b` (0: the same distribution of values; 1: no overlap). nan if either is empty."""
    x, y = np.sort(np.asarray(a, dtype=float)), np.sort(np.asarray(b, dtype=float))
    if len(x) == 0 or len(y) == 0:
        return math.nan
    grid = np.concatenate([x, y])
    cdf_x = np.searchsorted(x, grid, side="right") / len(x)
    cdf_y = np.searchsorted(y, grid, side="right") / len(y)
    return float(np.abs(cdf_x - cdf_y).max())
