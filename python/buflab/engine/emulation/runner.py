"""One emulation run: the testbed, the datapath, the traffic, the warm-up, the results.

Read first: `testbed` and `plan`. The processes run inside the run's namespaces:
`buflab-datapath` in the router, the traffic generator (`buflab-traffic`) once per sender
machine (`host`: long-lived senders, users' servers, UDP sources) and once in the receiver
(`receiver`: the sink, the users' clients, the UDP sink). Once each has said it is ready,
every one is given the same time 0 on the monotonic clock (the datapath as its `epoch`), so
every start time, the measured window (from the warm-up on; the datapath is told with
SIGUSR1) and the end (the scenario's duration) are the same instants everywhere; the traffic
processes stop at the end, the datapath after them, each printing its report as JSON.
Whatever happens (an error, Ctrl-C), the processes are stopped and the namespaces removed
before this returns or raises.

The result is a `Result`, as a simulated run's: the bottleneck's figures (summary, links row,
time series) come from replaying the datapath's event log through the simulator's own queue
monitor (`_core.replay_queue_log`), the flows' from each connection's `TCP_INFO` over the
window (a user's: its connections' summed), the transfers table from the clients (when each
download began and its last byte arrived) and the servers (its retransmissions), the bumps
and rates tables from the datapath, whose bumps ran the simulator's code and made their rows
with its functions; the summary
adds the emulation's own figures (`EMULATION_SUMMARY_COLUMNS`), and `Result.emulation` keeps
the processes' reports and the notes on mapped keys.
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from buflab import __version__
from buflab.engine import ScenarioError, core, peak_rss_mib, scenario_json
from buflab.engine.emulation.autosize import LiveAutoSizer
from buflab.engine.emulation.plan import UDP_KINDS, Plan, plan
from buflab.engine.emulation.testbed import (
    EmulationError,
    Testbed,
    remove_stale,
    require_privileges,
    scratch_prefix,
)
from buflab.engine.events import PS_PER_S, EventLogWriter, LogFacts
from buflab.engine.pcap import write_emulated
from buflab.engine.result import Result, table_dtypes, typed_frame
from buflab.engine.runner import load_scenario, validate
from buflab.engine.scenario import Overrides, ScenarioSource
from buflab.engine.units import parse_bytes, parse_time

# The datapath busy-polls on the last CPU, the rest of the run on the others.
CPU = ["--cpu", str(os.cpu_count() - 1)] if (os.cpu_count() or 1) > 1 else []
# Fidelity: the share of frames that must leave within 10 µs of their ideal time for the run
# to be called faithful (Mininet-HiFi's test, on our own clock); and the lateness the traffic
# generator's timers must keep to, at the 99th percentile (a user's request or a datagram a
# millisecond late is below what the round trips of the seeds' scenarios can tell).
FAITHFUL_WITHIN_10US = 0.99
# The traffic generator's priority (the datapath's is -20, see `_first_in_line`).
GENERATOR_NICE = -10
GENERATOR_FAITHFUL_P99_S = 1e-3
# How long after the last process says it is ready time 0 is: time for the `go` lines to
# reach them all.
START_MARGIN_S = 0.2


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


class ControlChannel:
    """A control channel of the run's processes (a Unix socket; see the `control` module of
    the `buflab-emu` crate): one command per line, one JSON line back."""

    # Who answers, in errors.
    name = "control"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.epoch_s: float | None = None

    def ask(self, command: str) -> dict[str, Any]:
        """Sends one command and returns the JSON answer."""
        answer = b""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5.0)
                s.connect(str(self.path))
                s.sendall(command.encode() + b"\n")
                while not answer.endswith(b"\n"):
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
        except OSError as error:
            # Refused, reset or timed out: the process has stopped or is stopping (its own
            # message comes with the run's result).
            raise EmulationError(
                f"{self.name}: no answer to {command!r} ({error.strerror or error}); "
                "it has stopped or is stopping"
            ) from None
        if not answer.endswith(b"\n"):
            raise EmulationError(f"{self.name}: closed without answering {command!r}")
        reply = json.loads(answer)
        if "error" in reply:
            raise EmulationError(f"{self.name}: {reply['error']}")
        return reply


class DatapathControl(ControlChannel):
    """The datapath's control channel: its counts now, and its buffer changed live. `epoch_s`
    is the run's time 0 on `time.monotonic` once the run has started (None before)."""

    name = "datapath"

    def counts(self) -> dict[str, Any]:
        """Arrivals, drops and departures so far, frames waiting, and the buffer in force."""
        return self.ask("counts")

    def set_buffer(self, limit: str) -> dict[str, Any]:
        """A new buffer ("50pkt", "30000B") from now on; returns it as the datapath reads it
        (`buffer`) and when it took effect on the event log's clock (`time_ps`)."""
        return self.ask(f"buffer {limit}")


class TrafficControl(ControlChannel):
    """A live run's traffic generator on the sender machine (`traffic::control` of the
    `buflab-emu` crate): long-lived flows opened from the plan's spare slots and closed."""

    name = "traffic generator"

    def flows(self) -> tuple[list[tuple[int, int]], int]:
        """The long-lived flows open or due to start, as (flow, entry), and the spare slots
        left."""
        reply = self.ask("flows")
        return [(int(f), int(t)) for f, t in reply["open"]], int(reply["spare_left"])

    def open(self) -> int:
        """Opens the next spare slot's flow now; returns its flow id."""
        return int(self.ask("open")["flow"])

    def close(self, flow: int) -> None:
        """Closes flow `flow`'s connection now."""
        self.ask(f"close {flow}")


@dataclass
class RunControls:
    """What a running emulation takes commands on: the datapath, and in a live run the traffic
    generator (None otherwise)."""

    datapath: DatapathControl
    traffic: TrafficControl | None = None


def _off_the_datapaths_cpu(pid: int) -> None:
    """Keeps a traffic process off the CPU the datapath busy-polls on, ahead of other work on
    the rest (nice -10, below the datapath's -20): a generator that waits for a CPU sends its
    requests and datagrams late, and a user's late request is a different offered load."""
    others = set(range((os.cpu_count() or 1) - 1))
    if others:
        os.sched_setaffinity(pid, others)
    os.setpriority(os.PRIO_PROCESS, pid, GENERATOR_NICE)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM (a `timeout`, a batch system, `kill`) stops the run as
    Ctrl-C does: by default it would end Python on the spot, past every `finally`, and leave
    the run's namespaces and processes behind. Only the main thread can set a handler; a run
    started from another thread keeps the default."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextmanager
def _not_behind_other_work() -> Iterator[None]:
    """Runs the block at no lower a priority than the normal one (nice 0), then puts this
    process's back: it starts the run's processes and tells them time 0 and the end of the
    warm-up, and at a low priority (a test suite under `nice -n 19`) on a busy machine it
    took tens of seconds to start them and sent the warm-up's end late."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    os.setpriority(os.PRIO_PROCESS, 0, min(before, 0))
    try:
        yield
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)


def _first_in_line(pid: int) -> None:
    """Gives the datapath the highest priority of the normal scheduler (nice -20): on a
    machine shared with other work, a busy-polling loop at the default weight loses its CPU
    for milliseconds at a time to anything else runnable there, and every frame due then
    leaves late. (A real-time class would be worse: its throttling stops a busy loop for
    50 ms every second.)"""
    os.setpriority(os.PRIO_PROCESS, pid, -20)


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
    while_running: Callable[[RunControls], None] | None = None,
    live: bool = False,
    **kw: Any,
) -> Result:
    """Runs `scenario` on real Linux TCP (see the module doc) and returns its `Result`; raises
    ScenarioError for a scenario it cannot realise, EmulationError when the machine cannot run
    it. With `events_to`, the bottleneck's event log (the whole run, its measured window in its
    facts) is written there as the simulator writes its own (`buflab.engine.events`).
    `while_running`, if given, is called once the warm-up is over, with the run's control
    channels (the datapath's: read its counts, change the buffer live; with `live`, the
    traffic generator's: open flows from the plan's spare slots and close flows), while the
    flows run on. With
    `pcap_to` as well, the frames that reached the bottleneck's queue, exactly those the log
    lists as arriving, are written there as a packet capture (`buflab.engine.pcap`). A
    scenario with `[autosize]` runs the engine's auto-sizer on the datapath's buffer
    (`autosize`): its steps are the result's `autosize` table, its answer the summary's
    `autosize_buffer_pkts`, as in a simulated run."""
    if pcap_to is not None and events_to is None:
        raise ScenarioError("pcap_to: the capture lists the event log's arrivals; give events_to")
    require_privileges()
    remove_stale()
    tree = load_scenario(scenario, overrides=overrides, **kw)
    p = plan(tree, available_congestion_controls(), live=live)
    sizer = None
    if p.autosize:
        if while_running is not None:
            raise ScenarioError(
                "autosize: the auto-sizer sets this emulation's buffer; a live session cannot "
                "set it too (remove [autosize], or run it with `buflab autosize --emulate`)"
            )
        sizer = LiveAutoSizer(p.scenario, p.duration_s)
        while_running = _driven_by(sizer)
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory(prefix=scratch_prefix()) as scratch:
        files = _Scratch(Path(scratch))
        control = RunControls(
            DatapathControl(files.control),
            TrafficControl(files.traffic_control) if p.spare is not None else None,
        )
        testbed = Testbed.for_this_process(
            offloads=p.offloads, machines=p.machines, gso_segments=p.gso_segments
        )
        with _terminate_as_interrupt(), _not_behind_other_work(), testbed as tb:
            try:
                capture = files.capture if pcap_to is not None else None
                reports = _run(tb, p, procs, files, control, while_running, capture)
            finally:
                for proc in procs:
                    if proc.poll() is None:
                        _stop(proc, signal.SIGKILL)
        result = _results(tree, p, files, *reports)
        if sizer is not None:
            result.autosize = sizer.table()
            result.summary["autosize_buffer_pkts"] = sizer.answer()
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


def _driven_by(sizer: LiveAutoSizer) -> Callable[[RunControls], None]:
    def drive(controls: RunControls) -> None:
        datapath = controls.datapath
        assert datapath.epoch_s is not None, "driven once the run has started"
        sizer.drive(datapath, datapath.epoch_s)

    return drive


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
    def traffic_control(self) -> Path:
        return self.root / "traffic.sock"

    def traces(self, machine: int) -> Path:
        return self.root / f"traces{machine}.csv"

    @property
    def plan(self) -> Path:
        return self.root / "traffic.json"

    @property
    def scenario(self) -> Path:
        return self.root / "scenario.json"

    @property
    def flows(self) -> Path:
        return self.root / "flows.json"

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
        fifo=bool(result.events_queue.get("fifo", True)),
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
    control: RunControls,
    while_running: Callable[[RunControls], None] | None,
    capture: Path | None = None,
) -> tuple[list[dict], dict, dict]:
    """Runs the datapath and the traffic; returns the hosts' reports (by machine), the
    receiver's and the datapath's."""
    traffic, datapath = binary("buflab-traffic"), binary("buflab-datapath")

    def start(ns: str, *argv: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            tb.exec_args(ns, *argv),
            stdin=None if argv[0] == datapath else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        # Set from here once it runs, not in a `preexec_fn`: a Ctrl-C that arrives while
        # Python forks for one is swallowed by the fork's own hooks, and the run goes on.
        # (`ip netns exec` execs the binary in its own process: the settings carry over. One
        # already gone says why when it is awaited.)
        with suppress(ProcessLookupError):
            (_first_in_line if argv[0] == datapath else _off_the_datapaths_cpu)(proc.pid)
        return proc

    files.plan.write_text(json.dumps(p.traffic_plan()))
    files.flows.write_text(json.dumps(p.flows_file()))
    files.scenario.write_text(json.dumps(p.scenario))
    if p.ecn:
        # RFC 3168 ECN asked for on every connection (the receiver's default, 2, answers it).
        for ns in tb.senders:
            tb.write_in(ns, "/proc/sys/net/ipv4/tcp_ecn", "1")
    lefts, right = tb.router_ports
    queue = ["--queue", p.queue, "--packet", str(p.packet), "--seed", str(p.seed)]
    for key, value in p.queue_params.items():
        queue += ["--param", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    if p.loss > 0:
        queue += ["--loss", repr(p.loss)]
    if p.offloads:
        queue += ["--offloads"]
    if p.segment:
        queue += ["--segment"]
    if capture is not None:
        queue += ["--capture", str(capture)]
    dp = start(
        tb.router, datapath, "--left", ",".join(lefts), "--right", right,
        "--rate", f"{p.rate_bps}bps", "--buffer", p.buffer, "--flows", str(files.flows),
        "--scenario", str(files.scenario),
        *CPU, *queue, "--events", str(files.events), "--control", str(control.datapath.path),
    )  # fmt: skip
    _await_line(dp, "ready", "the datapath")
    receiver = start(tb.receiver, traffic, "receiver", "--plan", str(files.plan))
    hosts = []
    for m, ns in enumerate(tb.senders):
        trace = ["--trace-to", str(files.traces(m))] if p.trace_flows else []
        if m == 0 and control.traffic is not None:
            trace += ["--control", str(control.traffic.path)]
        hosts.append(
            start(ns, traffic, "host", "--plan", str(files.plan), "--machine", str(m), *trace)
        )
    for proc, what in (
        (receiver, "the receiver"),
        *((h, f"sender machine {m}") for m, h in enumerate(hosts)),
    ):
        _await_line(proc, "ready", f"the traffic generator on {what}")
    # Time 0 for everyone: the datapath's log and reports count from it, as a simulated
    # run's do, and the traffic starts at it.
    epoch_ps = round((time.monotonic() + START_MARGIN_S) * PS_PER_S)
    for proc in (receiver, *hosts):
        assert proc.stdin is not None
        proc.stdin.write(f"go {epoch_ps}\n")
        proc.stdin.close()
        proc.stdin = None  # said: `communicate` has nothing more to send
    control.datapath.ask(f"epoch {epoch_ps}")
    control.datapath.epoch_s = epoch_ps / PS_PER_S
    time.sleep(max(0.0, epoch_ps / PS_PER_S + p.warmup_s - time.monotonic()))
    dp.send_signal(signal.SIGUSR1)
    if while_running is not None:
        while_running(control)
    reports = []
    for proc, what in (
        *((h, f"sender machine {m}") for m, h in enumerate(hosts)),
        (receiver, "the receiver"),
    ):
        try:
            out, err = proc.communicate(timeout=p.duration_s + 30)
        except subprocess.TimeoutExpired:
            raise EmulationError(f"emulate: the traffic on {what} did not finish in time") from None
        if proc.returncode != 0:
            raise EmulationError(f"emulate: the traffic on {what} failed: {err.strip()}")
        reports.append(_json(out, f"the traffic on {what}"))
    dp_report = _json(_stop(dp), "the datapath")
    dp_report["kernel_queues"] = tb.kernel_queues()
    return reports[:-1], reports[-1], dp_report


def _results(
    tree: dict[str, Any], p: Plan, files: _Scratch, hosts: list[dict], receiver: dict, dp: dict
) -> Result:
    validated = validate(tree)
    epoch = int(dp["epoch_ps"])
    window_start_ps = int(dp["window"]["start_ps"])
    # The traffic ran until at least the scenario's duration; the window ends there, as a
    # simulated run's does.
    ended_ps = min(int(h["ended_clock_ps"]) for h in hosts) - epoch
    window_end_ps = max(window_start_ps, min(ended_ps, round(p.duration_s * PS_PER_S)))
    interval_ps = round(parse_time(validated["monitor"]["interval"]) * PS_PER_S)
    raw = core().replay_queue_log(
        scenario_json(tree), str(files.events), p.rate_bps, str(dp["buffer_at_end"]),
        window_start_ps, window_end_ps, interval_ps, epoch,
    )  # fmt: skip
    result = Result.from_engine(raw, tree)
    measured_s = (window_end_ps - window_start_ps) / PS_PER_S
    result.flows = _flows(p, hosts, receiver, measured_s)
    # The bumps ran in the datapath on the simulator's code, which made their rows.
    for name in ("bumps", "rates"):
        rows = dp[name]
        columns = {c: [r[c] for r in rows] for c in table_dtypes(name)} if rows else None
        setattr(result, name, typed_frame(columns, table_dtypes(name)))
    result.transfers = _transfers(hosts, receiver, epoch)
    if p.trace_flows:
        traces = [pd.read_csv(files.traces(m)) for m in range(p.machines)]
        table = pd.concat(traces).sort_values(["time_s", "flow"], kind="stable")
        result.traces = typed_frame(table.to_dict("list"), table_dtypes("traces"))
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
        rtt_mean_s=float(np.mean(flows["rtt_s"])) if len(flows) else 0.0,
        loss_drops=lost,
        peak_rss_mib=peak_rss_mib(),
    )
    window = dp["window"]
    held = dp["waiting_at_end"] + dp["in_access_links_at_end"]
    limit_pkts = _buffer_limits(str(dp["buffer_at_end"]))[0]  # byte limits: checked in Rust
    forwarded = dp["departures"] + dp["drops"] + dp["lost"] + dp["access_drops"] + dp["bump_drops"]
    # Frames that came in, each super-packet the datapath cut counted as its segments.
    received = dp["received_fwd"] - dp["super_packets_cut"] + dp["segments"]
    exact = received == forwarded + dp["other_frames"] + dp["cross_frames"] + held
    timing = [h["timing"] for h in (*hosts, receiver)]
    late_p99 = max((t["late_p99_s"] for t in timing if t["timers"]), default=0.0)
    clients = receiver["clients"]
    generator_faithful = late_p99 <= GENERATOR_FAITHFUL_P99_S and clients["no_slot"] == 0
    s.update(
        emulated=True,
        window_start_s=window_start_ps / PS_PER_S,
        window_end_s=window_end_ps / PS_PER_S,
        cc=p.cc,
        mss=p.mss,
        sink_bytes=int(sum(receiver["received"])),
        exact_buffer=bool(exact) and (limit_pkts < 0 or dp["max_waiting"] <= limit_pkts),
        overruns=int(dp["overruns"]),
        late_within_1us=_share(window["late_within_1us"]),
        late_within_10us=_share(window["late_within_10us"]),
        late_p99_s=_share(window["late_p99_s"]),
        read_within_10us=_share(window["ring_wait_within_10us"]),
        datapath_busy_share=dp["busy_turns"] / dp["turns"] if dp["turns"] else 0.0,
        # (No frame left in the window: nothing shows the timing was kept, so not faithful.)
        faithful=_share(window["late_within_10us"]) >= FAITHFUL_WITHIN_10US
        and dp["overruns"] == 0
        and generator_faithful,
        # Packets that went through a kernel queue on any of the run's interfaces: none, as
        # every one has `noqueue` (the datapath's buffer is the only one on the path).
        kernel_queue_packets=int(dp["kernel_queues"]["packets"]),
        kernel_qdiscs=",".join(dp["kernel_queues"]["kinds"]),
        timeouts_known=all(bool(h.get("timeouts_known", False)) for h in hosts),
        generator_late_p99_s=float(late_p99),
        generator_cpu_s=float(sum(t["cpu_s"] for t in timing)),
        generator_faithful=bool(generator_faithful),
        transfers_failed=int(result.transfers["failed"].sum()),
        access_drops=int(dp["access_drops"]),
    )
    result.emulation = {
        "datapath": dp,
        "hosts": hosts,
        "receiver": {k: v for k, v in receiver.items() if k != "clients"},
        "no_slot": int(clients["no_slot"]),
        "notes": list(p.notes),
        "epoch_ps": epoch,
    }
    return result


def _flows(p: Plan, hosts: list[dict], receiver: dict, measured_s: float) -> pd.DataFrame:
    """The flows table: each flow's identity as the simulator drew it (its tables' own rows,
    an open-loop slot's as `_core.flow_slots` drew it), and what it did over the measured
    window: a TCP flow's connections' `TCP_INFO` (a long-lived flow's one, a user's summed),
    a UDP flow's datagrams."""
    tcp: dict[int, dict[str, Any]] = {}
    sent: dict[int, int] = {}
    for h in hosts:
        for row in h["flows"] + (h["servers"] or {}).get("flows", []):
            tcp[int(row["flow"])] = row
        for flow, count, _ in h["udp"]:
            sent[int(flow)] = int(count)
    received = {int(flow): int(window) for flow, _, window in receiver["udp"] or []}
    identities = list(p.flows)
    if p.open_loop is not None:
        first = p.open_loop["first"]
        identities += [p.open_loop["slots"][flow - first] for flow in receiver["clients"]["slots"]]
    if p.spare is not None:
        # The spare slots opened from the page, starting when they were opened.
        first = p.spare["first"]
        for h in hosts:
            for flow, at_ps in h.get("opened", []):
                slot = p.spare["slots"][int(flow) - first]
                identities.append({**slot, "start_s": int(at_ps) / PS_PER_S})
    rows = []
    for flow in identities:
        f = int(flow["flow"])
        udp = p.kind_of(int(flow["traffic"])) in UDP_KINDS
        if udp:
            packet = parse_bytes(p.scenario["traffic"][int(flow["traffic"])]["packet"])
            delivered = received.get(f, 0) * int(packet)
            sock: dict[str, Any] = {"data_segs_out_window": sent.get(f, 0)}
        else:
            sock = tcp.get(f, {})
            delivered = int(sock.get("bytes_acked_window", 0))
        rows.append(
            {
                **flow,
                "goodput_bps": delivered * 8 / measured_s if measured_s > 0 else 0.0,
                "delivered_bytes": delivered,
                "sent_packets": int(sock.get("data_segs_out_window", 0)),
                "retransmits": int(sock.get("retransmits_window", 0)),
                "timeouts": int(sock.get("timeouts_window", 0)),
                "ecn_reactions": 0,
                "cwnd_pkts": float(sock.get("cwnd_pkts", 0)),
                "ssthresh_pkts": float(min(sock.get("ssthresh_pkts", 0), 2**31 - 1)),
                "srtt_s": float(sock.get("srtt_s", 0.0)),
                # Beyond the simulator's columns: what only a real socket knows.
                "min_rtt_s": float(sock.get("min_rtt_s", 0.0)),
                "bytes_acked": int(sock.get("bytes_acked", 0)),
                "error": sock.get("error"),
            }
        )
    return typed_frame(pd.DataFrame(rows).to_dict("list"), table_dtypes("flows"))


def _transfers(hosts: list[dict], receiver: dict, epoch_ps: int) -> pd.DataFrame:
    """The transfers table: each download as its client saw it (when it connected, when its
    last byte arrived), with its server's retransmissions and timeouts; `failed` beyond the
    simulator's columns (the connection failed before the file was in)."""
    served = {
        (int(flow), int(conn)): (int(retransmits), int(timeouts))
        for h in hosts
        for flow, conn, retransmits, timeouts in (h["servers"] or {}).get("served", [])
    }
    rows = []
    for flow, traffic, conn, start, end, size, failed in receiver["clients"]["transfers"]:
        start_s = (int(start) - epoch_ps) / PS_PER_S
        end_s = (int(end) - epoch_ps) / PS_PER_S if int(end) >= 0 else math.nan
        fct_s = end_s - start_s
        retransmits, timeouts = served.get((int(flow), int(conn)), (0, 0))
        rows.append(
            {
                "flow": int(flow),
                "traffic": int(traffic),
                "conn": int(conn),
                "start_s": start_s,
                "end_s": end_s,
                "bytes": int(size),
                "fct_s": fct_s,
                "throughput_bps": int(size) * 8 / fct_s if fct_s > 0 else math.nan,
                "retransmits": retransmits,
                "timeouts": timeouts,
                "complete": not math.isnan(end_s),
                "failed": bool(failed),
            }
        )
    frame = pd.DataFrame(rows, columns=[*table_dtypes("transfers"), "failed"])
    return typed_frame(frame.to_dict("list"), {**table_dtypes("transfers"), "failed": "bool"})


def _share(x: float | None) -> float:
    """A fidelity figure of the datapath's report: NaN (JSON null) when nothing was timed."""
    return math.nan if x is None else float(x)


def _buffer_limits(buffer: str) -> tuple[int, int]:
    """The buffer as (packets, bytes), -1 for the unit it is not in (and both for unlimited),
    as the event log's facts give it."""
    if buffer.endswith("pkt"):
        return int(buffer[:-3]), -1
    return -1, (-1 if buffer == "unlimited" else int(parse_bytes(buffer)))
