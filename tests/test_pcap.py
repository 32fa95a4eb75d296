"""Packet captures of a simulated run's bottleneck (`monitor.pcap`, thesis testbed issue item 7):
exactly the packets the event log lists as arriving, at its times, with headers a packet tool
reads. The emulation's capture is checked in test_emulate.py's end-to-end test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from buflab.cli import cli
from conftest import TINY_SCENARIO
from test_cli import assert_one_line_error
from test_emulate import raw_records_of_pcap

pytestmark = pytest.mark.engine

# The tiny dumbbell with a UDP source and RED marking the ECN-capable TCP flows: every kind
# of header the capture synthesizes, marks included.
MIXED = (
    TINY_SCENARIO.replace(
        'bottleneck = { rate = "10Mbps", buffer = "20pkt" }',
        'bottleneck = { rate = "10Mbps", buffer = "20pkt", queue = "red", red_ecn = true }',
    ).replace('start = "0s..0.5s"\n', 'start = "0s..0.5s"\necn = true\n')
    + '\n[[traffic]]\nkind = "udp_poisson"\nflows = 1\nrate = "2Mbps"\npacket = "500B"\n'
)


def run_with_capture(tmp_path: Path, text: str) -> Path:
    scenario = tmp_path / "s.toml"
    scenario.write_text(text)
    out = tmp_path / "out"
    ran = CliRunner().invoke(
        cli,
        [
            "run", str(scenario), "--set", "monitor.events=true", "--set", "monitor.pcap=true",
            "--out", str(out),
        ],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert "packets captured in" in ran.stdout
    return out


def ip_checksum_holds(header: bytes) -> bool:
    """RFC 791: the ones' complement sum of the header's 16-bit words, checksum included, is
    all ones."""
    total = sum(int.from_bytes(header[i : i + 2], "big") for i in range(0, 20, 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def test_the_capture_is_the_logs_arrivals_with_their_headers(tmp_path: Path) -> None:
    out = run_with_capture(tmp_path, MIXED)
    log = pd.read_parquet(out / "events.parquet")
    flows = pd.read_parquet(out / "flows.parquet")
    events = log["event"].astype(str).to_numpy()
    arriving = log[(events == "enqueue") | (events == "drop")]
    records = list(raw_records_of_pcap(out / "bottleneck.pcap"))
    # One record per arrival, in order, at its time (ps to ns) and of its size.
    assert len(records) == len(arriving) > 0
    assert [t for t, _, _ in records] == (arriving["time_ps"] // 1000).tolist()
    assert [n for _, n, _ in records] == arriving["size"].tolist()
    udp_flows = set(flows.loc[flows["kind"] == "udp_poisson", "flow"])
    marked = set(log.index[log["event"] == "mark"] - 1)  # a mark follows its enqueue
    for (_, size, packet), (index, row) in zip(records, arriving.iterrows(), strict=True):
        assert ip_checksum_holds(packet[:20]), packet[:20].hex()
        assert int.from_bytes(packet[2:4], "big") == size
        assert int.from_bytes(packet[12:16], "big") == (10 << 24 | 1 << 16) + row["flow"]
        protocol = packet[9]
        assert protocol == (17 if row["flow"] in udp_flows else 6)
        ecn = packet[1] & 3
        if index in marked:
            assert ecn == 3, "CE on a packet the queue marked"
        elif protocol == 6:
            assert ecn == 2, "ECT(0) on an ECN-capable flow's packet"
        if protocol == 6:
            # The segment's first byte: segment number × MSS (1000 B packets: 960 B).
            assert int.from_bytes(packet[24:28], "big") == row["seq"] * 960
    assert marked, "RED marked some packets"
    assert udp_flows and any(packet[9] == 17 for _, _, packet in records)


def test_an_l4s_flows_packets_carry_ect1(tmp_path: Path) -> None:
    """With `ecn_codepoint = "ect1"` the synthesized ECN field is ECT(1) (01, RFC 9331 §4.1)
    on the flow's packets, and CE (11) on those the step marker marked."""
    text = TINY_SCENARIO.replace(
        'bottleneck = { rate = "10Mbps", buffer = "20pkt" }',
        'bottleneck = { rate = "10Mbps", buffer = "20pkt", queue = "step", mark_threshold = 5,'
        " mark_ect1_only = true }",
    ).replace('start = "0s..0.5s"\n', 'start = "0s..0.5s"\necn = true\necn_codepoint = "ect1"\n')
    out = run_with_capture(tmp_path, text)
    fields = {packet[1] & 3 for _, _, packet in raw_records_of_pcap(out / "bottleneck.pcap")}
    assert fields == {0b01, 0b11}, fields


@pytest.mark.skipif(shutil.which("tcpdump") is None, reason="tcpdump is not installed")
def test_tcpdump_reads_the_capture(tmp_path: Path) -> None:
    """The file opens in a packet tool: tcpdump reads every record without complaint."""
    out = run_with_capture(tmp_path, MIXED)
    read = subprocess.run(
        ["tcpdump", "-nn", "-r", str(out / "bottleneck.pcap")], capture_output=True, text=True
    )
    assert read.returncode == 0, read.stderr
    log = pd.read_parquet(out / "events.parquet")
    assert len(read.stdout.splitlines()) == log["event"].isin(["enqueue", "drop"]).sum()
    assert "10.1.0.0.40000 > 10.0.0.1.5001: Flags [.], seq" in read.stdout
    assert "UDP, length" in read.stdout


def test_a_capture_without_the_event_log_is_one_line(tiny_file: Path) -> None:
    ran = CliRunner().invoke(cli, ["run", str(tiny_file), "--set", "monitor.pcap=true"])
    assert_one_line_error(ran, "monitor.pcap", "monitor.events = true")
