"""What `buflab serve` costs and how fast it goes: a measurement, not a test.

    .venv/bin/python scripts/bench_serve.py [SCENARIO] [--seconds S] [--pairs N]

1. Real time: a server on a free loopback port runs SCENARIO (by default the example
   dumbbell, 100 flows at 100 Mb/s) at real-time pace with one viewer connected for S wall
   seconds; prints the server process's CPU time over that span as a fraction of one core.
2. As fast as possible: the same scenario cut to S·10 simulated seconds, run by `buflab.run`
   (the engine's batch speed) and through the server at pace "max" (from the first update to
   the run's end, as the page sees it), alternately N times; prints simulated seconds per
   wall second of each and the median of the per-pair ratios.

The server runs as `buflab serve` in a child process, so its CPU time is its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

import buflab

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def start_server(scenario: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "buflab"), "serve", str(scenario)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = line.split()[2]
    return proc, url


async def drive(url: str, pace: str, duration: str, wall_s: float | None) -> dict:
    """Loads the given file, runs it at `pace`; with `wall_s`, for that long, else to its
    end. Returns the simulated seconds reached and the wall seconds taken."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "ws") as ws:
        await ws.send_json({"type": "load", "source": "file", "duration": duration})
        first = None
        began = None
        reached = 0.0
        async for msg in ws:
            m = json.loads(msg.data)
            if m["type"] == "loaded":
                await ws.send_json({"type": "pace", "value": pace})
                await ws.send_json({"type": "resume"})
            elif m["type"] == "update":
                if first is None:
                    first, began = m["t"], time.perf_counter()
                reached = m["t"]
                if wall_s is not None and time.perf_counter() - began >= wall_s:
                    break
            elif m["type"] == "state" and m["done"]:
                reached = m["end_s"]
                break
            elif m["type"] == "error":
                raise RuntimeError(m["message"])
        return {"simulated_s": reached - (first or 0.0), "wall_s": time.perf_counter() - began}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default=str(ROOT / "examples" / "dumbbell.toml"))
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    scenario = Path(args.scenario)

    proc, url = start_server(scenario)
    try:
        before = cpu_seconds(proc.pid)
        span = asyncio.run(drive(url, "1", "3600s", args.seconds))
        used = cpu_seconds(proc.pid) - before
    finally:
        proc.terminate()
        proc.wait()
    print(
        f"real time: {span['simulated_s']:.1f} simulated s in {span['wall_s']:.1f} wall s; "
        f"server CPU {used:.2f} s = {used / span['wall_s']:.1%} of one core"
    )

    duration = f"{args.seconds * 10:g}s"
    ratios = []
    for i in range(args.pairs):
        order = ("batch", "served") if i % 2 == 0 else ("served", "batch")
        speeds = {}
        for kind in order:
            if kind == "batch":
                r = buflab.run(scenario, overrides={"duration": duration})
                speeds[kind] = args.seconds * 10 / r.summary["wall_s"]
            else:
                proc, url = start_server(scenario)
                try:
                    run = asyncio.run(drive(url, "max", duration, None))
                finally:
                    proc.terminate()
                    proc.wait()
                speeds[kind] = run["simulated_s"] / run["wall_s"]
        ratios.append(speeds["served"] / speeds["batch"])
        print(
            f"pair {i + 1}: batch {speeds['batch']:.1f}, served {speeds['served']:.1f} "
            f"simulated s per wall s ({ratios[-1]:.1%})"
        )
    print(f"as fast as possible: median {statistics.median(ratios):.1%} of the batch speed")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
