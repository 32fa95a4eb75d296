"""What of a scenario the emulator realises, and the flows it will start.

Read first: `buflab.engine.runner` (`validate` fills in every default, so each key is looked
at with its value). A scenario the emulator cannot realise yet is refused before anything is
created, naming the key; a key whose meaning on Linux TCP is only near the model's is mapped
and the mapping returned as a note, printed with the run — never silently ignored.

The flows' start times and round-trip times are the simulator's own draws for the scenario's
seed (a zero-length simulation returns them in its flows table), so that the same scenario
and seed give the same flows in both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buflab.engine import ScenarioError
from buflab.engine.runner import run as simulate
from buflab.engine.runner import validate
from buflab.engine.units import parse_bytes, parse_rate, parse_time

# The fastest bottleneck the datapath keeps up with here (1 Gb/s of TCP measured with room to
# spare; its copying sockets top out near 2.5 Gb/s between namespaces).
MAX_RATE_BPS = 2 * 10**9
# Linux's congestion controls by the simulator's names; the machine's own list decides.
CC_NAMES = {"reno": "reno", "cubic": "cubic", "bbr": "bbr"}
# The simulator's TCP variants on Linux: SACK is always on there.
VARIANT_NOTES = {
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
    """One emulation: the bottleneck, and the flows with their start times and RTTs."""

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
    # `emulation.offloads`: TSO, GSO and GRO left on (the datapath then moves super-packets).
    offloads: bool
    # Each flow's access link, emulated in the datapath (the simulator's private access links).
    access_rate: str
    cc: str
    mss: int
    packet: int
    starts_s: list[float]
    rtts_s: list[float]
    # Each flow's identity columns of the flows table (flow, traffic, kind, tcp, cc, rtt_s,
    # start_s, machine, class, input, output), as the simulator's own table has them.
    flows: list[dict[str, Any]]
    max_window: int
    pacing_bps: int | None
    # Linux acknowledges every segment at once (TCP_QUICKACK after every read) when the
    # scenario turns delayed ACKs off.
    quickack: bool = False
    # `monitor.trace_flows`, and how often their TCP_INFO is sampled.
    trace_flows: list[int] = field(default_factory=list)
    trace_interval_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def refuse(key: str, value: Any, expected: str) -> ScenarioError:
    return ScenarioError(f"{key}: got {value!r}; expected {expected} (emulation)")


def plan(scenario: dict[str, Any], available_cc: list[str]) -> Plan:
    """The emulation of `scenario`, or a ScenarioError naming the first key it cannot realise."""
    s = validate(scenario)
    net = s["network"]
    if net["topology"] != "dumbbell":
        raise refuse("network.topology", net["topology"], '"dumbbell" (the others come later)')
    b = net["bottleneck"]
    if parse_rate(b["rate"]) > MAX_RATE_BPS:
        raise refuse(
            "network.bottleneck.rate",
            b["rate"],
            f"at most {MAX_RATE_BPS // 10**9} Gb/s, what the datapath forwards on this machine",
        )
    if net.get("bump"):
        raise refuse("network.bump", "[…]", "no bumps (they come later)")
    if b["queue"] == "optical_fifo":
        raise refuse(
            "network.bottleneck.queue",
            b["queue"],
            "a queue of the datapath's (droptail, red, drop_head): real frames come in many "
            "sizes and at any instant, not in a fiber's slots; the optical FIFO runs in the "
            "simulator",
        )
    if int(net["access"]["machines"]) != 0:
        raise refuse("network.access.machines", net["access"]["machines"], "0 (one sender host)")
    traffic = s["traffic"]
    kinds = {t["kind"] for t in traffic}
    if kinds != {"long_lived"}:
        bad = next(i for i, t in enumerate(traffic) if t["kind"] != "long_lived")
        raise refuse(
            f"traffic.{bad}.kind", traffic[bad]["kind"], '"long_lived" (the others come later)'
        )
    notes: list[str] = []
    first = traffic[0]
    for i, t in enumerate(traffic):
        for key in ("cc", "packet", "tcp", "pacing", "max_window", "delayed_ack", "ecn"):
            if t[key] != first[key]:
                raise refuse(
                    f"traffic.{i}.{key}",
                    t[key],
                    f"{first[key]!r}, as traffic.0 (one setting for all flows, for now)",
                )
        if parse_time(t["jitter"]) != 0:
            raise refuse(f"traffic.{i}.jitter", t["jitter"], '"0s" (real senders have their own)')
    cc = CC_NAMES.get(first["cc"])
    if cc is None or cc not in available_cc:
        raise refuse("traffic.0.cc", first["cc"], f"one of this kernel's {', '.join(available_cc)}")
    if first["ecn"]:
        notes.append(
            "traffic.0.ecn = true: net.ipv4.tcp_ecn = 1 on the senders (RFC 3168 ECN); Linux "
            "does not count its window reductions, so the flows' ecn_reactions stay 0"
        )
    note = VARIANT_NOTES.get(first["tcp"])
    if first["tcp"] not in VARIANT_NOTES:
        raise refuse("traffic.0.tcp", first["tcp"], '"sack", "newreno" or "reno"')
    if note:
        notes.append(note)
    if first["delayed_ack"]:
        notes.append(
            "traffic.0.delayed_ack = true: Linux's own delayed ACKs (quick ACKs at start, "
            "then every other segment or its delayed-ACK timer)"
        )
    else:
        notes.append(
            "traffic.0.delayed_ack = false: the receiver sets TCP_QUICKACK after every read "
            "(Linux has no switch to turn delayed ACKs off for good)"
        )
    pacing = first["pacing"]
    pacing_bps = None
    if pacing != "off":
        notes.append(
            f'traffic.0.pacing = "{pacing}": Linux\'s internal pacing '
            "(its own rate, 2× or 1.2× cwnd/srtt)"
        )
        pacing_bps = 0
    notes.append(
        f"traffic.0.max_window = {first['max_window']}: the receiver's window clamp "
        "(TCP_WINDOW_CLAMP); Linux sizes its own buffers below it"
    )
    packet = int(parse_bytes(first["packet"]))
    mss = packet - HEADERS
    if mss < 88:
        raise refuse(
            "traffic.0.packet", first["packet"], f"at least {88 + HEADERS}B (an MSS of 88 B)"
        )
    offloads = bool(s["emulation"]["offloads"])
    if offloads:
        notes.append(
            "emulation.offloads = true: TSO, GSO and GRO stay on, so the bottleneck receives, "
            "counts, serializes and drops super-packets of up to 64 KB as single packets (a "
            "buffer in packets then holds up to 43 times more bytes): what a Mininet setup "
            "left at its defaults measures, not the model"
        )
    flows = simulate(s, duration="1us", warmup="0s").flows
    traced = s["monitor"]["trace_flows"]
    trace_flows = list(range(len(flows))) if traced == "all" else [int(i) for i in traced]
    trace_interval = parse_time(s["monitor"]["trace_interval"])
    if trace_flows and trace_interval == 0:
        trace_interval = TRACE_SAMPLE_S
        notes.append(
            'monitor.trace_interval = "0s": a real socket\'s state is sampled, not followed '
            f"change by change; every {TRACE_SAMPLE_S * 1e3:g} ms"
        )
    return Plan(
        queue=b["queue"],
        queue_params={k: v for k, v in b.items() if k.startswith(f"{b['queue']}_")},
        loss=float(net.get("loss", 0.0)),
        ecn=bool(first["ecn"]),
        seed=int(s["seed"]),
        offloads=offloads,
        duration_s=parse_time(s["duration"]),
        warmup_s=parse_time(s["warmup"]),
        rate_bps=int(parse_rate(b["rate"])),
        buffer=str(b["buffer"]),
        access_rate=str(net["access"]["rate"]),
        cc=cc,
        mss=mss,
        packet=packet,
        starts_s=[float(x) for x in flows["start_s"]],
        rtts_s=[float(x) for x in flows["rtt_s"]],
        flows=flows[list(IDENTITY)].to_dict("records"),
        max_window=int(parse_bytes(first["max_window"])),
        pacing_bps=pacing_bps,
        quickack=not first["delayed_ack"],
        trace_flows=trace_flows,
        trace_interval_s=trace_interval,
        notes=notes,
    )
