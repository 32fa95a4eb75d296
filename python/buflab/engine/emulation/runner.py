"""One emulation run: the testbed, the datapath, the traffic, the warm-up, the results.

Read first: `testbed` and `plan`. The processes run inside the run's namespaces: the sink in
the receiver, `buflab-datapath` in the router, the flows' sender in the sender. The measured
window starts at the end of the warm-up (the datapath is told with SIGUSR1); the sender stops
at the scenario's duration, and the datapath and the sink are stopped after it, each printing
its counts as JSON. Whatever happens (an error, Ctrl-C), the processes are stopped and the
namespaces removed before this returns or raises.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from buflab import __version__
from buflab.engine.emulation.plan import Plan, plan
from buflab.engine.emulation.testbed import (
    RECEIVER_IP,
    EmulationError,
    Testbed,
    remove_stale,
    require_privileges,
)
from buflab.engine.events import PS_PER_S, EventLogWriter, LogFacts
from buflab.engine.runner import load_scenario, validate
from buflab.engine.scenario import Overrides, ScenarioSource
from buflab.engine.units import parse_bytes, parse_time

PORT = 5001
# The datapath busy-polls on the last CPU, the rest of the run on the others.
CPU = ["--cpu", str(os.cpu_count() - 1)] if (os.cpu_count() or 1) > 1 else []
PORT_BASE = 40_000
# Fidelity: the share of frames that must leave within 10 µs of their ideal time for the run
# to be called faithful (Mininet-HiFi's test, on our own clock).
FAITHFUL_WITHIN_10US = 0.99


@dataclass
class Emulation:
    """An emulation's results: the summary, the flows (from each socket's TCP_INFO), the
    datapath's own report, and the notes on keys mapped to their nearest Linux setting."""

    summary: dict[str, Any]
    flows: pd.DataFrame
    datapath: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_dir(self, out: str | Path) -> Path:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        (out / "datapath.json").write_text(json.dumps(self.datapath, indent=2) + "\n")
        self.flows.to_parquet(out / "flows.parquet", index=False)
        return out


def binary(name: str) -> str:
    """A binary of the `buflab-emu` crate: beside this Python (scripts/setup puts it there), or
    in the source tree's cargo target."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    tree = Path(__file__).resolve().parents[4] / "target" / "release" / name
    if tree.exists():
        return str(tree)
    raise EmulationError(f"emulate: {name} not found; `bash scripts/setup` builds it")


def available_congestion_controls() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return ["reno", "cubic"]


class DatapathControl:
    """The datapath's control channel (a Unix socket; see the `control` module of the
    `buflab-emu` crate): its counts now, and its buffer changed live."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def ask(self, command: str) -> dict[str, Any]:
        """Sends one command and returns the datapath's JSON answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5.0)
            s.connect(str(self.path))
            s.sendall(command.encode() + b"\n")
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        reply = json.loads(answer or b"{}")
        if "error" in reply:
            raise EmulationError(f"datapath: {reply['error']}")
        return reply

    def counts(self) -> dict[str, Any]:
        """Arrivals, drops and departures so far, frames waiting, and the buffer in force."""
        return self.ask("counts")

    def set_buffer(self, limit: str) -> dict[str, Any]:
        """A new buffer ("50pkt", "30000B") from now on; returns it as the datapath reads it
        (`buffer`) and when it took effect on the event log's clock (`time_ps`)."""
        return self.ask(f"buffer {limit}")


def _off_the_datapaths_cpu() -> None:
    """Keeps a traffic process off the CPU the datapath busy-polls on."""
    others = set(range((os.cpu_count() or 1) - 1))
    if others:
        os.sched_setaffinity(0, others)


def _await_line(proc: subprocess.Popen[str], word: str, what: str, timeout: float = 10.0) -> None:
    """Waits until `proc` writes a line containing `word` on stderr."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.1)
        if ready:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line.strip())
            if word in line:
                return
        elif proc.poll() is not None:
            break
    raise EmulationError(
        f"emulate: {what} did not start: {' '.join(s for s in seen if s) or 'no output'}"
    )


def _stop(proc: subprocess.Popen[str] | None, sig: int = signal.SIGTERM) -> str:
    """Stops `proc` with `sig` (then kills it if it lingers); returns what it printed."""
    if proc is None:
        return ""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out or ""


def _json(text: str, what: str) -> dict[str, Any]:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise EmulationError(f"emulate: {what} reported nothing")


def emulate(
    scenario: ScenarioSource,
    *,
    overrides: Overrides = None,
    events_to: str | Path | None = None,
    while_running: Callable[[DatapathControl], None] | None = None,
    **kw: Any,
) -> Emulation:
    """Runs `scenario` on real Linux TCP (see the module doc); raises ScenarioError for a
    scenario it cannot realise, EmulationError when the machine cannot run it. With
    `events_to`, the bottleneck's event log (the whole run, its measured window in its facts)
    is written there as the simulator writes its own (`buflab.engine.events`).
    `while_running`, if given, is called once the warm-up is over, with the datapath's
    control channel (read its counts, change the buffer live), while the flows run on."""
    require_privileges()
    remove_stale()
    tree = load_scenario(scenario, overrides=overrides, **kw)
    p = plan(tree, available_congestion_controls())
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="buflab-emulate-") as scratch:
        raw = Path(scratch) / "events.bin" if events_to is not None else None
        control = DatapathControl(Path(scratch) / "control.sock")
        with Testbed.for_this_process(offloads=False) as tb:
            try:
                reports = _run(tb, p, procs, raw, control, while_running)
            finally:
                for proc in procs:
                    if proc.poll() is None:
                        _stop(proc, signal.SIGKILL)
        result = _results(tree, p, *reports)
        if raw is not None and events_to is not None:
            write_event_log(raw, Path(events_to), _facts(tree, p, result.datapath))
    return result


def _facts(tree: dict[str, Any], p: Plan, dp: dict[str, Any]) -> LogFacts:
    """What reading the log needs: the datapath's window and the scenario's queue."""
    validated = validate(tree)
    packets, size = _buffer_limits(p.buffer)
    return LogFacts(
        rate_bps=p.rate_bps,
        window_start_ps=int(dp["window"]["start_ps"]),
        window_end_ps=int(dp["window"]["end_ps"]),
        interval_ps=round(parse_time(validated["monitor"]["interval"]) * PS_PER_S),
        buffer_pkts=packets,
        buffer_bytes=size,
        link="bottleneck",
        scenario=str(tree.get("name", "")),
        seed=int(tree.get("seed", 1)),
        version=__version__,
    )


# One row of the datapath's raw log (`LogRow::write_to` in the buflab-emu crate).
_RAW_ROW = np.dtype(
    [
        ("time_ps", "<u8"),
        ("event", "u1"),
        ("flow", "<u4"),
        ("seq", "<u4"),
        ("size", "<u4"),
        ("queue_pkts", "<u8"),
        ("queue_bytes", "<u8"),
    ]
)
_BATCH = 250_000


def write_event_log(raw: Path, path: Path, facts: LogFacts) -> Path:
    """The datapath's raw log as the simulator's Parquet event log, batch by batch."""
    writer = EventLogWriter(path)
    size = raw.stat().st_size if raw.exists() else 0
    rows = np.memmap(raw, dtype=_RAW_ROW, mode="r") if size else np.empty(0, _RAW_ROW)
    for at in range(0, len(rows), _BATCH):
        batch = rows[at : at + _BATCH]
        writer({name: np.ascontiguousarray(batch[name]).tobytes() for name in _RAW_ROW.names})
    return writer.close(facts)


def _run(
    tb: Testbed,
    p: Plan,
    procs: list[subprocess.Popen[str]],
    events: Path | None,
    control: DatapathControl,
    while_running: Callable[[DatapathControl], None] | None,
) -> tuple[dict, dict, dict]:
    traffic, datapath = binary("buflab-traffic"), binary("buflab-datapath")

    def start(ns: str, *argv: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            tb.exec_args(ns, *argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=None if argv[0] == datapath else _off_the_datapaths_cpu,
        )
        procs.append(proc)
        return proc

    clamp = ["--window-clamp", str(p.max_window)]
    sink = start(tb.receiver, traffic, "sink", "--listen", f"{RECEIVER_IP}:{PORT}", *clamp)
    _await_line(sink, "listening", "the sink")
    left, right = tb.router_ports
    dp = start(
        tb.router, datapath, "--left", left, "--right", right,
        "--rate", f"{p.rate_bps}bps", "--buffer", p.buffer, "--access-rate", p.access_rate,
        *CPU, *(["--events", str(events)] if events is not None else []),
        "--control", str(control.path),
        "--port-base", str(PORT_BASE), "--rtts", ",".join(f"{r:.12f}" for r in p.rtts_s),
    )  # fmt: skip
    _await_line(dp, "ready", "the datapath")
    send = [
        traffic, "send", "--to", f"{RECEIVER_IP}:{PORT}",
        "--starts", ",".join(f"{s:.9f}" for s in p.starts_s),
        "--duration", f"{p.duration_s}", "--cc", p.cc, "--mss", str(p.mss),
        "--port-base", str(PORT_BASE),
    ]  # fmt: skip
    if p.pacing_bps is not None:
        send += ["--pacing-bps", str(p.pacing_bps or 2**63)]
    began = time.monotonic()
    sender = start(tb.sender, *send)
    time.sleep(max(0.0, p.warmup_s - (time.monotonic() - began)))
    dp.send_signal(signal.SIGUSR1)
    if while_running is not None:
        while_running(control)
    try:
        sent, err = sender.communicate(timeout=p.duration_s + 30)
    except subprocess.TimeoutExpired:
        raise EmulationError("emulate: the sender did not finish in time") from None
    if sender.returncode != 0:
        raise EmulationError(f"emulate: the sender failed: {err.strip()}")
    reports = (
        _json(sent, "the sender"),
        _json(_stop(dp), "the datapath"),
        _json(_stop(sink), "the sink"),
    )
    reports[1]["kernel_queues"] = tb.kernel_queues()
    return reports


def _results(tree: dict[str, Any], p: Plan, sent: dict, dp: dict, sink: dict) -> Emulation:
    window = dp["window"]
    flows = pd.DataFrame(sent["flows"])
    flows["rtt_s"] = p.rtts_s
    alive = (p.duration_s - flows["start_s"]).clip(lower=1e-9)
    flows["goodput_bps"] = flows["bytes_acked"] * 8 / alive
    shares = flows["goodput_bps"][flows["start_s"] < p.duration_s]
    jain = (
        float(shares.sum() ** 2 / (len(shares) * (shares**2).sum()))
        if (shares > 0).any()
        else float("nan")
    )
    held = dp["waiting_at_end"] + dp["in_access_links_at_end"]
    limit_pkts = _buffer_limits(p.buffer)[0]  # byte limits the datapath checks itself
    exact = dp["received_fwd"] == dp["departures"] + dp["drops"] + held
    summary = {
        "name": tree.get("name", ""),
        "seed": int(tree.get("seed", 1)),
        "emulated": True,
        "duration_s": p.duration_s,
        "warmup_s": p.warmup_s,
        "measured_s": window["seconds"],
        "utilization": window["utilization"],
        "bottleneck_rate_bps": p.rate_bps,
        "buffer": p.buffer,
        "drop_rate": window["drops"] / window["arrivals"] if window["arrivals"] else 0.0,
        "drops": window["drops"],
        "arrivals": window["arrivals"],
        "mean_queue_pkts": window["mean_queue_pkts"],
        "max_queue_pkts": window["max_queue_pkts"],
        "flows": len(flows),
        "jain_fairness": jain,
        "retransmits": int(flows["total_retrans"].sum()),
        "cc": p.cc,
        "mss": p.mss,
        "sink_bytes": int(sum(sink["received"])),
        "exact_buffer": bool(exact) and (limit_pkts < 0 or dp["max_waiting"] <= limit_pkts),
        "overruns": dp["overruns"],
        "late_within_1us": window["late_within_1us"],
        "late_within_10us": window["late_within_10us"],
        "late_p99_s": window["late_p99_s"],
        "faithful": window["late_within_10us"] >= FAITHFUL_WITHIN_10US and dp["overruns"] == 0,
        # Packets that went through a kernel queue on any of the run's interfaces: none, as
        # every one has `noqueue` (the datapath's buffer is the only one on the path).
        "kernel_queue_packets": int(dp["kernel_queues"]["packets"]),
        "kernel_qdiscs": ",".join(dp["kernel_queues"]["kinds"]),
    }
    return Emulation(summary, flows, dp, p.notes)


def _buffer_limits(buffer: str) -> tuple[int, int]:
    """The buffer as (packets, bytes), -1 for the unit it is not in (and both for unlimited),
    as the event log's facts give it."""
    if buffer.endswith("pkt"):
        return int(buffer[:-3]), -1
    return -1, (-1 if buffer == "unlimited" else int(parse_bytes(buffer)))
