"""What of a scenario the emulator realises, and the flows it will start.

Read first: `buflab.engine.runner` (`validate` fills in every default, so each key is looked
at with its value). A scenario the emulator cannot realise yet is refused before anything is
created, naming the key; a key whose meaning on Linux TCP is only near the model's is mapped
and the mapping returned as a note, printed with the run — never silently ignored. So is a
scenario beyond what the traffic generator keeps up with on this machine (`GENERATOR_*`,
measured).

The flows' start times, round-trip times and placements (machine, class) are the
simulator's own draws for the scenario's seed (a zero-length simulation returns them in its
flows table; an open-loop entry's slots, which the simulator adds as arrivals come, are drawn
by `_core.flow_slots` for the ids they will take), so that the same scenario and seed give
the same flows in both; the traffic generator draws file sizes, think times and gaps itself,
with the simulator's models and streams (the `buflab-emu` crate's `traffic` module).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from buflab.engine import ScenarioError, core, scenario_json
from buflab.engine.emulation.testbed import RECEIVER_IP
from buflab.engine.runner import run as simulate
from buflab.engine.runner import validate
from buflab.engine.units import parse_bytes, parse_rate, parse_time

# The fastest bottleneck the datapath keeps up with here (1 Gb/s of TCP measured with room to
# spare; its copying sockets top out near 2.5 Gb/s between namespaces).
MAX_RATE_BPS = 2 * 10**9
# Linux's congestion controls by the simulator's names; the machine's own list decides.
CC_NAMES = {"reno": "reno", "cubic": "cubic", "bbr": "bbr"}
# The most the traffic generator is given on a 2-core machine (one core for it and the
# hosts' kernels, the other the datapath's): users (each a state machine, a timer and, while
# it downloads, a connection), connections opened per second at most (users ÷ their shortest
# cycle, a think time and a handshake round trip, plus open-loop arrivals) and UDP datagrams
# per second. Measured on an idle 2-core machine (closed-loop users, 10-KB Pareto files,
# 20-ms RTT, 1-Gb/s bottleneck, 30-s runs): 1,000 users opening 482 connections a second kept
# every timer within 0.64 ms at the 99th percentile on 7 % of a core; 2,000 users (976/s)
# 1.1 ms; 4,000 users (1,945/s) 1.3 ms; 4,000 users (2,896/s) 2.7 ms on 38 % of a core, every
# download still started and finished at the offered rate. So these bounds are what the
# generator sustains; above about 1,000 connections a second its timers are late by more
# than a millisecond, which a run reports (`generator_faithful`) rather than refuses.
GENERATOR_USERS = 4000
GENERATOR_CONNECTIONS_PER_S = 3000
GENERATOR_DATAGRAMS_PER_S = 100_000
# Open-loop flow slots the generator may open (the simulator's are unbounded): RTTs and
# placements are drawn for this many before the run.
OPEN_LOOP_SLOTS = 4096
# Why each topology but the dumbbell is not emulated: the datapath is one bottleneck.
NO_EMULATION_OF = {
    "switch": "the switch fabric has no emulation (the datapath is one output link)",
    "parking_lot": "a chain of bottlenecks has no emulation (the datapath is one link)",
    "network": "a network of routers has no emulation (the datapath is one link)",
    "tree": "a tree of routers has no emulation (the datapath is one link)",
    "layered": "a network of routers has no emulation (the datapath is one link)",
}
# A live run's spare long-lived flow slots (`buflab serve --emulate`): the flows the page may
# open during one run, each with its address and access link in the datapath from the start,
# idle until opened (a slot is used once). Idle slots cost the datapath nothing per frame;
# the bound keeps the flows file and the generator's senders small.
SPARE_FLOWS = 500
# What a live run's long-lived sender keeps written but unsent in its socket
# (TCP_NOTSENT_LOWAT): a flow closed from the page stops within that much (1 ms at 1 Gb/s)
# instead of draining a send buffer of megabytes.
LIVE_NOTSENT_LOWAT = 128 * 1024
# The TCP kinds, and the finite-transfer ones (users with a client and a server).
TCP_KINDS = ("long_lived", "closed_loop", "repeated_downloads", "open_loop")
USER_KINDS = ("closed_loop", "repeated_downloads", "open_loop")
UDP_KINDS = ("udp_poisson", "udp_cbr")
# Frame bytes around a UDP datagram's payload: Ethernet, IPv4, UDP.
UDP_HEADERS = 14 + 20 + 8
# The simulator's TCP variants on Linux: SACK is always on there, and `linux` is the model of
# what runs there.
VARIANT_NOTES = {
    "linux": None,
    "sack": None,
    "newreno": 'tcp = "newreno": Linux always negotiates SACK; runs as NewReno with SACK',
    "reno": 'tcp = "reno": Linux always negotiates SACK; runs as NewReno with SACK',
}
# Frame bytes around a segment's payload: Ethernet (14), IPv4 (20) and TCP (20) headers.
# Linux's TCP_MAXSEG counts TCP options (12 bytes of timestamps) inside the MSS, so an MSS of
# `packet - HEADERS` gives frames of exactly `packet` bytes, as the simulator's packets are.
HEADERS = 14 + 20 + 20
# The flows table's columns that say which flow a row is, not what it did.
IDENTITY = (
    "flow",
    "traffic",
    "kind",
    "tcp",
    "cc",
    "rtt_s",
    "start_s",
    "machine",
    "class",
    "input",
    "output",
)
# How often a traced flow's TCP_INFO is read when the scenario asks for every change.
TRACE_SAMPLE_S = 0.001


@dataclass
class Plan:
    """One emulation: the bottleneck, the links in front of it, and the flows with their
    start times, RTTs and placements."""

    duration_s: float
    warmup_s: float
    rate_bps: int
    buffer: str
    # The bottleneck's discipline and its keys (`red_min_th`, ...), run by the datapath with
    # the simulator's code and random stream (`seed`); the random loss before it.
    queue: str
    queue_params: dict[str, Any]
    loss: float
    ecn: bool
    seed: int
    # `emulation.offloads`: TSO, GSO and GRO left on (the datapath then moves super-packets);
    # `emulation.segment`: the datapath cuts them into MSS segments at the access link.
    offloads: bool
    segment: bool
    # `emulation.gso_segments`: the senders' devices' gso_max_segs (0: the kernel's own).
    gso_segments: int
    # `network.access`: each flow's access link (machines = 0), or the machines' class
    # queues and NIC links, emulated in the datapath; the cross link cross traffic leaves by.
    access: dict[str, Any]
    cross_link: dict[str, Any] | None
    cc: str
    mss: int
    packet: int
    # Each flow's identity columns of the flows table (flow, traffic, kind, tcp, cc, rtt_s,
    # start_s, machine, class, input, output), as the simulator's own table has them, and
    # whether it is cross traffic.
    flows: list[dict[str, Any]]
    cross: list[bool]
    max_window: int
    pacing_bps: int | None
    # The validated scenario: the traffic generator reads the entries' models from it.
    scenario: dict[str, Any] = field(default_factory=dict)
    # The open-loop entry, if any: its index, the flow id of its first slot, and each slot's
    # identity as the simulator would draw it (`_core.flow_slots`).
    open_loop: dict[str, Any] | None = None
    # Linux acknowledges every segment at once (TCP_QUICKACK after every read) when the
    # scenario turns delayed ACKs off.
    quickack: bool = False
    # `monitor.trace_flows`, and how often their TCP_INFO is sampled.
    trace_flows: list[int] = field(default_factory=list)
    trace_interval_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    # The live auto-sizer (`[autosize]` with a target): the buffer starts at its `start` and
    # the runner drives it through the datapath's control channel.
    autosize: bool = False
    # A live run's spare long-lived flow slots: their entry, the flow id of the first, and each
    # slot's identity as the simulator would draw it (`_core.flow_slots`).
    spare: dict[str, Any] | None = None

    @property
    def machines(self) -> int:
        """Sender machines (namespaces): `network.access.machines`, at least one."""
        return max(1, int(self.access["machines"]))

    @property
    def starts_s(self) -> list[float]:
        return [float(f["start_s"]) for f in self.flows]

    @property
    def rtts_s(self) -> list[float]:
        return [float(f["rtt_s"]) for f in self.flows]

    def kind_of(self, entry: int) -> str:
        return str(self.scenario["traffic"][entry]["kind"])

    def flows_file(self) -> dict[str, Any]:
        """The datapath's `--flows` file: every flow's RTT, machine, class and whether it is
        cross traffic, open-loop slots included, and the links in front of the bottleneck."""
        rows = list(self.flows)
        if self.open_loop is not None:
            rows += self.open_loop["slots"]
        if self.spare is not None:
            rows += self.spare["slots"]
        return {
            "rtt_s": [float(f["rtt_s"]) for f in rows],
            "machine": [max(0, int(f["machine"])) for f in rows],
            "class": [max(0, int(f["class"])) for f in rows],
            "cross": [*self.cross, *([False] * (len(rows) - len(self.flows)))],
            "traffic": [int(f["traffic"]) for f in rows],
            "access": self.access,
            "cross_link": self.cross_link,
        }

    def traffic_plan(self) -> dict[str, Any]:
        """The traffic generator's `--plan` file (`buflab_emu::traffic::Plan`)."""
        return {
            "scenario": self.scenario,
            "duration_s": self.duration_s,
            "warmup_s": self.warmup_s,
            "receiver": RECEIVER_IP,
            "tcp": {
                "cc": self.cc,
                "mss": self.mss,
                "pacing_bps": self.pacing_bps,
                "window_clamp": self.max_window,
                "quickack": self.quickack,
                "notsent_lowat": LIVE_NOTSENT_LOWAT if self.spare is not None else None,
            },
            "flows": [
                {
                    "flow": int(f["flow"]),
                    "traffic": int(f["traffic"]),
                    "machine": max(0, int(f["machine"])),
                    "start_s": float(f["start_s"]),
                }
                for f in self.flows
            ],
            "open_loop": None
            if self.open_loop is None
            else {
                "traffic": self.open_loop["traffic"],
                "first": self.open_loop["first"],
                "slots": len(self.open_loop["slots"]),
            },
            "spare": None
            if self.spare is None
            else {
                "traffic": self.spare["traffic"],
                "first": self.spare["first"],
                "slots": len(self.spare["slots"]),
            },
            "trace": {"flows": self.trace_flows, "interval_s": self.trace_interval_s}
            if self.trace_flows
            else None,
        }


def refuse(key: str, value: Any, expected: str) -> ScenarioError:
    return ScenarioError(f"{key}: got {value!r}; expected {expected} (emulation)")


def plan(scenario: dict[str, Any], available_cc: list[str], *, live: bool = False) -> Plan:
    """The emulation of `scenario`, or a ScenarioError naming the first key it cannot realise.
    `live`: a run whose long-lived flows change while it runs (`buflab serve --emulate`): it
    gets `SPARE_FLOWS` spare slots for the first long-lived entry, when its flows may change
    (no machines)."""
    s = validate(scenario)
    net = s["network"]
    if net["topology"] != "dumbbell":
        why = NO_EMULATION_OF.get(net["topology"], "the datapath is one link")
        raise refuse("network.topology", net["topology"], f'"dumbbell": {why}')
    if s.get("change"):
        raise refuse(
            "change",
            f"{len(s['change'])} entries",
            "no [[change]] entries: an emulation's traffic is fixed at its launch (the buffer "
            "changes live only through the auto-sizer, [autosize], or `buflab serve --emulate`)",
        )
    b = net["bottleneck"]
    if parse_rate(b["rate"]) > MAX_RATE_BPS:
        raise refuse(
            "network.bottleneck.rate",
            b["rate"],
            f"at most {MAX_RATE_BPS // 10**9} Gb/s, what the datapath forwards on this machine",
        )
    if b["queue"] == "optical_fifo":
        raise refuse(
            "network.bottleneck.queue",
            b["queue"],
            "a queue of the datapath's (droptail, red, drop_head): real frames come in many "
            "sizes and at any instant, not in a fiber's slots; the optical FIFO runs in the "
            "simulator",
        )
    traffic = s["traffic"]
    notes: list[str] = []
    tcp_entries = [i for i, t in enumerate(traffic) if t["kind"] in TCP_KINDS]
    first = traffic[tcp_entries[0]] if tcp_entries else None
    for i in tcp_entries:
        t = traffic[i]
        for key in ("cc", "packet", "tcp", "pacing", "max_window", "delayed_ack", "ecn"):
            if first is not None and t[key] != first[key]:
                raise refuse(
                    f"traffic.{i}.{key}",
                    t[key],
                    f"{first[key]!r}, as traffic.{tcp_entries[0]} (one setting for all TCP "
                    "flows, for now)",
                )
        if parse_time(t["jitter"]) != 0 and t["tcp"] != "linux":
            raise refuse(f"traffic.{i}.jitter", t["jitter"], '"0s" (real senders have their own)')
        if t["kind"] in USER_KINDS and not t.get("handshake", True):
            raise refuse(
                f"traffic.{i}.handshake",
                False,
                "true (a Linux connection opens with its handshake)",
            )
        if t.get("ack_pacing"):
            raise refuse(f"traffic.{i}.ack_pacing", True, "false (Linux does not pace ACKs)")
    for i, t in enumerate(traffic):
        if t["kind"] in UDP_KINDS and parse_bytes(t["packet"]) <= UDP_HEADERS:
            raise refuse(
                f"traffic.{i}.packet",
                t["packet"],
                f"more than {UDP_HEADERS} B (a datagram's Ethernet, IPv4 and UDP headers)",
            )
    open_entries = [i for i, t in enumerate(traffic) if t["kind"] == "open_loop"]
    if len(open_entries) > 1:
        raise refuse(
            f"traffic.{open_entries[1]}.kind",
            "open_loop",
            "one open_loop entry (its slots' RTTs are drawn before the run, in one range of "
            "flow ids)",
        )
    cc, mss, packet, pacing_bps, max_window, quickack, ecn = (
        "reno",
        1446,
        1500,
        None,
        0,
        False,
        False,
    )
    if first is not None:
        cc_name = CC_NAMES.get(first["cc"])
        if cc_name is None or cc_name not in available_cc:
            raise refuse(
                f"traffic.{tcp_entries[0]}.cc",
                first["cc"],
                f"one of this kernel's {', '.join(available_cc)}",
            )
        cc = cc_name
        where = f"traffic.{tcp_entries[0]}"
        ecn = bool(first["ecn"])
        if ecn:
            notes.append(
                f"{where}.ecn = true: net.ipv4.tcp_ecn = 1 on the senders (RFC 3168 ECN); Linux "
                "does not count its window reductions, so the flows' ecn_reactions stay 0"
            )
        if first["tcp"] not in VARIANT_NOTES:
            raise refuse(f"{where}.tcp", first["tcp"], '"linux", "sack", "newreno" or "reno"')
        note = VARIANT_NOTES[first["tcp"]]
        if note:
            notes.append(note.replace("tcp =", f"{where}.tcp =", 1))
        if first["tcp"] == "linux" and parse_time(first["jitter"]) != 0:
            notes.append(
                f"{where}.jitter = {first['jitter']}: the model's stand-in for host timing noise; "
                "the real hosts have their own, nothing is added"
            )
        if first.get("slow_start") == "hystart++":
            notes.append(
                f'{where}.slow_start = "hystart++": Linux has no HyStart++; its CUBIC runs '
                "HyStart (tcp_cubic.c), its Reno none"
            )
        if first["delayed_ack"]:
            notes.append(
                f"{where}.delayed_ack = true: Linux's own delayed ACKs (quick ACKs at start, "
                "then every other segment or its delayed-ACK timer)"
            )
        else:
            notes.append(
                f"{where}.delayed_ack = false: the receiver sets TCP_QUICKACK after every read "
                "(Linux has no switch to turn delayed ACKs off for good)"
            )
        quickack = not first["delayed_ack"]
        if first["pacing"] != "off":
            notes.append(
                f'{where}.pacing = "{first["pacing"]}": Linux\'s internal pacing '
                "(its own rate, 2× or 1.2× cwnd/srtt)"
            )
            pacing_bps = 2**63
        notes.append(
            f"{where}.max_window = {first['max_window']}: the receiver's window clamp "
            "(TCP_WINDOW_CLAMP); Linux sizes its own buffers below it"
        )
        packet = int(parse_bytes(first["packet"]))
        mss = packet - HEADERS
        if mss < 88:
            raise refuse(
                f"{where}.packet", first["packet"], f"at least {88 + HEADERS}B (an MSS of 88 B)"
            )
        max_window = int(parse_bytes(first["max_window"]))
    offloads = bool(s["emulation"]["offloads"])
    segment = bool(s["emulation"]["segment"])
    gso_segments = int(s["emulation"]["gso_segments"])
    if gso_segments:
        notes.append(
            f"emulation.gso_segments = {gso_segments}: the senders' kernels hand their devices at "
            f"most {gso_segments} TCP segment{'s' if gso_segments > 1 else ''} at once "
            "(gso_max_segs), instead of the about 1 ms of pacing rate Linux autosizes"
        )
    if segment and not offloads:
        raise refuse(
            "emulation.segment",
            True,
            "false without emulation.offloads = true (no super-packets to cut)",
        )
    if segment:
        notes.append(
            "emulation.offloads = true, emulation.segment = true: TSO, GSO and GRO stay on and "
            "the datapath cuts each TCP super-packet into MSS segments as it enters the flow's "
            "access link, as a NIC puts it on the wire: back to back at the access rate"
        )
    elif offloads:
        notes.append(
            "emulation.offloads = true: TSO, GSO and GRO stay on, so the bottleneck receives, "
            "counts, serializes and drops super-packets of up to 64 KB as single packets (a "
            "buffer in packets then holds up to 43 times more bytes): what a Mininet setup "
            "left at its defaults measures, not the model"
        )
    bumps = net.get("bump") or []
    if bumps:
        notes.append(
            f"network.bump: {len(bumps)} bump(s) in the wire run in the datapath on the "
            "simulator's code (pacers, virtual queues, QCN), their timers in ideal time; a "
            "mark sets CE in the real IP header"
        )
    events_at = s["monitor"].get("events_at")
    if events_at and s["monitor"]["events"]:
        notes.append(
            f"monitor.events_at = {events_at!r}: the datapath logs the bottleneck's queue; the "
            "bumps' counts are in the bumps table"
        )
    # (Without the auto-sizer, whose steps do not fit in a zero-length run and draw nothing.)
    flows = simulate({**s, "autosize": {}}, duration="1us", warmup="0s").flows
    _check_generator(s, len(flows))
    open_loop = None
    if open_entries:
        entry = open_entries[0]
        slots = _slots(s, entry, len(flows), OPEN_LOOP_SLOTS)
        open_loop = {"traffic": entry, "first": len(flows), "slots": slots}
        notes.append(
            f"traffic.{entry}: open-loop arrivals take at most {OPEN_LOOP_SLOTS:,} flow slots "
            "(the simulator's are unbounded); arrivals that find none are counted "
            "(no_slot in the summary's report)"
        )
    long_lived = [i for i, t in enumerate(traffic) if t["kind"] == "long_lived"]
    spare = None
    if live and long_lived and int(net["access"]["machines"]) == 0:
        entry = long_lived[0]
        first_spare = len(flows) + (OPEN_LOOP_SLOTS if open_loop is not None else 0)
        slots = _slots(s, entry, first_spare, SPARE_FLOWS)
        spare = {"traffic": entry, "first": first_spare, "slots": slots}
        notes.append(
            f"traffic.{entry}: the page may open at most {SPARE_FLOWS} flows during the run "
            "(spare slots the datapath knows from the start); each sender keeps at most "
            f"{LIVE_NOTSENT_LOWAT // 1024} KB unsent (TCP_NOTSENT_LOWAT), so that a flow closed "
            "from the page stops at once but for what it had written"
        )
    traced = s["monitor"]["trace_flows"]
    trace_flows = list(range(len(flows))) if traced == "all" else [int(i) for i in traced]
    trace_interval = parse_time(s["monitor"]["trace_interval"])
    if trace_flows and trace_interval == 0:
        trace_interval = TRACE_SAMPLE_S
        notes.append(
            'monitor.trace_interval = "0s": a real socket\'s state is sampled, not followed '
            f"change by change; every {TRACE_SAMPLE_S * 1e3:g} ms"
        )
    autosize = s["autosize"].get("target_utilization") is not None
    access = net["access"]
    cross = [bool(traffic[int(t)]["path"] == "cross") for t in flows["traffic"]]
    return Plan(
        queue=b["queue"],
        queue_params={k: v for k, v in b.items() if k.startswith(f"{b['queue']}_")},
        loss=float(net.get("loss", 0.0)),
        ecn=ecn,
        seed=int(s["seed"]),
        offloads=offloads,
        segment=segment,
        gso_segments=gso_segments,
        duration_s=parse_time(s["duration"]),
        warmup_s=parse_time(s["warmup"]),
        rate_bps=int(parse_rate(b["rate"])),
        # With the auto-sizer, the link starts at its first probe, as a simulated run's does.
        buffer=f"{s['autosize']['start']}pkt" if autosize else str(b["buffer"]),
        access={
            "rate": str(access["rate"]),
            "buffer": str(access["buffer"]),
            "machines": int(access["machines"]),
            "classes": int(access["classes"]),
            "nic": str(access["nic"]),
        },
        cross_link={"rate": str(net["cross"]["rate"]), "buffer": str(net["cross"]["buffer"])}
        if any(cross)
        else None,
        cc=cc,
        mss=mss,
        packet=packet,
        flows=flows[list(IDENTITY)].to_dict("records"),
        cross=cross,
        max_window=max_window,
        pacing_bps=pacing_bps,
        scenario=s,
        open_loop=open_loop,
        quickack=quickack,
        trace_flows=trace_flows,
        trace_interval_s=trace_interval,
        notes=notes,
        autosize=autosize,
        spare=spare,
    )


def _slots(s: dict[str, Any], entry: int, first: int, count: int) -> list[dict[str, Any]]:
    """The identities of `count` flow slots of traffic entry `entry` from flow id `first`, as
    the simulator would draw them (`_core.flow_slots`): started when the run says."""
    t = s["traffic"][entry]
    drawn = core().flow_slots(scenario_json(s), entry, first, count)
    return [
        {
            "flow": first + k,
            "traffic": entry,
            "kind": str(t["kind"]),
            "tcp": str(t["tcp"]),
            "cc": str(t["cc"]),
            "rtt_s": float(drawn["rtt_s"][k]),
            "start_s": float("inf"),
            "machine": int(drawn["machine"][k]),
            "class": int(drawn["class"][k]),
            "input": -1,
            "output": -1,
        }
        for k in range(count)
    ]


def _check_generator(s: dict[str, Any], flows: int) -> None:
    """Refuses a scenario beyond what the traffic generator keeps up with here, naming the
    entry and the measured limit."""
    facts = core().traffic_facts(scenario_json(s))["entries"]
    users = connections = datagrams = 0.0
    for i, (t, f) in enumerate(zip(s["traffic"], facts, strict=True)):
        kind = t["kind"]
        if kind in ("closed_loop", "repeated_downloads"):
            users += f["flows"]
            # Each cycle takes at least its think time and a handshake's round trip.
            cycle = f["think"]["mean"] + f["rtt"]["lo"]
            connections += f["flows"] / cycle if cycle > 0 else math.inf
            if users > GENERATOR_USERS:
                raise refuse(
                    f"traffic.{i}.users",
                    t["users"],
                    f"at most {GENERATOR_USERS:,} users in all, what the traffic generator "
                    "keeps up with on this machine",
                )
        elif kind == "open_loop":
            connections += f["arrivals_per_s"]
        elif kind in UDP_KINDS:
            datagrams += f["flows"] * f["rate_bps"] / (8 * f["packet_bytes"])
        if connections > GENERATOR_CONNECTIONS_PER_S:
            raise refuse(
                f"traffic.{i}",
                f"{connections:,.0f} connections per second at most",
                f"at most {GENERATOR_CONNECTIONS_PER_S:,} per second in all, what the traffic "
                "generator opens on this machine",
            )
        if datagrams > GENERATOR_DATAGRAMS_PER_S:
            raise refuse(
                f"traffic.{i}.rate",
                t["rate"],
                f"at most {GENERATOR_DATAGRAMS_PER_S:,} datagrams per second in all, what the "
                "traffic generator sends on this machine",
            )
