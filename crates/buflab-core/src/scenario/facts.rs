//! What a read scenario means for the link its run summary describes and for each traffic
//! entry: the numbers the sizing rules and the offered-load model take, computed once, here.
//!
//! Read first: [`super`] (the sections and the [`Scenario`] they make), [`super::network`]
//! (the summary link, [`Network::bottleneck`]) and [`super::traffic`] (the entries and the hops
//! they cross). Owns [`LinkFacts`] (the summary link's rate, RTTs, packet size, long-lived
//! flows N and W_max, and RTT·C, the auto-sizer's default first buffer) and [`TrafficFacts`]
//! (per entry: its flows on that link and what sets its rate), with the JSON the binding hands
//! to Python (`buflab._core.link_facts`, `traffic_facts`). Python keeps the formulas over these
//! numbers (`buflab.theory`, `buflab.load`); this file must not know them, nor read keys: it
//! reads only what the section readers made.

use serde_json::{json, Value};

use super::network::Network;
use super::switch;
use super::traffic::{LongLived, Placement, Traffic, TrafficKind};
use super::Scenario;
use crate::tcp::TcpConfig;
use crate::traffic::dist::Dist;
use crate::traffic::rtt::Rtt;
use crate::units::{self, Range, Rate, Time};

/// The packet size of a summary link no long-lived flow crosses.
const DEFAULT_PACKET: u32 = 1000;

/// What the sizing rules need to know of the link the run summary describes (the dumbbell's
/// bottleneck, the parking lot's summary hop, one output line of the switch) and its flows.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkFacts {
    pub rate: Rate,
    /// Two-way propagation delays, uniform over the range (`network.rtt`).
    pub rtt: Range<Time>,
    /// The mean RTT of the long-lived flows crossing the link, weighted by their number, when
    /// some entry among them draws its own `rtt`, picoseconds; None when they all draw
    /// `network.rtt` (whose midpoint is then exact).
    pub own_rtt_mean_ps: Option<f64>,
    /// Data packet on the wire of the first long-lived entry crossing the link (1000 B if none).
    pub packet: u32,
    /// Long-lived flows crossing the link: the N of RTT·C/√N. On the switch, those of one
    /// output: `flows_per_output`, or the entry's flows shared by the ports.
    pub flows: u64,
    /// The largest window a flow of that first entry can use, packets: its max window (whole
    /// segments), or what the access link carries in one mean RTT if that is less (the W_max
    /// of eq. 3.1, [`switch::max_per_rtt`], in packets).
    pub wmax_pkts: f64,
    /// How many links the run monitors (the rows of its links table): what the wall-time
    /// estimate counts as busy as this one.
    pub monitored_links: usize,
}

impl LinkFacts {
    /// The facts of the summary link of `network`, crossed by the `traffic` entries as their
    /// `placements` say (see [`Scenario`]). The auto-sizer's reader calls it before the
    /// scenario is whole; [`Scenario::link_facts`] after.
    pub fn of(network: &Network, traffic: &[Traffic], placements: &[Placement], rtts: &[Rtt]) -> LinkFacts {
        // Each long-lived entry crossing the link, with its flows that do (all of them on the
        // switch, whose outputs share them below), and how they draw their RTTs.
        let long_lived: Vec<(&LongLived, u64, &Rtt)> = traffic
            .iter()
            .zip(placements)
            .zip(rtts)
            .filter_map(|((t, p), rtt)| match (t, network.summary_link()) {
                (Traffic::LongLived(l), None) => Some((l, l.flows as u64, rtt)),
                (Traffic::LongLived(l), Some(link)) => {
                    let on: u64 = (0..p.routes.len())
                        .filter(|&r| p.routes[r].links.contains(&link))
                        .map(|r| p.flows_on(r, l.flows as u64))
                        .sum();
                    (on > 0).then_some((l, on, rtt))
                }
                _ => None,
            })
            .collect();
        let first = long_lived.first().map(|(l, _, _)| l.tcp);
        let packet = first.map_or(DEFAULT_PACKET, |tcp| tcp.packet);
        let rtt = network.rtt;
        let counts: Vec<(u64, &Rtt)> = long_lived
            .iter()
            .map(|&(l, on, r)| {
                let n = match (l.per_output, &network.switch) {
                    (Some(n), _) => n as u64,
                    (None, Some(spec)) => l.flows as u64 / spec.ports as u64,
                    (None, None) => on,
                };
                (n, r)
            })
            .collect();
        let flows: u64 = counts.iter().map(|(n, _)| n).sum();
        let shared = Rtt::Uniform(rtt);
        let own_rtt_mean_ps = (flows > 0 && counts.iter().any(|(_, r)| **r != shared))
            .then(|| counts.iter().map(|(n, r)| *n as f64 * r.mean_ps()).sum::<f64>() / flows as f64);
        let mean_rtt = own_rtt_mean_ps.map_or(switch::mean_rtt(rtt), |ps| Time(ps.round() as u64));
        // Without a window, what the access link carries in one RTT.
        let window = first.map_or(u64::MAX, |tcp| tcp.max_window as u64 * packet as u64);
        let per_rtt = switch::max_per_rtt(window, network.access_rate, mean_rtt);
        let wmax_pkts = per_rtt as f64 / packet as f64;
        let monitored_links = match &network.switch {
            Some(switch) => switch.ports,
            None => network.hops.len(),
        };
        LinkFacts {
            rate: network.bottleneck().rate,
            rtt,
            own_rtt_mean_ps,
            packet,
            flows,
            wmax_pkts,
            monitored_links,
        }
    }

    /// The rule of thumb RTT·C in packets, rounded up: the link's rate × the mean RTT ÷ the
    /// packet size (in integers, so the auto-sizer's default start is exact).
    pub fn bdp_packets(&self) -> u64 {
        if let Some(ps) = self.own_rtt_mean_ps {
            let bits = self.rate.bits_per_s() as f64 * ps;
            return (bits / (8.0 * self.packet as f64 * units::PS_PER_S as f64)).ceil() as u64;
        }
        let bits = self.rate.bits_per_s() as u128 * (self.rtt.lo.0 as u128 + self.rtt.hi.0 as u128);
        let per_packet = 2 * 8 * self.packet as u128 * units::PS_PER_S as u128;
        bits.div_ceil(per_packet).min(u64::MAX as u128) as u64
    }

    /// As `buflab.theory.LinkFacts` holds them: rate in bits/s, the mean RTT in seconds, the
    /// packet in bytes, N and W_max in packets.
    pub fn to_json(&self) -> Value {
        json!({
            "rate_bps": self.rate.bits_per_s() as f64,
            "rtt_s": self.own_rtt_mean_ps.map_or(mean_secs(self.rtt), |ps| ps / units::PS_PER_S as f64),
            "packet_bytes": self.packet as f64,
            "flows": self.flows,
            "wmax_pkts": self.wmax_pkts,
            "monitored_links": self.monitored_links,
        })
    }
}

/// What the offered-load model needs to know of the traffic: the summary link, what every
/// flow's sender sits behind, and each entry.
#[derive(Clone, Debug)]
pub struct TrafficFacts {
    /// The summary link's rate (as [`LinkFacts::rate`]).
    pub link: Rate,
    /// Two-way propagation delays, uniform over the range.
    pub rtt: Range<Time>,
    /// The rate one flow's sender can send at: its access link, or its machine's NIC if that
    /// is slower.
    pub access: Rate,
    /// With server machines, the most they carry together, bits/s: per machine the lesser of
    /// its NIC and its class queues. None without machines.
    pub servers_bps: Option<f64>,
    pub entries: Vec<EntryFacts>,
    /// Every monitored link (none on the switch): its name, its rate and the share of each
    /// entry's traffic it carries, for the load factor ρ of every link (thesis §5.1).
    pub links: Vec<LinkShares>,
    /// The name of the summary link among them (None on the switch).
    pub summary: Option<String>,
    /// The most links any flow's route crosses: the n of thesis ch. 5 (0 on the switch).
    pub longest_route: usize,
    /// Per entry, the names of the links its first flow's route crosses, in order (empty on
    /// the switch): where to watch one flow go through the network.
    pub first_routes: Vec<Vec<String>>,
}

/// A monitored link and the share of each traffic entry's traffic that crosses it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkShares {
    pub name: String,
    pub rate: Rate,
    /// Per entry, as [`EntryFacts::link_share`] is for the summary link.
    pub shares: Vec<f64>,
    /// Every packet arriving at it has just entered the network: it is the first link of the
    /// routes that cross it (a tree's leaves, a layered network's first column). Its arrivals,
    /// summed over such links, count what entered, for an end-to-end drop rate.
    pub ingress: bool,
}

/// One traffic entry as the offered-load model reads it.
#[derive(Clone, Debug)]
pub struct EntryFacts {
    pub kind: TrafficKind,
    /// Its flows or users (none for open-loop arrivals); on the switch, those of one output
    /// when given per output.
    pub flows: u64,
    /// The fraction of the entry's traffic the summary link carries: 0 if its flows do not
    /// cross it, on the switch 1 ÷ the ports unless `flows` is per output, else 1.
    pub link_share: f64,
    /// The TCP kinds' settings; None for UDP.
    pub tcp: Option<TcpConfig>,
    /// Downloads open their connections with a handshake; None for long-lived and UDP.
    pub handshake: Option<bool>,
    /// A UDP source's rate (each flow; their mean when a `matrix` or `load` sets them apart),
    /// and the largest.
    pub udp_rate: Option<Rate>,
    pub udp_max_rate: Option<Rate>,
    /// A UDP source's packet, bytes.
    pub udp_packet: Option<u32>,
    /// Open-loop arrivals per second (with `load`, as the engine converted it).
    pub arrivals_per_s: Option<f64>,
    /// Downloads' file sizes, bytes.
    pub file_size: Option<Dist>,
    /// Closed-loop think times, picoseconds (none between repeated downloads: constant 0).
    pub think: Option<Dist>,
    /// The flows' RTTs, picoseconds (`rtt`, or `network.rtt`: uniform).
    pub rtt: Dist,
}

impl TrafficFacts {
    pub fn of(s: &Scenario) -> TrafficFacts {
        let network = &s.network;
        let ports = network.switch.as_ref().map(|spec| spec.ports as f64);
        let entries = s
            .traffic
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let per_output = matches!(t, Traffic::LongLived(LongLived { per_output: Some(_), .. }));
                let link_share = match (ports, network.summary_link()) {
                    (Some(ports), _) if !per_output => 1.0 / ports,
                    (Some(_), _) | (None, None) => 1.0,
                    (None, Some(link)) => share_on(&s.placements[i], t, link),
                };
                entry_facts(t, link_share, &s.rtts[i])
            })
            .collect();
        let graph = &network.graph;
        let links = graph
            .monitored()
            .into_iter()
            .map(|l| {
                let link = &graph.links[l as usize];
                let shares = s.traffic.iter().zip(&s.placements).map(|(t, p)| share_on(p, t, l)).collect();
                let routes = s.placements.iter().flat_map(|p| &p.routes);
                let (mut first, mut later) = (false, false);
                for r in routes {
                    match r.links.iter().position(|&x| x == l) {
                        Some(0) => first = true,
                        Some(_) => later = true,
                        None => {}
                    }
                }
                LinkShares { name: link.name.clone(), rate: link.spec.rate, shares, ingress: first && !later }
            })
            .collect();
        let access = match network.machines {
            0 => network.access_rate,
            _ => network.access_rate.min(network.nic_rate),
        };
        let servers_bps = (network.machines > 0).then(|| {
            let classes = network.classes as f64 * network.access_rate.bits_per_s() as f64;
            network.machines as f64 * (network.nic_rate.bits_per_s() as f64).min(classes)
        });
        let summary = network.summary_link().map(|l| graph.links[l as usize].name.clone());
        let longest_route =
            s.placements.iter().flat_map(|p| &p.routes).map(|r| r.links.len()).max().unwrap_or(0);
        let first_routes = s
            .placements
            .iter()
            .map(|p| {
                let links = p.routes.first().map_or(&[][..], |r| &r.links[..]);
                links.iter().map(|&l| graph.links[l as usize].name.clone()).collect()
            })
            .collect();
        TrafficFacts {
            link: network.bottleneck().rate,
            rtt: network.rtt,
            access,
            servers_bps,
            entries,
            links,
            summary,
            longest_route,
            first_routes,
        }
    }

    /// As `buflab.load` reads them: rates in bits/s, times in seconds, sizes in bytes, windows
    /// in segments; a distribution as a table of its parameters and its mean.
    pub fn to_json(&self) -> Value {
        let entries: Vec<Value> = self.entries.iter().map(EntryFacts::to_json).collect();
        let links: Vec<Value> = self
            .links
            .iter()
            .map(|l| {
                json!({ "name": l.name, "rate_bps": l.rate.bits_per_s() as f64, "shares": l.shares, "ingress": l.ingress })
            })
            .collect();
        json!({
            "link_bps": self.link.bits_per_s() as f64,
            "rtt_s": [self.rtt.lo.secs_f64(), self.rtt.hi.secs_f64()],
            "access_bps": self.access.bits_per_s() as f64,
            "servers_bps": self.servers_bps,
            "entries": entries,
            "links": links,
            "summary_link": self.summary,
            "longest_route": self.longest_route,
            "first_routes": self.first_routes,
        })
    }
}

impl EntryFacts {
    fn to_json(&self) -> Value {
        let mut v = json!({
            "kind": self.kind.name(),
            "flows": self.flows,
            "link_share": self.link_share,
        });
        if let Some(tcp) = &self.tcp {
            v["packet_bytes"] = json!(tcp.packet as f64);
            v["mss_bytes"] = json!(tcp.mss() as f64);
            v["initial_window"] = json!(tcp.initial_window);
            v["max_window"] = json!(tcp.max_window);
            v["delayed_ack"] = json!(tcp.delayed_ack);
        }
        if let Some(handshake) = self.handshake {
            v["handshake"] = json!(handshake);
        }
        if let (Some(rate), Some(packet)) = (self.udp_rate, self.udp_packet) {
            v["rate_bps"] = json!(rate.bits_per_s() as f64);
            v["max_rate_bps"] = json!(self.udp_max_rate.unwrap_or(rate).bits_per_s() as f64);
            v["packet_bytes"] = json!(packet as f64);
        }
        if let Some(per_s) = self.arrivals_per_s {
            v["arrivals_per_s"] = json!(per_s);
        }
        if let Some(d) = &self.file_size {
            v["file_size"] = dist_json(d, 1.0);
        }
        if let Some(d) = &self.think {
            v["think"] = dist_json(d, units::PS_PER_S as f64);
        }
        v["rtt"] = dist_json(&self.rtt, units::PS_PER_S as f64);
        v
    }
}

/// The share of entry `t`'s traffic that crosses graph link `link`: of its flows (weighted by
/// their rates for UDP sources, whose rates may differ by route) those whose route crosses it.
/// Dumbbell cross traffic leaves by its own link, and so does not cross the bottleneck.
fn share_on(placement: &Placement, t: &Traffic, link: u32) -> f64 {
    let n = placement.routes.len();
    let flows = t.flows() as u64;
    let weight = |r: usize| -> f64 {
        // Open-loop flows come and go: each route counts alike.
        let on = if flows == 0 { 1.0 } else { placement.flows_on(r, flows) as f64 };
        match t {
            Traffic::Udp(u) => on * u.rates[r % u.rates.len()].bits_per_s() as f64,
            _ => on,
        }
    };
    let total: f64 = (0..n).map(weight).sum();
    let crossing: f64 = (0..n).filter(|&r| placement.routes[r].links.contains(&link)).map(weight).sum();
    if total > 0.0 {
        crossing / total
    } else {
        0.0
    }
}

/// The midpoint of a range of times, seconds.
fn mean_secs(rtt: Range<Time>) -> f64 {
    (rtt.lo.secs_f64() + rtt.hi.secs_f64()) / 2.0
}

fn entry_facts(t: &Traffic, link_share: f64, rtt: &Rtt) -> EntryFacts {
    let mut f = EntryFacts {
        kind: t.kind(),
        flows: t.flows() as u64,
        link_share,
        tcp: None,
        handshake: None,
        udp_rate: None,
        udp_max_rate: None,
        udp_packet: None,
        arrivals_per_s: None,
        file_size: None,
        think: None,
        rtt: rtt.dist(),
    };
    match t {
        Traffic::LongLived(l) => {
            f.flows = l.per_output.unwrap_or(l.flows) as u64;
            f.tcp = Some(l.tcp);
        }
        Traffic::ClosedLoop(c) => {
            f.tcp = Some(c.tcp);
            f.handshake = Some(c.handshake);
            f.file_size = Some(c.file_size.clone());
            f.think = Some(c.think.clone());
        }
        Traffic::OpenLoop(o) => {
            f.tcp = Some(o.tcp);
            f.handshake = Some(o.handshake);
            f.arrivals_per_s = Some(o.arrivals_per_s);
            f.file_size = Some(o.file_size.clone());
        }
        Traffic::Udp(u) => {
            let total: u128 = (0..u.flows).map(|k| u.rate(k).bits_per_s() as u128).sum();
            f.udp_rate = Some(Rate((total / u.flows.max(1) as u128) as u64));
            f.udp_max_rate = u.rates.iter().copied().max();
            f.udp_packet = Some(u.packet);
        }
    }
    f
}

/// A distribution's kind, parameters and mean, its values divided by `unit` (1e12 turns
/// picoseconds into seconds).
fn dist_json(d: &Dist, unit: f64) -> Value {
    let mut v = match d {
        Dist::Constant(value) => json!({ "value": value / unit }),
        Dist::Uniform { lo, hi } => json!({ "lo": lo / unit, "hi": hi / unit }),
        Dist::Exponential { mean } => json!({ "mean": mean / unit }),
        Dist::Pareto { mean, shape } => json!({ "mean": mean / unit, "shape": shape }),
        Dist::Lognormal { mean, sigma } => json!({ "mean": mean / unit, "sigma": sigma }),
        Dist::Empirical(points) => {
            let cdf: Vec<Value> = points.iter().map(|&(x, p)| json!([x / unit, p])).collect();
            json!({ "cdf": cdf })
        }
        Dist::Choice(points) => {
            let mut below = 0.0;
            let mut values = Vec::new();
            let mut weights = Vec::new();
            for &(x, p) in points.iter() {
                values.push(json!(x / unit));
                weights.push(json!(p - below));
                below = p;
            }
            json!({ "values": values, "weights": weights })
        }
    };
    v["dist"] = json!(d.name());
    v["mean"] = json!(d.mean() / unit);
    v
}

impl Scenario {
    /// The facts of the link the run summary describes (see [`LinkFacts`]).
    pub fn link_facts(&self) -> LinkFacts {
        LinkFacts::of(&self.network, &self.traffic, &self.placements, &self.rtts)
    }

    /// What the offered-load model reads of the traffic (see [`TrafficFacts`]).
    pub fn traffic_facts(&self) -> TrafficFacts {
        TrafficFacts::of(self)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scenario::tests::base;

    fn facts(v: &Value) -> LinkFacts {
        Scenario::from_value(v).unwrap().link_facts()
    }

    #[test]
    fn a_dumbbell_bottleneck_with_its_long_lived_flows() {
        // base(): 100 Mb/s, 75..125 ms, 10 long-lived flows of 1000 B with 20 MB windows.
        let mut v = base();
        v["traffic"] = json!([
            { "kind": "udp_poisson", "flows": 3, "rate": "1Mbps", "packet": "500B" },
            { "kind": "long_lived", "flows": 10, "max_window": "20MB" },
            { "kind": "long_lived", "flows": 5, "packet": "1500B" },
        ]);
        let f = facts(&v);
        assert_eq!((f.rate, f.packet, f.flows), (Rate::mbps(100), 1000, 15), "UDP sources are not N");
        // 20 MB of window is 20,833 whole segments of 960 B; the 10 Gb/s access links carry
        // 125,000 packets in the mean RTT.
        assert_eq!(f.wmax_pkts, 20_833.0);
        // RTT·C: 100 Mb/s × 100 ms ÷ 8000 bits.
        assert_eq!(f.bdp_packets(), 1250);
        assert_eq!(
            f.to_json(),
            json!({ "rate_bps": 1e8, "rtt_s": 0.1, "packet_bytes": 1000.0, "flows": 15, "wmax_pkts": 20_833.0,
                    "monitored_links": 1 })
        );
    }

    #[test]
    fn w_max_is_what_the_access_link_carries_in_an_rtt_if_less() {
        // 40 Mb/s × 100 ms = 500 KB = 500 packets of 1000 B, below 20 MB of window.
        let mut v = base();
        v["network"]["access"] = json!({ "rate": "40Mbps" });
        assert_eq!(facts(&v).wmax_pkts, 500.0);
        // The window counts payload: 61,440 B are 64 segments of 960 B, below the 500.
        v["traffic"][0]["max_window"] = json!("61440B");
        assert_eq!(facts(&v).wmax_pkts, 64.0);
        // Without long-lived flows, what the access link carries in 1000 B packets.
        v["traffic"] = json!([{ "kind": "udp_cbr", "rate": "1Mbps" }]);
        let f = facts(&v);
        assert_eq!((f.flows, f.packet, f.wmax_pkts), (0, 1000, 500.0));
    }

    #[test]
    fn dumbbell_cross_traffic_does_not_cross_the_bottleneck() {
        let mut v = base();
        v["network"]["access"] = json!({ "machines": 2 });
        v["traffic"] = json!([
            { "kind": "long_lived", "flows": 4, "path": "cross", "packet": "576B" },
            { "kind": "long_lived", "flows": 6 },
        ]);
        let f = facts(&v);
        assert_eq!((f.flows, f.packet), (6, 1000));
        let t = Scenario::from_value(&v).unwrap().traffic_facts();
        let shares: Vec<f64> = t.entries.iter().map(|e| e.link_share).collect();
        assert_eq!(shares, [0.0, 1.0]);
    }

    #[test]
    fn a_parking_lot_describes_its_summary_hop_and_the_entries_crossing_it() {
        // Hop 2 of three at its own 5 Mb/s: crossed by the main flows and the 2..3 entry only;
        // the first entry crossing it sets the packet.
        let mut v = base();
        v["network"] = json!({
            "topology": "parking_lot", "hops": 3, "summary_hop": 2, "rtt": "50ms",
            "bottleneck": { "rate": "10Mbps" }, "hop": [{}, { "rate": "5Mbps" }],
        });
        v["traffic"] = json!([
            { "kind": "long_lived", "flows": 8, "hops": 1, "packet": "1500B" },
            { "kind": "long_lived", "flows": 4, "hops": "all", "packet": "576B" },
            { "kind": "long_lived", "flows": 2, "hops": "2..3" },
            { "kind": "long_lived", "flows": 16, "hops": "3" },
            { "kind": "udp_cbr", "rate": "1Mbps", "hops": 3 },
        ]);
        let f = facts(&v);
        assert_eq!((f.rate, f.flows, f.packet), (Rate::mbps(5), 6, 576));
        // 5 Mb/s × 50 ms ÷ (8 × 576 B) = 54.25 → 55.
        assert_eq!(f.bdp_packets(), 55);
        let t = Scenario::from_value(&v).unwrap().traffic_facts();
        assert_eq!(t.link, Rate::mbps(5));
        let shares: Vec<f64> = t.entries.iter().map(|e| e.link_share).collect();
        assert_eq!(shares, [0.0, 1.0, 1.0, 0.0, 0.0]);
        // Hop 3 has the bottleneck's rate and all but the first entry's flows.
        v["network"]["summary_hop"] = json!(3);
        let f = facts(&v);
        assert_eq!((f.rate, f.flows, f.packet), (Rate::mbps(10), 22, 576));
    }

    #[test]
    fn a_switch_counts_the_flows_of_one_output() {
        // 4 ports at 250 Mb/s, 25 Mb/s access, 75..125 ms: eq. 3.1 gives ⌈250e6 × 0.1 ÷
        // (64 × 1000 × 8)⌉ = 49 flows per output; 40 flows in all are 10 per output.
        let v = json!({
            "network": {
                "topology": "switch", "rtt": "75ms..125ms", "access": { "rate": "25Mbps" },
                "switch": { "ports": 4, "rate": "250Mbps", "voq_buffer": 3 },
            },
            "traffic": [
                { "kind": "long_lived", "flows_per_output": "eq3.1", "max_window": "61440B" },
                { "kind": "long_lived", "flows": 40 },
                { "kind": "udp_cbr", "flows": 8, "rate": "5Mbps" },
            ],
        });
        let f = facts(&v);
        assert_eq!((f.rate, f.flows), (Rate::mbps(250), 49 + 10));
        assert_eq!(f.wmax_pkts, 64.0);
        let t = Scenario::from_value(&v).unwrap().traffic_facts();
        let per_link: Vec<(u64, f64)> = t.entries.iter().map(|e| (e.flows, e.link_share)).collect();
        assert_eq!(per_link, [(49, 1.0), (40, 0.25), (8, 0.25)]);
        // Behind 2.5 Mb/s access links with 70..140 ms, a flow carries 32,812 B (of 32,812.5)
        // in the mean RTT, below its 64 packets: W_max is eq. 3.1's, which then gives
        // ⌈250e6 × 0.105 ÷ (8 × 32,812)⌉ = 101 flows per output.
        let mut v = v;
        v["network"]["access"]["rate"] = json!("2.5Mbps");
        v["network"]["rtt"] = json!("70ms..140ms");
        let f = facts(&v);
        assert_eq!((f.wmax_pkts, f.flows), (32.812, 101 + 10));
    }

    #[test]
    fn traffic_facts_are_what_the_engine_read() {
        let mut v = base();
        v["network"]["access"] = json!({ "rate": "200Mbps", "machines": 2, "classes": 5, "nic": "1Gbps" });
        v["traffic"] = json!([
            { "kind": "closed_loop", "users": 7, "packet": "1500B", "delayed_ack": true,
              "file_size": { "dist": "empirical", "cdf": [["1KB", 0.5], [2000, 1.0]] },
              "think": { "dist": "uniform", "range": "1s..2s" } },
            { "kind": "repeated_downloads", "users": 3 },
            { "kind": "open_loop", "load": 0.5, "handshake": false,
              "file_size": { "dist": "constant", "value": "12500B" } },
            { "kind": "udp_poisson", "flows": 2, "rate": "1Mbps" },
        ]);
        let t = Scenario::from_value(&v).unwrap().traffic_facts();
        // A flow sends at most at its class's rate; two machines carry at most 2 × 1 Gb/s.
        assert_eq!((t.access, t.servers_bps), (Rate::mbps(200), Some(2e9)));
        let j = t.to_json();
        assert_eq!(j["rtt_s"], json!([0.075, 0.125]));
        let closed = &j["entries"][0];
        // RFC 3390 gives 3 segments of 1460 B.
        assert_eq!(
            (&closed["flows"], &closed["mss_bytes"], &closed["initial_window"], &closed["delayed_ack"]),
            (&json!(7), &json!(1460.0), &json!(3), &json!(true))
        );
        assert_eq!(closed["handshake"], json!(true));
        assert_eq!(
            closed["file_size"],
            json!({ "dist": "empirical", "cdf": [[1000.0, 0.5], [2000.0, 1.0]], "mean": 1250.0 })
        );
        assert_eq!(closed["think"], json!({ "dist": "uniform", "lo": 1.0, "hi": 2.0, "mean": 1.5 }));
        let repeated = &j["entries"][1];
        assert_eq!(repeated["kind"], json!("repeated_downloads"));
        assert_eq!(repeated["think"], json!({ "dist": "constant", "value": 0.0, "mean": 0.0 }));
        // 16 KB windows (the kind's own default) are 16 segments of 960 B.
        assert_eq!(repeated["max_window"], json!(16));
        // load 0.5 of 100 Mb/s in files of 12,500 B: 500 arrivals per second.
        let open = &j["entries"][2];
        assert_eq!((&open["arrivals_per_s"], &open["handshake"]), (&json!(500.0), &json!(false)));
        let udp = &j["entries"][3];
        assert_eq!((&udp["rate_bps"], &udp["packet_bytes"]), (&json!(1e6), &json!(1000.0)));
        assert!(udp.get("max_window").is_none());
    }
}
