"""Offered and potential load of a scenario's traffic, and the users that give a target load.

- **Offered load** (thesis ch. 4.1, as in chs. 2 and 3): the mean rate a traffic spec would
  send if the network imposed no drops and no queueing delay, as a fraction of the
  bottleneck rate. `offered_load` computes it from the scenario alone, per traffic entry
  and in total; the definitions per kind are in its docstring.
- **Potential load** (IMC paper, footnote 8): "the utilization achieved when the bottleneck
  link capacity is increased to infinity, and when the throughput is limited by other
  factors (like the maximum congestion window size, RTT, and access link capacities)".
  `potential_load` measures it with a run whose bottleneck is 100 times faster and has an
  unlimited buffer.
- `users_for_load` finds the number of users of a closed-loop (or repeated-downloads) entry
  that gives a target load, from the model (it is linear in users) or by bisecting runs.

Rates are bit/s on the wire (headers included, as the summary's `throughput_bps` and a UDP
source's `rate` count them), times seconds, sizes bytes.

What the scenario means (the link, each entry's flows on it, windows, distributions, defaults)
is the engine's, read once as its traffic facts (`buflab._core.traffic_facts`): this module
keeps the model over those numbers and must not read a scenario's keys for their meaning,
nor know how its numbers are printed (`buflab load` does that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from buflab.engine import core, scenario_json
from buflab.engine.runner import load_scenario, run, validate
from buflab.engine.scenario import Overrides, Scenario, ScenarioSource, get_key, set_key
from buflab.engine.units import parse_rate

DRAWS = 200_000  # Monte Carlo draws of file sizes per traffic entry
RTT_POINTS = 16  # a uniform RTT range is averaged over the midpoints of this many bins
POTENTIAL_SCALE = 100.0  # "unconstrained": the bottleneck made this many times faster

CLOSED_LOOP_KINDS = ("closed_loop", "repeated_downloads")


# ---- TCP with no drops and no queueing --------------------------------------------------


def _next_window(window: int, max_window: int, delayed_ack: bool) -> int:
    # One segment more per ACK: twice the window per RTT, or 1.5 times with an ACK per two
    # segments (delayed ACKs; an approximation that ignores the delayed-ACK timer).
    grown = window + (window + 1) // 2 if delayed_ack else 2 * window
    return min(grown, max_window)


def slow_start_rounds(
    segments: int, initial_window: int, max_window: int, *, delayed_ack: bool = False
) -> int:
    """Rounds (RTTs of sending) that slow start needs to send `segments` with no loss.

    Round 1 sends the initial window; each later round sends twice the previous one (1.5
    times with delayed ACKs), at most `max_window` segments. Exact for the engine's Reno
    sender, whose ssthresh starts at the receiver window: 4 segments with IW 4 take one
    round, 12 take two (4 + 8), 13 take three.
    """
    if segments < 1 or initial_window < 1 or max_window < 1:
        raise ValueError("segments, initial_window and max_window must be at least 1")
    window, sent, rounds = min(initial_window, max_window), 0, 0
    while sent < segments:
        sent += window
        rounds += 1
        if window == max_window:  # the rest goes max_window per round
            rounds += max(0, math.ceil((segments - sent) / max_window))
            break
        window = _next_window(window, max_window, delayed_ack)
    return rounds


@dataclass(frozen=True)
class TcpPath:
    """What sets a download's time with no drops and no queueing (`from_facts` reads it
    from an entry's traffic facts)."""

    packet_bytes: float  # a full packet on the wire
    mss_bytes: float  # its payload; the rest is headers, also the size of a SYN-ACK
    initial_window: int  # segments
    max_window: int  # segments
    access_bps: float  # the sender's access link (serialization only)
    handshake: bool
    delayed_ack: bool

    @property
    def header_bytes(self) -> float:
        return self.packet_bytes - self.mss_bytes

    @classmethod
    def from_facts(cls, entry: dict[str, Any], access_bps: float) -> TcpPath:
        """The path of a TCP entry of `traffic_facts` whose senders send at `access_bps`."""
        return cls(
            packet_bytes=entry["packet_bytes"],
            mss_bytes=entry["mss_bytes"],
            initial_window=entry["initial_window"],
            max_window=entry["max_window"],
            access_bps=access_bps,
            handshake=bool(entry.get("handshake")),  # long-lived flows open no connections
            delayed_ack=entry["delayed_ack"],
        )


def download_time(sizes: Any, rtt_s: float, path: TcpPath) -> np.ndarray:
    """Time from the client's request to the last byte of files of `sizes` payload bytes,
    with no drops and no queueing (vectorised over `sizes`).

    - The first data segment leaves the server 1.5 RTT after the request with the
      handshake (request/SYN 0.5 RTT, SYN-ACK back and the client's ACK 1 RTT), 0.5 RTT
      without (the request's one-way trip).
    - Slow start then sends rounds of the initial window, doubling (`slow_start_rounds`),
      each round at most `max_window` segments. A round lasts an RTT plus one packet's
      serialization (its first ACK comes back), or, when the access link needs longer to
      serialize the round's packets, that long (the link stays busy from round to round).
    - The last round ends with its serialization at the access rate plus half an RTT for
      the last segment to arrive.

    So an initial-window file takes 2 RTT with the handshake and 1 RTT without, plus its
    serialization, which is what the engine measures. Packets are counted full size, and
    the bottleneck's own serialization (one packet, microseconds) is left out.
    """
    sizes = np.maximum(np.round(np.asarray(sizes, dtype=float)), 1.0)
    remaining = np.ceil(sizes / path.mss_bytes)
    per_packet = path.packet_bytes * 8 / path.access_bps  # 0 for an unbounded access link
    first = 1.5 if path.handshake else 0.5
    time = np.full(remaining.shape, (first + 0.5) * rtt_s)
    active = np.ones(remaining.shape, dtype=bool)
    window = min(path.initial_window, path.max_window)
    while window < path.max_window:  # growing rounds, at most ~log2(max_window) of them
        last = active & (remaining <= window)
        full = active & ~last
        time += np.where(last, remaining * per_packet, 0.0)
        time += np.where(full, max(rtt_s + per_packet, window * per_packet), 0.0)
        remaining = np.where(full, remaining - window, 0.0)
        active = full
        if not active.any():
            return time
        window = _next_window(window, path.max_window, path.delayed_ack)
    # Rounds of max_window segments, the last one partial.
    rounds = np.ceil(remaining / window)
    steady = max(rtt_s + per_packet, window * per_packet)
    last = remaining - (rounds - 1) * window
    time += np.where(active, (rounds - 1) * steady + last * per_packet, 0.0)
    return time


# ---- distributions ----------------------------------------------------------------------


def _distribution(dist: dict[str, Any]) -> tuple[float, Any]:
    """(mean, sampler(rng, n)) of a distribution of `traffic_facts` (its kind, parameters
    and mean as the engine read them), drawn as the engine draws it."""
    kind, mean = dist["dist"], dist["mean"]
    if kind == "constant":
        value = dist["value"]
        return mean, lambda rng, n: np.full(n, value)
    if kind == "uniform":
        lo, hi = dist["lo"], dist["hi"]
        return mean, lambda rng, n: lo + (hi - lo) * rng.random(n)
    if kind == "exponential":
        return mean, lambda rng, n: rng.exponential(mean, n)
    if kind == "pareto":
        shape = dist["shape"]
        scale = mean * (shape - 1) / shape
        return mean, lambda rng, n: scale / (1.0 - rng.random(n)) ** (1 / shape)
    if kind == "lognormal":
        sigma = dist["sigma"]
        mu = math.log(mean) - sigma**2 / 2
        return mean, lambda rng, n: rng.lognormal(mu, sigma, n)
    if kind == "empirical":
        values = np.array([v for v, _ in dist["cdf"]], dtype=float)
        probs = np.array([p for _, p in dist["cdf"]], dtype=float)

        def sample(rng: np.random.Generator, n: int) -> np.ndarray:
            # The first point whose probability reaches u, interpolated from the one before.
            u = rng.random(n)
            i = np.minimum(np.searchsorted(probs, u, side="left"), len(probs) - 1)
            j = np.maximum(i - 1, 0)
            dp = probs[i] - probs[j]
            step = np.where(dp > 0, (u - probs[j]) / np.where(dp > 0, dp, 1.0), 1.0)
            return np.where(i > 0, values[j] + (values[i] - values[j]) * step, values[i])

        return mean, sample
    if kind == "choice":
        values = np.array(dist["values"], dtype=float)
        weights = np.array(dist["weights"], dtype=float)
        return mean, lambda rng, n: rng.choice(values, size=n, p=weights / weights.sum())
    raise ValueError(f"unknown distribution {kind!r}")


def _rtt_grid(low: float, high: float) -> np.ndarray:
    if low == high:
        return np.array([low])
    return low + (high - low) * (np.arange(RTT_POINTS) + 0.5) / RTT_POINTS


# RTTs drawn from an entry's own distribution to average a rate over (a uniform range uses
# the midpoints of `RTT_POINTS` bins instead).
RTT_DRAWS = 256


def _entry_rtts(rtt: dict[str, Any], seed: int) -> np.ndarray:
    """The RTTs (seconds) an entry's rate is averaged over: for a uniform range (every entry
    without its own `rtt`), the midpoints of its bins; otherwise draws from its distribution,
    as the engine draws them, from numpy's generator seeded with `seed`."""
    if rtt["dist"] == "uniform":
        return _rtt_grid(rtt["lo"], rtt["hi"])
    if rtt["dist"] == "constant":
        return np.array([rtt["value"]])
    _, sample = _distribution(rtt)
    return np.asarray(sample(np.random.default_rng(seed), RTT_DRAWS), dtype=float)


# ---- offered load -----------------------------------------------------------------------


def offered_load(
    scenario: ScenarioSource, *, overrides: Overrides = None, draws: int = DRAWS, seed: int = 0
) -> dict[str, Any]:
    """The offered load of every traffic entry and in total: the mean rate in bit/s on the
    wire if the network imposed no drops and no queueing, and its ratio to the bottleneck.

    Per kind:

    - `udp_poisson`, `udp_cbr`: flows × rate (exact).
    - `long_lived`: each flow sends at most min(access rate, max_window/MSS full packets per
      RTT), averaged over the flows' RTTs (for a uniform range, the midpoints of 16 bins of
      it; for an entry's own distribution, 256 draws from it). When
      that limit reaches the bottleneck rate, neither the access link nor the window holds a
      flow below the link, a greedy flow would take whatever link it is given, and the
      entry's rate is unbounded (`math.inf`; `limit_bps` still says what caps one flow).
    - `closed_loop`, `repeated_downloads`: each user alternates a download and a think
      time (none for repeated downloads). A download of S payload bytes takes
      `download_time(S)`: the handshake, slow-start rounds from the initial window capped by
      max_window, serialization at the access rate and half an RTT for the last segment.
      A user's rate is E[bytes on the wire per file]·8 / (E[download time] + E[think]); the
      wire bytes are S plus 40 B per segment and the 40 B SYN-ACK. The means of S and of the
      think time are exact; E[download time] is a Monte Carlo mean over `draws` file sizes
      from numpy's generator seeded with `seed`, drawn as the engine draws them, with
      download_time(S) − βS averaged and βE[S] added back (β: time per byte at max_window),
      so the heavy tail of a Pareto size adds no noise. Users keep their RTT, so the rate
      is averaged over the RTT range as for long-lived flows. Also reported: the active
      fraction E[download]/(E[download] + E[think]), the time a user is downloading, and
      the rate of an active user, E[wire bits per file]/E[download time].
    - `open_loop`: arrivals per second × E[bytes on the wire per file]·8 (payload, 40 B per
      segment, the SYN-ACK). With `load` instead of `arrivals`, the engine's rate is
      load × bottleneck ÷ (8 × E[file size]), so the offered load is `load` plus headers.

    The link is the one the run summary describes, and every figure is its share of an
    entry's traffic (`link_share` of the engine's traffic facts): on the dumbbell the
    bottleneck, which cross traffic (`path = "cross"`) leaves before; on the parking lot
    `network.summary_hop`, which only the entries whose `hops` include it cross; on a switch
    one output line, per output: a long-lived entry's `flows_per_output` flows, and any other
    entry's rate ÷ the ports (uniform load spreads it evenly; diagonal load too, each output
    taking 2/3 of one input's and 1/3 of another's). `count` stays the entry's own flows or
    users; an entry that does not cross the link offers it 0.

    With server machines (`network.access.machines` > 0) a flow's access rate is taken as
    min(class rate, NIC rate) and the total is capped at what the machines' NICs and class
    queues can carry (`capped` is then true).

    `links` has every monitored link (on a parking lot each hop, on a general network, a tree
    or a layered network each link; none on the switch): its offered rate, the entries'
    rates times the shares of their traffic crossing it, and its load; the largest is the
    load factor ρ of thesis §5.1, the row with `max` true.
    """
    tree = load_scenario(scenario, overrides=overrides)
    facts = core().traffic_facts(scenario_json(tree))
    link, access = facts["link_bps"], facts["access_bps"]
    entries: list[dict[str, Any]] = []
    whole: list[float] = []  # each entry's own rate, before its share of the summary link
    for index, entry in enumerate(facts["entries"]):
        kind = entry["kind"]
        rtts = _entry_rtts(entry["rtt"], seed)
        if kind.startswith("udp_"):
            row = _udp(entry)
        elif kind == "long_lived":
            row = _long_lived(entry, access, rtts, link)
        elif kind == "open_loop":
            row = _open_loop(entry, access, draws, seed)
        else:
            row = _closed_loop(entry, access, rtts, draws, seed)
        share = entry["link_share"]
        row = {"traffic": index, "kind": kind, "link_share": share, **row}
        whole.append(row["rate_bps"])
        row["rate_bps"] = _shared(row["rate_bps"], share)
        row["load"] = row["rate_bps"] / link
        entries.append(row)
    total = sum(row["rate_bps"] for row in entries)
    servers = facts["servers_bps"]
    capped = servers is not None and total > servers
    return {
        "bottleneck_bps": link,
        "summary_link": facts["summary_link"],
        "rate_bps": servers if capped else total,
        "load": (servers if capped else total) / link,
        "capped": capped,
        "traffic": entries,
        "links": _per_link(facts["links"], whole),
    }


def _shared(rate_bps: float, share: float) -> float:
    """The part `share` of an entry's rate (an unbounded one stays unbounded, but 0 × inf
    is 0: an entry that does not cross a link offers it nothing)."""
    return rate_bps * share if share > 0 else 0.0


def _per_link(links: list[dict[str, Any]], whole: list[float]) -> list[dict[str, Any]]:
    """The offered rate and load of every monitored link (the engine's `links` facts: the
    share of each entry's traffic crossing it), `whole` being each entry's own rate; the
    largest load is the network's load factor ρ (thesis §5.1), and its row says `max`."""
    rows = []
    for link in links:
        offered = sum(
            _shared(rate, share) for rate, share in zip(whole, link["shares"], strict=True)
        )
        rows.append(
            {
                "name": link["name"],
                "rate_bps": link["rate_bps"],
                "offered_bps": offered,
                "load": offered / link["rate_bps"],
                "max": False,
            }
        )
    if rows:
        max(rows, key=lambda r: r["load"])["max"] = True
    return rows


def _udp(entry: dict[str, Any]) -> dict[str, Any]:
    flows, per_flow = entry["flows"], entry["rate_bps"]
    return {"count": flows, "per_flow_bps": per_flow, "rate_bps": flows * per_flow}


def _long_lived(
    entry: dict[str, Any], access: float, rtts: np.ndarray, bottleneck: float
) -> dict[str, Any]:
    flows = entry["flows"]
    path = TcpPath.from_facts(entry, access)
    limits = np.minimum(access, path.max_window * path.packet_bytes * 8 / rtts)
    limit = float(limits.mean())
    per_flow = math.inf if float(limits.min()) >= bottleneck else limit
    return {
        "count": flows,
        "per_flow_bps": per_flow,
        "limit_bps": limit,
        "rate_bps": flows * per_flow,
    }


def _wire_bytes(sizes: np.ndarray, size_mean: float, path: TcpPath) -> float:
    """Mean bytes on the wire per file: payload, 40 B per segment and the SYN-ACK.
    E[ceil(S/MSS)] is E[S]/MSS plus the mean of the bounded rounding term."""
    mss = path.mss_bytes
    segments = size_mean / mss + float(np.mean(np.ceil(sizes / mss) - sizes / mss))
    return size_mean + path.header_bytes * (segments + (1 if path.handshake else 0))


def _open_loop(entry: dict[str, Any], access: float, draws: int, seed: int) -> dict[str, Any]:
    path = TcpPath.from_facts(entry, access)
    size_mean, sample_size = _distribution(entry["file_size"])
    sizes = np.maximum(np.round(sample_size(np.random.default_rng(seed), draws)), 1.0)
    # With `load` instead of `arrivals`, as the engine converted it (docs/scenario.md).
    per_second = entry["arrivals_per_s"]
    wire_bytes = _wire_bytes(sizes, size_mean, path)
    return {
        "count": per_second,
        "per_flow_bps": wire_bytes * 8,
        "rate_bps": per_second * wire_bytes * 8,
        "goodput_bps": per_second * size_mean * 8,
        "mean_file_bytes": size_mean,
    }


def _closed_loop(
    entry: dict[str, Any], access: float, rtts: np.ndarray, draws: int, seed: int
) -> dict[str, Any]:
    users = entry["flows"]
    path = TcpPath.from_facts(entry, access)
    size_mean, sample_size = _distribution(entry["file_size"])
    think_mean = entry["think"]["mean"]
    sizes = np.maximum(np.round(sample_size(np.random.default_rng(seed), draws)), 1.0)
    wire_bytes = _wire_bytes(sizes, size_mean, path)
    per_packet = path.packet_bytes * 8 / path.access_bps
    downloads, rates, active = [], [], []
    for rtt in rtts:
        steady = max(rtt + per_packet, path.max_window * per_packet) / (
            path.max_window * path.mss_bytes
        )
        mean_time = float(np.mean(download_time(sizes, rtt, path) - steady * sizes))
        mean_time += steady * size_mean
        downloads.append(mean_time)
        rates.append(wire_bytes * 8 / (mean_time + think_mean))
        active.append(mean_time / (mean_time + think_mean))
    per_user = float(np.mean(rates))
    mean_download = float(np.mean(downloads))
    return {
        "count": users,
        "per_flow_bps": per_user,
        "rate_bps": users * per_user,
        "goodput_bps": users * per_user * size_mean / wire_bytes,
        "active_fraction": float(np.mean(active)),
        "active_rate_bps": wire_bytes * 8 / mean_download,
        "mean_download_s": mean_download,
        "mean_think_s": think_mean,
        "mean_file_bytes": size_mean,
    }


# ---- potential load ---------------------------------------------------------------------


def unconstrained(scenario: ScenarioSource, overrides: Overrides = None) -> Scenario:
    """The scenario with its bottleneck 100 times faster and an unlimited buffer (IMC
    footnote 8's "capacity increased to infinity"; 100 times leaves it idle nearly always)."""
    tree = load_scenario(scenario, overrides=overrides)
    rate = parse_rate(get_key(tree, "network.bottleneck.rate"))
    set_key(tree, "network.bottleneck.rate", f"{rate * POTENTIAL_SCALE:.0f}bps")
    set_key(tree, "network.bottleneck.buffer", "unlimited")
    return tree


def potential_load(
    scenario: ScenarioSource, *, seeds: int = 1, overrides: Overrides = None
) -> float:
    """The potential load (IMC footnote 8): the throughput measured on the bottleneck when
    it is made effectively unconstrained (`unconstrained`), divided by the original rate of
    the link the summary describes; the mean over seeds seed, seed + 1, … Throughput
    counts headers, so
    it compares with `offered_load`'s `load`. The run keeps the scenario's duration and
    warm-up: closed-loop users all start in the first second, so give it a warm-up of a
    few think times and enough files for a stable mean (a Pareto size with shape 1.5 has
    infinite variance: its sample mean converges slowly and is usually low)."""
    tree = load_scenario(scenario, overrides=overrides)
    rate = core().traffic_facts(scenario_json(tree))["link_bps"]
    fast = unconstrained(tree)
    seed = validate(tree)["seed"]
    measured = [run(fast, seed=seed + k).summary["throughput_bps"] for k in range(seeds)]
    return float(np.mean(measured)) / rate


# ---- users for a target load ------------------------------------------------------------


def users_for_load(
    scenario: ScenarioSource,
    target: float,
    *,
    traffic: int = 0,
    method: Literal["offered", "potential"] = "offered",
    overrides: Overrides = None,
    seeds: int = 1,
    duration: str | None = None,
    rel_tol: float = 0.01,
) -> int:
    """The number of users of traffic entry `traffic` (closed_loop or repeated_downloads)
    that gives load `target` (1.25 for 125 %), the other entries unchanged.

    - "offered": solves the model of `offered_load`, which is linear in users: the nearest
      whole number to (target·C − other entries' rate) / one user's rate.
    - "potential": bisects on whole numbers of users with runs of `potential_load` (with
      `duration` replacing the scenario's, for short runs), from a bracket around the
      offered answer; the smallest number whose measured load reaches the target, to within
      `rel_tol` of it (or one user). Runs share the seed, so the measurements are nearly
      monotone in users.
    """
    if target <= 0:
        raise ValueError(f"target load {target} must be positive")
    tree = load_scenario(scenario, overrides=overrides)
    load = offered_load(tree)
    rows = load["traffic"]
    if not 0 <= traffic < len(rows) or rows[traffic]["kind"] not in CLOSED_LOOP_KINDS:
        raise ValueError(f"traffic.{traffic} is not a closed_loop or repeated_downloads entry")
    row = rows[traffic]
    if row["link_share"] == 0:
        raise ValueError(f"traffic.{traffic}'s users do not cross the link the load is of")
    if load["capped"]:
        raise ValueError("the offered load is capped by the server machines' links")
    other = load["rate_bps"] - row["rate_bps"]
    if not math.isfinite(other):
        raise ValueError("another traffic entry's offered load is unbounded")
    wanted = target * load["bottleneck_bps"] - other
    if wanted <= 0:
        share = other / load["bottleneck_bps"]
        raise ValueError(f"the other traffic entries alone offer {share:.3g} of the bottleneck")
    estimate = max(1, round(wanted / (row["per_flow_bps"] * row["link_share"])))
    if method == "offered":
        return estimate
    if method != "potential":
        raise ValueError(f"method must be 'offered' or 'potential', not {method!r}")
    if duration is not None:
        set_key(tree, "duration", duration)

    measured: dict[int, bool] = {}

    def reaches(users: int) -> bool:
        if users not in measured:
            trial = {**tree, "traffic": [dict(e) for e in tree["traffic"]]}
            trial["traffic"][traffic]["users"] = users
            measured[users] = potential_load(trial, seeds=seeds) >= target
        return measured[users]

    lo, hi = max(1, estimate // 2), estimate * 2
    while reaches(lo):
        if lo == 1:
            return 1
        lo, hi = max(1, lo // 2), lo
    while not reaches(hi):
        lo, hi = hi, hi * 2
    # Invariant: hi reaches the target; lo does not (or is 1).
    while hi - lo > max(1, rel_tol * hi):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi
