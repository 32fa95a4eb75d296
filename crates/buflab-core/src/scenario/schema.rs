//! Every scenario key, its type, default and meaning — the single source for the reader's
//! defaults, its "did you mean" suggestions and the reference page `docs/scenario.md`.
//!
//! Read first: nothing; this is a leaf but for one thing: the queue disciplines document
//! their own keys (`buflab-queue`'s descriptions, listed by [`crate::queue::kinds`]), and
//! [`keys`] puts them beside the `queue` key of the bottleneck and hop tables. Owns [`keys`]
//! and the lookups over them. Must not know how a key is read or checked (that is the section
//! readers'); a key added here must be read by one of them (the test
//! `every_documented_key_is_read` in [`super`] checks it).

use std::sync::LazyLock;

/// One documented key.
#[derive(Clone, Copy, Debug)]
pub struct KeyDoc {
    /// The table it lives in: "" (top level), "network.bottleneck", "traffic.long_lived", …
    pub section: &'static str,
    pub key: &'static str,
    pub ty: &'static str,
    /// The default as written in a scenario file; "required" when there is none.
    pub default: &'static str,
    pub doc: &'static str,
}

pub const REQUIRED: &str = "required";

macro_rules! keys {
    ($( $section:literal $key:literal $ty:literal $default:literal $doc:literal ;)*) => {
        /// The keys written here; [`keys`] adds the disciplines' own.
        const STATIC_KEYS: &[KeyDoc] = &[ $( KeyDoc { section: $section, key: $key, ty: $ty, default: $default, doc: $doc }, )* ];
    };
}

/// Every documented key, in documentation order: those written below, with the bottleneck's
/// `queue` key documented from the disciplines and each discipline's parameters after it
/// (and after a hop's `queue` key, which inherits them).
pub fn keys() -> &'static [KeyDoc] {
    static KEYS: LazyLock<Vec<KeyDoc>> = LazyLock::new(|| {
        let kinds = crate::queue::kinds();
        // Built once per process: leaking the few generated strings keeps `KeyDoc` plain.
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let mut keys = Vec::with_capacity(STATIC_KEYS.len() + 16);
        for k in STATIC_KEYS {
            match (k.section, k.key) {
                ("network.bottleneck", "queue") => {
                    let choices: String = kinds.iter().map(|d| format!(" `{}`: {}", d.name, d.doc)).collect();
                    let doc = format!(
                        "Queue discipline; `buffer` stays the hard limit under every one.{choices} A discipline's \
                         own keys (named after it, e.g. `red_*`) are an error with another."
                    );
                    keys.push(KeyDoc { doc: leak(doc), ..*k });
                    for d in &kinds {
                        keys.extend(d.params.iter().map(|p| KeyDoc {
                            section: k.section,
                            key: p.key,
                            ty: p.ty,
                            default: p.default,
                            doc: p.doc,
                        }));
                    }
                }
                ("network.hop" | "network.link", "queue") => {
                    keys.push(*k);
                    let what = if k.section == "network.hop" { "hop" } else { "link" };
                    for d in &kinds {
                        keys.extend(d.params.iter().map(|p| KeyDoc {
                            section: k.section,
                            key: p.key,
                            ty: p.ty,
                            default: leak(format!("network.bottleneck.{}", p.key)),
                            doc: leak(format!(
                                "This {what}'s `{}` (by default the bottleneck's); {} keys need the {what}'s queue to be `{}`.",
                                p.key, d.label, d.name
                            )),
                        }));
                    }
                }
                _ => keys.push(*k),
            }
        }
        keys
    });
    &KEYS
}

keys! {
    "" "name" "string" "\"scenario\"" "A label carried into results and plot footers.";
    "" "seed" "integer" "1" "Seed of every random stream. Same scenario and seed give identical results.";
    "" "duration" "time" "\"60s\"" "Simulated time to run.";
    "" "warmup" "time" "\"0s\"" "Time excluded from measurements at the start; must be shorter than `duration`.";
    "" "network" "table" "{}" "The topology; see the `network` sections.";
    "" "monitor" "table" "{}" "What to record; see the `monitor` section.";
    "" "traffic" "array of tables" "required" "Traffic sources; each entry has a `kind`.";
    "" "autosize" "table" "{}" "The live auto-sizer (thesis ch. 4.3), off unless `autosize.target_utilization` is given; see the `autosize` section.";
    "" "emulation" "table" "{}" "Settings only `buflab emulate` uses (real Linux TCP in network namespaces); see the `emulation` section.";
    "" "change" "array of tables" "[]" "Timed changes to the running experiment (the control panel of thesis ch. 4.3, Fig 4.15): `[[change]]` entries in time order, each setting one or more things at its `at`. `buflab serve` writes a live session as the scenario plus these, and `buflab run` of that file reproduces the session exactly. See the `change` section. Not on the switch topology.";

    "network" "topology" "string" "\"dumbbell\"" "`dumbbell`: N senders, each behind its own access link, share one bottleneck into the receivers; ACKs return over an uncongested reverse path. `parking_lot`: `hops` bottleneck links in series; each traffic entry's `hops` says which of them its flows cross (main flows all, cross flows some), and ACKs return hop by hop over uncongested reverse links. `switch`: the router of thesis ch. 3 (Fig 3.1): each flow's access link joins a multiplexing router at one of the switch's inputs, whose line at the core rate feeds an N×N switch (VOQs, a slotted fabric, output queues); each output line carries its flows to their receivers, and ACKs return over uncongested links. See `network.switch`. `network`: named nodes joined by links, one direction each (`network.node`, `network.link`); each traffic entry gives its flows a route (`route`, or `from` and `to`, or for UDP a `matrix`), and ACKs return over the links the other way. `tree`: the tree of thesis Fig 5.1 (`network.tree`): traffic enters at the leaves and leaves by the root. `layered`: a general network standing for thesis Fig 5.2 (`network.layered`), where flows share part of their routes and diverge. The dumbbell, the parking lot, the tree and the layered network are shapes of the general network: one builder builds them all.";
    "network" "bottleneck" "table" "required" "Dumbbell and parking lot: the shared link; see `network.bottleneck`. On the parking lot, what every hop is made of unless `network.hop` says otherwise; on a tree or a layered network, what every router's output link is made of. On a `network`, optional: every link's defaults (each `network.link` entry may say otherwise).";
    "network" "hops" "integer" "1" "Parking lot only: the number of hops (bottleneck links in series), 1 to 100.";
    "network" "hop" "array of tables" "[]" "Parking lot only: per-hop overrides, `[[network.hop]]` entries for hops 1, 2, … in order; at most `hops` entries, and hops without one are copies of `network.bottleneck`. See `network.hop`.";
    "network" "summary_hop" "integer" "1" "Parking lot only: the hop (1 = the first) that the run summary, the time series and the event log describe. The `links` table has every hop.";
    "network" "access" "table" "{}" "Each sender's own access link; see `network.access`.";
    "network" "rtt" "time range" "\"100ms\"" "Two-way propagation delay of each flow, drawn uniformly from `lo..hi` per flow (distinct RTTs avoid artificial phase effects). The flow's access links carry what the shared links it crosses (bottleneck, or its hops) leave of half of it.";
    "network" "loss" "number" "0.0" "Dumbbell, parking lot, tree and layered network: probability that the bottleneck (on the parking lot: each hop; on a tree or a layered network: each router's link) drops an arriving data packet independently of the queue (random loss, for the Mathis formula check). Between 0 and 1. On a `network`, each link's own `loss`.";
    "network" "node" "array of tables or names" "required" "`network` only: its nodes, `[[network.node]]` entries (`name = \"r1\"`) or just names (`node = [\"r1\", \"r2\"]`). Senders and receivers sit at nodes: a flow enters at the first node of its route by its own access link, and its receiver is at the last. See `network.node`.";
    "network" "link" "array of tables" "required" "`network` only: its links, `[[network.link]]` entries, each one direction from one node to another (`duplex = true` for both). Every monitored link has a row in the `links` table. See `network.link`.";
    "network" "summary_link" "string" "the first monitored link" "`network`, `tree` and `layered`: the name of the link that the run summary, the time series and the event log describe (on a tree, by default the root's, \"r1->exit\"). The `links` table has every monitored link.";
    "network" "tree" "table" "{}" "Tree only: its shape; see `network.tree`.";
    "network" "layered" "table" "{}" "Layered only: its shape; see `network.layered`.";

    "network.node" "name" "string" "required" "The node's name, unique: links and routes name it.";

    "network.link" "from" "string" "required" "The node the link leaves: it is that node's output port, with its own buffer.";
    "network.link" "to" "string" "required" "The node it reaches.";
    "network.link" "name" "string" "\"from->to\"" "Its name in the `links` table and for `network.summary_link`, unique; by default `from->to` (\"r1->r2\"). A duplex entry's way back is named `to->from`, or `NAME back` when `name` is given.";
    "network.link" "rate" "rate" "network.bottleneck.rate" "Its rate (by default `network.bottleneck.rate`, which must then be given).";
    "network.link" "buffer" "buffer" "network.bottleneck.buffer" "Its buffer, read as `network.bottleneck.buffer` (by default the bottleneck table's, or its documented default).";
    "network.link" "delay" "time" "network.bottleneck.delay" "Its one-way propagation delay. The links of a route may add up to at most half the smallest RTT.";
    "network.link" "queue" "string" "network.bottleneck.queue" "Its queue discipline, read as `network.bottleneck.queue` (by default the bottleneck table's).";
    "network.link" "loss" "number" "0.0" "Probability that it loses an arriving packet before its queue (random loss), between 0 and 1.";
    "network.link" "monitor" "boolean" "true" "Whether it has a row in the `links` table (and a queue monitor). An unmonitored link with an unlimited buffer and drop-tail is passed through without events, as a shape's ACK links are.";
    "network.link" "duplex" "boolean" "false" "Also make the link the other way, with the same settings (a compact form for links whose two directions are alike).";

    "network.tree" "depth" "integer" "4" "Levels of routers, 1 to 32 (thesis Fig 5.1): a route from a leaf to the exit crosses `depth` routers, the n of Thm 5.1. Depth 6 with fanout 2 is a binary tree of 63 routers. At most 2,500 routers.";
    "network.tree" "fanout" "integer" "2" "Children of each router, 1 to 64 (1: a line). Routers are `r1` (the root) to `rN`, level by level, the children of router i being routers f·(i − 1) + 2 … f·i + 1; each has one output link (made of `network.bottleneck`), to its parent, the root's to the node `exit`. A traffic entry without a route spreads its flows over the leaves, flow k at leaf k mod leaves (each flow with its own access link: an ingress port). ACKs return over uncongested links, as on the dumbbell.";

    "network.layered" "stages" "integer" "3" "Columns of routers, 1 to 16: a route crosses `stages` routers (the n of Thm 5.2). Routers are `rS.I` (column S, row I) and the egress nodes `e1` … `eW`.";
    "network.layered" "width" "integer" "4" "Routers per column, at least 2. Router s.i has two output links (made of `network.bottleneck`): straight to router s+1.i and across to s+1.(i+1 mod width), the last column's to the egress nodes. A traffic entry without a route spreads its flows over the ingress routes: from each row of the first column, one per choice of straight or across at each column (width × 2^stages routes, at most 65,536), so that every link carries the same number of routes, flows sharing a link diverge at the next router, and every link merges flows from two routers. ACKs return over uncongested links.";


    "network.bottleneck" "rate" "rate" "required" "Bottleneck capacity, e.g. \"100Mbps\".";
    "network.bottleneck" "buffer" "buffer" "\"100pkt\"" "Drop-tail limit: packets (\"125pkt\") or bytes (\"80KB\"). Counts packets waiting, not the one being serialized (as ns-2's drop-tail), so B packets of buffer hold at most B + 1.";
    "network.bottleneck" "delay" "time" "\"0ms\"" "One-way propagation delay of the bottleneck itself; the rest of each flow's RTT sits on its access link. At most half the smallest RTT.";
    "network.bottleneck" "queue" "string" "\"droptail\"" "Written by `keys` from the disciplines' own documentation.";

    "network" "switch" "table" "{}" "Switch only: the N×N router; see `network.switch`.";

    "network.switch" "ports" "integer" "8" "N: the switch has N inputs and N outputs (the thesis baseline: 8), 1 to 64.";
    "network.switch" "rate" "rate" "required" "Line rate of every port: each input line (from its multiplexing router) and each output line; the core rate (thesis: 2.5 Gb/s). With `network.access.rate` it sets the multiplexing factor M = rate ÷ access rate (thesis: 100).";
    "network.switch" "scheduler" "string" "\"mwm\"" "`mwm`: maximum weight matching on VOQ lengths (the thesis baseline). `islip`: iSLIP, round-robin pointers (McKeown 1999; §3.3.1). `pim`: parallel iterative matching, random grants and accepts. `oq_emulation`: stable matching on the departure times of a shadow output-queued switch, which with speedup ≥ 2 sends every packet exactly when that switch would (§2.2, Chuang et al. 1999). `output_queued`: no input queues; every packet joins its output queue at the first slot boundary after it arrives (within 3.2 µs at 2.5 Gb/s).";
    "network.switch" "speedup" "number" "1" "Fabric rate ÷ line rate, at least 1, held exactly to 1/1000 (1.2 = 6/5): each line cell slot makes ⌊s⌋ or ⌈s⌉ matchings, s per slot on average. 1: an input-queued switch, no queueing at the outputs; N (the ports): an output-queued switch, no queueing at the inputs (§3.2). Not with `output_queued`.";
    "network.switch" "iterations" "integer" "1" "`islip` and `pim` only: request-grant-accept iterations per matching, 1 to 64.";
    "network.switch" "voq_buffer" "buffer in packets" "\"100pkt\"" "Drop-tail limit of each virtual output queue, in packets (`\"3pkt\"`, `3`) or `\"unlimited\"`: a packet for output j arriving at input i is dropped when VOQ(i, j) already holds this many. Not with `output_queued` (no VOQs) or `oq_emulation` (unlimited VOQs; its drops are the shadow OQ switch's).";
    "network.switch" "output_buffer" "buffer in packets" "\"100pkt\"" "Drop-tail limit of each output queue in packets, or `\"unlimited\"`; it counts the packets waiting, not the one on the line, as `network.bottleneck.buffer` does. With `oq_emulation` it is the shadow OQ switch's output buffer: a packet that switch would drop is dropped on arrival (an input drop), and the others wait at their output for their departure slot.";
    "network.switch" "load" "string or N×N array" "\"uniform\"" "Where each input's flows go: `uniform` (every output alike), `diagonal` (§3.3.1: at input i, 2/3 of the flows to output i + 1 and 1/3 to i + 2, mod N), or an array of N rows of N non-negative weights, row i the shares of input i's flows per output. A traffic entry's flows take the inputs round robin (flow k at input k mod N); each input's flows are split over the outputs in proportion to its row, rounded to whole flows with the remainders rotating over the outputs (so uniform and diagonal loads give every output the same number ±1), and which flow goes where is shuffled from the seed.";
    "network.switch" "cell" "size" "largest data packet" "Fabric cell: a slot is its serialization time at `rate`, and a packet takes ⌈size ÷ cell⌉ cells (a 40 B control packet a whole padded cell). By default the largest `packet` of the traffic entries, so that every data packet is one cell and a slot one packet time, as in the thesis.";
    "network.switch" "mux_buffer" "buffer" "\"unlimited\"" "Buffer of each input's multiplexing router, where its flows' access links merge onto the input line (Fig 3.1). Unlimited by default: the thesis gave these routers large buffers to prevent drops there.";
    "network.switch" "summary_port" "integer" "1" "The output (from 1) whose queueing-delay, gap and burst figures, time series and event log the results describe. The summary's utilization, throughput, drop and queue figures cover every output.";

    "network.hop" "rate" "rate" "network.bottleneck.rate" "This hop's capacity (by default the bottleneck's).";
    "network.hop" "buffer" "buffer" "network.bottleneck.buffer" "This hop's drop-tail limit, read as `network.bottleneck.buffer` (by default the bottleneck's).";
    "network.hop" "delay" "time" "network.bottleneck.delay" "This hop's one-way propagation delay (by default the bottleneck's). The hops a traffic entry crosses may add up to at most half the smallest RTT.";
    "network.hop" "queue" "string" "network.bottleneck.queue" "This hop's queue discipline, read as `network.bottleneck.queue` (by default the bottleneck's).";

    "network" "cross" "table" "{}" "Dumbbell only: the link cross traffic leaves by; see `network.cross`.";
    "network" "bump" "array of tables" "[]" "Bumps in the wire (NetBump, seed ch. 3, 5 and 7): elements on a link that classify the traffic passing, estimate a downstream port's queue with a virtual queue (and mark, drop or count on it), and pace what they are asked to; see `network.bump`. Each has a row in the `bumps` results table.";

    "network.cross" "rate" "rate" "\"1Gbps\"" "Rate of the link that carries cross traffic (`path = \"cross\"`) away before the bottleneck.";
    "network.cross" "buffer" "buffer" "\"unlimited\"" "Its buffer.";
    "network.cross" "delay" "time" "\"0ms\"" "Its one-way propagation delay, like `network.bottleneck.delay` for the main traffic.";

    "network.access" "rate" "rate" "\"10Gbps\"" "Rate of every sender's access link (one per flow), or of every class queue when `machines` > 0.";
    "network.access" "buffer" "buffer" "\"unlimited\"" "Buffer of each access link or class queue. Unlimited by default: the sender's queue never drops (the thesis's PSPacer classes had 5,000 packets).";
    "network.access" "machines" "integer" "0" "Dumbbell only (on the parking lot every flow has its own access link). 0: every flow has its own access link. Otherwise the senders run on this many server machines (flow i on machine i mod machines), each with a NIC link of rate `nic` into the bottleneck, and each machine's flows share `classes` queues at `rate` (PSPacer-style emulated access links, thesis ch. 4.1).";
    "network.access" "classes" "integer" "1" "Dumbbell only. Class queues per machine (flow i in class (i div machines) mod classes).";
    "network.access" "nic" "rate" "\"1Gbps\"" "Dumbbell only. Rate of each server machine's NIC link.";

    "network.bump" "name" "string" "\"bump1\", \"bump2\", …" "The bump's name in the `bumps` results table and for `monitor.events_at`; by default `bump` and the entry's number. Unique.";
    "network.bump" "at" "string" "\"access\"" "Where it sits, seeing the traffic of that link just before it goes on. `access`: at the end of every sender's own access link, one bump per flow, between the host and the network (the seed's placement, between servers and their top-of-rack switch); its ACKs pass it on their way back (`paced = \"ecn_echo\"`). Needs `network.access.machines = 0`. `bottleneck` (dumbbell): one bump in front of the bottleneck, for every flow crossing it (after the access bumps). `hop1`, `hop2`, … (parking lot): one in front of that hop, for the flows crossing it. Several bumps at one place are crossed in the order of their entries.";
    "network.bump" "rate" "rate" "network.access.rate at `access`, unbounded elsewhere" "Its output port's rate: the bump serializes what it sends at this rate. At `access` by default the access link's (a bump on a 10 Gb/s link forwards at 10 Gb/s); elsewhere by default unbounded, so that it adds no serialization of its own.";
    "network.bump" "buffer" "buffer" "\"unlimited\"" "Its own queue's hard limit, packets or bytes, counted as `network.bottleneck.buffer` is (the packets waiting, paced or not, the one on its port not counted). Drops are in the `bumps` table.";
    "network.bump" "delay" "time" "\"0s\"" "Its forwarding latency: a packet leaves this long after its serialization ends (the seed measured about 3.3 µs through a software bump, Table 7.2).";
    "network.bump" "classify" "string" "\"flow\"" "How it splits traffic into classes, each with its own pacer and virtual queue (seed §5.1): `flow` (a class per flow), `port` (per destination port: in the simulator the flows of one traffic entry share one, as parallel streams to one server do), or `all` (one class). Control packets (SYN-ACK and pure ACKs) are never classified or paced: they go first.";
    "network.bump" "pacer" "string" "\"none\"" "How it paces each class (seed ch. 5): `none` (a FIFO: the bump only classifies and watches its virtual queues); `delay` (§5.3.3: each packet leaves one packet time at the pacing rate after the class's previous one; no credit after idleness); `token_bucket` (the classic bucket, tokens accruing with time up to `depth`); `modified_token_bucket` (§5.3.4: tokens added at arrivals, at most `cap` of elapsed time each, and at idle polls every `tick`, packets released only then); `token_thread` (§5.4: tokens on a fixed grid of `tick`, at a rate feedback may change); `batch` (not a pacer but a host's timer-driven batching, interrupt coalescing or offload: every packet waits for the next `tick` and those waiting leave together, the bursts of the seed's Fig 5.3; no `pace_rate`).";
    "network.bump" "pace_rate" "rate, \"measured\", \"vqueue\" or \"qcn\"" "\"measured\"" "With a pacer: the rate each class is paced at. A rate such as \"1Gbps\"; `measured`: the class's own arrival rate over each `window` of packets (the seed's delay-based pacer; packets go unpaced until the first window is measured); `vqueue`: the virtual queue's `rate` (the downstream port's); `qcn` (at `access` only): a QCN reaction point's (IEEE 802.1Qau, seed §7.6), which starts at the bump's `rate` (the line rate) and follows the messages of the congestion points on the flow's path (`congestion_point`); see `network.bump.reaction_point`. Its rate changes are in the `rates` results table.";
    "network.bump" "window" "integer" "1000" "With `pace_rate = \"measured\"`: packets per measurement window (the seed: 1,000), 2 or more.";
    "network.bump" "depth" "size" "\"4500B\"" "With a token pacer: the bucket's depth, the burst it lets through after idleness (the seed: 4,500 B, three full-size packets). A packet larger than the depth waits for a full bucket.";
    "network.bump" "tick" "time" "\"4.5us\" (modified_token_bucket), \"2.71us\" (token_thread), \"40us\" (batch)" "With `modified_token_bucket`: the interval of its idle polls (secondary events; the seed: ten empty receive polls, about 4.5 µs). With `token_thread`: its token grid (the seed: 2.71 µs). With `batch`: the timer's period (the seed's bursts, ~40 µs apart).";
    "network.bump" "cap" "time" "\"5us\"" "With `modified_token_bucket`: the most elapsed time one addition of tokens counts (the seed: 5 µs), so that an idle period earns no burst.";
    "network.bump" "paced" "string" "\"all\"" "With a pacer: which classes it paces. `all`; or `ecn_echo` (the seed's HULL-like trigger, §5.2; at `access` only): a class from the moment one of its flow's ACKs passes back through the bump carrying ECN-Echo, until `hold` passes without another (its packets keep their order either way). Needs ECN-capable TCP (`ecn = true`) and something that marks downstream: a RED queue with `red_ecn`, or a bump's `vqueue` with `action = \"mark\"`.";
    "network.bump" "hold" "time" "\"10ms\"" "With `paced = \"ecn_echo\"`: how long a class stays paced after its last ECN-Echo (the seed leaves it open: \"a timeout can be placed on the flow\").";
    "network.bump" "congestion_point" "table" "none" "A QCN congestion point on this bump's queue (IEEE 802.1Qau, seed §7.6): it samples arriving data packets and sends the source of a sampled one a message when the queue is above its equilibrium or growing; the message reaches that flow's `pace_rate = \"qcn\"` bump one propagation delay later (the links' delays from the source to here). The queue is the bump's virtual queue if it has one (with `classify = \"all\"`: the seed's NetBump estimated its switch's queue this way), else its own (give it the port's `rate` and `buffer`: it is then that switch port). See `network.bump.congestion_point`; its counts are in the `bumps` table.";
    "network.bump" "reaction_point" "table" "the standard's" "With `pace_rate = \"qcn\"`: the reaction point's settings; see `network.bump.reaction_point`.";
    "network.bump" "vqueue" "table" "none" "A virtual queue per class (vAQM, seed §3.2.2): a leaky bucket filled by the bytes passing and drained at the downstream port's `rate`, estimating that port's queue; see `network.bump.vqueue`. Its counts are in the `bumps` table.";

    "network.bump.congestion_point" "q_eq" "size" "required" "`Q_EQ`: the queue it steers to, bytes. The feedback is `Fb = -(Qoff + w·Qδ)`, `Qoff` the queue's excess over `q_eq` and `Qδ` its growth since the last sample; negative `Fb` is sent as `|Fb|` quantized to 6 bits (1 to 63) against its largest value `(1 + 2w)·q_eq`.";
    "network.bump.congestion_point" "w" "integer" "2" "`W`: the weight of the queue's growth (the standard's 2), 0 to 64.";
    "network.bump.congestion_point" "sample" "\"standard\" or number" "\"standard\"" "Which arriving packets it samples: `standard` (the 802.1Qau proposal's, rising from 1 % with no feedback at the last sample to 10 % at the largest) or a probability, 0 to 1 (the seed's 0.20, and 0.05 after its change).";
    "network.bump.reaction_point" "quantization" "integer" "128" "`1/Gd`: a message of quantized feedback `Fb` cuts the rate by `Fb/quantization` (the standard's 128, at most about half; the seed's 1024, eight times gentler).";
    "network.bump.reaction_point" "byte_counter" "size" "\"150KB\"" "`BC_LIMIT`: bytes sent per byte-counter cycle in fast recovery (half after it). Each cycle's end raises the rate.";
    "network.bump.reaction_point" "timer" "time" "\"15ms\"" "The timer's cycle in fast recovery (half after it). Each cycle's end raises the rate.";
    "network.bump.reaction_point" "fast_recovery" "integer" "5" "Cycles of fast recovery after a message (the rate halves its distance to the target each cycle), before active increase raises the target.";
    "network.bump.reaction_point" "r_ai" "rate" "\"5Mbps\"" "`R_AI`: the target's step per cycle in active increase (one counter past fast recovery).";
    "network.bump.reaction_point" "r_hai" "rate" "\"50Mbps\"" "`R_HAI`: the target's step in hyper-active increase (both counters past it), times the cycles past it of the slower one.";
    "network.bump.reaction_point" "min_rate" "rate" "\"10Mbps\"" "The lowest rate a message may cut to.";
    "network.bump.vqueue" "rate" "rate" "required" "The downstream port's rate: the bucket drains at it.";
    "network.bump.vqueue" "size" "size" "required" "The downstream port's buffer, bytes (\"30KB\"): a packet that would take the bucket above it is an overflow, which that port would drop; it does not join the bucket.";
    "network.bump.vqueue" "threshold" "size" "vqueue.size" "The backlog above which a passing packet gets the `action`, at most `size`.";
    "network.bump.vqueue" "action" "string" "\"mark\"" "What a packet above the threshold gets: `mark` (Congestion Experienced if it is ECN-capable; others pass unmarked), `drop`, or `count` (the seed's monitor, §7.5: counted, left unchanged).";

    "monitor" "interval" "time" "\"100ms\"" "Interval of the bottleneck time series (throughput, occupancy, drops); on the parking lot, of `network.summary_hop`.";
    "monitor" "trace_flows" "\"all\" or array of integers" "[]" "TCP flows whose sender state to trace over time (flow ids as in the `flows` table, from 0), or `\"all\"`: congestion window, ssthresh, smoothed RTT, pacing rate and bytes acknowledged, in the results' `traces` table (`traces.parquet` with `buflab run --out`, plotted as `traces.png`). Every change is a row unless `trace_interval` is set: mind the size when tracing many fast flows.";
    "monitor" "trace_interval" "time" "\"0s\"" "0: a trace row at every change of a traced sender's state. Otherwise at most one row per flow per interval (the state after its first event in each).";
    "monitor" "events" "boolean" "false" "Record the bottleneck queue event log (on the parking lot, `network.summary_hop`'s): every enqueue, dequeue, drop and ECN mark with its time, packet and the occupancy after it. `buflab run --out DIR` streams it to `DIR/events.parquet` in bounded memory; `buflab analyze DIR` rebuilds the queue from it.";
    "monitor" "pcap" "boolean" "false" "Also write the bottleneck's packets as a packet capture, `bottleneck.pcap` in the run's output directory, that tcpdump, Wireshark and tshark read: every packet arriving at the queue the event log records, admitted or dropped, exactly the log's `enqueue` and `drop` rows, at their times (nanoseconds from the run's time 0). In simulation the headers are synthesized from the engine's packets (IPv4 from 10.1.0.0 + the flow number to 10.0.0.1, TCP with the segment's first byte as its sequence number, or UDP; ECT(0) and CE as the packet had them); on real TCP (`buflab emulate`) they are the frames' own first 256 bytes. Needs `events = true` (the capture is the log's arrivals) and an output directory.";
    "monitor" "events_at" "string" "\"summary\"" "Which queue the event log (`events`) records: `summary`, the link the run summary describes, or a bump's `name` (at `access`, the first flow's bump). Its rate and buffer go with the log, so `buflab analyze` rebuilds that queue.";

    "autosize" "target_utilization" "number" "required" "Turns the live auto-sizer on (thesis ch. 4.3): within the one run, a binary search for the smallest bottleneck buffer, in whole packets, whose utilization over an `interval` reaches this target (a fraction above 0, at most 1). It owns the buffer of the bottleneck (on the parking lot, of `network.summary_hop`): the link starts at `start` packets whatever `network.bottleneck.buffer` says, and the summary's `buffer_pkts` is the last limit in force. After `warmup`, every `interval` it measures the interval that just ended. A step that passes moves the buffer down to the midpoint between it and the largest size that failed (0 at first, so it halves); a step that fails moves it up to the midpoint with the smallest size that passed, or to twice the size while none has. Once those two are one packet apart the search has converged and stays at the passing size; if that size later fails, the search starts afresh from twice it, forgetting the old bounds (see `recheck` for the other way). Packets already waiting above a new, smaller limit stay and drain; arrivals are dropped until fewer than the limit wait. Each step is a row of the `autosize` results table; the summary's `autosize_buffer_pkts` is the answer, the median of the sizes the search converged to.";
    "autosize" "interval" "time" "\"3s\"" "Time between steps (the thesis's tool: 3 s). Steps end at warmup + k·interval; at least one must fit in duration − warmup. One interval is a noisy measurement (±0.6 % utilization over 3 s at 100 Mb/s with 100 flows), so near the answer a step's verdict is close to a coin toss and one search ends anywhere in that band: a longer interval, or a longer run with more convergences, gives a steadier answer.";
    "autosize" "settle" "time" "interval ÷ 3" "Time at the start of each interval left out of its measurement, so that a step does not count TCP's reaction to the change before it (drops as a shrunk queue drains, windows regrowing into a larger buffer): measuring whole 3-s intervals put the answer 6–8 packets (5 %) higher on the example dumbbell. By default a third of `interval` (1 s of 3 s); \"0s\" measures whole intervals. Shorter than `interval`.";
    "autosize" "start" "integer" "RTT·C" "First buffer tried, packets, in force from time 0 through warm-up: by default RTT·C rounded up (the mean of `network.rtt` × the bottleneck's rate ÷ the packet size of its first long-lived traffic entry, or 1000 B), the tool's \"initial large value\" and the first probe of `buflab size`.";
    "autosize" "tolerance" "number" "0.995" "A step passes when its utilization is at least tolerance × target_utilization (the thesis's \"within 99.5 % of the desired throughput\"). Above 0, at most 1.";
    "autosize" "recheck" "integer" "0" "Passes in a row after which a converged size is tested from below again: the search re-opens between 0 and that size. 0: never, the converged size stays while it passes. Set it (e.g. 10) to follow a load that comes to need less buffer, or to let a search that ended too high in the noise come down; each re-check spends a few steps below the answer.";

    "change" "at" "time" "required" "When the change applies: from the start of the run, before the end, and no earlier than the change before it. It applies before anything else happens at that picosecond; its parts apply in this order: target_utilization, access_rate, pacing, cc, flows, buffer, autosize.";
    "change" "traffic" "integer" "the only long_lived entry" "The traffic entry (from 0) that `flows`, `access_rate`, `pacing` and `cc` are about; it must be a long_lived entry. Needed only when the scenario has several.";
    "change" "flows" "integer" "none" "The entry's long-lived flows from now on. More: new flows are added, each made like the entry's flows (its own access links, RTT and random streams, by the next flow id) with the settings in force, starting at `at` plus a draw from the entry's `start`. Fewer: the most recently added open flows are closed, as an application closing its connection: nothing new is sent, what is outstanding is still delivered (retransmitted as needed), and then the connection is done. A closed flow keeps its row in the flows table. The changes of a run may add at most 100,000 flows. Not with `network.access.machines` > 0, with bumps, or on a run of one flow whose bottleneck discipline holds its packets.";
    "change" "access_rate" "rate" "none" "The access link rate of the entry's flows added from now on (existing flows keep theirs): fast or slow access links, thesis ch. 4. Not with `network.access.machines` > 0.";
    "change" "pacing" "string" "none" "`pacing` (`off`, `window`, `linux`) of the entry's flows added from now on.";
    "change" "cc" "string" "none" "`cc` (`reno`, `bic`, `cubic`, `bbr`) of the entry's flows added from now on; `bbr` needs pacing `off`.";
    "change" "buffer" "buffer" "none" "The buffer of the link the run summary describes (the dumbbell's bottleneck, the parking lot's `summary_hop`), packets or bytes, from now on: packets already waiting above a smaller limit stay and drain, later arrivals see the new one. Stops a running auto-sizer.";
    "change" "target_utilization" "number" "autosize.target_utilization" "The auto-sizer's target from now on: a running one measures its next steps against it; one started later uses it. Above 0, at most 1.";
    "change" "autosize" "boolean" "none" "`true`: start the live auto-sizer now (afresh if it runs), its first interval beginning at `at`, from `autosize.start`, with the `[autosize]` settings (their defaults without the table) and the target in force, which must be set. `false`: stop it; the buffer stays at its last size. Its steps are rows of the `autosize` table, and the summary's `autosize_buffer_pkts` is the answer of the last search.";

    "emulation" "offloads" "boolean" "false" "`buflab emulate` only: leave the interfaces' offloads on (TSO, GSO, GRO and checksum offloads). Off by default, so that every frame the bottleneck counts is one packet of at most `packet` bytes, as in the simulator; on, the kernel hands the datapath super-packets of up to 64 KB that it counts, serializes and drops as one, the trap of a Mininet setup left at its defaults. The simulator has no offloads and ignores it.";
    "emulation" "segment" "boolean" "false" "`buflab emulate` only, with `offloads = true`: the datapath cuts each TCP super-packet the sender's kernel hands it into segments of the MSS where it enters the flow's access link (IP length, identification and checksum, TCP sequence number, flags and checksum rewritten), as a NIC's TSO puts it on the wire: back to back at the access rate. The bottleneck then counts packets of at most `packet` bytes again, and the bursts the offloads make stay (the NetBump seed notes that offload makes a 10 Gb/s host's bursts worse). The simulator ignores it.";
    "emulation" "gso_segments" "integer" "0" "`buflab emulate` only: the most TCP segments a sender's kernel hands its device at once (the senders' interfaces' `gso_max_segs`). Linux builds GSO packets even with the offloads off and sizes them to about 1 ms of the flow's pacing rate, at least 2 segments (`tcp_tso_autosize`), waiting for the window to allow a whole one (TSO deferral); software GSO then sends the segments back to back. At tens of Mb/s a flow that is 4 or 5 segments at a time, where the simulator's TCP sends each segment alone (measured: two flows at 100 Mb/s and 2 ms, 4–5 segments per burst at the median). `1` makes the kernel send one segment at a time; `0`, the default: the kernel's own limit and autosizing, as any Linux host. The simulator's `linux` TCP models the same autosizing and deferral and follows this limit too (`1`: one segment at a time, no deferral); the RFC-era TCPs always send one segment at a time.";

    "traffic" "path" "string" "\"main\"" "Dumbbell only. `main`: through the bottleneck. `cross`: cross traffic (thesis Fig 4.8): it shares its machine's NIC link with the main traffic, then leaves through the `network.cross` link before the bottleneck. Cross traffic skips the class queues (it is not paced, as in IMC §3.1.2). Needs `network.access.machines` > 0.";
    "traffic" "route" "array of node names" "none" "`network`, `tree` and `layered`: the nodes this entry's flows cross, in order ([\"r1\", \"r2\", \"r3\"]); each pair must be joined by a link (the first link entry between them), and no node may come twice. Instead of `from` and `to`.";
    "traffic" "from" "string" "none" "`network`, `tree` and `layered`, with `to`: the node the flows enter at; they take the shortest route to `to`: the fewest links, then the least propagation delay, then the first in the order of the link entries (comparing the routes' link entry numbers from the start). A TCP entry's ACKs return, for each link of the route, by the first link entry the other way.";
    "traffic" "to" "string" "none" "With `from`: the node the flows leave by (their receivers sit there).";
    "traffic" "matrix" "array of [from, to, weight]" "none" "`udp_poisson` and `udp_cbr` on `network`, `tree` and `layered`: a load matrix, one source per row (`[\"r1\", \"r3\", 2.0]` or `{ from, to, weight }`, weight 1 if left out), each on the shortest route from its `from` to its `to`. With `rate`, a row sends at rate × weight; with `load`, at the rates that give the load factor. `flows` is then the number of rows (leave it out).";
    "traffic" "hops" "integer or hop range" "\"all\"" "Parking lot only: the hops this entry's flows cross, numbered from 1: one hop (`2` or `\"2\"`), a range with both ends included (`\"1..3\"`), or `\"all\"` (the main flows). Flows that cross only some hops are cross traffic: they enter just before their first hop and leave just after their last.";
    "traffic" "flows_per_output" "integer or \"eq3.1\"" "none" "Switch only, `long_lived` entries only, instead of `flows`: N × this many flows in all (N = `network.switch.ports`), so with uniform or diagonal load exactly this many per output. `\"eq3.1\"`: the thesis's 100 % offered load, eq. 3.1 N·W_max/RTT = C, rounded up: C = `network.switch.rate`, RTT the mean of `network.rtt`, W_max the most a flow sends per RTT: its window on the wire (max_window ÷ MSS segments of `packet` bytes), or what its access link carries in one RTT if that is less. 2.5 Gb/s, 100 ms and 64 segments of 1000 B (window-limited behind 25 Mb/s) give 489 per output.";
    "traffic" "rtt" "time range or distribution" "`network.rtt`" "The two-way propagation delay of this entry's flows, one draw per flow, instead of `network.rtt`: a time or range as there (`\"280ms\"`, `\"75ms..125ms\"`: uniform), or a distribution table of times (see the distribution keys), e.g. `{ dist = \"choice\", values = [\"100ms\", \"280ms\"], weights = [1, 1] }` or `{ dist = \"exponential\", mean = \"100ms\" }`. Its smallest value must leave the flows' access links a delay of at least 0 after the shared links they cross.";
    "traffic" "kind" "string" "required" "`long_lived` (TCP flows that never end), `closed_loop` (users downloading files, thinking, repeating), `repeated_downloads` (users fetching fixed-size files back to back), `open_loop` (flows arriving as a Poisson process), `udp_poisson` or `udp_cbr` (open-loop packet streams).";

    "traffic.tcp" "tcp" "string" "\"newreno\"" "Loss recovery: `newreno` (RFC 6582: one lost segment resent per round trip of recovery), `reno` (RFC 5681: leaves recovery on the first new ACK), `sack` (RFC 6675 with the SACK option of RFC 2018: the receiver's ACKs report up to 3 blocks it holds above the cumulative ACK, growing by the option, 12, 20 or 28 B; the sender resends every segment they show lost in the same round trip; after a timeout it keeps the SACK information, as Linux does, and resends only what the receiver lacks), or `linux`, the TCP of a default Linux 6.x host (see `tcp/linux/`): SACK with RACK-TLP loss detection (RFC 8985: a segment is lost once one sent after it is delivered and a quarter of the minimum RTT has passed, at once with 3 segments SACKed above it; lost retransmissions found the same way; a tail loss probe after 2 smoothed RTTs of silence), Proportional Rate Reduction in recovery (RFC 6937, Linux's variant), Linux's RTO (SRTT + RTTVAR with RTTVAR at least `min_rto`, in 4-ms jiffies, at most 120 s; restarted when the first unacknowledged segment is resent), after a timeout every unSACKed segment but the most recent marked lost and resent in order as cwnd = in flight + 1 grows, an RTT sample from every ACK, the window grown by every segment an ACK delivers and only while it limits the sender, ssthresh from cwnd, CUBIC's clock paused while the window does not limit the sender (RFC 9438 §4.2), HyStart in CUBIC's slow start; PSH on the last segment of every GSO packet of two or more segments; and Linux's receiver: delayed ACKs with 16 quick ACKs at the start and after a silence, an adaptive timer from 40 ms, immediate ACKs for data out of order and for a full-sized PSH segment (sent once the application has read it). Its defaults differ: `initial_window` 10 (RFC 6928), `delayed_ack` true, `delayed_ack_timeout` 40 ms (the timer's floor), `jitter` 100 µs (host timing noise), `slow_start` \"hystart\" with CUBIC, `rto_restart` \"head\". GSO packets as Linux sizes them (about 1 ms of the flow's pacing rate, more on paths under a few ms, at least 2 segments, at most half the window, at most `emulation.gso_segments`), their segments leaving back to back, and TSO deferral (a packet the window would cut below a third of itself waits for an ACK due within min(srtt/2, 1 ms)). Not modelled: TCP Small Queues, pacing unless `pacing` or BBR asks, receive-window autotuning (the window is `max_window`), SACK compression, DSACK, undo of spurious reductions (Eifel, F-RTO), timestamps as an option (their RTT samples are taken), slow start after idle and cwnd validation (RFC 7661), reordering adaptation; see the README.";
    "traffic.tcp" "cc" "string" "\"reno\"" "Congestion control, the window arithmetic (loss recovery is `tcp`'s): `reno` (RFC 5681 AIMD: +1 segment per round trip, halved on loss), `bic` (BIC-TCP as Linux's tcp_bic.c, the default of Linux 2.6.8–2.6.18: binary search towards the window of the last loss, ×0.8 on loss), `cubic` (RFC 9438: the window a cubic function of the time since the last loss, ×0.7 on loss; no HyStart), or `bbr` (BBR v1, Cardwell et al. 2016 and draft-cardwell-iccrg-bbr-congestion-control-00: a model of the path, the bottleneck bandwidth as the largest delivery rate of the last 10 round trips and the propagation RTT as the smallest RTT of the last 10 s, sets the pacing rate and the window, ≈ 2 BDP; Startup, Drain, ProbeBW's gain cycle 1.25, 0.75, 1 ×6 and ProbeRTT every 10 s; losses only hold the window to what is in flight for a round of recovery). A `bbr` flow always paces at its own rate, so `pacing` must stay `off`, and it ignores ECN, so `ecn` must stay false; run it with `tcp = \"sack\"` as Linux does: without SACK, several drops per round trip take NewReno a round trip each. Each flow's is in the `cc` column of the flows table.";
    "traffic.tcp" "packet" "size" "\"1000B\"" "Data packet size on the wire, headers included (payload = packet − 40 B). ACKs and SYN, SYN-ACK are 40 B (a SACK ACK carrying blocks, 52–68 B).";
    "traffic.tcp" "max_window" "size" "\"20MB\"" "Receiver's advertised window (payload bytes); the sender never has more than max_window / MSS segments outstanding.";
    "traffic.tcp" "initial_window" "integer or \"rfc3390\"" "\"rfc3390\"" "Initial congestion window in segments; RFC 3390 gives min(4·MSS, max(2·MSS, 4380 B)). With `tcp = \"linux\"` the default is 10 (RFC 6928, Linux's `TCP_INIT_CWND`).";
    "traffic.tcp" "min_rto" "time" "\"200ms\"" "Minimum retransmission timeout (RFC 6298 §2.4 says 1 s; Linux uses 200 ms). With `tcp = \"linux\"`, Linux's floor on RTTVAR instead: RTO = SRTT + max(RTTVAR, min_rto).";
    "traffic.tcp" "delayed_ack" "boolean" "false" "Delayed ACKs (RFC 1122): ACK every second segment or when the timer expires. Off by default, as in the ns-2 studies; on by default with `tcp = \"linux\"`, with Linux's rules (quick ACKs at the start and after a silence, an adaptive timer).";
    "traffic.tcp" "delayed_ack_timeout" "time" "\"100ms\"" "Delayed-ACK timer. With `tcp = \"linux\"` the floor of Linux's adaptive timer (`TCP_ATO_MIN`), 40 ms by default.";
    "traffic.tcp" "limited_transmit" "boolean" "false (sack, linux: true)" "Limited Transmit (RFC 3042, `tcp/limited_transmit.rs`) for `reno` and `newreno`: one new segment on each of the first two duplicate ACKs, so that a window of a few segments still brings the third. `sack` and `linux` always have it (RFC 6675 §5 step 3; Linux counts SACKed segments out of flight) and refuse false.";
    "traffic.tcp" "rto_restart" "string" "\"every_retransmission\" (linux: \"head\")" "`sack` and `linux` only: when the retransmission timer restarts besides on each ACK of new data (RFC 6298 §5.3): `every_retransmission` (RFC 6675 §6's careful variant: every resend in recovery), `head` (when the first unacknowledged segment is resent, as Linux does) or `ack_only` (never, as ns-3).";
    "traffic.tcp" "slow_start" "string" "\"standard\" (linux with cubic: \"hystart\")" "How slow start ends (`tcp/cc/hystart.rs`): `standard` (RFC 5681: at ssthresh or a loss), `hystart` (Linux CUBIC's HyStart, from a window of 16: when the round's minimum RTT has risen by clamp(min RTT/8, 4 ms, 16 ms) over the connection's, or ACKs 2 ms apart span half the minimum RTT) or `hystart++` (RFC 9406: on such a rise against the last round, Conservative Slow Start at a quarter of the growth for up to 5 rounds, back to slow start if the RTT falls again; the first slow start only). Not `standard` only with `tcp = \"linux\"`, which samples the RTT on every ACK, and not with `cc = \"bbr\"`.";
    "traffic.tcp" "pacing" "string" "\"off\"" "Sender pacing (see `tcp/pacer.rs`): `off` (segments leave as ACKs open the window), `window` (Aggarwal et al. 2000: the window spread evenly over the smoothed RTT, one segment every srtt ÷ cwnd) or `linux` (Linux's rates: 2 × cwnd ÷ srtt in slow start, 1.2 × in congestion avoidance). Pacing starts with the first RTT sample: a long-lived flow's initial window goes at once. Not with `cc = \"bbr\"`, which paces at the rate it sets itself (traced as the pacing rate).";
    "traffic.tcp" "ack_pacing" "boolean" "false" "Receiver-side ACK pacing (see `tcp/ack_pacer.rs`; the pacing seed paced both sides): the receiver spreads its ACKs over its RTT — the path's two-way propagation delay — at 2× (while ACKs per round grow by half or more, as in slow start) or 1.2× the rate it generated them in the last round, in order. Works with or without sender `pacing`.";
    "traffic.tcp" "ecn" "boolean" "false" "ECN-capable TCP (RFC 3168): new data goes out ECT, so a RED queue with `red_ecn` marks it instead of dropping it early; the receiver echoes a mark (ECE) on its ACKs until the sender's CWR, and the sender reduces its window as for a loss, at most once per window of data, retransmitting nothing. Retransmissions are not ECT (§6.1.5). Not with `cc = \"bbr\"`: BBR v1 does not answer ECN-Echo.";
    "traffic.tcp" "ecn_codepoint" "string" "\"ect0\"" "With `ecn = true`: the ECN field of its ECT packets. `ect0`: ECT(0), classic ECN (RFC 3168). `ect1`: ECT(1), the L4S identifier (RFC 9331 §4.1), for a scalable sender that expects shallow, frequent marks (`cc = \"dctcp\"`); a `step` queue with `mark_ect1_only` marks only these, and the classic AQMs (RED, CoDel, PIE, FQ-CoDel) mark both alike.";
    "traffic.tcp" "jitter" "time" "\"0s\"" "Optional send jitter on a TCP sender's segments (not its ACKs): each send event (an ACK or a timer that releases data) draws a uniform random delay in [0, jitter], and what it releases leaves that much later, back to back as it would have, or right after the segment before it if that is later, so order is kept and no segment is held more than `jitter`. A host late in handling an ACK sends all it releases late, as Linux sends a GSO packet's segments together. It stands for a real host's timing noise (interrupt and scheduling delays, tens of microseconds to a millisecond): with `tcp = \"linux\"` it defaults to 100 µs. Without it, flows with equal RTTs can lock in phase (see the README).";

    "traffic.long_lived" "flows" "integer" "1" "Number of TCP flows. Also takes every key of `traffic.tcp`.";
    "traffic.long_lived" "start" "time range" "\"0s..1s\"" "Start times, uniform over `lo..hi`, drawn per flow.";

    "traffic.closed_loop" "users" "integer" "1" "Number of users (Harpoon): each opens a connection, downloads a file, thinks, and repeats, each from its own random stream. Also takes every key of `traffic.tcp`.";
    "traffic.closed_loop" "start" "time range" "\"0s..1s\"" "When each user makes its first request, uniform over `lo..hi`.";
    "traffic.closed_loop" "file_size" "distribution of sizes" "{\"dist\": \"pareto\", \"mean\": \"80KB\", \"shape\": 1.5}" "File size of each download (thesis ch. 4: Pareto, mean 80 KB, shape 1.5); see `distribution`.";
    "traffic.closed_loop" "think" "distribution of times" "{\"dist\": \"exponential\", \"mean\": \"1s\"}" "Time between the end of a download and the next request; see `distribution`.";
    "traffic.closed_loop" "handshake" "boolean" "true" "Open each connection with SYN / SYN-ACK / ACK (40 B each): the first RTT sample comes from it, and short transfers pay a round trip. Without it the server sends as soon as the request arrives.";

    "traffic.repeated_downloads" "users" "integer" "1" "Number of users (Sprint ATL, IMC §3.2): each downloads a file of `file_size` over a new connection (with handshake), then at once the next, for ever. Also takes every key of `traffic.tcp`.";
    "traffic.repeated_downloads" "ramp" "time" "\"0s\"" "Users start evenly spaced over this period, user k at k·ramp/users (IMC: 0 → 600 users in 50 s).";
    "traffic.repeated_downloads" "file_size" "size" "\"1MB\"" "Size of every file.";
    "traffic.repeated_downloads" "max_window" "size" "\"16KB\"" "Receiver's advertised window; the IMC experiment used 16 KB, so this kind's default differs from `traffic.tcp`'s.";

    "traffic.open_loop" "arrivals" "number" "required" "Flows arriving per second, a Poisson process; give this or `load`. Each flow downloads one file over a new connection. Also takes every key of `traffic.tcp`.";
    "traffic.open_loop" "load" "number" "required" "Instead of `arrivals`: the offered load as a fraction of the bottleneck rate (`network.bottleneck.rate`, also on the parking lot); arrivals per second = load × rate ÷ (8 × mean file size).";
    "traffic.open_loop" "file_size" "distribution of sizes" "{\"dist\": \"pareto\", \"mean\": \"80KB\", \"shape\": 1.5}" "Size of each flow's file; see `distribution`.";
    "traffic.open_loop" "handshake" "boolean" "true" "Open each connection with SYN / SYN-ACK / ACK (see `traffic.closed_loop`).";
    "traffic.open_loop" "start" "time" "\"0s\"" "When arrivals begin.";

    "distribution" "dist" "string" "required" "`pareto` (mean, shape), `exponential` (mean), `lognormal` (mean, sigma), `uniform` (range), `constant` (value), `empirical` (cdf or file) or `choice` (values, weights). Values are sizes or times, as the key says.";
    "distribution" "mean" "size or time" "required" "Mean, for pareto, exponential and lognormal.";
    "distribution" "shape" "number" "1.5" "Pareto shape α > 1 (scale = mean·(α − 1)/α).";
    "distribution" "sigma" "number" "1.0" "Lognormal standard deviation of ln(value).";
    "distribution" "range" "size or time range" "required" "`lo..hi`, for uniform.";
    "distribution" "value" "size or time" "required" "The value, for constant.";
    "distribution" "cdf" "array of [value, probability]" "required" "For empirical: points of the cumulative distribution, both coordinates nondecreasing, the last probability 1; values between points are interpolated linearly. Values are unit strings, or numbers in bytes (sizes) or seconds (times).";
    "distribution" "values" "array of sizes or times" "required" "For choice: the values a draw takes, unit strings or numbers in bytes (sizes) or seconds (times), e.g. `[\"100ms\", \"280ms\"]`.";
    "distribution" "weights" "array of numbers" "equal" "For choice: one non-negative weight per value, not all 0; a value is drawn with probability its weight ÷ their sum.";
    "distribution" "file" "path" "required" "For empirical, instead of `cdf`: a CSV file of `value,probability` rows (values as in `cdf`), relative to the scenario file; the `buflab` command and Python package read it into `cdf`.";

    "traffic.udp" "flows" "integer" "1" "Number of independent sources (with a `matrix`, one per row). On a tree or a layered network, an entry without a route spreads them over the ingress routes, source k on route k mod their number.";
    "traffic.udp" "rate" "rate" "required" "Mean rate of each source, packets included on the wire; or give `load`.";
    "traffic.udp" "load" "number" "none" "Instead of `rate`: the load factor ρ of thesis §5.1, the largest offered load over the links the entry's sources cross: each source's rate is set so that the most loaded link carries `load` of its rate (the other links less), sources sharing the rate equally (or by their `matrix` weights). `buflab load` prints ρ per link.";
    "traffic.udp" "packet" "size" "\"1000B\"" "Packet size on the wire.";
    "traffic.udp" "start" "time range" "\"0s\"" "Start times, uniform over `lo..hi`, drawn per source.";
}

/// The documented keys of one section.
pub fn section(section: &str) -> impl Iterator<Item = &'static KeyDoc> + '_ {
    keys().iter().filter(move |k| k.section == section)
}

/// The entry for (section, key), if documented.
pub fn find(section: &str, key: &str) -> Option<&'static KeyDoc> {
    keys().iter().find(|k| k.section == section && k.key == key)
}

/// The entry for (section, key). Panics if the reader asks for an undocumented key: that is a
/// programming error the schema test catches.
pub fn lookup(section: &str, key: &str) -> &'static KeyDoc {
    find(section, key)
        .unwrap_or_else(|| panic!("key `{key}` of section `{section}` is read but not documented"))
}

/// Edit distance, for "did you mean" suggestions.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest documented key of `section` to `unknown`, if it is close enough to be a typo.
pub fn suggest(section: &str, unknown: &str) -> Option<&'static str> {
    let mut best: Option<(usize, &'static str)> = None;
    for k in self::section(section) {
        let d = levenshtein(&unknown.to_ascii_lowercase(), k.key);
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k.key));
        }
    }
    best.filter(|&(d, k)| d <= 2.max(k.len() / 3)).map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        assert_eq!(suggest("network", "botleneck"), Some("bottleneck"));
        assert_eq!(suggest("traffic.tcp", "max_windw"), Some("max_window"));
        assert_eq!(suggest("network", "zzzzzz"), None);
    }
}
