#!/usr/bin/env python3
"""Cross-check the `linux` profile against real Linux TCP: the simulator and the emulator side
by side, with the RFC-era variants beside them.

Two sets of points, each run in simulation (`tcp = "linux"` with `cc = "reno"` and `"cubic"`,
and the RFC variants `reno`, `newreno` and `sack` with `cc = "reno"`, `sack` with `"cubic"`)
and in emulation (`buflab emulate`: the kernel's own TCP, Reno and CUBIC, in network
namespaces behind the simulator's own bottleneck code):

- `dumbbell`: the README's 100 long-lived flows through 100 Mb/s, RTT 75–125 ms, 1500-byte
  packets, 30 s with 10 s of warm-up, buffers 10 … 1,250 packets (RTT·C = 833);
- `grid`: 155 Mb/s, 1 Gb/s access, RTT 75–125 ms, 1500 B, starts over 10 s, 100, 200 and 400
  flows at buffers of 0.5, 1 and 2 × RTT·C/√N (RTT·C = 1,292 packets), 60 s with 20 s of
  warm-up;
- `star`: the equal-RTT star of a Mininet course reproduction, 62.5 Mb/s, 1 Gb/s access, every
  RTT exactly 87 ms (and, beside it, 80–94 ms), 1500 B, starts over 2 s, 60 s with 20 s of
  warm-up, 100 and 200 flows at 24 and 48 packets, Reno and CUBIC (the course used BIC, which
  this kernel lacks): real hosts' timing noise against the model's `jitter`.

    sudo .venv/bin/python validation/linux_crosscheck.py --points dumbbell
    sudo .venv/bin/python validation/linux_crosscheck.py --points grid
    sudo .venv/bin/python validation/linux_crosscheck.py --points grid --sim-only

Every run is one seed (`--seed`, 1). The emulator is timed by the machine's clock, and other
work on the machine delays its frames: each emulation waits until the one-minute load average
is below `--max-load` (at most `--wait` seconds), and one that its own fidelity check calls
unfaithful (fewer than 99 % of the bottleneck's frames within 10 µs of their ideal time) is run
again, up to `--retries` times; the table keeps the most faithful run and says whether it
passed. Results go to `--out` (default `out/linux-crosscheck`): `runs.csv` (one row per run,
kept across invocations: a run already there with the same settings is not made again) and
`table.md`. The simulator's side takes seconds; the emulator's, each point's duration in
real time plus set-up.

Figures, each over the measured window: utilization, drop rate (drops ÷ arrivals at the
bottleneck), timeouts per second (retransmission timeouts of all flows ÷ measured seconds; the
kernel's own count, `tcpi_total_rto`, in emulation) and retransmissions per drop.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# (label, tcp, cc) of the simulated variants.
SIM_VARIANTS = [
    ("linux reno", "linux", "reno"),
    ("linux cubic", "linux", "cubic"),
    ("sack reno", "sack", "reno"),
    ("sack cubic", "sack", "cubic"),
    ("newreno reno", "newreno", "reno"),
    ("reno reno", "reno", "reno"),
]
# The emulated ones: the kernel's Reno and CUBIC, with a default Linux host's settings (the
# `linux` profile's, which the emulator maps to the kernel's own).
EMU_VARIANTS = [("Linux reno", "linux", "reno"), ("Linux cubic", "linux", "cubic")]
FIGURES = ("utilization", "drop_rate", "timeouts_per_s", "retransmits_per_drop")
FAITHFUL = 0.99


def dumbbell_points() -> list[dict[str, Any]]:
    base = {
        "name": "linux-crosscheck-dumbbell",
        "duration": "30s",
        "warmup": "10s",
        "network": {
            "topology": "dumbbell",
            "bottleneck": {"rate": "100Mbps", "buffer": "10pkt"},
            "access": {"rate": "1Gbps"},
            "rtt": "75ms..125ms",
        },
        "traffic": [
            {"kind": "long_lived", "flows": 100, "packet": "1500B", "start": "0s..5s"},
        ],
    }
    points = []
    for b in (10, 25, 50, 83, 250, 833, 1250):
        p = _copy(base)
        p["network"]["bottleneck"]["buffer"] = f"{b}pkt"
        points.append({"point": f"100 flows, {b} pkt", "flows": 100, "buffer_pkts": b, "tree": p})
    return points


def grid_points() -> list[dict[str, Any]]:
    rate, rtt, packet = 155e6, 0.1, 1500
    rtt_c = rate * rtt / (8 * packet)
    points = []
    for n in (100, 200, 400):
        for k in (0.5, 1, 2):
            b = max(1, round(k * rtt_c / math.sqrt(n)))
            tree = {
                "name": "linux-crosscheck-grid",
                "duration": "60s",
                "warmup": "20s",
                "network": {
                    "topology": "dumbbell",
                    "bottleneck": {"rate": "155Mbps", "buffer": f"{b}pkt"},
                    "access": {"rate": "1Gbps"},
                    "rtt": "75ms..125ms",
                },
                "traffic": [
                    {"kind": "long_lived", "flows": n, "packet": "1500B", "start": "0s..10s"}
                ],
            }
            label = f"{n} flows, {k:g}×RTT·C/√N = {b} pkt"
            points.append({"point": label, "flows": n, "buffer_pkts": b, "tree": tree})
    return points


def star_points() -> list[dict[str, Any]]:
    points = []
    for rtt in ("87ms", "80ms..94ms"):
        for n in (100, 200):
            for b in (24, 48):
                tree = {
                    "name": "linux-crosscheck-star",
                    "duration": "60s",
                    "warmup": "20s",
                    "network": {
                        "topology": "dumbbell",
                        "bottleneck": {"rate": "62.5Mbps", "buffer": f"{b}pkt"},
                        "access": {"rate": "1Gbps"},
                        "rtt": rtt,
                    },
                    "traffic": [
                        {"kind": "long_lived", "flows": n, "packet": "1500B", "start": "0s..2s"}
                    ],
                }
                label = f"RTT {rtt}, {n} flows, {b} pkt"
                points.append({"point": label, "flows": n, "buffer_pkts": b, "tree": tree})
    return points


# The star's variants: the linux profile with its own host jitter (100 µs), none, and 1 ms,
# and the RFC-era SACK sender without jitter; Reno and CUBIC each.
STAR_SIM_VARIANTS = [
    (f"{tcp} {cc}{suffix}", tcp, cc, *jitter)
    for cc in ("reno", "cubic")
    for tcp, suffix, jitter in (
        ("linux", "", ()),
        ("linux", ", jitter 0", ("0s",)),
        ("linux", ", jitter 1ms", ("1ms",)),
        ("sack", "", ()),
    )
]
STAR_EMU_VARIANTS = EMU_VARIANTS


def _copy(tree: dict[str, Any]) -> dict[str, Any]:
    import copy

    return copy.deepcopy(tree)


def with_variant(
    tree: dict[str, Any], tcp: str, cc: str, seed: int, jitter: str | None = None
) -> dict[str, Any]:
    t = _copy(tree)
    t["seed"] = seed
    t["traffic"][0]["tcp"] = tcp
    t["traffic"][0]["cc"] = cc
    if jitter is not None:
        t["traffic"][0]["jitter"] = jitter
    return t


def figures(summary: dict[str, Any]) -> dict[str, float]:
    return {
        "utilization": float(summary["utilization"]),
        "drop_rate": float(summary["drop_rate"]),
        "timeouts_per_s": float(summary["timeouts"]) / float(summary["measured_s"]),
        "retransmits_per_drop": float(summary["retransmits_per_drop"]),
    }


def load_avg() -> float:
    return os.getloadavg()[0]


def wait_for_quiet(max_load: float, wait_s: float) -> float:
    """Waits until the 1-minute load average is below `max_load` (at most `wait_s`)."""
    deadline = time.monotonic() + wait_s
    while load_avg() >= max_load and time.monotonic() < deadline:
        time.sleep(15)
    return load_avg()


def key_of(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (row["set"], row["point"], row["side"], row["variant"])


def read_runs(path: Path) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    if not path.exists():
        return {}
    with path.open() as f:
        return {key_of(r): r for r in csv.DictReader(f)}


COLUMNS = [
    "set", "point", "flows", "buffer_pkts", "side", "variant", "seed", *FIGURES,
    "faithful", "late_within_10us", "load_before", "attempts", "wall_s",
]  # fmt: skip


def write_runs(path: Path, runs: dict[tuple[str, str, str, str], dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in runs.values():
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    tmp.replace(path)


def simulate(tree: dict[str, Any]) -> dict[str, Any]:
    import buflab

    began = time.monotonic()
    r = buflab.run(tree)
    out = figures(r.summary)
    out["wall_s"] = time.monotonic() - began
    return out


def emulate(tree: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    import buflab

    best: dict[str, Any] | None = None
    for attempt in range(1, args.retries + 2):
        load = wait_for_quiet(args.max_load, args.wait)
        began = time.monotonic()
        r = buflab.emulate(tree)
        s = r.summary
        run = figures(s)
        run.update(
            faithful=bool(s["faithful"]),
            late_within_10us=float(s["late_within_10us"]),
            load_before=load,
            attempts=attempt,
            wall_s=time.monotonic() - began,
        )
        print(
            f"    attempt {attempt}: {run['late_within_10us']:.1%} within 10 µs "
            f"(load {load:.1f}), utilization {run['utilization']:.2%}",
            flush=True,
        )
        if best is None or run["late_within_10us"] > best["late_within_10us"]:
            best = run
        if run["faithful"]:
            break
    assert best is not None
    best["attempts"] = attempt
    return best


def table(runs: dict[tuple[str, str, str, str], dict[str, Any]], name: str) -> str:
    """One markdown table per set: a row per point and variant, emulation first."""
    rows = [r for r in runs.values() if r["set"] == name]
    points = list(dict.fromkeys(r["point"] for r in rows))
    order = list(dict.fromkeys(v[0] for v in (*EMU_VARIANTS, *SIM_VARIANTS, *STAR_SIM_VARIANTS)))
    lines = [
        "| point | variant | utilization % | drop % | timeouts/s | retransmits/drop | fidelity |",
        "| :--- | :--- | ---: | ---: | ---: | ---: | :--- |",
    ]
    for p in points:
        here = {r["variant"]: r for r in rows if r["point"] == p}
        for v in order:
            r = here.get(v)
            if r is None:
                continue
            fid = ""
            if r["side"] == "emulated":
                ok = str(r["faithful"]) == "True"
                fid = f"{float(r['late_within_10us']):.1%} ≤ 10 µs{'' if ok else ' (not faithful)'}"
            lines.append(
                f"| {p} | {v} | {float(r['utilization']) * 100:.2f} | "
                f"{float(r['drop_rate']) * 100:.3f} | {float(r['timeouts_per_s']):.2f} | "
                f"{float(r['retransmits_per_drop']):.3f} | {fid} |"
            )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", choices=["dumbbell", "grid", "star"], default="dumbbell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sim-only", action="store_true", help="leave out the emulations")
    parser.add_argument("--emu-only", action="store_true", help="leave out the simulations")
    parser.add_argument("--retries", type=int, default=2, help="reruns of an unfaithful emulation")
    parser.add_argument("--max-load", type=float, default=1.5, help="load average to wait for")
    parser.add_argument("--wait", type=float, default=600.0, help="the longest wait, seconds")
    parser.add_argument("--only", default="", help="run only points whose label contains this")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "linux-crosscheck")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    csv_path = args.out / "runs.csv"
    runs = read_runs(csv_path)
    points = {"dumbbell": dumbbell_points, "grid": grid_points, "star": star_points}[args.points]()
    sims, emus = (
        (STAR_SIM_VARIANTS, STAR_EMU_VARIANTS)
        if args.points == "star"
        else (SIM_VARIANTS, EMU_VARIANTS)
    )
    todo = []
    for p in points:
        if args.only and args.only not in p["point"]:
            continue
        if not args.emu_only:
            todo += [(p, "simulated", v) for v in sims]
        if not args.sim_only:
            todo += [(p, "emulated", v) for v in emus]
    for p, side, (label, tcp, cc, *jitter) in todo:
        row = {"set": args.points, "point": p["point"], "side": side, "variant": label}
        if key_of(row) in runs and int(runs[key_of(row)]["seed"]) == args.seed:
            continue
        tree = with_variant(p["tree"], tcp, cc, args.seed, *jitter)
        print(f"{p['point']}: {label} ({side})", flush=True)
        result = simulate(tree) if side == "simulated" else emulate(tree, args)
        row.update(flows=p["flows"], buffer_pkts=p["buffer_pkts"], seed=args.seed, **result)
        runs[key_of(row)] = row
        write_runs(csv_path, runs)
    text = f"## {args.points}\n\n{table(runs, args.points)}\n"
    (args.out / f"table-{args.points}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
