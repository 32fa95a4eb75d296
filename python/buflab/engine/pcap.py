"""Packet captures of the bottleneck (`monitor.pcap`): the packets arriving at its queue, admitted
or dropped, one record each, as pcap files that tcpdump, Wireshark and tshark read.

Read first: `buflab.engine.events` (the event log whose arrivals a capture lists). A capture
holds exactly the packets the event log lists as arriving (its `enqueue` and `drop` rows), at
their times: in simulation made from the log itself, with headers synthesized from what the
engine's packets carry (`write_simulated`); on real TCP (`buflab emulate`) from the frames the
datapath received, their own first bytes, at the datapath's time stamps (`write_emulated`, from
the datapath's raw capture). Both use nanosecond time stamps counted from the run's time 0.

The synthesized headers (simulation, link type RAW: an IPv4 packet, no Ethernet):
- IPv4: total length the packet's size on the wire (the engine counts IP and TCP headers,
  40 bytes, in it), TTL 64, the ECN field ECT(0) for an ECN-capable flow (ECT(1) with
  `ecn_codepoint = "ect1"`) and CE for a packet the queue marked, the header checksum
  computed; source 10.1.0.0 + the flow number, destination 10.0.0.1 (so a flow is its
  source address in any tool's conversation list).
- TCP (long-lived, closed-loop, repeated downloads, open-loop flows): ports 40000 → 5001,
  sequence number the segment's first byte (segment number × MSS, modulo 2³²), flags ACK,
  window 65535, checksum 0 (no payload is captured to sum).
- UDP (udp_poisson, udp_cbr): ports 40000 → 5001, length the packet's, checksum 0.
Must not know how a run is made: an event log and the flows' facts in, a file out.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from buflab.engine.events import iter_batches
from buflab.engine.units import parse_bytes

# The capture's name in a run's output directory.
PCAP_FILE = "bottleneck.pcap"
# The pcap file header with nanosecond time stamps (magic 0xa1b23c4d), version 2.4.
_NANOSECOND_MAGIC = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101  # each record an IP packet, no link-layer header
SNAPLEN = 256
PS_PER_NS = 1000
NS_PER_S = 1_000_000_000

SENDER_BASE = (10 << 24) | (1 << 16)  # 10.1.0.0
RECEIVER = (10 << 24) | 1  # 10.0.0.1
SOURCE_PORT, DESTINATION_PORT = 40000, 5001
IP_HEADER, TCP_HEADER, UDP_HEADER = 20, 20, 8
ECT0, ECT1, CE = 0b10, 0b01, 0b11
TCP_ACK = 0x10
PROTO_TCP, PROTO_UDP = 6, 17


def file_header(linktype: int, snaplen: int = SNAPLEN) -> bytes:
    return struct.pack("<IHHiIII", _NANOSECOND_MAGIC, 2, 4, 0, 0, snaplen, linktype)


# ---- simulation: headers synthesized from the event log ---------------------------------------


def write_simulated(
    events: str | Path, path: str | Path, flows: pd.DataFrame, traffic: Sequence[dict[str, Any]]
) -> int:
    """The capture of a simulated run's bottleneck, from its event log (`events`, Parquet as
    `buflab run --out` writes it), its flows table and its validated traffic entries; returns
    the number of packets written."""
    udp, mss, ecn = _per_flow(flows, traffic)
    written = 0
    with open(path, "wb") as out:
        out.write(file_header(LINKTYPE_RAW))
        for batch in iter_batches(events):
            records, count = _synthesized(batch, udp, mss, ecn)
            out.write(records.tobytes())
            written += count
    return written


def _per_flow(
    flows: pd.DataFrame, traffic: Sequence[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per flow number: whether it is UDP, its MSS in bytes (for TCP sequence numbers), and
    the ECN field of its packets (0 when it is not ECN-capable)."""
    n = int(flows["flow"].max()) + 1 if len(flows) else 0
    udp, mss, ecn = np.zeros(n, bool), np.ones(n, np.int64), np.zeros(n, np.uint8)
    entries = flows["traffic"].to_numpy()
    index = flows["flow"].to_numpy()
    for number, entry in enumerate(traffic):
        chosen = index[entries == number]
        kind = str(entry.get("kind", ""))
        udp[chosen] = kind.startswith("udp_")
        packet = int(parse_bytes(str(entry.get("packet", "1000B"))))
        mss[chosen] = max(1, packet - IP_HEADER - TCP_HEADER)
        if entry.get("ecn", False):
            ecn[chosen] = ECT1 if entry.get("ecn_codepoint") == "ect1" else ECT0
    return udp, mss, ecn


# One synthesized record: its header, then an IPv4 header and a TCP header (a UDP packet uses
# the first 8 bytes of the TCP header's room and is captured shorter).
_SYNTH = np.dtype(
    [
        ("s", "<u4"), ("ns", "<u4"), ("cap", "<u4"), ("len", "<u4"),
        ("ver_ihl", "u1"), ("tos", "u1"), ("total", ">u2"), ("id", ">u2"), ("frag", ">u2"),
        ("ttl", "u1"), ("proto", "u1"), ("ip_sum", ">u2"), ("src", ">u4"), ("dst", ">u4"),
        ("sport", ">u2"), ("dport", ">u2"), ("seq", ">u4"), ("ack", ">u4"),
        ("off", "u1"), ("flags", "u1"), ("win", ">u2"), ("sum", ">u2"), ("urg", ">u2"),
    ]
)  # fmt: skip


def _synthesized(
    batch: pd.DataFrame, udp: np.ndarray, mss: np.ndarray, ecn: np.ndarray
) -> tuple[np.ndarray, int]:
    """The records of one batch of the log (as bytes) and their number: its arrivals
    (enqueues and drops), in order, a packet the queue marked (a `mark` row right after its
    enqueue) with CE."""
    event = batch["event"].astype(str).to_numpy()
    arriving = (event == "enqueue") | (event == "drop")
    marked_next = np.zeros(len(event), bool)
    marked_next[:-1] = event[1:] == "mark"
    rows = batch[arriving]
    marked = marked_next[arriving]
    flow = rows["flow"].to_numpy().astype(np.int64)
    size = rows["size"].to_numpy().astype(np.int64)
    is_udp = udp[flow] if len(udp) else np.zeros(len(flow), bool)
    out = np.zeros(len(rows), dtype=_SYNTH)
    header = IP_HEADER + np.where(is_udp, UDP_HEADER, TCP_HEADER)
    time_ns = rows["time_ps"].to_numpy().astype(np.int64) // PS_PER_NS
    out["s"], out["ns"] = time_ns // NS_PER_S, time_ns % NS_PER_S
    out["cap"], out["len"] = np.minimum(header, size), size
    out["ver_ihl"], out["ttl"] = 0x45, 64
    out["tos"] = np.where(marked, CE, ecn[flow]) if len(ecn) else 0
    out["total"] = np.minimum(size, 0xFFFF)
    out["proto"] = np.where(is_udp, PROTO_UDP, PROTO_TCP)
    out["src"], out["dst"] = SENDER_BASE + flow, RECEIVER
    out["sport"], out["dport"] = SOURCE_PORT, DESTINATION_PORT
    seq = rows["seq"].to_numpy().astype(np.int64)
    tcp_seq = (seq * mss[flow]) % (1 << 32) if len(mss) else seq
    # A UDP header in the TCP header's room: length, checksum 0.
    out["seq"] = np.where(is_udp, (np.maximum(size - IP_HEADER, 0) << 16), tcp_seq)
    out["off"] = np.where(is_udp, 0, (TCP_HEADER // 4) << 4)
    out["flags"] = np.where(is_udp, 0, TCP_ACK)
    out["win"] = np.where(is_udp, 0, 0xFFFF)
    out["ip_sum"] = _ip_checksum(out)
    return _trimmed(out), len(out)


def _ip_checksum(out: np.ndarray) -> np.ndarray:
    """RFC 791's header checksum: the ones' complement of the ones' complement sum of the
    header's 16-bit words (the checksum word taken as 0)."""
    total = (out["ver_ihl"].astype(np.int64) << 8) | out["tos"]
    total = total + out["total"].astype(np.int64) + out["id"] + out["frag"]
    total = total + ((out["ttl"].astype(np.int64) << 8) | out["proto"])
    for field in ("src", "dst"):
        value = out[field].astype(np.int64)
        total = total + (value >> 16) + (value & 0xFFFF)
    while (total >> 16).any():
        total = (total & 0xFFFF) + (total >> 16)
    return (~total) & 0xFFFF


def _trimmed(out: np.ndarray) -> np.ndarray:
    """The records as bytes, each cut to its captured length (a UDP packet's header is 12
    bytes shorter than a TCP one's)."""
    whole = out.view(np.uint8).reshape(len(out), out.dtype.itemsize)
    keep = 16 + out["cap"].astype(np.int64)
    if (keep == out.dtype.itemsize).all():
        return whole.ravel()
    mask = np.arange(out.dtype.itemsize)[None, :] < keep[:, None]
    return whole[mask]


# ---- emulation: the frames the datapath received ----------------------------------------------

# One record of the datapath's raw capture (`capture.rs` in the buflab-emu crate): the time on
# its monotonic clock (ps), the frame's length, the bytes kept, then those bytes.
_RAW_CAPTURE = struct.Struct("<QII")


def raw_records(raw: Path) -> Iterator[tuple[int, int, bytes]]:
    """(time_ps, length, bytes) of each frame in a raw capture, in order."""
    with open(raw, "rb") as file:
        data = file.read()
    at = 0
    while at + _RAW_CAPTURE.size <= len(data):
        time_ps, length, kept = _RAW_CAPTURE.unpack_from(data, at)
        at += _RAW_CAPTURE.size
        yield time_ps, length, data[at : at + kept]
        at += kept


def write_emulated(raw: Path, path: str | Path, epoch_ps: int, end_ps: int) -> int:
    """The capture of an emulation's bottleneck from the datapath's raw capture: time stamps
    from the run's time 0 (`epoch_ps` on the monotonic clock; anything earlier at 0), up to
    `end_ps` (the event log's own cut), as the event log is written; returns the count."""
    written = 0
    with open(path, "wb") as out:
        out.write(file_header(LINKTYPE_ETHERNET))
        for time_ps, length, data in raw_records(raw) if raw.exists() else ():
            since = max(0, time_ps - epoch_ps)
            if since > end_ps:
                break
            ns = since // PS_PER_NS
            out.write(struct.pack("<IIII", ns // NS_PER_S, ns % NS_PER_S, len(data), length))
            out.write(data)
            written += 1
    return written
