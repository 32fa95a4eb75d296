//! Bumps in the wire on the routes: building each `[[network.bump]]` entry's instances and
//! weaving them into the routes of the flows that cross them.
//!
//! Read first: [`crate::scenario::bump`] (the entries and where they sit) and the
//! `buflab-queue` crate's `bump` module (what one does). Owns building a bump's link and
//! placing it on routes; must not know any topology's links beyond the ones it is handed (the
//! links a shared bump stands in front of).
//!
//! A bump is a link: its discipline the bump (held: it picks each departure), its rate the
//! bump's port, its delay the bump's latency, its buffer the bump's. Where it sits:
//! - **access**: one instance per flow, right after the flow's own access link (the first hop
//!   of its data route). If it paces on ECN-Echo, its flow's ACKs pass it back: their route
//!   gets a tap of it ([`Hop::Tap`]) just before the reverse access link, so it sees them where
//!   a real bump would, before they cross the access link back to the host. Other bumps get no
//!   tap: a tap must be crossed at the global time, from an event, so it would cost every ACK
//!   an event for nothing.
//! - **shared** (`bottleneck`, `hopK`): one instance, in front of that link (and in front of
//!   its random-loss element), for every flow whose route crosses it.
//!
//! Instances of one place are crossed in entry order. Every instance learns the destination
//! port of each flow crossing it: the flow's traffic entry (one server per entry).

use crate::link::{Link, Queue};
use crate::monitor::{MeasuredWindow, QueueMonitor};
use crate::queue::qcn::CongestionPoint;
use crate::queue::Bump;
use crate::rng::{Rng, Stream};
use crate::scenario::{BumpAt, BumpEntry, Scenario};
use crate::sim::{Hop, Sim};
use crate::units::Time;

/// The scenario's bumps, and the instances at shared places.
pub(super) struct Bumps {
    entries: Vec<BumpEntry>,
    /// (entry, link it stands in front of, its instance) of every shared bump, in entry order.
    shared: Vec<(usize, u32, u32)>,
    /// The entry whose first instance records the event log, and what that log needs.
    events_at: Option<usize>,
    window: MeasuredWindow,
    interval: Time,
    /// The run's seed: a congestion point's samples are a stream of their own.
    seed: u64,
}

impl Bumps {
    /// The scenario's bumps; the shared ones are built now, in front of the link `place`
    /// gives for their `at` (None: the topology has no such place, which the scenario reader
    /// has already refused).
    pub fn new(sim: &mut Sim, s: &Scenario, place: impl Fn(BumpAt) -> Option<u32>) -> Bumps {
        let mut bumps = Bumps {
            entries: s.network.bumps.clone(),
            shared: Vec::new(),
            events_at: s.monitor.events_at.filter(|_| s.monitor.events),
            window: MeasuredWindow { start: s.warmup, end: s.duration },
            interval: s.monitor.interval,
            seed: s.seed,
        };
        for e in 0..bumps.entries.len() {
            let at = bumps.entries[e].at;
            if at != BumpAt::Access {
                let before = place(at).expect("the reader accepts only places the topology has");
                let link = bumps.instance(sim, e);
                bumps.shared.push((e, before, link));
            }
        }
        bumps
    }

    /// Builds an instance of entry `e`: a link whose discipline is the bump, counting from the
    /// measured window, with the event log's monitor if it is the first of the entry the log
    /// records.
    fn instance(&self, sim: &mut Sim, e: usize) -> u32 {
        let entry = &self.entries[e];
        let mut link = Link::new(entry.rate, entry.delay, entry.buffer);
        let mut bump = Bump::new(entry.spec);
        bump.count_from(self.window.start);
        if let Some(cp) = entry.congestion_point {
            // Streams of queue disciplines are numbered by hop; bumps' sit above them.
            let id = (1 << 32) + sim.bumps.len() as u64;
            bump.set_congestion_point(CongestionPoint::new(cp, Rng::stream(self.seed, Stream::Queue, id)));
        }
        link.set_queue(Queue::Held(Box::new(bump)));
        let first = !sim.bumps.iter().any(|b| b.entry == e as u32);
        if first && self.events_at == Some(e) {
            link.attach_monitor(QueueMonitor::new(entry.rate, self.window, self.interval, true));
        }
        sim.add_bump(e as u32, link)
    }

    /// Flow `flow`'s data route (of traffic entry `port`) with its bumps: instances of its own
    /// after its access link, the shared ones in front of the links they guard. Returns the
    /// route and the flow's own instances, in order.
    pub fn data_route(&self, sim: &mut Sim, hops: Vec<Hop>, flow: u32, port: u16) -> (Vec<Hop>, Vec<u32>) {
        if self.entries.is_empty() {
            return (hops, Vec::new());
        }
        let own: Vec<u32> = (0..self.entries.len())
            .filter(|&e| self.entries[e].at == BumpAt::Access)
            .map(|e| self.instance(sim, e))
            .collect();
        let mut route = Vec::with_capacity(hops.len() + own.len() + self.shared.len());
        for (i, &hop) in hops.iter().enumerate() {
            // A shared bump stands in front of its link, and in front of the link's loss
            // element, if it has one.
            let guarded = match (hop, hops.get(i + 1)) {
                (Hop::Loss(_), Some(&Hop::Link(l))) => Some(l),
                (Hop::Link(l), _) if !matches!(i.checked_sub(1).map(|j| hops[j]), Some(Hop::Loss(_))) => {
                    Some(l)
                }
                _ => None,
            };
            if let Some(l) = guarded {
                route.extend(self.shared.iter().filter(|s| s.1 == l).map(|s| Hop::Link(s.2)));
            }
            route.push(hop);
            if i == 0 {
                route.extend(own.iter().map(|&b| Hop::Link(b)));
            }
        }
        for hop in &route {
            if let Hop::Link(l) = *hop {
                if let Some(b) = sim.links[l as usize].bump_mut() {
                    b.set_port(flow, port);
                }
            }
        }
        (route, own)
    }

    /// The ACK route `hops` of a flow whose own bumps are `own`: a tap of each that paces on
    /// ECN-Echo (the last crossed first) in front of its last hop, the reverse access link.
    pub fn ack_route(&self, sim: &mut Sim, mut hops: Vec<Hop>, own: &[u32]) -> Vec<Hop> {
        let hears: Vec<u32> = own
            .iter()
            .rev()
            .copied()
            .filter(|&b| sim.links[b as usize].bump_mut().is_some_and(|b| b.hears_acks()))
            .collect();
        if !hears.is_empty() {
            let last = hops.pop().expect("an ACK route ends on the reverse access link");
            hops.extend(hears.into_iter().map(Hop::Tap));
            hops.push(last);
        }
        hops
    }
}
