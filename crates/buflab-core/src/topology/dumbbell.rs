//! The dumbbell: N senders, each behind its own access link, share one bottleneck link into
//! the receivers; ACKs return over an uncongested reverse path.
//!
//! ```text
//!  sender i ─ access_i (rate a, delay d_i) ─┐                        ┌─ receiver i
//!                                           ├─ bottleneck (C, B, d_b) ┤
//!  sender j ─ access_j (rate a, delay d_j) ─┘                        └─ receiver j
//!  ACKs:  receiver i ─ reverse bottleneck (C, unlimited, d_b) ─ reverse access_i ─ sender i
//! ```
//!
//! Flow i's two-way propagation delay `rtt_i` is drawn uniformly from the scenario's `rtt`
//! range; its access links carry `d_i = rtt_i/2 − d_b` each way. Phase effects between flows
//! are avoided the way the ns-2 studies did: distinct RTTs, random start times, and optional
//! per-packet send jitter. Every random draw for flow i comes from flow i's own stream.

use crate::link::Link;
use crate::loss::RandomLoss;
use crate::monitor::{MeasuredWindow, QueueMonitor};
use crate::rng::{Rng, Stream};
use crate::scenario::{Scenario, Starts, Traffic};
use crate::sim::{Endpoints, Hop, Sim};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::traffic::closed_loop::User;
use crate::traffic::udp::UdpSource;
use crate::units::{BufferLimit, Rate, Time};

/// What the results need to know about each flow.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    pub traffic: u32,
    pub kind: &'static str,
    pub tcp: &'static str,
    pub rtt: Time,
    pub start: Time,
    /// Payload bytes per packet (MSS for TCP, the whole packet for UDP).
    pub payload: u32,
    /// Server machine and class queue, when the scenario has machines.
    pub placement: Option<(i64, i64)>,
}

/// A built dumbbell.
pub struct Dumbbell {
    pub sim: Sim,
    pub bottleneck: u32,
    pub flows: Vec<FlowInfo>,
}

fn uniform_time(rng: &mut Rng, lo: Time, hi: Time) -> Time {
    Time(rng.range_u64(lo.0, hi.0))
}

pub fn build(s: &Scenario) -> Dumbbell {
    let net = &s.network;
    let window = MeasuredWindow { start: s.warmup, end: s.duration };
    let mut sim = Sim::new(window);

    let mut bn = Link::new(net.bottleneck_rate, net.bottleneck_delay, net.bottleneck_buffer);
    bn.attach_monitor(QueueMonitor::new(net.bottleneck_rate, window, s.monitor.interval, s.monitor.events));
    let bottleneck = sim.add_link(bn);
    let reverse = sim.add_link(Link::new(net.bottleneck_rate, net.bottleneck_delay, BufferLimit::Unlimited));
    let loss = (net.loss > 0.0)
        .then(|| sim.add_loss(RandomLoss::new(net.loss, Rng::stream(s.seed, Stream::Loss, 0))));

    // Server machines (when asked for): a NIC link each, and `classes` shared class queues
    // at the access rate in front of it.
    let machines: Vec<(u32, Vec<u32>)> = (0..net.machines)
        .map(|_| {
            let classes = (0..net.classes)
                .map(|_| sim.add_link(Link::new(net.access_rate, Time::ZERO, net.access_buffer)))
                .collect();
            (sim.add_link(Link::new(net.nic_rate, Time::ZERO, BufferLimit::Unlimited)), classes)
        })
        .collect();

    // Cross traffic leaves through its own link (and its ACKs return on their own reverse
    // link, so the main traffic's reverse path carries only main ACKs).
    let cross = s.cross.iter().any(|&c| c).then(|| {
        let out = sim.add_link(Link::new(net.cross_rate, net.cross_delay, net.cross_buffer));
        let back = sim.add_link(Link::new(net.cross_rate, net.cross_delay, BufferLimit::Unlimited));
        (out, back)
    });

    let mut flows = Vec::new();
    for (ti, traffic) in s.traffic.iter().enumerate() {
        let (exit, reverse, exit_delay) = match cross {
            Some((out, back)) if s.cross[ti] => (out, back, net.cross_delay),
            _ => (bottleneck, reverse, net.bottleneck_delay),
        };
        for k in 0..traffic.flows() {
            let id = flows.len() as u64;
            let mut rng = Rng::stream(s.seed, Stream::Flow, id);
            let rtt = uniform_time(&mut rng, net.rtt.lo, net.rtt.hi);
            let access_delay = Time((rtt.0 / 2).saturating_sub(exit_delay.0));
            let (placement, mut hops) = if machines.is_empty() {
                let access = sim.add_link(Link::new(net.access_rate, access_delay, net.access_buffer));
                (None, vec![Hop::Link(access)])
            } else {
                // The flow's share of propagation delay on a private delay line, then its
                // class queue and its machine's NIC, both shared.
                let m = (id % machines.len() as u64) as usize;
                let c = (id / machines.len() as u64 % net.classes as u64) as usize;
                let line = sim.add_link(Link::new(Rate::UNBOUNDED, access_delay, BufferLimit::Unlimited));
                let (nic, classes) = &machines[m];
                (Some((m as i64, c as i64)), vec![Hop::Link(line), Hop::Link(classes[c]), Hop::Link(*nic)])
            };
            if exit == bottleneck {
                hops.extend(loss.map(Hop::Loss));
            }
            hops.push(Hop::Link(exit));
            let forward = sim.add_route(&hops);
            let jitter_rng = Rng::stream(s.seed, Stream::Jitter, id);
            let flow = id as u32;
            let tcp_kind = match traffic {
                Traffic::LongLived(l) => Some((l.tcp, Starts::Uniform(l.start), l.jitter, None)),
                Traffic::ClosedLoop(c) => {
                    let user_rng = Rng::stream(s.seed, Stream::User, id);
                    let user =
                        User::new(ti as u32, c.file_size.clone(), c.think.clone(), c.handshake, user_rng);
                    Some((c.tcp, c.start, c.jitter, Some(user)))
                }
                Traffic::Udp(_) => None,
            };
            if let Some((tcp, starts, jitter, user)) = tcp_kind {
                let start = match starts {
                    Starts::Uniform(r) => uniform_time(&mut rng, r.lo, r.hi),
                    Starts::Ramp(period) => {
                        Time((period.0 as u128 * k as u128 / traffic.flows() as u128) as u64)
                    }
                };
                let back = sim.add_link(Link::new(net.access_rate, access_delay, BufferLimit::Unlimited));
                let backward = sim.add_route(&[Hop::Link(reverse), Hop::Link(back)]);
                let mut receiver = TcpReceiver::new(
                    flow,
                    backward,
                    tcp.mss(),
                    tcp.max_window,
                    tcp.delayed_ack,
                    tcp.delayed_ack_timeout,
                );
                if user.is_some() {
                    receiver.set_initiates();
                }
                let endpoints = Endpoints::Tcp { sender: TcpSender::new(tcp, flow, forward), receiver };
                let f = sim.add_flow(endpoints, start, jitter, jitter_rng);
                if let Some(user) = user {
                    sim.set_user(f, user);
                }
                let tcp_name = match tcp.recovery {
                    crate::tcp::Recovery::Reno => "reno",
                    crate::tcp::Recovery::NewReno => "newreno",
                };
                flows.push(FlowInfo {
                    traffic: ti as u32,
                    kind: traffic.kind(),
                    tcp: tcp_name,
                    rtt,
                    start,
                    payload: tcp.mss(),
                    placement,
                });
            } else if let Traffic::Udp(u) = traffic {
                let start = uniform_time(&mut rng, u.start.lo, u.start.hi);
                let src_rng = Rng::stream(s.seed, Stream::Source, id);
                let src = UdpSource::new(u.pattern, flow, forward, u.rate, u.packet, src_rng);
                sim.add_flow(Endpoints::Udp(src), start, Time::ZERO, jitter_rng);
                flows.push(FlowInfo {
                    traffic: ti as u32,
                    kind: traffic.kind(),
                    tcp: "",
                    rtt,
                    start,
                    payload: u.packet,
                    placement,
                });
            }
        }
    }
    Dumbbell { sim, bottleneck, flows }
}
