"""`buflab emulate`: the scenario on real Linux TCP through the emulator's datapath. What it
refuses (no root needed), the flows it plans (the simulator's own draws), and, as root (CI
runs as root), a short run end to end, the refusal without privileges, and the cleanup after
a run killed with SIGKILL. The datapath's logic (serializer, buffer, delay lines, lateness,
header fields) is tested with made-up times in the `buflab-emu` crate."""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import buflab
from buflab.analysis.queue import analyze, check_summary
from buflab.cli.common import EXIT_INTERRUPTED
from buflab.engine import EMULATION_SUMMARY_COLUMNS, ScenarioError, core, scenario_json
from buflab.engine.emulation.plan import plan
from buflab.engine.emulation.testbed import EmulationError, namespaces

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent
BUFLAB = str(Path(sys.executable).parent / "buflab")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (CI runs as root)")

SMALL: dict[str, Any] = {
    "name": "emulated dumbbell",
    "duration": "5s",
    "warmup": "2s",
    "network": {"bottleneck": {"rate": "20Mbps", "buffer": "30pkt"}, "rtt": "20ms..60ms"},
    "traffic": [
        {"kind": "long_lived", "flows": 10, "packet": "1500B", "tcp": "sack", "start": "0s..1s"}
    ],
}


def with_(path: str, value: Any) -> dict[str, Any]:
    return buflab.load_scenario(SMALL, overrides={path: value})


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("network.topology", "parking_lot", "network.topology: got 'parking_lot'"),
        ("traffic.0.handshake", False, "traffic.0.handshake: got False; expected true"),
        ("traffic.0.cc", "bic", "traffic.0.cc: got 'bic'; expected one of this kernel's"),
        ("network.bottleneck.rate", "10Gbps", "at most 2 Gb/s"),
        (
            "network.bottleneck.queue",
            "optical_fifo",
            "network.bottleneck.queue: got 'optical_fifo'; expected a queue of the datapath's",
        ),
    ],
)
def test_what_the_emulator_cannot_realise_is_refused_naming_the_key(
    key: str, value: Any, message: str
) -> None:
    scenario = with_(key, value)
    if key == "traffic.0.handshake":
        scenario["traffic"][0] = {"kind": "closed_loop", "users": 2, "handshake": False}
    if key == "network.topology":
        scenario["network"]["hops"] = 2
    if value == "optical_fifo":
        scenario["network"]["bottleneck"]["buffer"] = "31pkt"
    with pytest.raises(ScenarioError) as error:
        plan(scenario, ["reno", "cubic", "bbr"])
    text = str(error.value)
    assert "\n" not in text and message in text, text


def test_the_emulation_section_is_checked_like_any_other() -> None:
    """`[emulation]` is read by the same reader as the rest: a misspelt key is named with its
    suggestion, a wrong type refused, and its default filled in."""
    with pytest.raises(ScenarioError, match=r"emulation\.offlods: unknown key.*offloads"):
        buflab.validate(buflab.load_scenario(SMALL, overrides={"emulation.offlods": True}))
    with pytest.raises(ScenarioError, match=r"emulation\.offloads: got"):
        buflab.validate(buflab.load_scenario(SMALL, overrides={"emulation.offloads": "yes"}))
    assert buflab.validate(SMALL)["emulation"] == {
        "offloads": False,
        "segment": False,
        "gso_segments": 0,
    }
    assert not plan(SMALL, ["reno"]).offloads


@pytest.mark.parametrize("value", [-1, 65_536, 2.5, "1"])
def test_gso_segments_is_a_whole_number_linux_accepts(value: Any) -> None:
    """Linux's gso_max_segs runs from 0 to GSO_MAX_SEGS (65,535); anything else is one line
    naming the key, the value and the range."""
    with pytest.raises(ScenarioError) as error:
        buflab.validate(buflab.load_scenario(SMALL, overrides={"emulation.gso_segments": value}))
    text = str(error.value)
    assert "\n" not in text and text.startswith("emulation.gso_segments: got"), text
    assert "a whole number from 0 to 65535" in text, text


def test_gso_segments_reaches_the_testbed_and_is_said() -> None:
    """By default the kernel's own GSO sizing (0, nothing set, nothing said); a limit is
    planned for the senders' interfaces and named in a note."""
    assert plan(SMALL, ["reno"]).gso_segments == 0
    assert not any("gso_segments" in note for note in plan(SMALL, ["reno"]).notes)
    p = plan(with_("emulation.gso_segments", 1), ["reno"])
    assert p.gso_segments == 1
    assert any(note.startswith("emulation.gso_segments = 1:") for note in p.notes), p.notes


def test_the_simulated_linux_tcp_follows_gso_segments_too() -> None:
    """One key for both sides: the simulator's `linux` senders build GSO packets as Linux does
    (several segments back to back) unless `emulation.gso_segments = 1`. On the HULL example
    (a phantom queue that marks at 4 frames, 100 Mb/s, 2 ms) those bursts are what the
    phantom marks: measured over 10 s, 863 marks and 59.9 % utilization with GSO, 63 marks and
    100 % without; Linux gave 65.9 % and 99.8 %. The bounds (5 times the marks, 20 points)
    leave room for the model to change in detail and fail only if GSO stops mattering."""
    runs = {
        segments: buflab.run(
            ROOT / "examples" / "hull.toml",
            overrides={"duration": "4s", "warmup": "1s", "emulation.gso_segments": segments},
        )
        for segments in (0, 1)
    }
    marks = {g: int(r.bumps.set_index("name").loc["phantom", "vq_marks"]) for g, r in runs.items()}
    used = {g: r.summary["utilization"] for g, r in runs.items()}
    assert marks[0] > 5 * marks[1], marks
    assert used[0] < used[1] - 0.2, used


@as_root
def test_gso_segments_caps_the_senders_interfaces_while_the_flows_run() -> None:
    """The limit is on each sender's interface before its sockets connect, and stays for
    the run (read from the namespace while the flows run)."""
    from buflab.engine.emulation.runner import emulate

    seen: list[str] = []

    def read_limit(control: Any) -> None:
        sender = next(ns for ns in namespaces() if ns.endswith("-snd"))
        done = subprocess.run(
            ["ip", "-n", sender, "-d", "link", "show"], capture_output=True, text=True
        )
        seen.append(done.stdout)

    short = {**with_("emulation.gso_segments", 1), "duration": "3s", "warmup": "1s"}
    emulate(short, while_running=read_limit)
    assert len(seen) == 1 and "gso_max_segs 1 " in seen[0], seen


def test_the_flows_are_the_simulators_own_draws() -> None:
    """Same scenario and seed, same flows: start times and RTTs from the simulator's tables,
    the MSS from the packet size less the Ethernet, IPv4 and TCP headers (Linux counts the
    timestamps option inside it)."""
    p = plan(SMALL, ["reno", "cubic"])
    flows = buflab.run(SMALL, duration="1us", warmup="0s").flows
    assert p.starts_s == flows["start_s"].tolist() and p.rtts_s == flows["rtt_s"].tolist()
    assert p.mss == 1500 - 54 and p.cc == "reno" and p.rate_bps == 20_000_000
    assert any("delayed_ack" in note for note in p.notes), "a mapping is said, not hidden"
    assert p.access["rate"] == "10Gbps" and p.access["machines"] == 0, (
        "each flow's access link (the default), in the datapath"
    )


def test_a_live_run_declares_spare_flow_slots_the_simulator_would_draw() -> None:
    """`buflab serve --emulate` opens flows mid-run from spare slots declared up front: each
    has its flow id after the scenario's, the RTT the simulator draws for a flow of that id
    added to the first long-lived entry, a row in the datapath's flows file (its address and
    access link) and a place in the traffic generator's plan; the senders then keep little
    unsent. A plain run has none; one with machines (whose flows do not change) neither."""
    from buflab.engine.emulation.plan import LIVE_NOTSENT_LOWAT, SPARE_FLOWS

    assert plan(SMALL, ["reno"]).spare is None
    p = plan(SMALL, ["reno"], live=True)
    assert p.spare is not None and p.spare["first"] == 10 and len(p.spare["slots"]) == SPARE_FLOWS
    slots = p.spare["slots"]
    assert [s["flow"] for s in slots] == list(range(10, 10 + SPARE_FLOWS))
    assert all(s["traffic"] == 0 and s["kind"] == "long_lived" for s in slots)
    drawn = core().flow_slots(scenario_json(p.scenario), 0, 10, 3)
    assert [s["rtt_s"] for s in slots[:3]] == drawn["rtt_s"]
    assert all(0.02 <= s["rtt_s"] <= 0.06 for s in slots), "the entry's RTT range"
    assert len(p.flows_file()["rtt_s"]) == 10 + SPARE_FLOWS
    traffic = p.traffic_plan()
    assert traffic["spare"] == {"traffic": 0, "first": 10, "slots": SPARE_FLOWS}
    assert traffic["tcp"]["notsent_lowat"] == LIVE_NOTSENT_LOWAT
    assert plan(SMALL, ["reno"]).traffic_plan()["tcp"]["notsent_lowat"] is None
    assert plan(with_("network.access.machines", 2), ["reno"], live=True).spare is None


@as_root
def test_a_short_emulation_runs_end_to_end_and_leaves_nothing(tmp_path: Path) -> None:
    """10 Linux reno flows through a 20 Mb/s, 30-packet bottleneck for 5 s: the link is used
    (well above half: ten flows at RTTs of 20–60 ms fill it), the buffer held its limit and
    every frame the datapath took is accounted for, every flow moved data, the result has the
    simulator's tables with their columns, and the run's namespaces are gone afterwards."""
    from buflab.engine.emulation.runner import emulate

    before = set(namespaces())
    traced = {"monitor": {"trace_flows": [0, 3], "trace_interval": "50ms", "interval": "0.5s"}}
    pcap = tmp_path / "bottleneck.pcap"
    e = emulate({**SMALL, **traced}, events_to=tmp_path / "events.parquet", pcap_to=pcap)
    s = e.summary
    assert 0.5 < s["utilization"] <= 1.0, s
    assert s["exact_buffer"] and s["max_queue_pkts"] <= 30, s
    assert s["drops"] > 0, "ten flows overflow 30 packets"
    assert (e.flows["bytes_acked"] > 0).all() and e.flows["error"].isna().all()
    # The measured RTT is the planned one plus queueing (30 packets at 20 Mb/s: 18 ms).
    assert ((e.flows["min_rtt_s"] - e.flows["rtt_s"]).abs() < 0.005).all(), e.flows
    assert set(namespaces()) == before
    # No kernel queue held anything: every interface has `noqueue`, and nothing passed one.
    assert s["kernel_qdiscs"] == "noqueue" and s["kernel_queue_packets"] == 0, s
    # How long frames waited in the datapath's ring is measured on the loop's clock: the
    # kernel stamps them in real time. Converted one way wrong, every frame would look decades
    # late (none within 10 µs); the other way, written after it was read. How many are within
    # 10 µs is the machine's; only that some are.
    assert 0 < s["read_within_10us"] <= 1, s
    assert e.emulation["datapath"]["read_before_written"] == 0
    # The simulator's tables, with its columns first: a simulated run's result and this one
    # are read by the same code.
    sim = buflab.run(SMALL, overrides={"monitor.interval": "0.5s"})
    for name in ("flows", "timeseries", "links"):
        table = getattr(e, name)
        assert list(table.columns[: len(getattr(sim, name).columns)]) == list(
            getattr(sim, name).columns
        ), name
    emulation_keys = [c["name"] for c in EMULATION_SUMMARY_COLUMNS]
    assert list(s) == [*sim.summary, *emulation_keys], "the simulator's keys, then its own"
    # The time series covers the run, 0.5 s a row, and its window rows add up to the summary.
    assert e.timeseries["time_s"].tolist() == [0.5 * k for k in range(1, 11)]
    assert e.timeseries["arrivals"].sum() >= s["arrivals"]
    # Goodput over the window, as the simulator counts it: payload acknowledged ÷ window.
    assert e.flows["goodput_bps"].sum() == pytest.approx(s["goodput_bps"])
    assert 0.5 * 20e6 < s["goodput_bps"] < 20e6, s
    # The traced flows' TCP_INFO, every 50 ms from their start.
    assert set(e.traces["flow"]) == {0, 3} and len(e.traces) > 2 * 60, len(e.traces)
    assert (e.traces["cwnd_pkts"] > 0).all()
    for _, trace in e.traces.groupby("flow"):
        assert trace["acked_bytes"].is_monotonic_increasing and trace["acked_bytes"].iloc[-1] > 0
    # The event log, in the simulator's schema: the queue never above its limit, drops only
    # at it, every arrival of the window an enqueue or a drop, and frames of `packet` bytes.
    log = pd.read_parquet(tmp_path / "events.parquet")
    assert log["queue_pkts"].max() <= 30
    assert (log.loc[log["event"] == "drop", "queue_pkts"] == 30).all()
    assert len(log) == s["events"], "the whole run is logged, to the window's end"
    assert log["time_ps"].max() <= s["window_end_s"] * 1e12
    in_window = log[log["time_ps"] >= round(s["window_start_s"] * 1e12)]
    arrivals = in_window["event"].isin(["enqueue", "drop"]).sum()
    assert arrivals == s["arrivals"] and (in_window["event"] == "drop").sum() == s["drops"]
    # The analysis's own reader rebuilds the queue from the log and finds the summary's
    # numbers to the last bit (both come from the same events, counted as the simulator does).
    checks = check_summary(analyze(tmp_path / "events.parquet"), s)
    assert {key for key, _, _ in checks} >= {"utilization", "drops", "mean_queue_pkts"}
    assert all(rebuilt == reported for _, rebuilt, reported in checks), checks
    assert log.loc[log["event"] == "enqueue", "size"].max() == 1500
    # The capture (monitor.pcap) holds exactly the frames the log lists as arriving, with
    # their own headers, at the log's times (to the nanosecond), and tcpdump reads it.
    arriving = log[log["event"].isin(["enqueue", "drop"])]
    captured = list(raw_records_of_pcap(pcap))
    assert len(captured) == len(arriving)
    assert [t for t, _, _ in captured] == (arriving["time_ps"] // 1000).tolist()
    assert [n for _, n, _ in captured] == arriving["size"].tolist()
    assert [tcp_seq(frame) for _, _, frame in captured] == arriving["seq"].tolist()
    if shutil.which("tcpdump"):
        read = subprocess.run(["tcpdump", "-nn", "-r", str(pcap)], capture_output=True, text=True)
        assert read.returncode == 0 and len(read.stdout.splitlines()) == len(arriving)


USERS: dict[str, Any] = {
    "name": "closed-loop users on real TCP",
    "duration": "6s",
    "warmup": "2s",
    "network": {"bottleneck": {"rate": "20Mbps", "buffer": "40pkt"}, "rtt": "20ms..60ms"},
    "traffic": [{"kind": "closed_loop", "users": 20, "start": "0s..1s"}],
}


def _children() -> set[int]:
    """The processes this one started that are still there (gone once a run has reaped its
    datapath and traffic generators)."""
    ours = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            ours.add(int(stat.parent.name))
    return ours


@as_root
def test_closed_loop_users_download_on_real_connections_and_leave_nothing() -> None:
    """20 Harpoon-style users for 6 s on Linux TCP (about 12 s in all): every download is a
    row of the transfers table, in the simulator's columns. Each user's k-th file has exactly
    the size the simulator's user draws for its k-th (same models, same per-flow streams:
    checked row by row against a simulated run of the same scenario and seed); a user asks
    for its next file only after its last one is in (closed loop); every completed download
    took at least the two round trips of propagation a new connection needs before its first
    data (handshake, then request), with 1 ms for the host clocks' stamps; no connection
    failed; and nothing is left afterwards: no namespace, no process."""
    from buflab.engine.emulation.runner import emulate

    before, started = set(namespaces()), _children()
    e = emulate(USERS)
    t = e.transfers
    simulated = buflab.run(USERS, duration="60s").transfers
    assert list(t.columns[: len(simulated.columns)]) == list(simulated.columns)
    assert len(t) >= 20 and set(t["flow"]) == set(range(20)), t
    assert e.summary["transfers_failed"] == 0 and not t["failed"].any()
    done = t[t["complete"]]
    assert len(done) >= 20, "each user finishes at least its first file in 6 s"
    # Same sizes as the simulator's users: the k-th file of every user, wherever both got to.
    sim = simulated.set_index(["flow", "conn"])["bytes"]
    real = t.set_index(["flow", "conn"])["bytes"]
    both = real.index.intersection(sim.index)
    assert len(both) == len(real), "the simulator's users got at least as far in 60 s"
    assert (real.loc[both] == sim.loc[both]).all()
    rtt = e.flows.set_index("flow")["rtt_s"]
    for flow, downloads in t.sort_values("conn").groupby("flow"):
        assert downloads["conn"].tolist() == list(range(1, len(downloads) + 1)), downloads
        # The next request after the last one's end (think time ≥ 0).
        ends = downloads["end_s"].to_numpy()[:-1]
        assert (downloads["start_s"].to_numpy()[1:] >= ends).all(), downloads
        finished = downloads[downloads["complete"]]
        assert (finished["fct_s"] >= 2 * rtt[flow] - 1e-3).all(), (rtt[flow], finished)
    assert set(namespaces()) == before and _children() <= started


@as_root
def test_red_with_ecn_and_random_loss_run_in_the_datapath(tmp_path: Path) -> None:
    """The bottleneck runs the simulator's RED (its code, parameters and random stream) on
    real frames: Linux flows with ECN get marks instead of early drops, every mark is in the
    log as the summary counts it, and no frame waits beyond the buffer. Random loss takes 1 %
    of the data frames before the queue: the count is within 4.5 standard deviations of the
    binomial mean (a test that fails by chance once in 150,000 runs)."""
    from buflab.engine.emulation.runner import emulate

    red = {
        "network.bottleneck.queue": "red",
        "network.bottleneck.red_ecn": True,
        "network.bottleneck.red_max_th": 20,
        "network.loss": 0.01,
        "traffic.0.ecn": True,
        "duration": "4s",
        "warmup": "1s",
    }
    e = emulate(buflab.load_scenario(SMALL, overrides=red), events_to=tmp_path / "e.parquet")
    s = e.summary
    assert s["exact_buffer"] and s["max_queue_pkts"] <= 30, s
    assert s["marks"] > 0, "ECN negotiated on Linux, and RED marks instead of dropping early"
    log = pd.read_parquet(tmp_path / "e.parquet")
    in_window = log[log["time_ps"] >= round(s["window_start_s"] * 1e12)]
    assert (in_window["event"] == "mark").sum() == s["marks"]
    n = s["arrivals"] + s["loss_drops"]  # data frames offered (ACK-free direction), about
    mean, sd = 0.01 * n, (0.01 * 0.99 * n) ** 0.5
    assert abs(s["loss_drops"] - mean) < 4.5 * sd, (s["loss_drops"], n)
    assert any("tcp_ecn" in note for note in e.emulation["notes"])


@as_root
def test_with_offloads_on_the_bottleneck_sees_super_packets(tmp_path: Path) -> None:
    """`emulation.offloads = true` leaves TSO, GSO and GRO on, and shows what they do: the
    datapath receives, queues and forwards (with their vnet headers) frames larger than the
    1500-byte packets, each counted as one packet, so the same 30-packet buffer holds more
    bytes. (Off, the default, the end-to-end test finds no frame above `packet`.)"""
    from buflab.engine.emulation.runner import emulate

    on = buflab.load_scenario(
        SMALL, overrides={"emulation.offloads": True, "duration": "4s", "warmup": "1s"}
    )
    e = emulate(on, events_to=tmp_path / "e.parquet")
    log = pd.read_parquet(tmp_path / "e.parquet")
    # Larger than any frame the 1500-byte MTU allows (1514 B): super-packets, a good share of
    # them (TSO sizes them to about a millisecond of the flow's rate: 2 to 3 segments here).
    sizes = log.loc[log["event"] == "enqueue", "size"]
    # Two segments under one set of headers (Ethernet, IP and TCP with timestamps: 66 B) is
    # 2 × 1500 − 66 = 2,934 B; TSO makes two or three of them at this rate, depending on the
    # flows' pacing rate when each packet is built (a loaded machine saw only twos).
    two_segments = 2 * 1500 - 66
    assert (sizes > 1514).mean() > 0.1 and sizes.max() >= two_segments, sizes.describe()
    assert e.summary["exact_buffer"] and e.summary["max_queue_pkts"] <= 30
    assert (e.flows["bytes_acked"] > 0).all(), "super-packets reach the receivers whole"
    assert any("offloads = true" in note for note in e.emulation["notes"])


@as_root
def test_without_network_privileges_it_says_so_in_one_line() -> None:
    done = subprocess.run(
        [
            "capsh",
            "--drop=cap_net_admin,cap_net_raw",
            "--",
            "-c",
            f"{BUFLAB} emulate {ROOT / 'examples' / 'dumbbell.toml'}",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: emulate: needs root (or CAP_NET_ADMIN and CAP_NET_RAW) to create network namespaces"
    ]


def _start_long_run(tmp_path: Path) -> tuple[subprocess.Popen[bytes], set[str]]:
    """A minute-long emulation started in the background, returned once its namespaces
    exist and its flows run, with their names."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(
        'duration = "60s"\nwarmup = "1s"\n[network]\n'
        'bottleneck = { rate = "10Mbps", buffer = "20pkt" }\nrtt = "20ms"\n'
        '[[traffic]]\nkind = "long_lived"\nflows = 2\n'
    )
    run = subprocess.Popen(
        [BUFLAB, "emulate", str(scenario)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    ours = {f"bl{run.pid}-{side}" for side in ("snd", "rtr", "rcv")}
    deadline = time.monotonic() + 20
    while not ours <= set(namespaces()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ours <= set(namespaces()), "the run never built its namespaces"
    time.sleep(1.0)  # the datapath and the flows are running
    return run, ours


def _scratch_of(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"buflab-emulate-{pid}-*"))


@as_root
def test_a_run_killed_with_sigkill_leaves_namespaces_that_cleanup_removes(tmp_path: Path) -> None:
    run, ours = _start_long_run(tmp_path)
    assert _scratch_of(run.pid), "the run's scratch directory carries its pid"
    run.send_signal(signal.SIGKILL)
    run.wait()
    time.sleep(0.5)
    # Its processes died with it (none is left busy-polling in its namespaces).
    for ns in ours:
        pids = subprocess.run(
            ["ip", "netns", "pids", ns], capture_output=True, text=True
        ).stdout.split()
        assert pids == [], f"{ns} still runs {pids}"
    done = subprocess.run([BUFLAB, "emulate", "--cleanup"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not ours & set(namespaces())
    assert "removed 3 stale namespaces" in done.stdout
    assert _scratch_of(run.pid) == [], "the killed run's scratch directory is removed too"


@as_root
def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path: Path) -> None:
    """SIGTERM (what `timeout` and batch systems send) must not end the run past its clean-up:
    the namespaces, processes and scratch directory go, and the run says it was interrupted."""
    run, ours = _start_long_run(tmp_path)
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=30)
    assert run.returncode == EXIT_INTERRUPTED, err
    assert b"interrupted" in err
    assert not ours & set(namespaces())
    assert _scratch_of(run.pid) == []


@as_root
def test_compare_puts_the_simulator_and_linux_side_by_side(tmp_path: Path) -> None:
    """One point each way, same flows: the table has both and their difference, and a
    bottleneck this well fed is busy both ways (utilization within 15 points: the model and
    Linux differ in detail, not in kind, at a buffer of RTT·C/√N and more)."""
    from buflab.experiments.compare import compare, store_compared, write_compare

    kept: list = []
    frame = compare(buflab.load_scenario(SMALL), [], keep=kept)
    assert len(frame) == 1 and len(kept) == 1
    row = frame.iloc[0]
    assert row["diff_utilization"] == row["real_utilization"] - row["sim_utilization"]
    assert abs(row["diff_utilization"]) < 0.15, row.to_dict()
    # The kept results are the ones the row was made of.
    _, sim, real = kept[0]
    assert row["real_utilization"] == real.summary["utilization"] and real.summary["emulated"]
    assert row["sim_utilization"] == sim.summary["utilization"]
    files = write_compare(frame, None, tmp_path, "t", "footer", kept)
    assert (tmp_path / "compare.csv").exists() and tmp_path / "compare_point1.png" in files
    # Both runs are rows of the run store, each with what ran it, under keys of their own.
    store_compared(tmp_path, kept)
    rows = buflab.runs.open(tmp_path)
    assert sorted(rows["engine"].str.split().str[0]) == ["linux", "simulator"]
    assert rows["key"].nunique() == 2 and set(rows["command"]) == {"compare"}
    assert sorted(rows["utilization"]) == sorted([row["sim_utilization"], row["real_utilization"]])


@as_root
@pytest.mark.slow
def test_the_tiny_buffer_result_holds_on_real_tcp() -> None:
    """Thesis ch. 4 on Linux: with a 10-packet buffer, 80 reno flows (64 KB windows, RTT
    75–125 ms) through 100 Mb/s use the link far better when each host's access link is slow
    (5 Mb/s, emulated in the datapath) than fast (10 Gb/s): measured 83.5 % against 55.5 %
    over 20 s. Checked as a gap of at least 15 points, and the simulator within 5 points of
    Linux both ways (measured: 0.5 and 0.3 points apart)."""
    from buflab.experiments.compare import compare
    from buflab.experiments.sweep import Vary

    tiny = {
        "name": "tiny buffer on real TCP",
        "duration": "20s",
        "warmup": "8s",
        "network": {
            "bottleneck": {"rate": "100Mbps", "buffer": "10pkt"},
            "rtt": "75ms..125ms",
        },
        "traffic": [
            {"kind": "long_lived", "flows": 80, "tcp": "sack", "packet": "1000B",
             "max_window": "64KB", "start": "0s..5s"}
        ],
    }  # fmt: skip
    frame = compare(tiny, [Vary("network.access.rate", ("10Gbps", "5Mbps"))]).set_index(
        "network.access.rate"
    )
    fast, slow = frame.loc["10Gbps"], frame.loc["5Mbps"]
    # On this 2-core VM, idle, 80 flows leave 99.0–99.2 % of frames within 10 µs and Linux
    # lands within 2 points of the model (0.9 and 1.6 measured); on a machine busy with other
    # work it does not (27 % within 10 µs was seen), hence the 5-point tolerance, and each
    # failure prints the emulation's own timing beside the numbers.
    assert slow["real_utilization"] > fast["real_utilization"] + 0.15, frame.T
    assert (frame["diff_utilization"].abs() < 0.05).all(), frame.T


@as_root
def test_ctrl_c_stops_a_run_cleanly(tmp_path: Path) -> None:
    """Ctrl-C mid-run: exit status 130 within seconds, one line saying so, nothing left."""
    scenario = tmp_path / "long.toml"
    scenario.write_text(
        'duration = "60s"\nwarmup = "1s"\n[network]\n'
        'bottleneck = { rate = "10Mbps", buffer = "20pkt" }\nrtt = "20ms"\n'
        '[[traffic]]\nkind = "long_lived"\nflows = 2\n'
    )
    run = subprocess.Popen(
        [BUFLAB, "emulate", str(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ours = {f"bl{run.pid}-{side}" for side in ("snd", "rtr", "rcv")}
    deadline = time.monotonic() + 20
    while not ours <= set(namespaces()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=15)
    assert run.returncode == 130, err
    assert err.strip().splitlines()[-1] == (
        "interrupted: the emulation was stopped and its namespaces removed"
    )
    assert not ours & set(namespaces())


@as_root
def test_the_buffer_changes_live_through_the_control_channel(tmp_path: Path) -> None:
    """Mid-run, the control channel reports the counts and takes a new buffer: from then on
    every drop happens at the new limit (the event log's occupancy at each drop), and a
    limit it cannot read is refused in one line."""
    from buflab.engine.emulation.runner import RunControls, emulate

    changed: dict[str, Any] = {}

    def shrink(controls: RunControls) -> None:
        control = controls.datapath
        assert controls.traffic is None, "not a live run: no spare flows to open"
        changed["before"] = control.counts()
        time.sleep(0.5)
        changed["buffer"] = control.set_buffer("5pkt")
        with pytest.raises(EmulationError, match="buffer 5parsecs"):
            control.set_buffer("5parsecs")

    e = emulate(SMALL, events_to=tmp_path / "events.parquet", while_running=shrink)
    assert e.summary["max_queue_pkts"] <= 30
    assert changed["buffer"]["buffer"] == "5pkt" and changed["before"]["buffer"] == "30pkt"
    assert changed["before"]["arrivals"] > 0
    log = pd.read_parquet(tmp_path / "events.parquet")
    before, after = (
        log[log["time_ps"] < changed["buffer"]["time_ps"]],
        log[log["time_ps"] > changed["buffer"]["time_ps"]],
    )
    # Before: the old limit. After: no frame admitted unless fewer than 5 waited (those
    # already queued drain), and every drop finds at least 5 waiting.
    assert before["queue_pkts"].max() <= 30
    assert after.loc[after["event"] == "enqueue", "queue_pkts"].max() <= 5
    dropped = after.loc[after["event"] == "drop", "queue_pkts"]
    assert len(dropped) > 0 and (dropped >= 5).all()


def raw_records_of_pcap(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(time in ns, length on the wire, bytes captured) of each record of a nanosecond pcap."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data)[0] == 0xA1B23C4D, "nanosecond time stamps"
    at = 24
    while at < len(data):
        seconds, ns, kept, length = struct.unpack_from("<IIII", data, at)
        yield seconds * 10**9 + ns, length, data[at + 16 : at + 16 + kept]
        at += 16 + kept


def tcp_seq(frame: bytes) -> int:
    """The TCP sequence number of an Ethernet frame of IPv4 (0 for anything else)."""
    if frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return 0
    ihl = (frame[14] & 0x0F) * 4
    return int.from_bytes(frame[14 + ihl + 4 : 14 + ihl + 8], "big")


def test_a_control_channel_that_stops_answering_is_one_line(tmp_path: Path) -> None:
    """A run's process that has stopped (no listener), or closes without a reply, gives one
    line naming who and the command, not a socket error: the page's controls report it to
    the viewer and the run goes on to its end (a generator that stopped mid-run once ended
    the page's connection with a ConnectionResetError)."""
    import socket
    import threading

    from buflab.engine.emulation.runner import TrafficControl

    path = tmp_path / "control.sock"
    with pytest.raises(EmulationError) as error:
        TrafficControl(path).open()
    assert str(error.value).startswith("traffic generator: no answer to 'open' (")
    assert "\n" not in str(error.value)

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def hang_up() -> None:
        client, _ = listener.accept()
        client.recv(64)
        client.close()

    threading.Thread(target=hang_up, daemon=True).start()
    with pytest.raises(
        EmulationError, match=r"^traffic generator: closed without answering 'open'$"
    ):
        TrafficControl(path).open()
    listener.close()
