#!/usr/bin/env python3
"""Cross-check buflab against ns-3 on one dumbbell: utilization and drop rate side by side.

The scenario (long-lived flows through one drop-tail bottleneck, as in the thesis's ch. 2–3
simulations): N flows (100) of NewReno or CUBIC, a 100 Mb/s bottleneck with a buffer of B
packets of 1000 B, fast 1 Gb/s access links, two-way propagation delays drawn uniformly from
75–125 ms, start times from 0–5 s, 60 s simulated of which the first 20 s are warm-up.

    python3 validation/ns3_crosscheck.py --setup     # once: the ns-3 venv (see below)
    python3 validation/ns3_crosscheck.py --quick     # smoke test: 10 flows, 10 s, 2 buffers
    python3 validation/ns3_crosscheck.py --jobs 1    # the full table (long; see the README)
    python3 validation/ns3_crosscheck.py --queue codel,fq_codel,pie --buffers 125,1250

The bottleneck's queue discipline is drop-tail by default; `--queue` adds CoDel (RFC 8289),
FQ-CoDel (RFC 8290) and PIE (RFC 8033) at the same bottleneck, each set to buflab's values
on both sides (ns-3's CoDelQueueDisc, FqCoDelQueueDisc, PieQueueDisc; the last item below).

How it runs. Neither simulator is imported here: each run is two child processes, each writing
JSON. First the project's own interpreter (`.venv/bin/python`, as `bash scripts/setup`
builds it) runs buflab and writes its summary and its per-flow table; then the interpreter of
a separate venv holding the PyPI package `ns3` (cppyy bindings; `validation/.venv-ns3`,
created by `--setup`, never the project's venv) builds the same dumbbell from that per-flow
table and runs it. This file is both the driver and the two children (`--side`), and uses only
the standard library outside them.

What is matched, and how (each a deliberate choice; see validation/README.md for more):

- Per-flow delays and start times: ns-3 gets buflab's own draws, read from its flows table
  (`rtt_s`, `start_s`), not a second random draw. buflab gives flow i's access link
  rtt_i/2 − d_b each way with a bottleneck delay d_b = 0; so does ns-3 (rounded to its 1 ns
  clock). The receivers sit at the far end of the bottleneck in buflab, and ACKs return over
  the reverse bottleneck and the reverse access link: ns-3 has one receiver host on the far
  end of the bottleneck link (one sink port per flow), so the paths are hop for hop the same.
- Link rates: ns-3's point-to-point links add a 2-byte PPP header to each packet, and buflab
  has no link-layer header: the PPP rates are raised by 1002/1000 so that a 1000-byte IP
  packet takes exactly 80 µs at the bottleneck (8 µs on access links), as in buflab.
- The bottleneck buffer: ns-3 queues a node's output twice, in the traffic-control queue disc
  (the address helper installs FqCoDel) and in the device's own DropTail queue (100 packets).
  Here it is one FIFO of B waiting packets, as buflab's drop-tail (B waiting, plus the one
  being serialized): a FifoQueueDisc of B − 1 packets in front of a device queue of 1 packet
  (no BQL). The device stops the queue disc while its one slot is full, so the two hold B in
  order, and the queue disc's built-in counters see every arrival and drop. (The other
  way, no queue disc and a device queue of B, makes the traffic-control layer drop arrivals
  when the device queue is full, outside any queue's counters.) Every other queue disc is
  removed and every other device queue holds 100,000 packets: nothing else drops.
- TCP: segment size 960 B (1000 B − buflab's 40 bytes of IP + TCP header; no TCP options in
  ns-3: timestamps off, SACK off, window scaling only on the SYN), initial window 4 segments
  (buflab's RFC 3390 default for a 960-B MSS), an ACK for every segment (buflab has no
  delayed ACKs by default; ns-3 DelAckCount 1), min RTO 200 ms (buflab's default; ns-3's is
  1 s), clock granularity 1 ms (both), send and receive buffers of 20 MB (buflab's
  max_window: cwnd, not rwnd, limits), no ECN, no pacing, limited transmit off (buflab has
  none), classic recovery instead of ns-3's default PRR (buflab's NewReno is RFC 6582 with
  RFC 5681 window inflation), and HyStart off in ns-3's CUBIC (buflab's CUBIC is RFC 9438
  with RFC 5681 slow start). ns-3 gives up a connection after 6 timeouts in a row by default;
  buflab never does, so DataRetries is raised. The variant `sack` (not in the default table)
  turns SACK on at both ends instead (buflab `tcp = "sack"`, RFC 6675 with Limited Transmit;
  ns-3 Sack and LimitedTransmit on): everything else unchanged, it tells a gap that comes
  from the two non-SACK recoveries from one in the rest of the set-up (README).
- Measured the same way: over [warm-up, duration), utilization = bytes of the IP packets that
  left the bottleneck queue × 8 ÷ (100 Mb/s × measured time) (buflab: the serializer's busy
  time over the window, the same thing at 80 µs per 1000 B), and drop rate = drops ÷
  arrivals at the bottleneck queue. ns-3's side reads the queue disc's counters at the end of
  the warm-up and at the end (the simulation is stopped and resumed; no per-packet Python).
  The sojourn time (mean, median, 99th percentile) of the packets the bottleneck sent:
  buflab's summary (`queue_delay_*`); ns-3's from the queue disc's dequeues less its drops
  at dequeue, in 10-µs bins, by a C++ trace sink. Drops are split by cause: the AQM's own
  law, or a full buffer (overflow, and FQ-CoDel's drops from the fattest queue).
- The AQMs (`--queue`): the buffer of B stays the hard limit, as a queue disc of B − 1
  packets in front of the device's one slot (as for drop-tail), and every parameter is
  written on both sides even where the two defaults agree (`aqm_settings`,
  `ns3_queue_disc`; README table). Where ns-3's model differs from buflab's and a setting
  can close the gap, it is set: CoDel's MinBytes is one more than a packet (buflab never
  drops while at most one largest packet is left; ns-3 while fewer than MinBytes bytes are,
  default 1500); FQ-CoDel drops one packet from the fattest queue per overflow
  (DropBatchSize 1; ns-3 and Linux drop up to 64) with a quantum of 1514 B (ns-3's default
  is the device MTU, 1500); PIE estimates the queueing delay from the backlog and the
  dequeue rate (UseDequeueRateEstimator; ns-3's default is the last dequeued packet's
  sojourn time), as buflab divides the backlog by the link's rate. What cannot be set is
  listed in the README.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NS3_VENV = ROOT / "validation" / ".venv-ns3"
# The wheel the issue names (3.44, cppyy-based bindings, built for CPython 3.11).
NS3_REQUIREMENT = "ns3==3.44.*"

# The scenario. Everything below is written into buflab's scenario explicitly, even where it
# is buflab's default, so that the check keeps comparing these settings if a default moves.
RATE_BPS = 100_000_000
ACCESS_BPS = 1_000_000_000
PACKET_BYTES = 1000
# buflab's IP + TCP header on every data packet, also the size of an ACK
# (crates/buflab-core/src/tcp/mod.rs, HEADER_BYTES).
HEADER_BYTES = 40
MSS = PACKET_BYTES - HEADER_BYTES
# RFC 3390's initial window, min(4·MSS, max(2·MSS, 4380 B)) in whole segments: 4 for 960 B.
INITIAL_WINDOW = min(4 * MSS, max(2 * MSS, 4380)) // MSS
MAX_WINDOW_BYTES = 20_000_000
MIN_RTO_MS = 200
RTT_RANGE = "75ms..125ms"
START_RANGE = "0s..5s"
PPP_HEADER_BYTES = 2
# Queues that must never drop (access links, ACK paths), packets.
DEEP_QUEUE_PKTS = 100_000
# How often ns-3's side samples the bottleneck occupancy for the mean queue, seconds.
QUEUE_SAMPLE_S = 0.01

VARIANTS = ("newreno", "cubic", "sack")
DEFAULT_VARIANTS = ("newreno", "cubic")
DEFAULT_BUFFERS = (10, 20, 50, 125, 250, 500, 1250)
# `pie_sojourn`: buflab's PIE beside ns-3's with its own default delay measure, the last
# dequeued packet's sojourn time (UseDequeueRateEstimator false), where `pie` has ns-3 divide
# the backlog by a measured dequeue rate as buflab divides it by the link's rate.
QUEUES = ("droptail", "codel", "fq_codel", "pie", "pie_sojourn")
DEFAULT_QUEUES = ("droptail",)

# The AQMs' settings: buflab's defaults, each its RFC's (docs/scenario.md), written into both
# scenarios. No ECN anywhere: the senders are not ECN-capable, so every decision is a drop.
CODEL_TARGET_MS = 5  # RFC 8289 §4.3 (FQ-CoDel's too, RFC 8290 §5.1)
CODEL_INTERVAL_MS = 100  # RFC 8289 §4.2
FQ_CODEL_FLOWS = 1024  # RFC 8290 §4.1.1, Linux's default
FQ_CODEL_QUANTUM_BYTES = 1514  # RFC 8290 §4.2, Linux's default (one Ethernet MTU)
# Linux's memory_limit. ns-3's FqCoDel has none; here it never binds (1,250 packets: 1.25 MB).
FQ_CODEL_MEMORY_LIMIT = "32MB"
PIE_TARGET_MS = 15  # QDELAY_REF, RFC 8033 §4.2
PIE_TUPDATE_MS = 15  # T_UPDATE, §4.2
PIE_ALPHA = 0.125  # §4.2
PIE_BETA = 1.25  # §4.2
PIE_MAX_BURST_MS = 150  # MAX_BURST, §4.4
PIE_MARK_ECNTH = 0.1  # §5.1 (unused without ECN; set on both sides all the same)
# ns-3's side bins the sojourn times this finely for its percentiles, up to this long.
SOJOURN_BIN_NS = 10_000
SOJOURN_MAX_S = 10


@dataclass(frozen=True)
class Spec:
    """One run, the same on both sides."""

    variant: str
    buffer_pkts: int
    flows: int
    duration_s: float
    warmup_s: float
    seed: int
    queue: str = "droptail"

    @property
    def name(self) -> str:
        queue = "" if self.queue == "droptail" else f"{self.queue}-"
        return f"{self.variant}-{queue}{self.buffer_pkts}pkt"


def buflab_queue(queue: str) -> str:
    """buflab's discipline for a queue of this script (its PIE for both PIE rows)."""
    return "pie" if queue == "pie_sojourn" else queue


def aqm_settings(queue: str) -> dict[str, Any]:
    """buflab's keys for a bottleneck queue `queue`: its RFC defaults, given explicitly."""
    codel = {"target": f"{CODEL_TARGET_MS}ms", "interval": f"{CODEL_INTERVAL_MS}ms", "ecn": False}
    if queue == "codel":
        return {f"codel_{k}": v for k, v in codel.items()}
    if queue == "fq_codel":
        return {
            "fq_codel_flows": FQ_CODEL_FLOWS,
            "fq_codel_quantum": f"{FQ_CODEL_QUANTUM_BYTES}B",
            "fq_codel_memory_limit": FQ_CODEL_MEMORY_LIMIT,
            **{f"fq_codel_{k}": v for k, v in codel.items()},
        }
    if queue in ("pie", "pie_sojourn"):
        return {
            "pie_target": f"{PIE_TARGET_MS}ms",
            "pie_tupdate": f"{PIE_TUPDATE_MS}ms",
            "pie_alpha": PIE_ALPHA,
            "pie_beta": PIE_BETA,
            "pie_max_burst": f"{PIE_MAX_BURST_MS}ms",
            "pie_ecn": False,
            "pie_mark_ecnth": PIE_MARK_ECNTH,
            "pie_derandomize": False,
        }
    return {}


# ---- buflab's side (runs under the project's .venv) ----


def buflab_scenario(spec: Spec) -> dict[str, Any]:
    cc = {"newreno": "reno", "cubic": "cubic", "sack": "reno"}[spec.variant]
    return {
        "name": f"ns3-crosscheck-{spec.name}",
        "seed": spec.seed,
        "duration": f"{spec.duration_s}s",
        "warmup": f"{spec.warmup_s}s",
        "network": {
            "topology": "dumbbell",
            "bottleneck": {
                "rate": f"{RATE_BPS}bps",
                "buffer": f"{spec.buffer_pkts}pkt",
                "queue": buflab_queue(spec.queue),
                **aqm_settings(spec.queue),
            },
            "access": {"rate": f"{ACCESS_BPS}bps"},
            "rtt": RTT_RANGE,
        },
        "traffic": [
            {
                "kind": "long_lived",
                "flows": spec.flows,
                # NewReno loss recovery (RFC 6582) under both window rules; no SACK.
                "tcp": "sack" if spec.variant == "sack" else "newreno",
                "cc": cc,
                "packet": f"{PACKET_BYTES}B",
                "max_window": f"{MAX_WINDOW_BYTES}B",
                "initial_window": INITIAL_WINDOW,
                "min_rto": f"{MIN_RTO_MS}ms",
                "delayed_ack": False,
                "start": START_RANGE,
            }
        ],
    }


def run_buflab(spec: Spec) -> dict[str, Any]:
    import buflab

    started = time.perf_counter()
    result = buflab.run(buflab_scenario(spec))
    wall = time.perf_counter() - started
    s = result.summary
    flows = result.flows
    # Drops by cause: the `aqm` table's row for an AQM bottleneck; drop-tail's are all overflow.
    aqm = result.aqm
    causes = {"law": 0, "overflow": int(s["drops"]), "fattest": 0, "queues": 0}
    if len(aqm):
        row = aqm[aqm["link"] == "bottleneck"].iloc[0]
        causes = {
            "law": int(row["law_drops"]),
            "overflow": int(row["overflow_drops"]),
            "fattest": int(row["fattest_drops"]),
            "queues": int(row["flows"]),
        }
    return {
        "utilization": s["utilization"],
        "drop_rate": s["drop_rate"],
        "arrivals": s["arrivals"],
        "drops": s["drops"],
        "law_drops": causes["law"],
        "overflow_drops": causes["overflow"],
        "fattest_drops": causes["fattest"],
        # FQ-CoDel: queues that held a packet (flows that collide share one).
        "fq_queues": causes["queues"],
        "mean_queue_pkts": s["mean_queue_pkts"],
        "sojourn_mean_s": s["queue_delay_mean_s"],
        "sojourn_p50_s": s["queue_delay_p50_s"],
        "sojourn_p99_s": s["queue_delay_p99_s"],
        "retransmits": s["retransmits"],
        "timeouts": s["timeouts"],
        "goodput_bps": s["goodput_bps"],
        "jain_fairness": s["jain_fairness"],
        # Packets the bottleneck admitted in the window beyond the segments delivered in order
        # in it: copies of data the receiver already held (go-back-N after a timeout, needless
        # resends), up to the change in what is queued and in flight between the window's ends.
        "redundant": s["arrivals"] - s["drops"] - flows["delivered_bytes"].sum() / MSS,
        # The engine's own time, and the call's (scenario checks and tables included).
        "engine_wall_s": s["wall_s"],
        "wall_s": wall,
        "flows": [
            {"flow": int(f), "rtt_s": float(r), "start_s": float(t), "goodput_bps": float(g)}
            for f, r, t, g in zip(
                flows["flow"], flows["rtt_s"], flows["start_s"], flows["goodput_bps"], strict=True
            )
        ],
    }


# ---- ns-3's side (runs under validation/.venv-ns3) ----


def ns3_rate(bps: int) -> str:
    """The PPP DataRate that serializes an IP packet as fast as buflab's link of `bps` does:
    ns-3 counts the 2-byte PPP header too."""
    return f"{bps * (PACKET_BYTES + PPP_HEADER_BYTES) // PACKET_BYTES}bps"


def configure_ns3_tcp(ns: Any, variant: str) -> None:
    """TCP defaults for every socket the run creates (the module header says why each)."""
    sd = ns.Config.SetDefault
    socket_type = {
        "newreno": "ns3::TcpNewReno",
        "cubic": "ns3::TcpCubic",
        "sack": "ns3::TcpNewReno",
    }[variant]
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket_type))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    sd("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(variant == "sack"))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    # buflab's SACK sender sends new data on the first two duplicate ACKs (RFC 6675 step 3);
    # its NewReno sender does not.
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(variant == "sack"))
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("Off"))
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(MIN_RTO_MS)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(False))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(INITIAL_WINDOW))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(MAX_WINDOW_BYTES))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(MAX_WINDOW_BYTES))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1_000_000))


# Counters of TCP events in ns-3, as trace sinks in C++: a Python callback per event would
# cross into the interpreter tens of thousands of times a run. A timeout doubles the RTO
# (TcpSocketBase::ReTxTimeout; up to 60 s), which no other update of it does in practice; a
# fast retransmit enters CA_RECOVERY. Both count every socket of the run from when `Connect`
# is called. The sojourn times of the packets the bottleneck's queue disc sends, from when
# `ConnectQueue` is called: every dequeue adds its packet's time since its enqueue (the
# queue disc's own time stamp), and a drop at dequeue (CoDel's law, FQ-CoDel's fattest
# queue) takes it out again, at the same instant, so the same value; a histogram of
# SOJOURN_BIN_NS bins up to SOJOURN_MAX_S, with the exact sum for the mean.
COUNTERS_CPP = r"""
namespace ns3_crosscheck {
unsigned long long timeouts = 0;
unsigned long long recoveries = 0;
std::vector<long long> sojourn_bins(max_bin + 1, 0);
long long sojourn_n = 0;
long long sojourn_sum_ns = 0;
void CountSojourn(ns3::Ptr<const ns3::QueueDiscItem> item, long long sign) {
    long long ns = (ns3::Simulator::Now() - item->GetTimeStamp()).GetNanoSeconds();
    sojourn_bins[std::min<long long>(ns / bin_ns, max_bin)] += sign;
    sojourn_n += sign;
    sojourn_sum_ns += sign * ns;
}
void OnDequeue(ns3::Ptr<const ns3::QueueDiscItem> item) { CountSojourn(item, 1); }
void OnDropAfterDequeue(ns3::Ptr<const ns3::QueueDiscItem> item, const char*) {
    CountSojourn(item, -1);
}
void ConnectQueue(ns3::Ptr<ns3::QueueDisc> q) {
    q->TraceConnectWithoutContext("Dequeue", ns3::MakeCallback(&OnDequeue));
    q->TraceConnectWithoutContext("DropAfterDequeue", ns3::MakeCallback(&OnDropAfterDequeue));
}
// The q-quantile's bin, as its midpoint in seconds (-1 without samples).
double SojournQuantile(double q) {
    if (sojourn_n <= 0) return -1;
    long long seen = 0;
    for (size_t b = 0; b < sojourn_bins.size(); ++b) {
        seen += sojourn_bins[b];
        if (seen >= q * sojourn_n) return (b + 0.5) * bin_ns * 1e-9;
    }
    return -1;
}
void OnRto(ns3::Time before, ns3::Time after) {
    if (after == before + before || (after > before && after == ns3::Seconds(60))) ++timeouts;
}
void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now) {
    if (now == ns3::TcpSocketState::CA_RECOVERY) ++recoveries;
}
void Connect() {
    std::string sockets = "/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/";
    ns3::Config::ConnectWithoutContext(sockets + "RTO", ns3::MakeCallback(&OnRto));
    ns3::Config::ConnectWithoutContext(sockets + "CongState", ns3::MakeCallback(&OnCongState));
}
}
"""


def ns3_queue_disc(ns: Any, queue: str, limit_pkts: int) -> tuple[str, dict[str, Any]]:
    """ns-3's queue disc for buflab's `queue` holding `limit_pkts`, and the attribute defaults
    that make it buflab's (`aqm_settings`), every one written out, even where ns-3's default
    is the same. FQ-CoDel's quantum is not an attribute: `run_ns3` sets it."""
    size = ns.QueueSizeValue(ns.QueueSize(f"{limit_pkts}p"))
    off = ns.BooleanValue(False)
    never = ns.TimeValue(ns.Time.Max())
    codel = {
        "Target": ns.StringValue(f"{CODEL_TARGET_MS}ms"),
        "Interval": ns.StringValue(f"{CODEL_INTERVAL_MS}ms"),
        "UseEcn": off,
        "UseL4s": off,
        "CeThreshold": never,
    }
    # buflab's CoDel never drops while the packets left after a dequeue hold at most one
    # largest packet (RFC 8289's MAXPACKET, 1000 B here); ns-3's while they hold fewer than
    # MinBytes (default 1500, a queue of one 1000-B packet then also counts as short).
    min_bytes = {"MinBytes": ns.UintegerValue(PACKET_BYTES + 1)}
    if queue == "droptail":
        kind, attributes, extra = "FifoQueueDisc", {"MaxSize": size}, {}
    elif queue == "codel":
        kind, attributes, extra = "CoDelQueueDisc", {"MaxSize": size, **codel, **min_bytes}, {}
    elif queue == "fq_codel":
        kind = "FqCoDelQueueDisc"
        attributes = {
            "MaxSize": size,
            **codel,
            "Flows": ns.UintegerValue(FQ_CODEL_FLOWS),
            # Drop from the fattest queue only what room needs (buflab, RFC 8290 §4.1), not a
            # batch of up to 64 (Linux, ns-3).
            "DropBatchSize": ns.UintegerValue(1),
            "Perturbation": ns.UintegerValue(0),
            "EnableSetAssociativeHash": off,
        }
        # Its per-flow queues are CoDelQueueDiscs, made with these defaults (target, interval
        # and ECN come from the parent).
        extra = {f"ns3::CoDelQueueDisc::{k}": v for k, v in min_bytes.items()}
    elif queue in ("pie", "pie_sojourn"):
        kind = "PieQueueDisc"
        attributes = {
            "MaxSize": size,
            "QueueDelayReference": ns.StringValue(f"{PIE_TARGET_MS}ms"),
            "Tupdate": ns.StringValue(f"{PIE_TUPDATE_MS}ms"),
            "Supdate": ns.StringValue("0s"),
            "A": ns.DoubleValue(PIE_ALPHA),
            "B": ns.DoubleValue(PIE_BETA),
            "MaxBurstAllowance": ns.StringValue(f"{PIE_MAX_BURST_MS}ms"),
            "MeanPktSize": ns.UintegerValue(PACKET_BYTES),
            # The queueing delay as backlog ÷ dequeue rate (RFC 8033 §4.3), as buflab's backlog
            # ÷ link rate; ns-3's default is the last dequeued packet's sojourn time.
            # (`pie_sojourn`: ns-3's default, to see what the estimator changes.)
            "UseDequeueRateEstimator": ns.BooleanValue(queue == "pie"),
            "UseCapDropAdjustment": ns.BooleanValue(True),
            "UseEcn": off,
            "MarkEcnThreshold": ns.DoubleValue(PIE_MARK_ECNTH),
            "UseDerandomization": off,
            # Always active (buflab's PIE has no activation threshold).
            "ActiveThreshold": never,
            "UseL4s": off,
            "CeThreshold": never,
        }
        extra = {}
    else:
        raise ValueError(f"queue {queue!r}: expected one of {', '.join(QUEUES)}")
    defaults = {f"ns3::{kind}::{k}": v for k, v in attributes.items()}
    return f"ns3::{kind}", {**defaults, **extra}


def ns3_attribute(ns: Any, obj: Any, name: str) -> str:
    """An ns-3 object's attribute as ns-3 prints it."""
    value = ns.StringValue()
    obj.GetAttribute(name, value)
    return str(value.Get())


def ns3_drop_reasons(stats: Any) -> dict[str, int]:
    """A queue disc's drops so far by ns-3's reasons, each prefixed by when it dropped
    ("enqueue: ", "dequeue: ")."""
    return {
        f"{when}: {pair.first}": int(pair.second)
        for when, reasons in (
            ("enqueue", stats.nDroppedPacketsBeforeEnqueue),
            ("dequeue", stats.nDroppedPacketsAfterDequeue),
        )
        for pair in reasons
    }


def drop_causes(queue: str, reasons: dict[str, int]) -> dict[str, int]:
    """ns-3's drops by buflab's causes: the AQM's law (CoDel's "Target exceeded drop", also
    from FQ-CoDel's flow queues; PIE's "Unforced drop"), FQ-CoDel's drops from the fattest
    queue (its own "Overlimit drop" at dequeue) and overflow (the rest: a full buffer)."""
    causes = {"law": 0, "fattest": 0, "overflow": 0}
    for reason, n in reasons.items():
        if reason.endswith("Target exceeded drop") or reason == "enqueue: Unforced drop":
            causes["law"] += n
        elif queue == "fq_codel" and reason == "dequeue: Overlimit drop":
            causes["fattest"] += n
        else:
            causes["overflow"] += n
    return causes


def run_ns3(spec: Spec, flows: list[dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    import cppyy
    from ns import ns

    max_bin = SOJOURN_MAX_S * 10**9 // SOJOURN_BIN_NS
    cppyy.cppdef(
        f"namespace ns3_crosscheck {{ const long long bin_ns = {SOJOURN_BIN_NS}; "
        f"const long long max_bin = {max_bin}; }}"
    )
    cppyy.cppdef(COUNTERS_CPP)
    counters = cppyy.gbl.ns3_crosscheck
    imported = time.perf_counter()
    configure_ns3_tcp(ns, spec.variant)
    # Created before any device exists, so every device queue starts deep; the bottleneck's
    # is cut to one packet below.
    ns.Config.SetDefault(
        "ns3::DropTailQueue<Packet>::MaxSize", ns.StringValue(f"{DEEP_QUEUE_PKTS}p")
    )
    if spec.buffer_pkts < 2:
        raise SystemExit(
            "ns-3 side: the buffer is a queue disc of B - 1 plus one device slot; B >= 2"
        )
    qdisc_type, qdisc_defaults = ns3_queue_disc(ns, spec.queue, spec.buffer_pkts - 1)
    for name, value in qdisc_defaults.items():
        ns.Config.SetDefault(name, value)

    n = len(flows)
    senders = ns.NodeContainer()
    senders.Create(n)
    middle = ns.NodeContainer()
    middle.Create(2)
    router, receiver = middle.Get(0), middle.Get(1)
    ns.InternetStackHelper().InstallAll()

    p2p = ns.PointToPointHelper()
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    every_device = ns.NetDeviceContainer()

    p2p.SetDeviceAttribute("DataRate", ns.StringValue(ns3_rate(RATE_BPS)))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(0)))
    bottleneck = p2p.Install(router, receiver)
    receiver_address = addresses.Assign(bottleneck).GetAddress(1)
    every_device.Add(bottleneck)

    access_queues = []
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(ns3_rate(ACCESS_BPS)))
    for i, f in enumerate(flows):
        addresses.NewNetwork()
        # buflab: access delay = rtt/2 − bottleneck delay (0 here), each way.
        delay_ns = round(f["rtt_s"] / 2 * 1e9)
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(delay_ns)))
        link = p2p.Install(senders.Get(i), router)
        addresses.Assign(link)
        every_device.Add(link)
        access_queues.append(ns.DynamicCast[ns.PointToPointNetDevice](link.Get(0)).GetQueue())

    # The address helper installed its default queue disc on every device: remove them all,
    # then give the bottleneck its one FIFO (module header).
    ns.TrafficControlHelper().Uninstall(every_device)
    device = ns.DynamicCast[ns.PointToPointNetDevice](bottleneck.Get(0))
    device_queue = device.GetQueue()
    device_queue.SetMaxSize(ns.QueueSize("1p"))
    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc(qdisc_type)
    qdisc = tch.Install(bottleneck.Get(0)).Get(0)
    if spec.queue == "fq_codel":
        # Before the queue disc is initialized (at the start of the run), which would set
        # the device's MTU (1500) as the quantum.
        ns.DynamicCast[ns.FqCoDelQueueDisc](qdisc).SetQuantum(FQ_CODEL_QUANTUM_BYTES)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    sinks = []
    for i, f in enumerate(flows):
        port = 10_000 + i
        any_address = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", any_address).Install(receiver)
        sink.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](sink.Get(0)))
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(receiver_address, port).ConvertTo()
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        # Large writes keep the send buffer full with few (virtual, zero-filled) packets.
        bulk.SetAttribute("SendSize", ns.UintegerValue(100 * MSS))
        app = bulk.Install(senders.Get(i))
        # ns-3 opens each connection with a handshake (buflab's long-lived flows send at
        # once), so its data starts one RTT later; the warm-up covers it.
        app.Start(ns.NanoSeconds(round(f["start_s"] * 1e9)))

    def snapshot() -> dict[str, Any]:
        st = qdisc.GetStats()
        return {
            "reasons": ns3_drop_reasons(st),
            "timeouts": int(counters.timeouts),
            "recoveries": int(counters.recoveries),
            "arrivals": int(st.nTotalReceivedPackets),
            "drops": int(st.nTotalDroppedPackets),
            "sent_pkts": int(st.nTotalSentPackets),
            "sent_bytes": int(st.nTotalSentBytes),
            "rx": [int(s.GetTotalRx()) for s in sinks],
            "tx": [int(q.GetTotalReceivedPackets()) for q in access_queues],
        }

    built = time.perf_counter()
    ns.Simulator.Stop(ns.Seconds(spec.warmup_s))
    ns.Simulator.Run()
    # Every flow has started (and made its socket) by the end of the warm-up; the counters
    # see the measured window only.
    counters.Connect()
    counters.ConnectQueue(qdisc)
    first = snapshot()
    # The measured window in short steps, sampling the waiting packets at each.
    steps = max(1, round((spec.duration_s - spec.warmup_s) / QUEUE_SAMPLE_S))
    end = ns.Seconds(spec.duration_s)
    samples = 0
    for k in range(1, steps + 1):
        ns.Simulator.Stop(ns.Seconds(spec.warmup_s + k * QUEUE_SAMPLE_S) - ns.Simulator.Now())
        ns.Simulator.Run()
        samples += qdisc.GetNPackets() + device_queue.GetNPackets()
    if ns.Simulator.Now() < end:
        ns.Simulator.Stop(end - ns.Simulator.Now())
        ns.Simulator.Run()
    last = snapshot()
    ran = time.perf_counter()
    sojourn_n = int(counters.sojourn_n)
    reasons = {
        k: v - first["reasons"].get(k, 0)
        for k, v in last["reasons"].items()
        if v > first["reasons"].get(k, 0)
    }
    causes = drop_causes(spec.queue, reasons)
    # What ns-3 ran with, read back from the queue disc (and one of FQ-CoDel's flow queues).
    applied = {}
    for name in qdisc_defaults:
        owner, attribute = name.rsplit("::", 1)
        if owner == qdisc_type:
            applied[attribute] = ns3_attribute(ns, qdisc, attribute)
    fq_queues = 0
    if spec.queue == "fq_codel":
        applied["Quantum"] = str(ns.DynamicCast[ns.FqCoDelQueueDisc](qdisc).GetQuantum())
        fq_queues = int(qdisc.GetNQueueDiscClasses())
        if fq_queues:
            child = qdisc.GetQueueDiscClass(0).GetQueueDisc()
            for attribute in ("MinBytes", "Target", "Interval", "UseEcn", "MaxSize"):
                applied[f"flow queue {attribute}"] = ns3_attribute(ns, child, attribute)
    ns.Simulator.Destroy()

    measured = spec.duration_s - spec.warmup_s
    arrivals = last["arrivals"] - first["arrivals"]
    drops = last["drops"] - first["drops"]
    sent_pkts = last["sent_pkts"] - first["sent_pkts"]
    sent_bytes = last["sent_bytes"] - first["sent_bytes"]
    goodput = [(b - a) * 8 / measured for a, b in zip(first["rx"], last["rx"], strict=True)]
    data_sent = sum(b - a for a, b in zip(first["tx"], last["tx"], strict=True))
    delivered_segments = sum(b - a for a, b in zip(first["rx"], last["rx"], strict=True)) / MSS
    return {
        "utilization": sent_bytes * 8 / (RATE_BPS * measured),
        "drop_rate": drops / arrivals if arrivals else 0.0,
        "arrivals": arrivals,
        "drops": drops,
        **{f"{cause}_drops": n for cause, n in causes.items()},
        "drop_reasons": reasons,
        # FQ-CoDel: flow queues made (each when its first packet came), over the whole run.
        "fq_queues": fq_queues,
        "mean_queue_pkts": samples / steps,
        "sojourn_mean_s": int(counters.sojourn_sum_ns) / sojourn_n * 1e-9
        if sojourn_n
        else float("nan"),
        "sojourn_p50_s": float(counters.SojournQuantile(0.5)),
        "sojourn_p99_s": float(counters.SojournQuantile(0.99)),
        "queue_attributes": applied,
        # Segments sent beyond those delivered in the window: retransmissions, up to the
        # change in data in flight between the window's two ends.
        "retransmits": round(data_sent - delivered_segments),
        "timeouts": last["timeouts"] - first["timeouts"],
        "recoveries": last["recoveries"] - first["recoveries"],
        # As buflab's side (run_buflab).
        "redundant": arrivals - drops - delivered_segments,
        "goodput_bps": sum(goodput),
        "jain_fairness": sum(goodput) ** 2 / (n * sum(g * g for g in goodput)) if n else 0.0,
        # Bytes per packet leaving the bottleneck: 1000 if ns-3's data packets match buflab's
        # (a few 40-byte handshake packets fall before the window).
        "bytes_per_pkt": sent_bytes / sent_pkts if sent_pkts else 0.0,
        "import_s": imported - started,
        "build_s": built - imported,
        "run_s": ran - built,
        "wall_s": ran - imported,
        "flows": [
            {"flow": f["flow"], "goodput_bps": g} for f, g in zip(flows, goodput, strict=True)
        ],
    }


# ---- the driver ----


def python_of(venv: Path) -> Path:
    return venv / "bin" / "python"


def setup_ns3(python: str) -> None:
    """Creates validation/.venv-ns3 with the ns3 wheel (again: a no-op if it is there)."""
    if not python_of(NS3_VENV).exists():
        print(f"creating {NS3_VENV.relative_to(ROOT)} with {python}")
        subprocess.run([python, "-m", "venv", str(NS3_VENV)], check=True)
    pip = [str(python_of(NS3_VENV)), "-m", "pip", "install"]
    subprocess.run([*pip, NS3_REQUIREMENT], check=True)
    subprocess.run(
        [str(python_of(NS3_VENV)), "-c", "from ns import ns; ns.Simulator.Now()"], check=True
    )
    print(f"ready: {python_of(NS3_VENV).relative_to(ROOT)} imports ns-3")


def run_side(side: str, spec: Spec, python: Path, out: Path, extra: list[str]) -> dict[str, Any]:
    """Runs one side in a child process; its result is the JSON it writes to `out`."""
    log = out.with_suffix(".log")
    cmd = [str(python), str(Path(__file__).resolve()), "--side", side, "--spec"]
    cmd += [json.dumps(asdict(spec)), "--result", str(out), *extra]
    started = time.perf_counter()
    with open(log, "w") as stream:
        done = subprocess.run(cmd, stdout=stream, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{side} side of {spec.name} failed (exit {done.returncode}); see {log}")
    result = json.loads(out.read_text())
    result["process_s"] = time.perf_counter() - started
    out.write_text(json.dumps(result))
    return result


def run_pair(spec: Spec, args: argparse.Namespace, runs: Path) -> dict[str, Any]:
    b_out = runs / f"{spec.name}-buflab.json"
    n_out = runs / f"{spec.name}-ns3.json"
    results = {}
    for side, out in (("buflab", b_out), ("ns3", n_out)):
        if args.reuse and out.exists():
            old = json.loads(out.read_text())
            if old.get("spec") == asdict(spec):
                results[side] = old
                continue
        if side == "buflab":
            results[side] = run_side(side, spec, Path(args.buflab_python), out, [])
        else:
            results[side] = run_side(
                side, spec, Path(args.ns3_python), out, ["--flows-from", str(b_out)]
            )
    return row_of(spec, results["buflab"], results["ns3"])


def row_of(spec: Spec, b: dict[str, Any], n: dict[str, Any]) -> dict[str, Any]:
    pct = 100.0

    def redundant_pct(r: dict[str, Any]) -> float:
        admitted = r["arrivals"] - r["drops"]
        return r["redundant"] / admitted * pct if admitted else 0.0

    def share(r: dict[str, Any], *causes: str) -> float:
        return sum(r[f"{c}_drops"] for c in causes) / r["arrivals"] * pct if r["arrivals"] else 0.0

    ms = 1000.0
    return {
        "buffer_pkts": spec.buffer_pkts,
        "variant": spec.variant,
        "queue": spec.queue,
        "buflab_util_pct": b["utilization"] * pct,
        "ns3_util_pct": n["utilization"] * pct,
        "delta_util_pts": (n["utilization"] - b["utilization"]) * pct,
        "buflab_drop_pct": b["drop_rate"] * pct,
        "ns3_drop_pct": n["drop_rate"] * pct,
        "delta_drop_pts": (n["drop_rate"] - b["drop_rate"]) * pct,
        "buflab_wall_s": b["wall_s"],
        "ns3_wall_s": n["wall_s"],
        "buflab_queue_pkts": b["mean_queue_pkts"],
        "ns3_queue_pkts": n["mean_queue_pkts"],
        "buflab_timeouts": b["timeouts"],
        "ns3_timeouts": n["timeouts"],
        "ns3_recoveries": n["recoveries"],
        "buflab_retransmits": b["retransmits"],
        "ns3_retransmits": n["retransmits"],
        "buflab_redundant_pct": redundant_pct(b),
        "ns3_redundant_pct": redundant_pct(n),
        "buflab_arrivals": b["arrivals"],
        "ns3_arrivals": n["arrivals"],
        "buflab_goodput_mbps": b["goodput_bps"] / 1e6,
        "ns3_goodput_mbps": n["goodput_bps"] / 1e6,
        "buflab_jain": b["jain_fairness"],
        "ns3_jain": n["jain_fairness"],
        # Drops by cause, % of arrivals: the AQM's law, and a full buffer (overflow, with
        # FQ-CoDel's drops from the fattest queue).
        "buflab_law_drop_pct": share(b, "law"),
        "ns3_law_drop_pct": share(n, "law"),
        "buflab_full_drop_pct": share(b, "overflow", "fattest"),
        "ns3_full_drop_pct": share(n, "overflow", "fattest"),
        "buflab_sojourn_mean_ms": b["sojourn_mean_s"] * ms,
        "ns3_sojourn_mean_ms": n["sojourn_mean_s"] * ms,
        "buflab_sojourn_p50_ms": b["sojourn_p50_s"] * ms,
        "ns3_sojourn_p50_ms": n["sojourn_p50_s"] * ms,
        "buflab_sojourn_p99_ms": b["sojourn_p99_s"] * ms,
        "ns3_sojourn_p99_ms": n["sojourn_p99_s"] * ms,
        "buflab_fq_queues": b["fq_queues"],
        "ns3_fq_queues": n["fq_queues"],
        "ns3_bytes_per_pkt": n["bytes_per_pkt"],
        "buflab_engine_wall_s": b["engine_wall_s"],
        "ns3_import_s": n["import_s"],
        "ns3_process_s": n["process_s"],
        "flows": spec.flows,
        "duration_s": spec.duration_s,
        "warmup_s": spec.warmup_s,
        "seed": spec.seed,
    }


TABLE = (
    ("buffer", "buffer_pkts", "{}"),
    ("variant", "variant", "{}"),
    ("queue", "queue", "{}"),
    ("buflab util %", "buflab_util_pct", "{:.2f}"),
    ("ns-3 util %", "ns3_util_pct", "{:.2f}"),
    ("Δ", "delta_util_pts", "{:+.2f}"),
    ("buflab drop %", "buflab_drop_pct", "{:.3f}"),
    ("ns-3 drop %", "ns3_drop_pct", "{:.3f}"),
    ("Δ", "delta_drop_pts", "{:+.3f}"),
    ("buflab wall s", "buflab_wall_s", "{:.2f}"),
    ("ns-3 wall s", "ns3_wall_s", "{:.1f}"),
)


# What the gaps come from (README, "Reading the table"): buflab / ns-3 side by side.
DIAGNOSTICS = (
    ("buffer", "{buffer_pkts}"),
    ("variant", "{variant}"),
    ("queue", "{queue}"),
    ("mean queue, pkts", "{buflab_queue_pkts:.1f} / {ns3_queue_pkts:.1f}"),
    ("timeouts", "{buflab_timeouts} / {ns3_timeouts}"),
    ("retransmits", "{buflab_retransmits} / {ns3_retransmits}"),
    ("redundant %", "{buflab_redundant_pct:.2f} / {ns3_redundant_pct:.2f}"),
    ("goodput Mb/s", "{buflab_goodput_mbps:.1f} / {ns3_goodput_mbps:.1f}"),
    ("Jain", "{buflab_jain:.3f} / {ns3_jain:.3f}"),
)

# What the queue disciplines did, buflab / ns-3 (shown when a run is not drop-tail).
QUEUEING = (
    ("buffer", "{buffer_pkts}"),
    ("variant", "{variant}"),
    ("queue", "{queue}"),
    ("law drops %", "{buflab_law_drop_pct:.3f} / {ns3_law_drop_pct:.3f}"),
    ("full-buffer drops %", "{buflab_full_drop_pct:.3f} / {ns3_full_drop_pct:.3f}"),
    ("sojourn mean, ms", "{buflab_sojourn_mean_ms:.2f} / {ns3_sojourn_mean_ms:.2f}"),
    ("sojourn p50, ms", "{buflab_sojourn_p50_ms:.2f} / {ns3_sojourn_p50_ms:.2f}"),
    ("sojourn p99, ms", "{buflab_sojourn_p99_ms:.2f} / {ns3_sojourn_p99_ms:.2f}"),
    ("FQ queues", "{buflab_fq_queues} / {ns3_fq_queues}"),
)


def shown(columns: tuple[tuple[str, ...], ...], rows: list[dict[str, Any]]) -> list[Any]:
    """The columns for `rows`: without the queue column when every run is drop-tail (the
    table as it was before queues were a choice)."""
    if any(r["queue"] != "droptail" for r in rows):
        return list(columns)
    return [c for c in columns if c[0] != "queue"]


def markdown(rows: list[dict[str, Any]]) -> str:
    def table(heads: list[str], body: list[list[str]]) -> list[str]:
        align = [":---" if h in ("variant", "queue") else "---:" for h in heads]
        return [f"| {' | '.join(r)} |" for r in (heads, align, *body)]

    def described(columns: list[tuple[str, str]]) -> list[str]:
        return table([h for h, _ in columns], [[f.format(**r) for _, f in columns] for r in rows])

    columns = shown(TABLE, rows)
    main = table(
        [h for h, _, _ in columns], [[f.format(r[k]) for _, k, f in columns] for r in rows]
    )
    diag = described(shown(DIAGNOSTICS, rows))
    r0 = rows[0]
    setting = (
        f"{r0['flows']} flows, {r0['duration_s']:g} s simulated, {r0['warmup_s']:g} s warm-up, "
        f"seed {r0['seed']}. Δ = ns-3 − buflab, in points."
    )
    notes = "Over the measured window, buflab / ns-3:"
    parts = [setting, "", *main, "", notes, "", *diag]
    if any(r["queue"] != "droptail" for r in rows):
        queueing = "The queue disciplines over the measured window, buflab / ns-3:"
        parts += ["", queueing, "", *described(shown(QUEUEING, rows))]
    return "\n".join(parts) + "\n"


def plain(rows: list[dict[str, Any]]) -> str:
    columns = shown(TABLE, rows)
    cells = [[h for h, _, _ in columns]] + [[f.format(r[k]) for _, k, f in columns] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Run one dumbbell in buflab and in ns-3 with matched settings and print "
        "utilization and drop rate side by side (see validation/README.md).",
    )
    p.add_argument(
        "--setup", action="store_true", help="create validation/.venv-ns3 with ns-3 and exit"
    )
    p.add_argument(
        "--setup-python",
        default="python3.11",
        help="interpreter for --setup's venv (default %(default)s)",
    )
    p.add_argument(
        "--buffers", help="bottleneck buffers, packets (default 10,20,50,125,250,500,1250)"
    )
    p.add_argument("--variants", help="newreno, cubic or both (default newreno,cubic)")
    p.add_argument(
        "--queue",
        help="bottleneck queue disciplines: droptail, codel, fq_codel, pie, pie_sojourn (PIE with "
        "ns-3's default delay measure), comma-separated (default droptail)",
    )
    p.add_argument("--flows", type=int, help="long-lived flows (default 100)")
    p.add_argument("--duration", type=float, help="simulated seconds (default 60)")
    p.add_argument("--warmup", type=float, help="seconds left out of the measurement (default 20)")
    p.add_argument("--seed", type=int, default=1, help="buflab's scenario seed (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="runs at once, at most 2 (default 1)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: 10 flows, 10 s with 5 s warm-up, buffers 20 and 250 "
        "(explicit options win)",
    )
    p.add_argument(
        "--out",
        default=str(ROOT / "out" / "ns3-crosscheck"),
        help="output directory (default %(default)s)",
    )
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep per-run results already in OUT/runs for the same settings",
    )
    p.add_argument(
        "--buflab-python", default=str(python_of(ROOT / ".venv")), help="interpreter with buflab"
    )
    p.add_argument("--ns3-python", default=str(python_of(NS3_VENV)), help="interpreter with ns-3")
    # The children's arguments.
    p.add_argument("--side", choices=("buflab", "ns3"), help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--flows-from", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    quick = {
        "buffers": "20,250",
        "variants": "newreno,cubic",
        "queue": ",".join(DEFAULT_QUEUES),
        "flows": 10,
        "duration": 10.0,
        "warmup": 5.0,
    }
    full = {
        "buffers": ",".join(map(str, DEFAULT_BUFFERS)),
        "variants": ",".join(DEFAULT_VARIANTS),
        "queue": ",".join(DEFAULT_QUEUES),
        "flows": 100,
        "duration": 60.0,
        "warmup": 20.0,
    }
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if not 1 <= args.jobs <= 2:
        p.error("--jobs: 1 or 2 (one run of each simulator is single-threaded)")
    if not 0 <= args.warmup < args.duration:
        p.error("--warmup must be at least 0 and below --duration")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.side:
        spec = Spec(**json.loads(args.spec))
        if args.side == "buflab":
            result = run_buflab(spec)
        else:
            flows = json.loads(Path(args.flows_from).read_text())["flows"]
            result = run_ns3(spec, flows)
        result["spec"] = asdict(spec)
        Path(args.result).write_text(json.dumps(result))
        return 0
    if args.setup:
        setup_ns3(args.setup_python)
        return 0

    buffers = [int(b) for b in str(args.buffers).split(",")]
    variants = [v.strip() for v in str(args.variants).split(",")]
    queues = [q.strip() for q in str(args.queue).split(",")]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown or any(b < 2 for b in buffers):
        print(f"error: variants are {VARIANTS}, buffers at least 2 packets", file=sys.stderr)
        return 2
    for q in queues:
        if q not in QUEUES:
            expected = ", ".join(QUEUES)
            print(f"error: --queue: unknown queue {q!r}; expected {expected}", file=sys.stderr)
            return 2
    for python, what in ((args.buflab_python, "bash scripts/setup"), (args.ns3_python, "--setup")):
        if not Path(python).exists():
            print(f"error: {python} not found; run {what} first", file=sys.stderr)
            return 1
    specs = [
        Spec(v, b, args.flows, args.duration, args.warmup, args.seed, q)
        for v in variants
        for q in queues
        for b in buffers
    ]
    out = Path(args.out)
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)

    print(
        f"{len(specs)} runs: {args.flows} flows, {args.duration:g} s ({args.warmup:g} s warm-up), "
        f"{args.jobs} at a time; results in {out}",
        flush=True,
    )
    rows: list[dict[str, Any]] = []

    def one(spec: Spec) -> dict[str, Any]:
        row = run_pair(spec, args, runs)
        print(
            f"  {spec.name}: util {row['buflab_util_pct']:.2f} / {row['ns3_util_pct']:.2f} %, "
            f"drops {row['buflab_drop_pct']:.3f} / {row['ns3_drop_pct']:.3f} %, "
            f"sojourn {row['buflab_sojourn_mean_ms']:.2f} / {row['ns3_sojourn_mean_ms']:.2f} ms "
            f"(buflab / ns-3; wall {row['buflab_wall_s']:.1f} / {row['ns3_wall_s']:.1f} s)",
            flush=True,
        )
        return row

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(one, specs))
    rows.sort(
        key=lambda r: (VARIANTS.index(r["variant"]), QUEUES.index(r["queue"]), r["buffer_pkts"])
    )

    with open(out / "crosscheck.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "crosscheck.md").write_text(markdown(rows))
    print()
    print(plain(rows))
    print(f"\nwrote {out / 'crosscheck.csv'} and {out / 'crosscheck.md'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
