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
use crate::sim::{Endpoints, FlowInfo, Hop, Sim};
use crate::tcp::receiver::TcpReceiver;
use crate::tcp::sender::TcpSender;
use crate::traffic::closed_loop::User;
use crate::traffic::open_loop::Arrivals;
use crate::traffic::udp::UdpSource;
use crate::units::Range;
use crate::units::{BufferLimit, Rate, Time};

/// A built dumbbell.
pub struct Dumbbell {
    pub sim: Sim,
    pub bottleneck: u32,
}

fn uniform_time(rng: &mut Rng, lo: Time, hi: Time) -> Time {
    Time(rng.range_u64(lo.0, hi.0))
}

/// Everything needed to add a flow to the dumbbell: at build time, or during the run for
/// open-loop arrivals.
#[derive(Clone)]
struct Slots {
    seed: u64,
    rtt: Range<Time>,
    access_rate: Rate,
    access_buffer: BufferLimit,
    classes: u32,
    bottleneck: u32,
    reverse: u32,
    bottleneck_delay: Time,
    loss: Option<u32>,
    /// Per machine: its NIC link and its class queues.
    machines: Vec<(u32, Vec<u32>)>,
    /// The cross traffic's output link, reverse link and delay.
    cross: Option<(u32, u32, Time)>,
    cross_entries: Vec<bool>,
    traffic: Vec<Traffic>,
}

impl Slots {
    /// Adds flow number `k` of traffic entry `ti` (its id is the next flow id).
    fn add(&self, sim: &mut Sim, ti: usize, k: u32) -> u32 {
        let traffic = &self.traffic[ti];
        let id = sim.flows.len() as u64;
        let flow = id as u32;
        let (exit, reverse, exit_delay) = match self.cross {
            Some((out, back, delay)) if self.cross_entries[ti] => (out, back, delay),
            _ => (self.bottleneck, self.reverse, self.bottleneck_delay),
        };
        let mut rng = Rng::stream(self.seed, Stream::Flow, id);
        let rtt = uniform_time(&mut rng, self.rtt.lo, self.rtt.hi);
        let access_delay = Time((rtt.0 / 2).saturating_sub(exit_delay.0));
        let (placement, mut hops) = if self.machines.is_empty() {
            let access = sim.add_link(Link::new(self.access_rate, access_delay, self.access_buffer));
            (None, vec![Hop::Link(access)])
        } else {
            // The flow's share of propagation delay on a private delay line, then its class
            // queue and its machine's NIC, both shared.
            let m = (id % self.machines.len() as u64) as usize;
            let c = (id / self.machines.len() as u64 % self.classes as u64) as usize;
            let line = sim.add_link(Link::new(Rate::UNBOUNDED, access_delay, BufferLimit::Unlimited));
            let (nic, classes) = &self.machines[m];
            if self.cross_entries[ti] {
                // Cross traffic is not paced (IMC §3.1.2: "not artificially limited or paced"):
                // it shares only the machine's NIC with the main traffic.
                (Some((m as i64, -1)), vec![Hop::Link(line), Hop::Link(*nic)])
            } else {
                (Some((m as i64, c as i64)), vec![Hop::Link(line), Hop::Link(classes[c]), Hop::Link(*nic)])
            }
        };
        if exit == self.bottleneck {
            hops.extend(self.loss.map(Hop::Loss));
        }
        hops.push(Hop::Link(exit));
        let forward = sim.add_route(&hops);
        let jitter_rng = Rng::stream(self.seed, Stream::Jitter, id);
        let info = |start, payload, tcp| FlowInfo {
            traffic: ti as u32,
            kind: traffic.kind(),
            tcp,
            rtt,
            start,
            payload,
            placement,
        };
        let user_rng = || Rng::stream(self.seed, Stream::User, id);
        let (tcp, start, jitter, user) = match traffic {
            Traffic::Udp(u) => {
                let start = uniform_time(&mut rng, u.start.lo, u.start.hi);
                let src_rng = Rng::stream(self.seed, Stream::Source, id);
                let src = UdpSource::new(u.pattern, flow, forward, u.rate, u.packet, src_rng);
                return sim.add_flow(
                    info(start, u.packet, ""),
                    Endpoints::Udp(src),
                    start,
                    Time::ZERO,
                    jitter_rng,
                );
            }
            Traffic::LongLived(l) => (l.tcp, uniform_time(&mut rng, l.start.lo, l.start.hi), l.jitter, None),
            Traffic::ClosedLoop(c) => {
                let start = match c.start {
                    Starts::Uniform(r) => uniform_time(&mut rng, r.lo, r.hi),
                    Starts::Ramp(period) => Time((period.0 as u128 * k as u128 / c.users as u128) as u64),
                };
                let user =
                    User::new(ti as u32, c.file_size.clone(), Some(c.think.clone()), c.handshake, user_rng());
                (c.tcp, start, c.jitter, Some(user))
            }
            Traffic::OpenLoop(o) => {
                // Started by an arrival, not at a start time.
                let user = User::new(ti as u32, o.file_size.clone(), None, o.handshake, user_rng());
                (o.tcp, Time::MAX, o.jitter, Some(user))
            }
        };
        let back = sim.add_link(Link::new(self.access_rate, access_delay, BufferLimit::Unlimited));
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
        let tcp_name = match tcp.recovery {
            crate::tcp::Recovery::Reno => "reno",
            crate::tcp::Recovery::NewReno => "newreno",
        };
        let f = sim.add_flow(info(start, tcp.mss(), tcp_name), endpoints, start, jitter, jitter_rng);
        if let Some(user) = user {
            sim.set_user(f, user);
        }
        f
    }
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
        (out, back, net.cross_delay)
    });

    let slots = Slots {
        seed: s.seed,
        rtt: net.rtt,
        access_rate: net.access_rate,
        access_buffer: net.access_buffer,
        classes: net.classes,
        bottleneck,
        reverse,
        bottleneck_delay: net.bottleneck_delay,
        loss,
        machines,
        cross,
        cross_entries: s.cross.clone(),
        traffic: s.traffic.clone(),
    };
    for (ti, traffic) in s.traffic.iter().enumerate() {
        for k in 0..traffic.flows() {
            slots.add(&mut sim, ti, k);
        }
        if let Traffic::OpenLoop(o) = traffic {
            let rng = Rng::stream(s.seed, Stream::Source, u64::MAX - ti as u64);
            sim.add_arrivals(Arrivals::new(ti as u32, o.arrivals_per_s, o.start, rng));
        }
    }
    if s.traffic.iter().any(|t| matches!(t, Traffic::OpenLoop(_))) {
        // Open-loop flows are added while the run goes on, as they arrive.
        sim.set_spawner(Box::new(move |sim: &mut Sim, ti: u32| slots.add(sim, ti as usize, 0)));
    }
    Dumbbell { sim, bottleneck }
}
