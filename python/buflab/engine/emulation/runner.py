"""One emulation run: the testbed, the datapath, the traffic, the warm-up, the results.

Read first: `testbed` and `plan`. The processes run inside the run's namespaces: the sink in
the receiver, `buflab-datapath` in the router, the flows' sender in the sender. The run's time
0 is the sender's start (the datapath is told it as its `epoch`); the measured window starts
at the end of the warm-up (the datapath and the sender are told with SIGUSR1) and ends when
the sender stops at the scenario's duration; the datapath and the sink are stopped after it,
each printing its counts as JSON. Whatever happens (an error, Ctrl-C), the processes are
stopped and the namespaces removed before this returns or raises.

The result is a `Result`, as a simulated run's: the bottleneck's figures (summary, links row,
time series) come from replaying the datapath's event log through the simulator's own queue
monitor (`_core.replay_queue_log`), the flows' from each socket's `TCP_INFO` over the window;
the summary adds the emulation's own figures (`EMULATION_SUMMARY_COLUMNS`), and
`Result.emulation` keeps the datapath's report and the notes on mapped keys.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from buflab import __version__
from buflab.engine import ScenarioError, core, peak_rss_mib, scenario_json
from buflab.engine.emulation.plan import Plan, plan
from buflab.engine.emulation.testbed import (
    RECEIVER_IP,
    EmulationError,
    Testbed,
    remove_stale,
    require_privileges,
)
from buflab.engine.events import PS_PER_S, EventLogWriter, LogFacts
from buflab.engine.pcap import write_emulated
from buflab.engine.result import Result, table_dtypes, typed_frame
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


def _await_line(proc: subprocess.Popen[str], word: str, what: str, timeout: float = 10.0) -> str:
    """Waits until `proc` writes a line containing `word` on stderr; returns that line."""
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
                return line
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
    pcap_to: str | Path | None = None,
    while_running: Callable[[DatapathControl], None] | None = None,
    **kw: Any,
) -> Result:
    """Runs `scenario` on real Linux TCP (see the module doc) and returns its `Result`; raises
    ScenarioError for a scenario it cannot realise, EmulationError when the machine cannot run
    it. With `events_to`, the bottleneck's event log (the whole run, its measured window in its
    facts) is written there as the simulator writes its own (`buflab.engine.events`).
    `while_running`, if given, is called once the warm-up is over, with the datapath's
    control channel (read its counts, change the buffer live), while the flows run on. With
    `pcap_to` as well, the frames that reached the bottleneck's queue, exactly those the log
    lists as arriving, are written there as a packet capture (`buflab.engine.pcap`)."""
    if pcap_to is not None and events_to is None:
        raise ScenarioError("pcap_to: the capture lists the event log's arrivals; give events_to")
    require_privileges()
    remove_stale()
    tree = load_scenario(scenario, overrides=overrides, **kw)
    p = plan(tree, available_congestion_controls())
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix="buflab-emulate-") as scratch:
        files = _Scratch(Path(scratch))
        control = DatapathControl(files.control)
        with Testbed.for_this_process(offloads=p.offloads) as tb:
            try:
                capture = files.capture if pcap_to is not None else None
                reports = _run(tb, p, procs, files, control, while_running, capture)
            finally:
                for proc in procs:
                    if proc.poll() is None:
                        _stop(proc, signal.SIGKILL)
        result = _results(tree, p, files, *reports)
        if events_to is not None:
            result.events_facts = _facts(result, validate(tree))
            epoch_ps = result.emulation["epoch_ps"]
            result.events_file = write_event_log(
                files.events, Path(events_to), result.events_facts, epoch_ps
            )
            if pcap_to is not None:
                end_ps = result.events_facts.window_end_ps
                write_emulated(files.capture, Path(pcap_to), epoch_ps, end_ps)
    return result


@dataclass
class _Scratch:
    """A run's working files: the datapath's raw event log, its control socket, the traces."""

    root: Path

    @property
    def events(self) -> Path:
        return self.root / "events.bin"

    @property
    def control(self) -> Path:
        return self.root / "control.sock"

    @property
    def traces(self) -> Path:
        return self.root / "traces.csv"

    @property
    def capture(self) -> Path:
        return self.root / "capture.bin"


def _facts(result: Result, validated: dict[str, Any]) -> LogFacts:
    """What reading the log needs: the measured window and the queue, as the result has them."""
    s = result.summary
    return LogFacts(
        rate_bps=int(s["bottleneck_rate_bps"]),
        window_start_ps=round(s["window_start_s"] * PS_PER_S),
        window_end_ps=round(s["window_end_s"] * PS_PER_S),
        interval_ps=round(parse_time(validated["monitor"]["interval"]) * PS_PER_S),
        buffer_pkts=LogFacts.limit(s["buffer_pkts"]),
        buffer_bytes=LogFacts.limit(s["buffer_bytes"]),
        link="bottleneck",
        scenario=str(s["name"]),
        seed=int(s["seed"]),
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


def write_event_log(raw: Path, path: Path, facts: LogFacts, epoch_ps: int) -> Path:
    """The datapath's raw log as the simulator's Parquet event log, batch by batch, its times
    from the run's time 0 (`epoch_ps` on the monotonic clock; anything earlier at 0), up to
    the end of the measured window (a simulated run's log ends with the run)."""
    writer = EventLogWriter(path)
    size = raw.stat().st_size if raw.exists() else 0
    rows = np.memmap(raw, dtype=_RAW_ROW, mode="r") if size else np.empty(0, _RAW_ROW)
    for at in range(0, len(rows), _BATCH):
        batch = rows[at : at + _BATCH]
        times = batch["time_ps"].astype(np.uint64)
        times = np.where(times > epoch_ps, times - np.uint64(epoch_ps), np.uint64(0))
        keep = times <= np.uint64(facts.window_end_ps)
        columns = {
            name: np.ascontiguousarray(batch[name][keep]).tobytes() for name in _RAW_ROW.names
        }
        columns["time_ps"] = times[keep].astype("<u8").tobytes()
        writer(columns)
        if not keep.all():
            break
    return writer.close(facts)


def _run(
    tb: Testbed,
    p: Plan,
    procs: list[subprocess.Popen[str]],
    files: _Scratch,
    control: DatapathControl,
    while_running: Callable[[DatapathControl], None] | None,
    capture: Path | None = None,
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

    sink_args = ["--window-clamp", str(p.max_window), *(["--quickack"] if p.quickack else [])]
    sink = start(tb.receiver, traffic, "sink", "--listen", f"{RECEIVER_IP}:{PORT}", *sink_args)
    _await_line(sink, "listening", "the sink")
    if p.ecn:
        # RFC 3168 ECN asked for on every connection (the receiver's default, 2, answers it).
        tb.write_in(tb.sender, "/proc/sys/net/ipv4/tcp_ecn", "1")
    left, right = tb.router_ports
    queue = ["--queue", p.queue, "--packet", str(p.packet), "--seed", str(p.seed)]
    for key, value in p.queue_params.items():
        queue += ["--param", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    if p.loss > 0:
        queue += ["--loss", repr(p.loss)]
    if p.offloads:
        queue += ["--offloads"]
    if capture is not None:
        queue += ["--capture", str(capture)]
    dp = start(
        tb.router, datapath, "--left", left, "--right", right,
        "--rate", f"{p.rate_bps}bps", "--buffer", p.buffer, "--access-rate", p.access_rate,
        *CPU, *queue, "--events", str(files.events), "--control", str(control.path),
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
    if p.trace_flows:
        send += [
            "--trace", ",".join(map(str, p.trace_flows)),
            "--trace-interval", f"{p.trace_interval_s}", "--trace-to", str(files.traces),
        ]  # fmt: skip
    sender = start(tb.sender, *send)
    began_ps = _await_line(sender, "began at", "the sender")
    # The run's time 0 on the datapath's clock: its log and reports count from the traffic's
    # start, as a simulated run's do.
    began_ps = int(began_ps.split("began at ")[1].split()[0])
    control.ask(f"epoch {began_ps}")
    time.sleep(max(0.0, began_ps / PS_PER_S + p.warmup_s - time.monotonic()))
    dp.send_signal(signal.SIGUSR1)
    sender.send_signal(signal.SIGUSR1)
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


def _results(
    tree: dict[str, Any], p: Plan, files: _Scratch, sent: dict, dp: dict, sink: dict
) -> Result:
    validated = validate(tree)
    epoch = int(dp["epoch_ps"])
    window_start_ps = int(dp["window"]["start_ps"])
    # The senders ran until at least the scenario's duration; the window ends there, as a
    # simulated run's does.
    ended_ps = int(sent["ended_clock_ps"]) - epoch
    window_end_ps = max(window_start_ps, min(ended_ps, round(p.duration_s * PS_PER_S)))
    interval_ps = round(parse_time(validated["monitor"]["interval"]) * PS_PER_S)
    raw = core().replay_queue_log(
        scenario_json(tree), str(files.events), p.rate_bps, str(dp["buffer_at_end"]),
        window_start_ps, window_end_ps, interval_ps, epoch,
    )  # fmt: skip
    result = Result.from_engine(raw, tree)
    measured_s = (window_end_ps - window_start_ps) / PS_PER_S
    result.flows = _flows(p, sent["flows"], measured_s)
    if p.trace_flows:
        result.traces = typed_frame(
            pd.read_csv(files.traces).to_dict("list"), table_dtypes("traces")
        )
    s = result.summary
    flows = result.flows
    goodput = flows["goodput_bps"]
    square = float((goodput**2).sum())
    retransmits = int(flows["retransmits"].sum())
    lost = int(dp["window"]["lost"])
    s.update(
        goodput_bps=float(goodput.sum()),
        jain_fairness=float(goodput.sum() ** 2 / (len(goodput) * square)) if square > 0 else 0.0,
        retransmits=retransmits,
        timeouts=int(flows["timeouts"].sum()),
        # The losses retransmissions answer: the buffer's and the random loss's.
        retransmits_per_drop=retransmits / losses if (losses := s["drops"] + lost) else 0.0,
        flows=len(flows),
        wall_s=float(dp["elapsed_s"]),
        rtt_mean_s=float(np.mean(p.rtts_s)) if p.rtts_s else 0.0,
        loss_drops=lost,
        peak_rss_mib=peak_rss_mib(),
    )
    window = dp["window"]
    held = dp["waiting_at_end"] + dp["in_access_links_at_end"]
    limit_pkts = _buffer_limits(str(dp["buffer_at_end"]))[0]  # byte limits: checked in Rust
    exact = dp["received_fwd"] == dp["departures"] + dp["drops"] + dp["lost"] + held
    s.update(
        emulated=True,
        window_start_s=window_start_ps / PS_PER_S,
        window_end_s=window_end_ps / PS_PER_S,
        cc=p.cc,
        mss=p.mss,
        sink_bytes=int(sum(sink["received"])),
        exact_buffer=bool(exact) and (limit_pkts < 0 or dp["max_waiting"] <= limit_pkts),
        overruns=int(dp["overruns"]),
        late_within_1us=window["late_within_1us"],
        late_within_10us=window["late_within_10us"],
        late_p99_s=window["late_p99_s"],
        datapath_busy_share=dp["busy_turns"] / dp["turns"] if dp["turns"] else 0.0,
        faithful=window["late_within_10us"] >= FAITHFUL_WITHIN_10US and dp["overruns"] == 0,
        # Packets that went through a kernel queue on any of the run's interfaces: none, as
        # every one has `noqueue` (the datapath's buffer is the only one on the path).
        kernel_queue_packets=int(dp["kernel_queues"]["packets"]),
        kernel_qdiscs=",".join(dp["kernel_queues"]["kinds"]),
        timeouts_known=bool(sent.get("timeouts_known", False)),
    )
    result.emulation = {"datapath": dp, "notes": list(p.notes), "epoch_ps": epoch}
    return result


def _flows(p: Plan, sockets: list[dict[str, Any]], measured_s: float) -> pd.DataFrame:
    """The flows table: each flow's identity as the simulator drew it (its tables' own rows),
    and what its socket's TCP_INFO counted over the measured window."""
    rows = []
    for flow, sock in zip(p.flows, sockets, strict=True):
        delivered = int(sock["bytes_acked_window"])
        rows.append(
            {
                **flow,
                "goodput_bps": delivered * 8 / measured_s if measured_s > 0 else 0.0,
                "delivered_bytes": delivered,
                "sent_packets": int(sock["data_segs_out_window"]),
                "retransmits": int(sock["retransmits_window"]),
                "timeouts": int(sock["timeouts_window"]),
                "ecn_reactions": 0,
                "cwnd_pkts": float(sock["cwnd_pkts"]),
                "ssthresh_pkts": float(min(sock["ssthresh_pkts"], 2**31 - 1)),
                "srtt_s": float(sock["srtt_s"]),
                # Beyond the simulator's columns: what only a real socket knows.
                "min_rtt_s": float(sock["min_rtt_s"]),
                "bytes_acked": int(sock["bytes_acked"]),
                "error": sock["error"],
            }
        )
    return typed_frame(pd.DataFrame(rows).to_dict("list"), table_dtypes("flows"))


def _buffer_limits(buffer: str) -> tuple[int, int]:
    """The buffer as (packets, bytes), -1 for the unit it is not in (and both for unlimited),
    as the event log's facts give it."""
    if buffer.endswith("pkt"):
        return int(buffer[:-3]), -1
    return -1, (-1 if buffer == "unlimited" else int(parse_bytes(buffer)))
