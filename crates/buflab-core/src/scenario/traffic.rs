//! The `traffic` section: every traffic kind, and the TCP keys its TCP kinds share.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section) and
//! [`super::reader`] (typed key access, errors). Owns [`Traffic`] and its kinds, [`HopSpan`],
//! and the readers of `traffic` (the keys every entry has: `kind`, and where its flows go on
//! the topology), `traffic.<kind>` and `traffic.tcp`; distributions are `dist.rs`'s,
//! `flows_per_output` is [`super::switch`]'s. It reads the network it runs on (read before it)
//! but must not change it, and must not know how flows are built from an entry.

use std::ops::RangeInclusive;

use serde_json::{Map, Value};

use buflab_queue::describe::PacketSource;

use super::dist::read_dist_key;
use super::graph::{acks_back, read_matrix, read_route, Route};
use super::network::{reject_other_topology, ReadNetwork, Topology};
use super::reader::{error, Asked, Result, ScenarioError, Table};
use super::switch::{self, PerOutput};
use super::MAX_FLOWS;
use crate::tcp::cc::hystart::SlowStart;
use crate::tcp::cc::CcKind;
use crate::tcp::pacer::Pacing;
use crate::tcp::{Recovery, TcpConfig, HEADER_BYTES};
use crate::traffic::dist::Dist;
use crate::traffic::rtt::Rtt;
use crate::traffic::udp::UdpPattern;
use crate::units::{self, Range, Rate, Time};

#[derive(Clone, Debug)]
pub enum Traffic {
    LongLived(LongLived),
    ClosedLoop(ClosedLoop),
    OpenLoop(OpenLoop),
    Udp(Udp),
}

/// Flows arriving as a Poisson process, each downloading one file over a new connection.
#[derive(Clone, Debug)]
pub struct OpenLoop {
    pub tcp: TcpConfig,
    pub jitter: Time,
    pub handshake: bool,
    /// File sizes, bytes.
    pub file_size: Dist,
    pub arrivals_per_s: f64,
    /// When arrivals begin.
    pub start: Time,
}

/// When the users of a closed-loop entry make their first request.
#[derive(Clone, Copy, Debug)]
pub enum Starts {
    /// Drawn uniformly from the range, per user.
    Uniform(Range<Time>),
    /// Evenly spaced over the period: user k of n at k·period/n.
    Ramp(Time),
}

/// Harpoon-style users: request a file over a new connection, download it, think, repeat.
/// (`repeated_downloads` is the same with a constant file, no think time and a ramp.)
#[derive(Clone, Debug)]
pub struct ClosedLoop {
    pub users: u32,
    pub tcp: TcpConfig,
    pub start: Starts,
    pub jitter: Time,
    pub handshake: bool,
    /// File sizes, bytes.
    pub file_size: Dist,
    /// Think times, picoseconds.
    pub think: Dist,
    /// Read from a `repeated_downloads` entry.
    pub repeated: bool,
}

#[derive(Clone, Debug)]
pub struct LongLived {
    pub flows: u32,
    pub tcp: TcpConfig,
    pub start: Range<Time>,
    pub jitter: Time,
    /// On the switch, the flows per output when given as `flows_per_output` (resolved).
    pub per_output: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Udp {
    pub pattern: UdpPattern,
    pub flows: u32,
    /// Each source's rate: one for all, or one per route of the entry's [`Placement`] (flow k
    /// at `rates[k mod len]`), set by a `matrix` or by `load`.
    pub rates: Vec<Rate>,
    pub packet: u32,
    pub start: Range<Time>,
}

impl Udp {
    /// The rate of source `k`.
    pub fn rate(&self, k: u32) -> Rate {
        self.rates[k as usize % self.rates.len()]
    }
}

/// What a traffic entry's `kind` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficKind {
    LongLived,
    ClosedLoop,
    RepeatedDownloads,
    OpenLoop,
    UdpPoisson,
    UdpCbr,
}

crate::names::names!(TrafficKind {
    LongLived = "long_lived",
    ClosedLoop = "closed_loop",
    RepeatedDownloads = "repeated_downloads",
    OpenLoop = "open_loop",
    UdpPoisson = "udp_poisson",
    UdpCbr = "udp_cbr",
});

impl TrafficKind {
    /// The schema section of the keys of this kind's own.
    pub fn section(self) -> &'static str {
        match self {
            TrafficKind::LongLived => "traffic.long_lived",
            TrafficKind::ClosedLoop => "traffic.closed_loop",
            TrafficKind::RepeatedDownloads => "traffic.repeated_downloads",
            TrafficKind::OpenLoop => "traffic.open_loop",
            TrafficKind::UdpPoisson | TrafficKind::UdpCbr => "traffic.udp",
        }
    }

    /// The section of the keys it shares with other kinds: the TCP keys (UDP has none).
    pub fn shared(self) -> Option<&'static str> {
        match self {
            TrafficKind::UdpPoisson | TrafficKind::UdpCbr => None,
            _ => Some("traffic.tcp"),
        }
    }
}

impl Traffic {
    pub fn kind(&self) -> TrafficKind {
        match self {
            Traffic::LongLived(_) => TrafficKind::LongLived,
            Traffic::ClosedLoop(c) if c.repeated => TrafficKind::RepeatedDownloads,
            Traffic::ClosedLoop(_) => TrafficKind::ClosedLoop,
            Traffic::OpenLoop(_) => TrafficKind::OpenLoop,
            Traffic::Udp(Udp { pattern: UdpPattern::Poisson, .. }) => TrafficKind::UdpPoisson,
            Traffic::Udp(_) => TrafficKind::UdpCbr,
        }
    }
    /// The entry's TCP settings (None for UDP).
    pub fn tcp(&self) -> Option<TcpConfig> {
        match self {
            Traffic::LongLived(l) => Some(l.tcp),
            Traffic::ClosedLoop(c) => Some(c.tcp),
            Traffic::OpenLoop(o) => Some(o.tcp),
            Traffic::Udp(_) => None,
        }
    }

    /// The same, to change.
    pub fn tcp_mut(&mut self) -> Option<&mut TcpConfig> {
        match self {
            Traffic::LongLived(l) => Some(&mut l.tcp),
            Traffic::ClosedLoop(c) => Some(&mut c.tcp),
            Traffic::OpenLoop(o) => Some(&mut o.tcp),
            Traffic::Udp(_) => None,
        }
    }

    pub fn flows(&self) -> u32 {
        match self {
            Traffic::LongLived(l) => l.flows,
            Traffic::ClosedLoop(c) => c.users,
            // Open-loop flows are added as they arrive.
            Traffic::OpenLoop(_) => 0,
            Traffic::Udp(u) => u.flows,
        }
    }
}

/// The hops a traffic entry's flows cross, `first..=last`, counted from 0 (the user's hop 1
/// is 0 here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopSpan {
    pub first: usize,
    pub last: usize,
}

impl HopSpan {
    pub fn range(self) -> RangeInclusive<usize> {
        self.first..=self.last
    }
}

/// Where a traffic entry's flows go through the network's graph: flow k of the entry follows
/// `routes[k mod len]`. Empty on the switch, which places flows by its own rules.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    pub routes: Vec<Route>,
}

impl Placement {
    /// The route of flow `k` of the entry.
    pub fn route(&self, k: u32) -> &Route {
        &self.routes[k as usize % self.routes.len()]
    }

    /// How many of the entry's `flows` flows take route `r`.
    pub fn flows_on(&self, r: usize, flows: u64) -> u64 {
        let n = self.routes.len() as u64;
        flows / n + u64::from((r as u64) < flows % n)
    }
}

/// The traffic entries as read, each with where its flows go.
pub(super) struct Entries {
    pub traffic: Vec<Traffic>,
    /// Per entry: cross traffic (`path = "cross"`) rather than main traffic.
    pub cross: Vec<bool>,
    /// Per entry: the routes its flows take.
    pub placements: Vec<Placement>,
    /// Per entry: how its flows draw their RTTs (its `rtt`, or `network.rtt`).
    pub rtts: Vec<Rtt>,
}

/// Reads the `traffic` array: every entry, checked against the network it runs on.
pub(super) fn read(root: &mut Table, net: &ReadNetwork, asked: &mut Asked) -> Result<Entries> {
    let mut entries =
        Entries { traffic: Vec::new(), cross: Vec::new(), placements: Vec::new(), rtts: Vec::new() };
    for (path, map) in root.array("traffic")? {
        let (t, is_cross, placement, rtt) = read_entry(path, map, net, asked)?;
        entries.traffic.push(t);
        entries.cross.push(is_cross);
        entries.placements.push(placement);
        entries.rtts.push(rtt);
    }
    let total_flows = total_flows(&entries.traffic);
    if total_flows > MAX_FLOWS {
        return Err(ScenarioError {
            key: "traffic".into(),
            message: format!("{total_flows} flows in all; expected at most {MAX_FLOWS}"),
        });
    }
    Ok(entries)
}

/// The flows of every entry (open-loop flows, added as they arrive, not counted).
pub(super) fn total_flows(traffic: &[Traffic]) -> u64 {
    traffic.iter().map(|t| t.flows() as u64).sum()
}

/// The largest data packet of the traffic (1000 B if it has none): the typical packet.
pub(super) fn typical_packet(traffic: &[Traffic]) -> u32 {
    traffic.iter().map(data_packet).max().unwrap_or(1000)
}

/// What a long-lived entry's `flows_per_output` needs: the count asked for, the switch's
/// ports and rate, the access rate and the entry's mean RTT (eq. 3.1 needs them all).
type PerOutputOn = (PerOutput, u32, Rate, Rate, Time);

/// One traffic entry: its kind, where its flows go, and the keys of its kind.
fn read_entry(
    path: String,
    map: &Map<String, Value>,
    net: &ReadNetwork,
    asked: &mut Asked,
) -> Result<(Traffic, bool, Placement, Rtt)> {
    let mut kind_t = Table::entry(path.clone(), "traffic", None, map);
    let kind: TrafficKind = kind_t.named("kind")?;
    reject_other_topology(&mut kind_t, net.network.topology)?;
    let rtt = read_rtt(&mut kind_t, net, asked)?;
    let Where { is_cross, placement, weights, per_output } =
        read_placement(&mut kind_t, kind, &path, net, &rtt)?;
    asked.extend(kind_t.asked());
    let t = kind_table(path, kind, map);
    let t = match kind {
        TrafficKind::LongLived => read_long_lived(t, per_output, asked)?,
        TrafficKind::ClosedLoop => read_closed_loop(t, asked)?,
        TrafficKind::OpenLoop => read_open_loop(t, net.load_rate, asked)?,
        TrafficKind::RepeatedDownloads => read_repeated_downloads(t, asked)?,
        TrafficKind::UdpPoisson => read_udp(t, UdpPattern::Poisson, &placement, weights, net, asked)?,
        TrafficKind::UdpCbr => read_udp(t, UdpPattern::Cbr, &placement, weights, net, asked)?,
    };
    Ok((t, is_cross, placement, rtt))
}

/// The entry's own `rtt` (a time range, or a distribution table of times), or `network.rtt`.
fn read_rtt(t: &mut Table, net: &ReadNetwork, asked: &mut Asked) -> Result<Rtt> {
    if !t.given("rtt") {
        return Ok(Rtt::Uniform(net.network.rtt));
    }
    match t.value("rtt")? {
        Value::String(_) => Ok(Rtt::Uniform(t.time_range("rtt")?)),
        Value::Object(_) => {
            let ps = read_dist_key(t, "rtt", |s| units::parse_time(s).map(|x| x.0 as f64), 1e12, asked)?;
            Ok(Rtt::Drawn(ps))
        }
        other => Err(error(
            &t.key_path("rtt"),
            &other,
            "a time or range such as \"100ms\" or \"75ms..125ms\", or a distribution table such as \
             { dist = \"choice\", values = [\"100ms\", \"280ms\"] }",
        )),
    }
}

/// Where an entry's flows go: cross traffic or not (dumbbell), its routes, a matrix's weights
/// (one per route) and its flows per output (switch).
struct Where {
    is_cross: bool,
    placement: Placement,
    weights: Option<Vec<f64>>,
    per_output: Option<PerOutputOn>,
}

/// Where an entry's flows go, by topology: on the dumbbell, main or cross traffic (`path`);
/// on the parking lot, the hops they cross (`hops`); on the switch, the flows per output if
/// given that way (`flows_per_output`); on a graph topology, a `route`, `from` and `to`, a
/// `matrix` (UDP), or else the shape's ingress routes.
fn read_placement(
    kind_t: &mut Table,
    kind: TrafficKind,
    path: &str,
    net: &ReadNetwork,
    rtt: &Rtt,
) -> Result<Where> {
    let network = &net.network;
    let graph = &network.graph;
    // The smallest RTT the entry's flows draw (its own `rtt`, or `network.rtt`) must leave
    // their access links a delay of at least 0 after the links their data crosses.
    let (smallest, blamed, got) = if kind_t.present("rtt") {
        (rtt.min(), kind_t.key_path("rtt"), kind_t.value("rtt")?)
    } else {
        (network.rtt.lo, "network.rtt".to_string(), net.rtt_value.clone())
    };
    let fits_rtt = |links: &[u32]| -> Result<()> {
        let one_way = graph.delay(links);
        if Time(one_way.0 * 2) > smallest {
            let expected = if network.topology == Topology::ParkingLot {
                format!("a smallest RTT of at least twice the one-way delay of the hops {path} crosses ({one_way})")
            } else {
                format!(
                    "a smallest RTT of at least twice the one-way delay of the links {path} crosses ({one_way} on {})",
                    graph.describe(links)
                )
            };
            return Err(error(&blamed, &got, &expected));
        }
        Ok(())
    };
    // A route the entry's data takes, with its ACKs' way back (TCP only).
    let route = |links: Vec<u32>, key: &str| -> Result<Route> {
        fits_rtt(&links)?;
        let back = if kind.shared().is_some() { acks_back(graph, key, &links)? } else { Vec::new() };
        Ok(Route { links, back })
    };
    match network.topology {
        Topology::Switch => {
            if kind == TrafficKind::OpenLoop {
                let got = kind_t.value("kind")?;
                let expected = "a kind with a fixed number of flows on the switch (open-loop flows \
                                come and go, and each needs its input and output when built)";
                return Err(error(&kind_t.key_path("kind"), &got, expected));
            }
            let spec = network.switch.as_ref().expect("the switch topology has a switch");
            let max = MAX_FLOWS / spec.ports as u64;
            let per_output = switch::read_per_output(kind_t, kind, max)?
                .map(|p| (p, spec.ports as u32, spec.rate, network.access_rate, rtt.mean()));
            Ok(Where { is_cross: false, placement: Placement::default(), weights: None, per_output })
        }
        Topology::Dumbbell => {
            let is_cross = kind_t.choice("path", &["main", "cross"])? == "cross";
            if is_cross && network.machines == 0 {
                let got = kind_t.value("path")?;
                let expected =
                    "\"main\" unless network.access.machines > 0 (cross traffic shares a machine's NIC link)";
                return Err(error(&kind_t.key_path("path"), &got, expected));
            }
            // The shape's links: the bottleneck and its way back, then the cross link's pair.
            let exit = if is_cross { 2 } else { 0 };
            fits_rtt(&[exit])?;
            let routes = vec![Route { links: vec![exit], back: vec![exit + 1] }];
            Ok(Where { is_cross, placement: Placement { routes }, weights: None, per_output: None })
        }
        Topology::ParkingLot => {
            let span = read_span(kind_t, network.hops.len())?;
            // Hop j is link 2j, its way back 2j + 1.
            let links: Vec<u32> = span.range().map(|j| 2 * j as u32).collect();
            let r = route(links, &kind_t.key_path("hops"))?;
            Ok(Where {
                is_cross: false,
                placement: Placement { routes: vec![r] },
                weights: None,
                per_output: None,
            })
        }
        _ => {
            let explicit = read_route(kind_t, graph)?;
            let matrix = read_matrix(kind_t, graph)?;
            let udp = kind.shared().is_none();
            if let (Some(_), Some(v)) = (&matrix, kind_t.raw("matrix")) {
                if !udp {
                    let expected = format!(
                        "no matrix on a {} entry (a matrix gives UDP sources; TCP flows take `route`, or `from` and `to`)",
                        kind.name()
                    );
                    return Err(error(&kind_t.key_path("matrix"), v, &expected));
                }
                if explicit.is_some() {
                    return Err(error(&kind_t.key_path("matrix"), v, "either `matrix` or a route, not both"));
                }
            }
            // The key an error about a route names: the one the user wrote.
            let written = ["route", "to", "matrix"].into_iter().find(|k| kind_t.present(k)).unwrap_or("kind");
            let key = kind_t.key_path(written);
            let (links, weights): (Vec<Vec<u32>>, Option<Vec<f64>>) = match (explicit, matrix) {
                (Some(links), _) => (vec![links], None),
                (None, Some(rows)) => {
                    let (links, weights) = rows.into_iter().unzip();
                    (links, Some(weights))
                }
                (None, None) if !network.ingress.is_empty() => (network.ingress.clone(), None),
                (None, None) => {
                    let expected = if udp {
                        "`route`, `from` and `to`, or `matrix`: where the flows go on a network"
                    } else {
                        "`route`, or `from` and `to`: where the flows go on a network"
                    };
                    return Err(kind_t.missing("route", expected));
                }
            };
            let routes = links.into_iter().map(|l| route(l, &key)).collect::<Result<Vec<_>>>()?;
            Ok(Where { is_cross: false, placement: Placement { routes }, weights, per_output: None })
        }
    }
}

/// The hops a parking-lot traffic entry crosses (`hops`, counted from 1): one hop, a range
/// `a..b` with both ends included, or "all".
fn read_span(t: &mut Table, k: usize) -> Result<HopSpan> {
    let v = t.value("hops")?;
    let hop = |h: u64| Some(h as usize).filter(|h| (1..=k).contains(h));
    let parse = |s: &str| s.trim().parse::<u64>().ok().and_then(hop);
    let span = match &v {
        Value::String(s) if s.trim() == "all" => Some((1, k)),
        Value::String(s) => match s.split_once("..") {
            Some((a, b)) => parse(a).zip(parse(b)).filter(|(a, b)| a <= b),
            None => parse(s).map(|h| (h, h)),
        },
        Value::Number(n) => n.as_u64().and_then(hop).map(|h| (h, h)),
        _ => None,
    };
    let (first, last) = span.ok_or_else(|| {
        let expected =
            format!("a hop from 1 to {k} (2 or \"2\"), a range \"a..b\" with 1 ≤ a ≤ b ≤ {k}, or \"all\"");
        error(&t.key_path("hops"), &v, &expected)
    })?;
    Ok(HopSpan { first: first - 1, last: last - 1 })
}

/// The table of a traffic entry's kind-specific keys; the keys every entry has (`kind`,
/// `path`, `hops`, `flows_per_output`, `rtt`) were read from the entry's generic table.
fn kind_table(path: String, kind: TrafficKind, map: &Map<String, Value>) -> Table<'_> {
    let mut t = Table::entry(path, kind.section(), kind.shared(), map);
    for key in ["kind", "path", "hops", "flows_per_output", "rtt", "route", "from", "to", "matrix"] {
        t.consume(key);
    }
    t
}

/// The TCP keys shared by every TCP traffic kind (section `traffic.tcp`): the flow's
/// settings and its send jitter.
fn read_tcp(t: &mut Table) -> Result<(TcpConfig, Time)> {
    let recovery: Recovery = t.named("tcp")?;
    let packet = t.bytes("packet")?;
    if !(HEADER_BYTES as u64 + 1..=65_535).contains(&packet) {
        let got = t.value("packet")?;
        return Err(error(
            &t.key_path("packet"),
            &got,
            "a packet size from 41 B (40 B of headers) to 65535 B",
        ));
    }
    let mut tcp = TcpConfig::default_for(packet as u32, recovery);
    tcp.cc = t.named("cc")?;
    let max_window = t.bytes("max_window")?;
    let mss = tcp.mss() as u64;
    if max_window < mss {
        let got = t.value("max_window")?;
        return Err(error(
            &t.key_path("max_window"),
            &got,
            &format!("at least one segment ({mss} B of payload)"),
        ));
    }
    tcp.max_window = (max_window / mss).min(u32::MAX as u64 / 4) as u32;
    match t.raw("initial_window") {
        None => {}
        Some(Value::String(s)) if s == "rfc3390" => {}
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= u32::MAX as u64 => tcp.initial_window = n as u32,
            _ => {
                let expected = "a whole number of segments ≥ 1, or \"rfc3390\"";
                return Err(error(&t.key_path("initial_window"), v, expected));
            }
        },
    }
    tcp.min_rto = t.time("min_rto")?;
    // The `linux` profile has defaults of its own for these (`tcp::linux::defaults`).
    let linux = recovery == Recovery::Linux;
    if !linux || t.given("delayed_ack") {
        tcp.delayed_ack = t.boolean("delayed_ack")?;
    }
    if !linux || t.given("delayed_ack_timeout") {
        tcp.delayed_ack_timeout = t.time("delayed_ack_timeout")?;
    }
    if tcp.delayed_ack_timeout >= Time::from_ms(500) || tcp.delayed_ack_timeout == Time::ZERO {
        let got = t.value("delayed_ack_timeout")?;
        let expected = "a positive timeout under 500 ms (RFC 1122 §4.2.3.2)";
        return Err(error(&t.key_path("delayed_ack_timeout"), &got, expected));
    }
    tcp.pacing = t.named("pacing")?;
    tcp.ecn = t.boolean("ecn")?;
    tcp.ecn_codepoint = t.named("ecn_codepoint")?;
    // ECT(0), the default, is harmless without ECN (a resolved scenario writes it out).
    if tcp.ecn_codepoint == crate::tcp::EcnCodepoint::Ect1 && !tcp.ecn {
        let got = t.value("ecn_codepoint")?;
        let expected = "\"ect0\" without ecn = true (only an ECN-capable sender marks its packets ECT(1); set ecn = true)";
        return Err(error(&t.key_path("ecn_codepoint"), &got, expected));
    }
    tcp.ack_pacing = t.boolean("ack_pacing")?;
    if tcp.cc == CcKind::Bbr {
        check_bbr(t, &tcp)?;
    }
    if tcp.cc == CcKind::Dctcp && !tcp.ecn {
        let got = t.value("cc")?;
        let expected = "a cc other than \"dctcp\" without ecn = true (DCTCP reads the network's ECN marks, RFC 8257 §3; set ecn = true)";
        return Err(error(&t.key_path("cc"), &got, expected));
    }
    read_recovery_keys(t, &mut tcp)?;
    let jitter = if linux && !t.given("jitter") { crate::tcp::linux::HOST_JITTER } else { t.time("jitter")? };
    Ok((tcp, jitter))
}

/// The keys whose meaning or default depends on `tcp`: `limited_transmit` (RFC 3042 for
/// `reno` and `newreno`; `sack` and `linux` always have it), `rto_restart` (`sack` and
/// `linux`) and `slow_start` (`linux`, which takes an RTT sample from every ACK).
fn read_recovery_keys(t: &mut Table, tcp: &mut TcpConfig) -> Result<()> {
    let variant = tcp.recovery.name();
    if t.given("limited_transmit") {
        let on = t.boolean("limited_transmit")?;
        if !on && tcp.recovery.uses_sack() {
            let got = t.value("limited_transmit")?;
            let expected = format!(
                "true with tcp = \"{variant}\" (a SACK sender always sends new data on the first duplicate ACKs: RFC 6675 §5 step 3, Linux's in-flight count)"
            );
            return Err(error(&t.key_path("limited_transmit"), &got, &expected));
        }
        tcp.limited_transmit = on;
    }
    if t.given("rto_restart") {
        if !tcp.recovery.uses_sack() {
            let got = t.value("rto_restart")?;
            let expected = format!(
                "no `rto_restart` with tcp = \"{variant}\" (RFC 6582 sets when NewReno restarts its timer; the key is for \"sack\" and \"linux\")"
            );
            return Err(error(&t.key_path("rto_restart"), &got, &expected));
        }
        tcp.rto_restart = t.named("rto_restart")?;
    }
    if t.given("slow_start") {
        tcp.slow_start = t.named("slow_start")?;
        if tcp.slow_start != SlowStart::Standard {
            let got = t.value("slow_start")?;
            if tcp.recovery != Recovery::Linux {
                let expected = format!(
                    "\"standard\" with tcp = \"{variant}\" (HyStart needs an RTT sample from every ACK, which only the \"linux\" sender takes)"
                );
                return Err(error(&t.key_path("slow_start"), &got, &expected));
            }
            if tcp.cc == CcKind::Bbr {
                let expected = "\"standard\" with cc = \"bbr\" (BBR's Startup ends by its own rule)";
                return Err(error(&t.key_path("slow_start"), &got, expected));
            }
        }
    } else if tcp.recovery == Recovery::Linux && tcp.cc == CcKind::Cubic {
        // Linux's CUBIC runs HyStart by default (`tcp_cubic.c`, `hystart = 1`).
        tcp.slow_start = SlowStart::Hystart;
    }
    Ok(())
}

/// Writes into a traffic entry's echo (`Scenario::normalized`) the keys its `tcp` gives
/// defaults of its own, as read: before the schema's defaults fill the rest.
pub(super) fn normalize_tcp(item: &mut Value, t: &Traffic) {
    let (tcp, jitter) = match t {
        Traffic::LongLived(l) => (&l.tcp, l.jitter),
        Traffic::ClosedLoop(c) => (&c.tcp, c.jitter),
        Traffic::OpenLoop(o) => (&o.tcp, o.jitter),
        Traffic::Udp(_) => return,
    };
    let Some(map) = item.as_object_mut() else { return };
    let mut put = |key: &str, v: Value| {
        map.entry(key.to_string()).or_insert(v);
    };
    put("limited_transmit", Value::from(tcp.limited_transmit));
    put("slow_start", Value::from(tcp.slow_start.name()));
    if tcp.recovery.uses_sack() {
        put("rto_restart", Value::from(tcp.rto_restart.name()));
    }
    if tcp.recovery == Recovery::Linux {
        put("initial_window", Value::from(tcp.initial_window));
        put("delayed_ack", Value::from(tcp.delayed_ack));
        put("delayed_ack_timeout", Value::from(super::autosize::exact_time(tcp.delayed_ack_timeout)));
        put("jitter", Value::from(super::autosize::exact_time(jitter)));
    }
}

/// What BBR does not combine with: another pacing (it always paces at its own rate) and ECN
/// (BBR v1 ignores ECN-Echo, so marks would neither slow it nor be dropped).
fn check_bbr(t: &mut Table, tcp: &TcpConfig) -> Result<()> {
    if tcp.pacing != Pacing::Off {
        let got = t.value("pacing")?;
        let expected = "\"off\" with cc = \"bbr\" (BBR always paces at its own rate; leave `pacing` out)";
        return Err(error(&t.key_path("pacing"), &got, expected));
    }
    if tcp.ecn {
        let got = t.value("ecn")?;
        let expected = "false with cc = \"bbr\" (BBR v1 does not respond to ECN marks)";
        return Err(error(&t.key_path("ecn"), &got, expected));
    }
    Ok(())
}

/// A long-lived entry. On the switch `per_output` carries its `flows_per_output` with the
/// switch's ports and rate, the access rate and the entry's mean RTT, which eq. 3.1 needs.
fn read_long_lived(mut t: Table, per_output: Option<PerOutputOn>, asked: &mut Asked) -> Result<Traffic> {
    let given_flows = match per_output {
        None => Some(t.uint("flows", 1, MAX_FLOWS)? as u32),
        Some(_) => None,
    };
    let (tcp, jitter) = read_tcp(&mut t)?;
    let start = t.time_range("start")?;
    let path = t.key_path("flows_per_output");
    t.finish(asked)?;
    let (flows, per_output) = match (given_flows, per_output) {
        (Some(flows), _) => (flows, None),
        (None, Some((p, ports, rate, access, rtt))) => {
            let n = match p {
                PerOutput::Count(n) => n as u64,
                PerOutput::Eq31 => {
                    let mean_rtt = rtt;
                    let window = tcp.max_window as u64 * tcp.packet as u64;
                    switch::eq31_flows(rate, mean_rtt, switch::max_per_rtt(window, access, mean_rtt))
                }
            };
            let total = n * ports as u64;
            if total > MAX_FLOWS {
                let expected =
                    format!("at most {MAX_FLOWS} flows in all; eq. 3.1 gives {n} per output × {ports}");
                return Err(error(&path, &Value::from("eq3.1"), &expected));
            }
            (total as u32, Some(n as u32))
        }
        (None, None) => unreachable!("flows are read unless given per output"),
    };
    Ok(Traffic::LongLived(LongLived { flows, tcp, start, jitter, per_output }))
}

/// The entries whose packets cross graph link `link` (a route of theirs takes it; on the
/// switch, None: its output lines carry every entry's packets), as a discipline's traffic
/// check sees them: downloads send packets of other sizes too (their last segments, their
/// SYN-ACKs).
pub(super) fn packet_sources(entries: &Entries, link: Option<u32>) -> Vec<PacketSource> {
    let crosses = |i: usize| match link {
        None => true,
        Some(l) => entries.placements[i].routes.iter().any(|r| r.links.contains(&l)),
    };
    (0..entries.traffic.len())
        .filter(|&i| crosses(i))
        .map(|i| {
            let t = &entries.traffic[i];
            let uniform = matches!(t, Traffic::LongLived(_) | Traffic::Udp(_));
            PacketSource { entry: i, size: data_packet(t), uniform }
        })
        .collect()
}

fn data_packet(t: &Traffic) -> u32 {
    match t {
        Traffic::LongLived(l) => l.tcp.packet,
        Traffic::ClosedLoop(c) => c.tcp.packet,
        Traffic::OpenLoop(o) => o.tcp.packet,
        Traffic::Udp(u) => u.packet,
    }
}

fn read_closed_loop(mut t: Table, asked: &mut Asked) -> Result<Traffic> {
    let users = t.uint("users", 1, MAX_FLOWS)? as u32;
    let (tcp, jitter) = read_tcp(&mut t)?;
    let start = t.time_range("start")?;
    let handshake = t.boolean("handshake")?;
    // Plain numbers in an empirical CDF are bytes for sizes and seconds for times.
    let file_size =
        read_dist_key(&mut t, "file_size", |s| units::parse_bytes(s).map(|b| b as f64), 1.0, asked)?;
    let think = read_dist_key(&mut t, "think", |s| units::parse_time(s).map(|x| x.0 as f64), 1e12, asked)?;
    t.finish(asked)?;
    let start = Starts::Uniform(start);
    Ok(Traffic::ClosedLoop(ClosedLoop {
        users,
        tcp,
        start,
        jitter,
        handshake,
        file_size,
        think,
        repeated: false,
    }))
}

fn read_open_loop(mut t: Table, bottleneck: Rate, asked: &mut Asked) -> Result<Traffic> {
    let (tcp, jitter) = read_tcp(&mut t)?;
    let handshake = t.boolean("handshake")?;
    let file_size =
        read_dist_key(&mut t, "file_size", |s| units::parse_bytes(s).map(|b| b as f64), 1.0, asked)?;
    let start = t.time("start")?;
    let arrivals_per_s = match (t.raw("arrivals").is_some(), t.raw("load").is_some()) {
        (true, false) => t.number_between("arrivals", 0.0, 1e12)?,
        (false, true) => {
            // The definition: load = arrival rate × mean size ÷ capacity.
            let load = t.number_between("load", 0.0, 1000.0)?;
            load * bottleneck.bits_per_s() as f64 / (8.0 * file_size.mean())
        }
        (both, _) => {
            let key = if both { "load" } else { "arrivals" };
            let got = t.raw(key).cloned().unwrap_or(Value::Null);
            return Err(error(&t.key_path(key), &got, "exactly one of `arrivals` (per second) or `load`"));
        }
    };
    t.finish(asked)?;
    Ok(Traffic::OpenLoop(OpenLoop { tcp, jitter, handshake, file_size, arrivals_per_s, start }))
}

fn read_repeated_downloads(mut t: Table, asked: &mut Asked) -> Result<Traffic> {
    let users = t.uint("users", 1, MAX_FLOWS)? as u32;
    // This kind documents its own max_window default (16 KB), which read_tcp picks up.
    let (tcp, jitter) = read_tcp(&mut t)?;
    let start = Starts::Ramp(t.time("ramp")?);
    let file_size = Dist::Constant(t.bytes("file_size")?.max(1) as f64);
    t.finish(asked)?;
    let think = Dist::Constant(0.0);
    Ok(Traffic::ClosedLoop(ClosedLoop {
        users,
        tcp,
        start,
        jitter,
        handshake: true,
        file_size,
        think,
        repeated: true,
    }))
}

/// A UDP entry: `flows` sources (one per row of a `matrix`), each at `rate` (times its row's
/// weight), or at the rates that make the most loaded link its flows cross carry `load` of
/// its rate (the load factor ρ of thesis §5.1, counting this entry's sources).
fn read_udp(
    mut t: Table,
    pattern: UdpPattern,
    placement: &Placement,
    weights: Option<Vec<f64>>,
    net: &ReadNetwork,
    asked: &mut Asked,
) -> Result<Traffic> {
    let flows = match &weights {
        // The normalized echo writes the rows' number as `flows`: it reads back to itself.
        Some(w) if t.present("flows") && t.value("flows")?.as_u64() != Some(w.len() as u64) => {
            let got = t.value("flows")?;
            let expected = format!("{}, the matrix's rows (each row is one source), or no `flows`", w.len());
            return Err(error(&t.key_path("flows"), &got, &expected));
        }
        Some(w) => w.len() as u32,
        None => t.uint("flows", 1, MAX_FLOWS)? as u32,
    };
    let rates = match (t.present("rate"), t.present("load"), &weights) {
        (true, true, _) => {
            let got = t.value("load")?;
            return Err(error(&t.key_path("load"), &got, "either `rate` or `load`, not both"));
        }
        (_, false, None) => vec![t.rate("rate")?],
        (_, false, Some(weights)) => {
            let rate = t.rate("rate")?;
            weights.iter().map(|w| Rate((rate.bits_per_s() as f64 * w).round() as u64)).collect()
        }
        (false, true, _) => {
            let weights = weights.clone().unwrap_or_else(|| vec![1.0; placement.routes.len().max(1)]);
            let load = t.number_between("load", 0.0, 1e6)?;
            if placement.routes.is_empty() {
                let got = t.value("load")?;
                let expected = "`rate` on the switch (a load needs the links the sources cross)";
                return Err(error(&t.key_path("load"), &got, expected));
            }
            rates_for_load(placement, &weights, flows, load, &net.network.graph)
        }
    };
    if rates.iter().any(|r| r.bits_per_s() == 0) {
        let got = t.value(if t.present("load") { "load" } else { "rate" })?;
        return Err(error(t.path(), &got, "rates of at least 1 bit/s for every source"));
    }
    let packet = t.bytes("packet")?;
    if !(1..=65_535).contains(&packet) {
        let got = t.raw("packet").cloned().unwrap_or(Value::Null);
        return Err(error(&format!("{}.packet", t.path()), &got, "a packet size from 1 B to 65535 B"));
    }
    let start = t.time_range("start")?;
    t.finish(asked)?;
    Ok(Traffic::Udp(Udp { pattern, flows, rates, packet: packet as u32, start }))
}

/// The rate of each route's sources that makes the most loaded link carry `load` of its rate:
/// source k on route r = k mod n sends at c·w_r, c = load ÷ max over links l of
/// Σ_{k crossing l} w_{r(k)} ÷ C_l (bits per second, so with equal packets also packets).
fn rates_for_load(
    placement: &Placement,
    weights: &[f64],
    flows: u32,
    load: f64,
    graph: &super::graph::Graph,
) -> Vec<Rate> {
    let mut per_link = vec![0.0f64; graph.links.len()];
    for (r, route) in placement.routes.iter().enumerate() {
        let on = placement.flows_on(r, flows as u64) as f64;
        for &l in &route.links {
            per_link[l as usize] += on * weights[r];
        }
    }
    let most = per_link
        .iter()
        .zip(&graph.links)
        .map(|(w, l)| w / l.spec.rate.bits_per_s() as f64)
        .fold(0.0f64, f64::max);
    weights.iter().map(|w| Rate((load / most * w).round() as u64)).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scenario::tests::{base, err};
    use crate::scenario::Scenario;
    use crate::tcp::RtoRestart;

    #[test]
    fn cc_selects_the_window_algorithm_and_rejects_others() {
        let Traffic::LongLived(l) = &Scenario::from_value(&base()).unwrap().traffic[0] else { panic!() };
        assert_eq!(l.tcp.cc, CcKind::Reno, "reno by default");
        for (name, kind) in
            [("reno", CcKind::Reno), ("bic", CcKind::Bic), ("cubic", CcKind::Cubic), ("bbr", CcKind::Bbr)]
        {
            let mut v = base();
            v["traffic"][0]["cc"] = json!(name);
            let Traffic::LongLived(l) = &Scenario::from_value(&v).unwrap().traffic[0] else { panic!() };
            assert_eq!((l.tcp.cc, l.tcp.cc.name()), (kind, name));
        }
        let mut v = base();
        v["traffic"][0]["cc"] = json!("vegas");
        assert_eq!(
            err(v),
            "traffic.0.cc: got \"vegas\"; expected one of \"reno\", \"bic\", \"cubic\", \"bbr\", \"dctcp\""
        );
    }

    /// DCTCP without ECN would be Reno that never hears of its marks: refused, naming `cc`.
    #[test]
    fn dctcp_needs_ecn() {
        let mut v = base();
        v["traffic"][0]["cc"] = json!("dctcp");
        assert_eq!(
            err(v.clone()),
            "traffic.0.cc: got \"dctcp\"; expected a cc other than \"dctcp\" without ecn = true (DCTCP reads the \
             network's ECN marks, RFC 8257 §3; set ecn = true)"
        );
        v["traffic"][0]["ecn"] = json!(true);
        let s = Scenario::from_value(&v).unwrap();
        let Traffic::LongLived(l) = &s.traffic[0] else { panic!("long-lived") };
        assert_eq!((l.tcp.cc, l.tcp.ecn), (CcKind::Dctcp, true));
    }

    /// `ecn_codepoint` picks ECT(0) (the default) or ECT(1); ECT(1) without ECN would set
    /// nothing, so it is refused, naming the key.
    #[test]
    fn the_ecn_codepoint_needs_ecn() {
        let mut v = base();
        v["traffic"][0]["ecn_codepoint"] = json!("ect1");
        assert_eq!(
            err(v.clone()),
            "traffic.0.ecn_codepoint: got \"ect1\"; expected \"ect0\" without ecn = true (only an \
             ECN-capable sender marks its packets ECT(1); set ecn = true)"
        );
        v["traffic"][0]["ecn"] = json!(true);
        let s = Scenario::from_value(&v).unwrap();
        let Traffic::LongLived(l) = &s.traffic[0] else { panic!("long-lived") };
        assert_eq!(l.tcp.ecn_codepoint, crate::tcp::EcnCodepoint::Ect1);
        v["traffic"][0].as_object_mut().unwrap().remove("ecn_codepoint");
        let s = Scenario::from_value(&v).unwrap();
        let Traffic::LongLived(l) = &s.traffic[0] else { panic!("long-lived") };
        assert_eq!(l.tcp.ecn_codepoint, crate::tcp::EcnCodepoint::Ect0);
    }

    #[test]
    fn bbr_refuses_another_pacing_and_ecn_naming_both_keys() {
        let bbr = |key: &str, value: Value| {
            let mut v = base();
            v["traffic"][0]["cc"] = json!("bbr");
            v["traffic"][0][key] = value;
            v
        };
        for pacing in ["window", "linux"] {
            let expected = format!(
                "traffic.0.pacing: got \"{pacing}\"; expected \"off\" with cc = \"bbr\" (BBR always paces at its \
                 own rate; leave `pacing` out)"
            );
            assert_eq!(err(bbr("pacing", json!(pacing))), expected);
        }
        assert!(Scenario::from_value(&bbr("pacing", json!("off"))).is_ok());
        let e = err(bbr("ecn", json!(true)));
        assert_eq!(e, "traffic.0.ecn: got true; expected false with cc = \"bbr\" (BBR v1 does not respond to ECN marks)");
    }

    #[test]
    fn keys_of_another_traffic_kind_are_rejected() {
        let mut v = base();
        v["traffic"][0]["rate"] = json!("10Mbps");
        assert!(err(v).starts_with("traffic.0.rate: unknown key"));
    }
    /// The first long-lived entry's settings, with `set` applied to it.
    fn tcp_of(set: &[(&str, Value)]) -> (TcpConfig, Time) {
        let mut v = base();
        for (k, x) in set {
            v["traffic"][0][*k] = x.clone();
        }
        let Traffic::LongLived(l) = &Scenario::from_value(&v).unwrap().traffic[0] else { panic!() };
        (l.tcp, l.jitter)
    }

    #[test]
    fn the_linux_profile_has_a_linux_hosts_defaults_and_keys_still_override_them() {
        let (tcp, jitter) = tcp_of(&[("tcp", json!("linux"))]);
        assert_eq!(tcp.recovery, Recovery::Linux);
        assert_eq!(
            (tcp.initial_window, tcp.delayed_ack, tcp.delayed_ack_timeout),
            (10, true, Time::from_ms(40))
        );
        assert_eq!((tcp.max_rto, jitter), (Time::from_secs(120), Time::from_us(100)));
        assert_eq!(
            (tcp.limited_transmit, tcp.rto_restart, tcp.slow_start),
            (true, RtoRestart::Head, SlowStart::Standard)
        );
        // CUBIC runs HyStart by default, as Linux's does.
        let (tcp, _) = tcp_of(&[("tcp", json!("linux")), ("cc", json!("cubic"))]);
        assert_eq!(tcp.slow_start, SlowStart::Hystart);
        let given = [
            ("tcp", json!("linux")),
            ("initial_window", json!(4)),
            ("delayed_ack", json!(false)),
            ("jitter", json!("0s")),
            ("rto_restart", json!("every_retransmission")),
            ("slow_start", json!("hystart++")),
        ];
        let (tcp, jitter) = tcp_of(&given);
        assert_eq!((tcp.initial_window, tcp.delayed_ack, jitter), (4, false, Time::ZERO));
        assert_eq!(
            (tcp.rto_restart, tcp.slow_start),
            (RtoRestart::EveryRetransmission, SlowStart::HystartPlusPlus)
        );
        // The RFC-era variants keep theirs (RFC 3390's 4 segments of 960 B).
        let (tcp, jitter) = tcp_of(&[("tcp", json!("sack"))]);
        assert_eq!((tcp.initial_window, tcp.delayed_ack, jitter), (4, false, Time::ZERO));
        assert_eq!((tcp.limited_transmit, tcp.rto_restart), (true, RtoRestart::EveryRetransmission));
        let (tcp, _) = tcp_of(&[("limited_transmit", json!(true))]);
        assert!(tcp.limited_transmit);
    }

    #[test]
    fn keys_that_do_not_apply_to_a_variant_are_one_line_each() {
        let one = |set: &[(&str, Value)]| {
            let mut v = base();
            for (k, x) in set {
                v["traffic"][0][*k] = x.clone();
            }
            err(v)
        };
        assert_eq!(
            one(&[("tcp", json!("sack")), ("limited_transmit", json!(false))]),
            "traffic.0.limited_transmit: got false; expected true with tcp = \"sack\" (a SACK sender always sends \
             new data on the first duplicate ACKs: RFC 6675 §5 step 3, Linux's in-flight count)"
        );
        assert_eq!(
            one(&[("rto_restart", json!("head"))]),
            "traffic.0.rto_restart: got \"head\"; expected no `rto_restart` with tcp = \"newreno\" (RFC 6582 sets \
             when NewReno restarts its timer; the key is for \"sack\" and \"linux\")"
        );
        assert_eq!(
            one(&[("tcp", json!("sack")), ("slow_start", json!("hystart"))]),
            "traffic.0.slow_start: got \"hystart\"; expected \"standard\" with tcp = \"sack\" (HyStart needs an RTT \
             sample from every ACK, which only the \"linux\" sender takes)"
        );
        assert_eq!(
            one(&[("tcp", json!("linux")), ("cc", json!("bbr")), ("slow_start", json!("hystart++"))]),
            "traffic.0.slow_start: got \"hystart++\"; expected \"standard\" with cc = \"bbr\" (BBR's Startup ends by \
             its own rule)"
        );
        assert!(one(&[("slow_start", json!("fast"))])
            .starts_with("traffic.0.slow_start: got \"fast\"; expected one of"));
    }

    #[test]
    fn a_linux_entry_echoes_its_profiles_defaults_and_reads_back_to_itself() {
        let mut v = base();
        v["traffic"][0]["tcp"] = json!("linux");
        v["traffic"][0]["cc"] = json!("cubic");
        let echo = Scenario::normalized(&v).unwrap();
        let t = &echo["traffic"][0];
        assert_eq!(
            (&t["initial_window"], &t["delayed_ack"], &t["delayed_ack_timeout"]),
            (&json!(10), &json!(true), &json!("40ms"))
        );
        assert_eq!(
            (&t["jitter"], &t["slow_start"], &t["rto_restart"]),
            (&json!("100us"), &json!("hystart"), &json!("head"))
        );
        assert_eq!(Scenario::normalized(&echo).unwrap(), echo);
        // A newreno entry's echo has no `rto_restart` (it would be refused).
        let echo = Scenario::normalized(&base()).unwrap();
        assert!(echo["traffic"][0].get("rto_restart").is_none());
        assert_eq!(echo["traffic"][0]["limited_transmit"], json!(false));
    }
}
