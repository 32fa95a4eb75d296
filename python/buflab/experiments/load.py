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

It must not know how its numbers are printed (`buflab load` does that).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from buflab.engine.runner import load_scenario, run, validate
from buflab.engine.scenario import Overrides, Scenario, ScenarioSource, get_key, set_key
from buflab.engine.units import parse_bytes, parse_rate, parse_time, parse_time_range

HEADER_BYTES = 40  # TCP/IP headers of a data segment; also the size of SYN-ACK and ACKs
DRAWS = 200_000  # Monte Carlo draws of file sizes per traffic entry
RTT_POINTS = 16  # a uniform RTT range is averaged over the midpoints of this many bins
POTENTIAL_SCALE = 100.0  # "unconstrained": the bottleneck made this many times faster

CLOSED_LOOP_KINDS = ("closed_loop", "repeated_downloads")


# ---- TCP with no drops and no queueing --------------------------------------------------


def initial_window_segments(packet_bytes: float, initial_window: int | str = "rfc3390") -> int:
    """The initial window in segments: a number, or RFC 3390's min(4·MSS, max(2·MSS, 4380 B))
    in whole segments (3 for 1500 B packets, 4 for 1000 B)."""
    if initial_window != "rfc3390":
        return int(initial_window)
    mss = int(packet_bytes) - HEADER_BYTES
    return min(4 * mss, max(2 * mss, 4380)) // mss


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
    """What sets a download's time with no drops and no queueing."""

    packet_bytes: float = 1000.0  # on the wire; payload = packet − 40
    initial_window: int = 4  # segments
    max_window: int = 20_000_000 // 960  # segments
    access_bps: float = math.inf  # the sender's access link (serialization only)
    handshake: bool = True
    delayed_ack: bool = False

    @property
    def mss(self) -> float:
        return self.packet_bytes - HEADER_BYTES

    @classmethod
    def from_entry(cls, entry: dict[str, Any], access_bps: float) -> TcpPath:
        packet = parse_bytes(entry.get("packet", "1000B"))
        mss = packet - HEADER_BYTES
        return cls(
            packet_bytes=packet,
            initial_window=initial_window_segments(packet, entry.get("initial_window", "rfc3390")),
            max_window=max(1, int(parse_bytes(entry.get("max_window", "20MB")) // mss)),
            access_bps=access_bps,
            # repeated_downloads always opens connections with a handshake.
            handshake=bool(entry.get("handshake", True)),
            delayed_ack=bool(entry.get("delayed_ack", False)),
        )


def download_time(sizes: Any, rtt_s: float, path: TcpPath = TcpPath()) -> np.ndarray:
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
    remaining = np.ceil(sizes / path.mss)
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


def _distribution(spec: Any, parse: Any) -> tuple[float, Any]:
    """(exact mean, sampler(rng, n)) of a scenario distribution, drawn as the engine draws."""
    if not isinstance(spec, dict):  # repeated_downloads: a fixed size
        value = parse(spec)
        return value, lambda rng, n: np.full(n, value)
    dist = spec["dist"]
    if dist == "constant":
        value = parse(spec["value"])
        return value, lambda rng, n: np.full(n, value)
    if dist == "uniform":
        lo, hi = (parse(part) for part in str(spec["range"]).split("..", 1))
        return (lo + hi) / 2, lambda rng, n: lo + (hi - lo) * rng.random(n)
    if dist == "exponential":
        mean = parse(spec["mean"])
        return mean, lambda rng, n: rng.exponential(mean, n)
    if dist == "pareto":
        mean, shape = parse(spec["mean"]), float(spec.get("shape", 1.5))
        scale = mean * (shape - 1) / shape
        return mean, lambda rng, n: scale / (1.0 - rng.random(n)) ** (1 / shape)
    if dist == "lognormal":
        mean, sigma = parse(spec["mean"]), float(spec.get("sigma", 1.0))
        mu = math.log(mean) - sigma**2 / 2
        return mean, lambda rng, n: rng.lognormal(mu, sigma, n)
    if dist == "empirical":
        values = np.array([parse(v) for v, _ in spec["cdf"]], dtype=float)
        probs = np.array([float(p) for _, p in spec["cdf"]], dtype=float)
        mean = values[0] * probs[0] + float(np.sum((values[1:] + values[:-1]) / 2 * np.diff(probs)))

        def sample(rng: np.random.Generator, n: int) -> np.ndarray:
            # The first point whose probability reaches u, interpolated from the one before.
            u = rng.random(n)
            i = np.minimum(np.searchsorted(probs, u, side="left"), len(probs) - 1)
            j = np.maximum(i - 1, 0)
            dp = probs[i] - probs[j]
            step = np.where(dp > 0, (u - probs[j]) / np.where(dp > 0, dp, 1.0), 1.0)
            return np.where(i > 0, values[j] + (values[i] - values[j]) * step, values[i])

        return mean, sample
    raise ValueError(f"unknown distribution {dist!r}")


def _rtt_grid(scenario: Scenario) -> np.ndarray:
    lo, hi = parse_time_range(get_key(scenario, "network.rtt", "100ms"))
    if lo == hi:
        return np.array([lo])
    return lo + (hi - lo) * (np.arange(RTT_POINTS) + 0.5) / RTT_POINTS


def _access_bps(scenario: Scenario) -> float:
    rate = parse_rate(get_key(scenario, "network.access.rate", "10Gbps"))
    if int(get_key(scenario, "network.access.machines", 0)) > 0:
        rate = min(rate, parse_rate(get_key(scenario, "network.access.nic", "1Gbps")))
    return rate


# ---- offered load -----------------------------------------------------------------------


def offered_load(
    scenario: ScenarioSource, *, overrides: Overrides = None, draws: int = DRAWS, seed: int = 0
) -> dict[str, Any]:
    """The offered load of every traffic entry and in total: the mean rate in bit/s on the
    wire if the network imposed no drops and no queueing, and its ratio to the bottleneck.

    Per kind:

    - `udp_poisson`, `udp_cbr`: flows × rate (exact).
    - `long_lived`: each flow sends at most min(access rate, max_window/MSS full packets per
      RTT), averaged over the flows' uniform RTTs (midpoints of 16 bins of the range). When
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

    On a switch the link is one output line (`network.switch.rate`) and every figure is per
    output: a long-lived entry's `flows_per_output` flows, and any other entry's rate ÷ the
    ports (uniform load spreads it evenly; diagonal load too, each output taking 2/3 of one
    input's and 1/3 of another's). `count` stays the entry's own flows or users.

    With server machines (`network.access.machines` > 0) a flow's access rate is taken as
    min(class rate, NIC rate) and the total is capped at what the machines' NICs and class
    queues can carry (`capped` is then true).
    """
    tree = validate(scenario, overrides=overrides)
    switch = get_key(tree, "network.topology") == "switch"
    if switch:
        bottleneck = parse_rate(get_key(tree, "network.switch.rate"))
        ports = int(get_key(tree, "network.switch.ports"))
    else:
        bottleneck, ports = parse_rate(tree["network"]["bottleneck"]["rate"]), 1
    access = _access_bps(tree)
    rtts = _rtt_grid(tree)
    entries = []
    for index, entry in enumerate(tree["traffic"]):
        kind = entry["kind"]
        share = 1.0 if "flows_per_output" in entry else 1.0 / ports
        if "flows_per_output" in entry:
            entry = {**entry, "flows": entry["flows_per_output"]}
        if kind.startswith("udp_"):
            row = _udp(entry)
        elif kind == "long_lived":
            row = _long_lived(entry, access, rtts, bottleneck)
        elif kind == "open_loop":
            row = _open_loop(entry, bottleneck, draws, seed)
        else:
            row = _closed_loop(entry, access, rtts, draws, seed)
        row = {"traffic": index, "kind": kind, **row}
        row["rate_bps"] *= share
        row["load"] = row["rate_bps"] / bottleneck
        entries.append(row)
    total = sum(row["rate_bps"] for row in entries)
    capped = False
    machines = int(tree["network"]["access"].get("machines", 0))
    if machines > 0:
        net = tree["network"]["access"]
        per_machine = min(
            parse_rate(net["nic"]), int(net.get("classes", 1)) * parse_rate(net["rate"])
        )
        if total > machines * per_machine:
            total, capped = machines * per_machine, True
    return {
        "bottleneck_bps": bottleneck,
        "rate_bps": total,
        "load": total / bottleneck,
        "capped": capped,
        "traffic": entries,
    }


def _udp(entry: dict[str, Any]) -> dict[str, Any]:
    flows = int(entry.get("flows", 1))
    per_flow = parse_rate(entry["rate"])
    return {"count": flows, "per_flow_bps": per_flow, "rate_bps": flows * per_flow}


def _long_lived(
    entry: dict[str, Any], access: float, rtts: np.ndarray, bottleneck: float
) -> dict[str, Any]:
    flows = int(entry.get("flows", 1))
    path = TcpPath.from_entry(entry, access)
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
    segments = size_mean / path.mss + float(np.mean(np.ceil(sizes / path.mss) - sizes / path.mss))
    return size_mean + HEADER_BYTES * (segments + (1 if path.handshake else 0))


def _open_loop(entry: dict[str, Any], bottleneck: float, draws: int, seed: int) -> dict[str, Any]:
    path = TcpPath.from_entry(entry, math.inf)
    size_mean, sample_size = _distribution(entry.get("file_size"), parse_bytes)
    sizes = np.maximum(np.round(sample_size(np.random.default_rng(seed), draws)), 1.0)
    if "arrivals" in entry:
        per_second = float(entry["arrivals"])
    else:  # the engine's conversion (docs/scenario.md, traffic.open_loop.load)
        per_second = float(entry["load"]) * bottleneck / (8 * size_mean)
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
    users = int(entry.get("users", 1))
    path = TcpPath.from_entry(entry, access)
    size_mean, sample_size = _distribution(entry.get("file_size", "1MB"), parse_bytes)
    think_mean, _ = _distribution(entry.get("think", {"dist": "constant", "value": 0}), parse_time)
    sizes = np.maximum(np.round(sample_size(np.random.default_rng(seed), draws)), 1.0)
    wire_bytes = _wire_bytes(sizes, size_mean, path)
    per_packet = path.packet_bytes * 8 / path.access_bps
    downloads, rates, active = [], [], []
    for rtt in rtts:
        steady = max(rtt + per_packet, path.max_window * per_packet) / (path.max_window * path.mss)
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
    it is made effectively unconstrained (`unconstrained`), divided by the original
    bottleneck rate; the mean over seeds seed, seed + 1, … Throughput counts headers, so
    it compares with `offered_load`'s `load`. The run keeps the scenario's duration and
    warm-up: closed-loop users all start in the first second, so give it a warm-up of a
    few think times and enough files for a stable mean (a Pareto size with shape 1.5 has
    infinite variance: its sample mean converges slowly and is usually low)."""
    tree = load_scenario(scenario, overrides=overrides)
    rate = parse_rate(get_key(tree, "network.bottleneck.rate"))
    fast = unconstrained(tree)
    seed = int(get_key(tree, "seed", 1))
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
    entries = tree.get("traffic") or []
    if not 0 <= traffic < len(entries) or entries[traffic].get("kind") not in CLOSED_LOOP_KINDS:
        raise ValueError(f"traffic.{traffic} is not a closed_loop or repeated_downloads entry")
    load = offered_load(tree)
    if load["capped"]:
        raise ValueError("the offered load is capped by the server machines' links")
    row = load["traffic"][traffic]
    other = load["rate_bps"] - row["rate_bps"]
    if not math.isfinite(other):
        raise ValueError("another traffic entry's offered load is unbounded")
    wanted = target * load["bottleneck_bps"] - other
    if wanted <= 0:
        share = other / load["bottleneck_bps"]
        raise ValueError(f"the other traffic entries alone offer {share:.3g} of the bottleneck")
    estimate = max(1, round(wanted / row["per_flow_bps"]))
    if method == "offered":
        return estimate
    if method != "potential":
        raise ValueError(f"method must be 'offered' or 'potential', not {method!r}")
    if duration is not None:
        set_key(tree, "duration", duration)

    measured: dict[int, bool] = {}

    def reaches(users: int) -> bool:
        if users not in measured:
            trial = {**tree, "traffic": [dict(e) for e in entries]}
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
