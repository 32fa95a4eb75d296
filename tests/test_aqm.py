"""Active queue management and DCTCP end to end: the `aqm` table, the shape of the AQM and
DCTCP recipes at a scale CI can run, and the one-line errors the issue lists. The control laws'
exact arithmetic (CoDel's drop times, PIE's probability update, DCTCP's α) is tested in the
`buflab-queue` and `buflab-core` crates; conservation and the memory limit of every
discipline by the property tests there (`disciplines.rs`)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import buflab
from buflab.engine import ScenarioError

pytestmark = pytest.mark.engine

# A bufferbloated link, scaled from recipe aqm_flows: 100 Mb/s, a 1,000-packet buffer (120 ms
# when full), 20 CUBIC flows of RTTs 10–200 ms, 12 s with 4 s of warm-up.
BLOATED: dict[str, Any] = {
    "duration": "12s",
    "warmup": "4s",
    "network": {
        "bottleneck": {"rate": "100Mbps", "buffer": "1000pkt"},
        "access": {"rate": "1Gbps"},
        "rtt": "10ms..200ms",
    },
    "traffic": [
        {"kind": "long_lived", "flows": 20, "tcp": "linux", "cc": "cubic", "packet": "1500B"}
    ],
}


def bloated(queue: str) -> Any:
    scenario = copy.deepcopy(BLOATED)
    scenario["network"]["bottleneck"]["queue"] = queue
    return buflab.run(scenario)


@pytest.fixture(scope="module")
def bloated_runs() -> dict[str, Any]:
    return {q: bloated(q) for q in ("droptail", "codel", "fq_codel", "pie")}


def test_each_aqm_holds_its_delay_near_its_target_where_drop_tail_fills_the_buffer(
    bloated_runs: dict[str, Any],
) -> None:
    """RFC 8289 §4.2 (TARGET 5 ms), RFC 8290 (CoDel per queue) and RFC 8033 §4.2 (15 ms): on a
    link whose buffer holds 120 ms, drop-tail's median delay is tens of milliseconds while each
    AQM's stays within twice its target (the RFCs give setpoints, not measured medians; twice
    leaves room for the sawtooth around them), and the link stays busy (≥ 95 %: 20 CUBIC flows
    keep a 5 ms queue from emptying)."""
    summary = {q: r.summary for q, r in bloated_runs.items()}
    assert summary["droptail"]["queue_delay_p50_s"] > 0.040
    assert summary["codel"]["queue_delay_p50_s"] < 0.010
    assert summary["fq_codel"]["queue_delay_p50_s"] < 0.010
    assert summary["pie"]["queue_delay_mean_s"] < 0.030
    for q, s in summary.items():
        assert s["utilization"] >= 0.95, (q, s["utilization"])


def test_fq_codel_shares_the_link_more_evenly_than_drop_tail(
    bloated_runs: dict[str, Any],
) -> None:
    """RFC 8290 §1: flow queueing gives flows of different RTTs (10–200 ms here) about equal
    throughput, where drop-tail favours the short ones. Jain's index: FQ-CoDel's above 0.9 and
    above drop-tail's by at least 0.1 (measured: about 0.99 against 0.6–0.7)."""
    fq = bloated_runs["fq_codel"].summary["jain_fairness"]
    tail = bloated_runs["droptail"].summary["jain_fairness"]
    assert fq > 0.9
    assert fq > tail + 0.1


def test_the_aqm_table_counts_drops_by_cause(bloated_runs: dict[str, Any]) -> None:
    """The `aqm` table: one row per AQM link, its drops the links table's, split by cause
    (the control law's and overflow), its sojourn percentiles in order; none for drop-tail."""
    assert len(bloated_runs["droptail"].aqm) == 0
    for q in ("codel", "fq_codel", "pie"):
        run = bloated_runs[q]
        row = run.aqm.iloc[0]
        assert row["queue"] == q and row["link"] == "bottleneck"
        assert row["drops"] == run.links.iloc[0]["drops"]
        assert row["drops"] == row["overflow_drops"] + row["law_drops"] + row["fattest_drops"]
        assert row["law_drops"] > 0, f"{q}: its control law never dropped on a bloated link"
        assert row["sojourn_p50_s"] <= row["sojourn_p90_s"] <= row["sojourn_p99_s"]


# The data-centre port of recipe dctcp, shortened: 10 Gb/s, 100 µs, ten senders with a
# data-centre host's 10 µs of jitter (the `linux` profile's 100 µs would double the RTT), 0.3 s.
PORT: dict[str, Any] = {
    "duration": "0.3s",
    "warmup": "0.1s",
    "network": {
        "bottleneck": {"rate": "10Gbps", "buffer": "200pkt"},
        "access": {"rate": "40Gbps"},
        "rtt": "100us",
    },
    "traffic": [
        {
            "kind": "long_lived",
            "flows": 10,
            "tcp": "linux",
            "cc": "cubic",
            "packet": "1500B",
            "max_window": "4MB",
            "start": "0s..10ms",
            "jitter": "10us",
        }
    ],
}


def port(cc: str, queue: str) -> dict[str, Any]:
    scenario = copy.deepcopy(PORT)
    scenario["traffic"][0].update({"cc": cc, "ecn": queue == "step"})
    scenario["network"]["bottleneck"]["queue"] = queue
    if queue == "step":
        scenario["network"]["bottleneck"]["mark_threshold"] = "20pkt"
    return buflab.run(scenario).summary


def test_dctcp_holds_the_queue_near_k_at_full_rate_where_cubic_fills_the_buffer() -> None:
    """DCTCP (SIGCOMM 2010 §4.1; RFC 8257 §3) with step marking at K = 20 packets (the paper's
    1 Gb/s value, above C·RTT/7 ≈ 12 here): the queue stays near K (mean below 2K) with no
    drop and the port ≥ 95 % busy (measured 98.9 %, mean queue 12.9); CUBIC with drop-tail
    fills the 200-packet buffer (mean above 100, with drops; measured 174)."""
    d, c = port("dctcp", "step"), port("cubic", "droptail")
    assert d["utilization"] >= 0.95 and c["utilization"] >= 0.99
    assert d["drops"] == 0 and d["marks"] > 0
    assert 5 < d["mean_queue_pkts"] < 40
    assert c["mean_queue_pkts"] > 100 and c["drops"] > 0


def test_dctcp_keeps_the_throughput_that_halving_at_every_mark_loses() -> None:
    """DCTCP's point (SIGCOMM 2010 §1, §3.1): with a shallow marking threshold a sender that
    halves at each mark (Reno with RFC 3168 ECN) leaves the link idle after each cut, where one
    that cuts by α/2 does not. Same K, same flows: DCTCP at least 10 points above (measured
    98.9 % against 80 %), and Reno-ECN's mean queue no larger."""
    d, r = port("dctcp", "step"), port("reno", "step")
    assert d["utilization"] >= r["utilization"] + 0.10
    assert r["mean_queue_pkts"] <= d["mean_queue_pkts"]


def l4s_port(classic: bool) -> Any:
    """The port above with step marking at K = 20 packets for ECT(1) only (`mark_ect1_only`):
    5 DCTCP flows sending ECT(1), and with `classic` 5 CUBIC flows sending ECT(0) beside them."""
    scenario = copy.deepcopy(PORT)
    scenario["network"]["bottleneck"].update(
        {"queue": "step", "mark_threshold": "20pkt", "mark_ect1_only": True}
    )
    l4s = {**scenario["traffic"][0], "flows": 5, "cc": "dctcp", "ecn": True}
    scenario["traffic"] = [{**l4s, "ecn_codepoint": "ect1"}]
    if classic:
        scenario["traffic"].append({**l4s, "cc": "cubic"})  # ECT(0), the default codepoint
    return buflab.run(scenario)


def test_an_l4s_threshold_marks_ect1_and_leaves_ect0_to_the_buffer() -> None:
    """RFC 9331 §5.4.1.1: an L4S marker tells its packets by the ECN codepoint alone. Alone,
    the ECT(1) DCTCP flows hold the queue near K with no drop, as DCTCP does with any step
    marker (measured: mean 10.3 packets, 89 % busy. K = 20 is above C·RTT/7 = 12, but here
    the utilization depends on how often the receivers acknowledge: every segment 91 %, every
    other with pushed segments at once as Linux does 89 %, every other only 98 %; 0.85 leaves
    room below the measured figure, and the test's point is the codepoints, below). Beside
    ECT(0) CUBIC flows, those are
    never marked (no ECN reaction at all) and fill the 200-packet buffer to its drops, so the
    queue sits far above K and the L4S flows, marked on nearly every packet, get a small
    share (measured: mean queue 171 packets, CUBIC 96 % of the goodput; the test asks for
    80 %): the coexistence problem that makes RFC 9332 couple the classic queue's drops to
    the L4S marks, which this single-queue marker does not."""
    alone = l4s_port(classic=False)
    assert alone.summary["drops"] == 0 and alone.summary["marks"] > 0
    assert alone.summary["utilization"] >= 0.85 and alone.summary["mean_queue_pkts"] < 40
    mixed = l4s_port(classic=True)
    flows = mixed.flows
    l4s, classic = flows[flows["traffic"] == 0], flows[flows["traffic"] == 1]
    assert classic["ecn_reactions"].sum() == 0, "ECT(0) is never marked"
    assert l4s["ecn_reactions"].sum() > 0
    assert mixed.summary["drops"] > 0 and mixed.summary["mean_queue_pkts"] > 100
    assert classic["goodput_bps"].sum() > 4 * l4s["goodput_bps"].sum()


@pytest.mark.parametrize(
    ("bottleneck", "traffic", "message"),
    [
        (
            {"queue": "codel", "codel_target": "100ms"},
            {},
            'network.bottleneck.codel_target: got "100ms"; expected a target below '
            "codel_interval (100ms)",
        ),
        (
            {"queue": "fq_codel", "fq_codel_quantum": "500B"},
            {},
            'network.bottleneck.fq_codel_quantum: got "500B"; expected at least the largest '
            "packet that crosses this link",
        ),
        (
            {"queue": "step", "mark_threshold": "250pkt"},
            {},
            'network.bottleneck.mark_threshold: got "250pkt"; expected a threshold below the '
            "buffer (200 packets)",
        ),
        (
            {},
            {"cc": "dctcp"},
            'traffic.0.cc: got "dctcp"; expected a cc other than "dctcp" without ecn = true',
        ),
        (
            {},
            {"ecn_codepoint": "ect1"},
            'traffic.0.ecn_codepoint: got "ect1"; expected "ect0" without ecn = true',
        ),
        (
            {},
            {"ecn": True, "ecn_codepoint": "ect2"},
            'traffic.0.ecn_codepoint: got "ect2"; expected one of "ect0", "ect1"',
        ),
    ],
)
def test_the_issues_bad_inputs_are_one_line_each(
    bottleneck: dict[str, Any], traffic: dict[str, Any], message: str
) -> None:
    """Target ≥ interval, a quantum smaller than a packet, K above the buffer, and DCTCP
    without ECN: each a ScenarioError naming the key, the value and what was expected."""
    scenario = copy.deepcopy(PORT)
    scenario["network"]["bottleneck"].update(bottleneck)
    scenario["traffic"][0].update(traffic)
    with pytest.raises(ScenarioError) as e:
        buflab.run(scenario)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_the_cli_prints_a_bad_aqm_key_as_one_line(tmp_path: Path) -> None:
    """From the command line the same error is one line on stderr, exit status 2."""
    scenario = tmp_path / "codel.toml"
    scenario.write_text(
        'duration = "1s"\n[network]\nbottleneck = { rate = "10Mbps", buffer = "50pkt", '
        'queue = "codel", codel_target = "200ms" }\nrtt = "20ms"\n'
        '[[traffic]]\nkind = "long_lived"\nflows = 2\n'
    )
    buflab_cli = str(Path(sys.executable).parent / "buflab")
    done = subprocess.run([buflab_cli, "run", str(scenario)], capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "codel_target" in lines[0] and "200ms" in lines[0], lines


def test_a_netbump_virtual_queue_drives_dctcp_as_a_phantom_queue() -> None:
    """Seed 004 names DCTCP among the vAQM's functions; HULL (Alizadeh et al., NSDI 2012) is
    the design: a virtual queue drained at 95 % of the port's rate marks above a small
    threshold, and DCTCP senders keep the real queue short at the cost of the 5 % headroom.
    With the bump at the bottleneck (threshold 30 KB, 20 packets: smaller ones mark whole
    40 Gb/s access bursts and cost more throughput — 6 KB gave 66 %) and a drop-tail port: the
    real queue's mean below that of DCTCP with step marking at 20 packets (measured 5.5 against
    12.9), no drop, and utilization between 85 % and the virtual rate (95 %, which DCTCP cannot
    sustainably exceed; measured 91 %)."""
    scenario = copy.deepcopy(PORT)
    scenario["traffic"][0].update({"cc": "dctcp", "ecn": True})
    scenario["network"]["bump"] = [
        {
            "name": "vaqm",
            "at": "bottleneck",
            "classify": "all",
            "vqueue": {"rate": "9.5Gbps", "size": "300KB", "threshold": "30KB", "action": "mark"},
        }
    ]
    s = buflab.run(scenario).summary
    step = port("dctcp", "step")
    assert s["drops"] == 0 and s["marks"] == 0, "the bump marks, not the port"
    assert s["mean_queue_pkts"] < step["mean_queue_pkts"]
    assert 0.85 <= s["utilization"] <= 0.955
