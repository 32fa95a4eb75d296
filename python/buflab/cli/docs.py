"""`buflab docs`: the scenario reference (docs/scenario.md), generated from the engine's own
schema.

The key tables come from `_core.schema()`, so they cannot drift from what the engine
accepts; the prose around them (units, ranges, what a buffer counts, the result columns)
is kept here. `buflab docs > docs/scenario.md` regenerates the file; a test checks that
the committed copy is current. It must not know anything of buflab but the engine's schema.
"""

from __future__ import annotations

from collections.abc import Iterable

import click

from buflab.engine import core

INTRO = """\
# Scenario reference

A scenario is a TOML file (or the same tree as a Python dict). Every key below is checked
by the engine: an unknown key, a value of the wrong type or out of range is an error that
names the key, the value and what was expected, and suggests the key you probably meant.
Nothing is silently ignored.

```toml
name = "dumbbell-100"
seed = 1
duration = "60s"
warmup = "20s"

[network]
topology = "dumbbell"
bottleneck = { rate = "100Mbps", buffer = "125pkt" }
access = { rate = "1Gbps" }
rtt = "75ms..125ms"

[[traffic]]
kind = "long_lived"
flows = 100
tcp = "newreno"
packet = "1000B"
max_window = "20MB"
start = "0s..5s"
```

Any key can be changed without editing the file: `buflab run FILE --set
network.bottleneck.buffer=50pkt --set traffic.0.flows=10` (a number in a key indexes an
array of tables), or from Python `buflab.run(FILE, network__bottleneck__buffer="50pkt")`.
A `--set` value is read as TOML when it is valid TOML (`400`, `0.5`, `true`, `"x"`) and as a
string otherwise (`50pkt`).

## Units

Quantities are strings with a unit. Only a buffer may be a bare integer (packets).

| kind | units | examples |
|---|---|---|
| rate | `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps`, powers of 1000 (also `Mb/s`, any case) \
| `"100Mbps"`, `"62.5Mbps"` |
| time | `ps`, `ns`, `us` (`µs`), `ms`, `s`, `min`, `h` | `"100ms"`, `"1.5s"` |
| size | `B`; `KB`, `MB`, `GB` (powers of 1000); `KiB`, `MiB`, `GiB` (powers of 1024) \
| `"1000B"`, `"80KB"` = 80,000 B, `"64KiB"` = 65,536 B |
| buffer | a size, or packets: `pkt` (also `pkts`, `packets`), or `"unlimited"` \
| `"125pkt"`, `"80KB"` |

A **range** `"a..b"` (e.g. `rtt = "75ms..125ms"`, `start = "0s..5s"`) draws each flow's value
uniformly between a and b, from the flow's own random stream, so the same seed gives the
same draws.

A **buffer** is a limit on the packets (`"125pkt"`) or bytes (`"80KB"`) *waiting* in the
queue. The packet being serialized onto the link is not counted, as in ns-2's drop-tail
queue: a `"1pkt"` buffer holds one waiting packet while another is being sent.

"""

# summary key -> meaning; kept beside the engine's result contract (see _core.pyi).
SUMMARY_KEYS: dict[str, str] = {
    "name": "Scenario name.",
    "seed": "Seed of the run.",
    "duration_s": "Simulated time, warm-up included (s).",
    "warmup_s": "Warm-up excluded from every measured metric (s).",
    "measured_s": "Measured time: duration − warm-up (s).",
    "utilization": "Fraction of the measured time the bottleneck serializer was busy (0..1).",
    "throughput_bps": "Bits the bottleneck serialized per second, headers included.",
    "goodput_bps": "Payload bits delivered in order to receivers per second.",
    "drop_rate": "Bottleneck queue drops / arrivals at the bottleneck queue.",
    "drops": "Packets dropped by the bottleneck queue (buffer full, or RED's decision).",
    "first_drop_s": (
        "When the bottleneck dropped its first packet, from the start of the run (warm-up "
        "included); None when it never dropped. A paced flow's first loss comes later in slow "
        "start (pacing seed, P1)."
    ),
    "marks": (
        "Packets the bottleneck's RED queue admitted with an ECN mark (Congestion Experienced) "
        "instead of dropping them (`red_ecn`); a mark is not a drop."
    ),
    "mark_rate": "Bottleneck queue marks / arrivals at the bottleneck queue.",
    "arrivals": "Packets that arrived at the bottleneck queue.",
    "departures": "Packets the bottleneck started serializing, over the whole run.",
    "loss_drops": "Packets removed by the random-loss model (`network.loss`), not by the buffer.",
    "mean_queue_pkts": "Time-average number of packets waiting in the bottleneck buffer.",
    "max_queue_pkts": "Largest number of packets waiting in the bottleneck buffer.",
    "mean_queue_bytes": "Time-average bytes waiting in the bottleneck buffer.",
    "queue_delay_mean_s": "Mean time an admitted packet waits in the bottleneck buffer (s).",
    "queue_delay_p50_s": "Median of that waiting time (s).",
    "queue_delay_p99_s": "99th percentile of that waiting time (s).",
    "iat_mean_s": (
        "Mean gap between successive packets stored at the bottleneck, dropped ones left out "
        "as in thesis Fig 4.9 (s)."
    ),
    "iat_p10_s": "10th percentile of that gap (s).",
    "iat_p50_s": "Median of that gap (s).",
    "iat_p90_s": "90th percentile of that gap (s).",
    "iat_faster_than_line": (
        "Fraction of those gaps shorter than the previous packet's serialization time at the "
        "bottleneck: packets arriving faster than line rate, i.e. at once from several inputs."
    ),
    "burst_mean_pkts": (
        "Mean length of a burst: a run of successive arrivals at the bottleneck, dropped or "
        "not, of one flow (thesis Fig 4.12)."
    ),
    "burst_p99_pkts": "99th percentile of the burst length (packets).",
    "same_flow_fraction": (
        "Fraction of successive arrivals at the bottleneck that belong to the same flow "
        "(IMC Fig 13)."
    ),
    "jain_fairness": "Jain's index of per-flow goodput, (Σx)² / (n·Σx²); 1 = equal shares.",
    "retransmits": "TCP segments sent again, all flows.",
    "timeouts": "Retransmission timeouts, all flows.",
    "ecn_reactions": (
        "Window reductions in answer to ECN-Echo, all flows (RFC 3168; at most one per window "
        "of data, none while repairing a loss)."
    ),
    "retransmits_per_drop": (
        "Retransmissions per loss (drops at every monitored queue, and random loss); "
        "1 = no needless resends."
    ),
    "flows": "Number of flows.",
    "events": "Events the engine executed over the whole run (a measure of simulation work).",
    "wall_s": "Wall-clock time of the run (s); it and peak_rss_mib vary between equal runs.",
    "bottleneck_rate_bps": "Bottleneck link rate (bit/s).",
    "buffer_pkts": (
        "Bottleneck buffer in packets, or −1 when it is given in bytes or unlimited (with "
        "`[autosize]`, the last limit in force)."
    ),
    "buffer_bytes": "Bottleneck buffer in bytes, or −1 when it is given in packets or unlimited.",
    "autosize_buffer_pkts": (
        "The live auto-sizer's answer (`[autosize]`): the median of the sizes its search "
        "converged to, each convergence counted once (the larger middle one of an even count); "
        "−1 without `[autosize]` or if the search never converged. The `autosize` table has "
        "every step."
    ),
    "rtt_mean_s": "Mean two-way propagation delay of the flows, without queueing (s).",
    "ports": "Switch topology: N, the switch's ports (0 on the other topologies, as are the rest).",
    "input_arrivals": "Switch: packets that reached the switch's inputs (its VOQs).",
    "input_drops": (
        "Switch: packets dropped at the inputs, VOQ full (under `oq_emulation`, dropped by the "
        "shadow output-queued switch). `drops` counts the outputs' drops."
    ),
    "input_drop_rate": "Switch: input_drops / input_arrivals.",
    "voq_mean_pkts": (
        "Switch: packets in an input's VOQs after each slot's arrivals, mean over the measured "
        "slots and the inputs."
    ),
    "voq_max_pkts": "Switch: the largest number of packets in one input's VOQs.",
    "fabric_slots": "Switch: line cell slots in the measured time (one cell time each).",
    "fabric_busy_slots": "Switch: those slots with cells waiting at the inputs.",
    "fabric_mean_matching": (
        "Switch: mean matching size, cells moved per matching computed (at most N; several "
        "matchings per slot with speedup)."
    ),
    "peak_rss_mib": (
        "Peak resident memory of the process that ran it (MiB), counting the interpreter "
        "and earlier runs in the same process."
    ),
}

RESULT_TABLES = """\
### Tables

`buflab.run()` returns these as pandas DataFrames; `buflab run --out DIR` writes them as
Parquet (and CSV with `--csv`).

- **flows** (one row per flow): `flow`, `traffic` (index of its `[[traffic]]` entry), `kind`,
  `tcp`, `cc` (the congestion control it ran: `reno`, `bic`, `cubic` or `bbr`; empty for UDP),
  `rtt_s`, `start_s`, `goodput_bps`, `delivered_bytes`, `sent_packets`, `retransmits`,
  `timeouts`, `ecn_reactions` (window reductions in answer to ECN-Echo), `cwnd_pkts`,
  `ssthresh_pkts`, `srtt_s` (the last three at the end of the run), `machine`, `class` (the
  flow's server machine and class queue; −1 without machines, and class −1 for cross traffic,
  which skips the class queues), `input`, `output` (the switch ports the flow crosses, from 1;
  −1 off the switch topology).
- **timeseries** (one row per `monitor.interval`): `time_s`, `throughput_bps`, `utilization`,
  `queue_pkts`, `queue_max_pkts`, `arrivals`, `drops`.
- **links** (one row per monitored link, in path order: the dumbbell's bottleneck, hops
  1 to k of a parking lot, or the output lines of a switch), over the measured time: `hop`
  (from 1; the port on a switch), `name` (`bottleneck`, `hop1`, `hop2`, …, `output1`, …),
  `rate_bps`, `buffer_pkts`, `buffer_bytes` (−1 when not in that unit), `utilization`,
  `throughput_bps`, `drop_rate`, `drops`, `marks`, `mark_rate` (packets admitted with an ECN
  mark by RED, and marks ÷ arrivals), `arrivals`, `mean_queue_pkts`, `max_queue_pkts`,
  `queue_delay_mean_s`. The row of the link the summary describes has the summary's figures
  exactly (on a switch, the summary's totals and means cover every output).
- **ports** (switch topology only; one row per port), over the measured time: `port` (from
  1), `flows_in`, `flows_out` (flows entering at this input, leaving by this output), the
  input's `in_arrivals`, `in_drops`, `in_drop_rate` (at its VOQs), `voq_mean_pkts`,
  `voq_max_pkts` (packets in its VOQs after each slot's arrivals: mean over the slots,
  largest), `mux_drops` (at its multiplexing router), and the output line's
  `out_utilization`, `out_throughput_bps`, `out_arrivals`, `out_drops`, `out_drop_rate`,
  `out_mean_queue_pkts`, `out_max_queue_pkts` (as in its links row), `late_departures` (under
  `oq_emulation`, packets sent after their shadow OQ slot: 0 with speedup ≥ 2).
- **transfers** (closed-loop, repeated-download and open-loop traffic; one row per download,
  i.e. per connection): `flow`,
  `traffic`, `conn` (1, 2, … per flow), `start_s` (the client's request), `end_s` (last byte
  received; NaN if the run ended first), `bytes`, `fct_s`, `throughput_bps` (bytes·8/fct),
  `retransmits`, `timeouts` (the server's, for that connection), `complete`.
  `buflab.analysis.transfers.by_size_bin()` and `short_and_long()` summarise it.
- **autosize** (only with `[autosize]`; one row per step of the live auto-sizer):
  `time_s` (end of the interval, when the step decided), `buffer_pkts` (the limit during
  the interval), `utilization`, `drops`, `arrivals` (at the bottleneck queue, over the
  interval after its first `autosize.settle`), `passed` (utilization ≥ tolerance × target),
  `next_buffer_pkts` (the limit set for the next interval; after the run's last step it is
  not applied), `converged` (the search had converged after the step). `buflab autosize
  FILE` prints it and plots it.
- **events** (only with `monitor.events = true`): every enqueue, dequeue (service start),
  drop and ECN mark (right after the enqueue of the packet RED marked) at the bottleneck
  queue, in time order: `time_ps` (exact integer picoseconds), `event`,
  `flow`, `seq`, `size`, `queue_pkts`, `queue_bytes` (waiting after the event); frames in
  memory add `time_s`. `buflab run --out DIR` streams it into `DIR/events.parquet` in batches
  as the run goes (memory stays bounded; the file is `events.parquet.partial` until the run
  ends), with the link's rate, the measured window and the interval in the file's metadata.
  `buflab analyze DIR` (`buflab.analysis.queue.analyze`) rebuilds the queue from it, checks it
  against the summary and plots the CDFs of inter-arrival times, burst sizes and queueing
  delays.

A sweep (`buflab sweep`, `buflab reproduce`) writes `runs/<id>.json` per run, `results.csv`
(one row per run: the varied keys, the seed and every summary value) and `summary.csv` (per
point: `runs`, then `<metric>_mean` and `<metric>_ci95`, the half-width of the 95 % Student-t
confidence interval over seeds; empty with a single seed).
"""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def key_tables(schema: Iterable[dict[str, str]]) -> str:
    """One markdown table per schema section, sections in the engine's order."""
    sections: dict[str, list[dict[str, str]]] = {}
    for entry in schema:
        sections.setdefault(entry["section"], []).append(entry)
    parts = ["## Keys\n"]
    for section, entries in sections.items():
        parts.append(f"### {section or 'top level'}\n")
        parts.append("| key | type | default | meaning |\n|---|---|---|---|")
        for entry in entries:
            default = entry["default"]
            default_cell = "required" if default == "required" else f"`{_cell(default)}`"
            parts.append(
                f"| `{_cell(entry['key'])}` | {_cell(entry['type'])} | {default_cell} "
                f"| {_cell(entry['doc'])} |"
            )
        parts.append("")
    return "\n".join(parts) + "\n"


def results_section() -> str:
    rows = "\n".join(f"| `{key}` | {_cell(doc)} |" for key, doc in SUMMARY_KEYS.items())
    return (
        "## Results\n\n### Summary\n\n"
        "`buflab run --json` prints this object; `Result.summary` is the same dict. Rates are "
        "in bit/s, times in seconds. Metrics cover the measured time only (after warm-up), "
        "except `departures` and `events` (whole run) and the echoes of the configuration. "
        "On a parking lot, the bottleneck of the summary, the time series and the event log is "
        "hop `network.summary_hop` (the first by default); the `links` table has every hop. "
        "On a switch, the summary's utilization, throughput, drops, arrivals and queue figures "
        "cover every output line (utilization and throughput: the mean over the outputs; "
        "`bottleneck_rate_bps` and `buffer_pkts` are one output's); its delay, gap and burst "
        "figures, the time series and the event log are `network.switch.summary_port`'s; the "
        "`ports` table has every port.\n\n"
        f"| key | meaning |\n|---|---|\n{rows}\n\n{RESULT_TABLES}"
    )


def scenario_reference(schema: Iterable[dict[str, str]]) -> str:
    """The whole of docs/scenario.md."""
    return INTRO + key_tables(schema) + results_section()


@click.command()
def docs() -> None:
    """Print the scenario reference (markdown) generated from the engine's schema."""
    click.echo(scenario_reference(core().schema()), nl=False)
