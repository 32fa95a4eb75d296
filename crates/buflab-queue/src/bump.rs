//! A bump in the wire (NetBump, seed ch. 3 and 5): an element on a link, between unmodified
//! hosts and switches, that classifies the packets passing through it, estimates a downstream
//! port's queue with a virtual queue (vAQM) and marks, drops or counts on it, and paces the
//! classes of traffic it is asked to.
//!
//! Read first: the crate doc (a bump is a [`Discipline`] of the second form: it holds its
//! packets and picks each departure), then [`crate::pacer`] and [`crate::vqueue`]. This file
//! owns classification and the composition; the pacing rules and the virtual queue are
//! theirs. It must not know links, routes or the event loop.
//!
//! Per packet, in order:
//! 1. **Control packets** (SYN, SYN-ACK, pure ACKs and other header-only packets: the seed's
//!    "un-paced" class) pass first, unpaced, through a FIFO of their own.
//! 2. **Classification**: by flow, or one class for all traffic. (The seed also classified by
//!    destination port, which in buflab is the same as by flow: every flow has its own.)
//! 3. **The virtual queue** of the packet's class, if the bump has one, sees the packet as it
//!    arrives ("at the time the packet is received", §3.2.2) and may mark or drop it.
//! 4. **The hard limit** of the bump's own buffer: a packet that finds it full is dropped.
//! 5. **The pacer** of the packet's class, if the bump paces, releases the class's packets in
//!    order; the classes share the bump's output port, the earliest release first (ties: the
//!    class seen first). Without a pacer the bump is one FIFO.
//!
//! The pacing rate comes from [`RateSource`]: a fixed rate, the class's own rate measured over
//! windows of packets (the seed: 1,000), or the virtual queue's port rate. The seed's HULL-like
//! trigger (pace a flow only once its ACKs carry ECN-Echo) is not modelled yet.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use buflab_base::units::{Rate, Time};

use crate::fifo::Packets;
use crate::pacer::{Pacer, PacerSpec};
use crate::vqueue::{VirtualQueue, VqSpec, VqStats};
use crate::{Arrival, Dequeue, Discipline, Queued, Verdict};

/// What a bump needs to know of a packet beyond a queue's view.
pub trait Flowing: Queued {
    /// The flow it belongs to.
    fn flow(&self) -> u32;
    /// A header-only control packet (SYN, SYN-ACK, pure ACK): never paced.
    fn is_control(&self) -> bool;
}

/// How packets are split into classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classify {
    /// One class for all traffic.
    All,
    /// A class per flow.
    Flow,
}

buflab_base::names!(Classify { Flow = "flow", All = "all" });

/// Where a pacer's rate comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateSource {
    Fixed(Rate),
    /// The class's arrival rate, measured over each window of this many packets.
    Measured {
        window: u32,
    },
    /// The virtual queue's port rate.
    VirtualPort,
}

/// A bump's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BumpSpec {
    pub classify: Classify,
    pub pacer: Option<(PacerSpec, RateSource)>,
    pub vqueue: Option<VqSpec>,
}

/// What a bump counted (its queue's own figures are the link's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BumpStats {
    /// Packets that passed as control packets, unpaced.
    pub control: u64,
    /// Packets the pacer held: they left later than the bump could have sent them.
    pub paced: u64,
    /// The classes seen.
    pub classes: u64,
    pub vqueue: VqStats,
}

/// A class: its queue, its pacer and its rate meter, its virtual queue.
struct Class<P> {
    queue: Packets<P>,
    /// When each queued packet arrived, to tell which ones the pacer held.
    arrived: std::collections::VecDeque<Time>,
    pacer: Option<Box<dyn Pacer>>,
    meter: Option<Meter>,
    vq: Option<VirtualQueue>,
    /// The release time of its head, as last scheduled.
    next: Option<Time>,
}

/// A class's arrival rate over windows of `window` packets.
struct Meter {
    window: u32,
    count: u32,
    first: Time,
    bytes: u64,
}

impl Meter {
    /// Counts an arrival; at the end of a window, the rate it measured.
    fn on_arrival(&mut self, now: Time, size: u32) -> Option<Rate> {
        if self.count == 0 {
            (self.first, self.bytes) = (now, 0);
        } else {
            // The bytes after the first packet, over the time since it: the window's rate.
            self.bytes += size as u64;
        }
        self.count += 1;
        if self.count < self.window {
            return None;
        }
        self.count = 0;
        let elapsed = (now - self.first).ps();
        (elapsed > 0 && self.bytes > 0).then(|| {
            Rate((self.bytes as u128 * 8 * buflab_base::units::PS_PER_S as u128 / elapsed as u128) as u64)
        })
    }
}

/// A bump of packets `P` (see the module doc).
pub struct Bump<P> {
    spec: BumpSpec,
    control: Packets<P>,
    classes: Vec<Class<P>>,
    by_flow: HashMap<u32, usize>,
    /// Unpaced bumps keep every packet in this one FIFO.
    fifo: Packets<P>,
    /// (release time, class) of every class head, earliest first; entries whose time is no
    /// longer the class's `next` are stale and skipped.
    ready: BinaryHeap<Reverse<(Time, usize)>>,
    backlog: (u64, u64),
    pub stats: BumpStats,
}

impl<P: Flowing> Bump<P> {
    pub fn new(spec: BumpSpec) -> Bump<P> {
        Bump {
            spec,
            control: Packets::new(),
            classes: Vec::new(),
            by_flow: HashMap::new(),
            fifo: Packets::new(),
            ready: BinaryHeap::new(),
            backlog: (0, 0),
            stats: BumpStats::default(),
        }
    }

    /// What the virtual queues counted, over every class.
    pub fn vqueue_stats(&self) -> VqStats {
        let mut s = VqStats::default();
        for c in &self.classes {
            if let Some(vq) = &c.vq {
                s.add(&vq.stats);
            }
        }
        s
    }

    fn class_of(&mut self, pkt: &P) -> usize {
        let key = match self.spec.classify {
            Classify::All => 0,
            Classify::Flow => pkt.flow(),
        };
        if let Some(&c) = self.by_flow.get(&key) {
            return c;
        }
        let spec = self.spec;
        let (pacer, meter) = match spec.pacer {
            None => (None, None),
            Some((kind, source)) => {
                let rate = match source {
                    RateSource::Fixed(r) => Some(r),
                    RateSource::VirtualPort => spec.vqueue.map(|v| v.rate),
                    RateSource::Measured { .. } => None,
                };
                let meter = match source {
                    RateSource::Measured { window } => {
                        Some(Meter { window, count: 0, first: Time::ZERO, bytes: 0 })
                    }
                    _ => None,
                };
                (Some(kind.build(rate)), meter)
            }
        };
        self.classes.push(Class {
            queue: Packets::new(),
            arrived: std::collections::VecDeque::new(),
            pacer,
            meter,
            vq: spec.vqueue.map(VirtualQueue::new),
            next: None,
        });
        self.stats.classes += 1;
        let c = self.classes.len() - 1;
        self.by_flow.insert(key, c);
        c
    }

    fn push_ready(&mut self, c: usize, now: Time) {
        let class = &mut self.classes[c];
        let next = match (class.queue.peek(), class.pacer.as_mut()) {
            (Some(head), Some(pacer)) => Some(pacer.release_at(now, head.size())),
            (Some(_), None) => Some(now),
            (None, _) => None,
        };
        class.next = next;
        if let Some(t) = next {
            self.ready.push(Reverse((t, c)));
        }
    }

    fn grow(&mut self, size: u32) {
        self.backlog.0 += 1;
        self.backlog.1 += size as u64;
    }

    fn shrink(&mut self, size: u32) {
        self.backlog.0 -= 1;
        self.backlog.1 -= size as u64;
    }
}

impl<P: Flowing> Discipline<P> for Bump<P> {
    fn enqueue(&mut self, a: &Arrival, mut pkt: P, _purged: &mut Vec<P>) -> Verdict {
        if pkt.is_control() {
            if a.full {
                return Verdict::Drop;
            }
            self.stats.control += 1;
            self.control.push(pkt);
            self.grow(a.size);
            return Verdict::Admit;
        }
        let c = self.class_of(&pkt);
        let now = a.now;
        let mut verdict = Verdict::Admit;
        if let Some(vq) = self.classes[c].vq.as_mut() {
            verdict = vq.on_packet(now, a.size, a.ect);
        }
        if verdict == Verdict::Drop || a.full {
            return Verdict::Drop;
        }
        if verdict == Verdict::Mark {
            pkt.mark_ce();
        }
        self.grow(a.size);
        if self.spec.pacer.is_none() {
            self.fifo.push(pkt);
            return verdict;
        }
        let class = &mut self.classes[c];
        if let Some(rate) = class.meter.as_mut().and_then(|m| m.on_arrival(now, a.size)) {
            if let Some(p) = class.pacer.as_mut() {
                p.set_rate(now, rate);
            }
        }
        if let Some(p) = class.pacer.as_mut() {
            p.on_arrival(now, a.size);
        }
        class.queue.push(pkt);
        class.arrived.push_back(now);
        // A new head, or an arrival that moved the head's release (tokens a modified bucket
        // adds at arrivals, a newly measured rate): schedule the head again; the entry it had
        // goes stale.
        self.push_ready(c, now);
        verdict
    }

    fn dequeue(&mut self, now: Time, _purged: &mut Vec<P>) -> Dequeue<P> {
        if let Some(p) = self.control.pop() {
            self.shrink(p.size());
            return Dequeue::Send(p);
        }
        if self.spec.pacer.is_none() {
            return match self.fifo.pop() {
                Some(p) => {
                    self.shrink(p.size());
                    Dequeue::Send(p)
                }
                None => Dequeue::Idle,
            };
        }
        while let Some(&Reverse((t, c))) = self.ready.peek() {
            if self.classes[c].next != Some(t) {
                self.ready.pop(); // stale
                continue;
            }
            if t > now {
                return Dequeue::Wait(t);
            }
            self.ready.pop();
            let class = &mut self.classes[c];
            let p = class.queue.pop().expect("a scheduled class has a head");
            let arrived = class.arrived.pop_front().expect("one arrival per packet");
            if t > arrived {
                self.stats.paced += 1;
            }
            if let Some(pacer) = class.pacer.as_mut() {
                pacer.on_departure(now, p.size());
            }
            class.next = None;
            self.push_ready(c, now);
            self.shrink(p.size());
            return Dequeue::Send(p);
        }
        Dequeue::Idle
    }

    fn backlog(&self) -> (u64, u64) {
        self.backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacer::PacerSpec;
    use crate::vqueue::Action;
    use crate::Limit;

    /// A test packet: (flow, number, size), control if its size is 40.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct P(u32, u32, u32);

    impl Queued for P {
        fn size(&self) -> u32 {
            self.2
        }
        fn ect(&self) -> bool {
            true
        }
        fn mark_ce(&mut self) {}
    }

    impl Flowing for P {
        fn flow(&self) -> u32 {
            self.0
        }
        fn is_control(&self) -> bool {
            self.2 == 40
        }
    }

    /// Runs `arrivals` (time, packet) through `bump` behind a serializer of `rate`: returns
    /// (departure time, packet) in order, as a link would drive it.
    fn drive(bump: &mut Bump<P>, rate: Rate, arrivals: &[(Time, P)]) -> Vec<(Time, P)> {
        let mut out = Vec::new();
        let (mut i, mut busy_until, mut now) = (0, Time::ZERO, Time::ZERO);
        let mut purged = Vec::new();
        loop {
            // The next moment anything happens: an arrival, or the serializer asking.
            let asking = match bump.dequeue(now.max(busy_until), &mut purged) {
                Dequeue::Send(p) => {
                    let t = now.max(busy_until);
                    out.push((t, p));
                    busy_until = t + rate.serialization(p.2 as u64);
                    continue;
                }
                Dequeue::Wait(t) => Some(t),
                Dequeue::Idle => None,
            };
            let next = arrivals.get(i).filter(|&&(t, _)| asking.is_none_or(|a| t <= a));
            if let Some(&(t, p)) = next {
                let (w, b) = bump.backlog();
                bump.enqueue(&Arrival::new(t, w, b, busy_until, Limit::Unlimited, p.2, true), p, &mut purged);
                now = t;
                i += 1;
            } else if let Some(a) = asking {
                now = a;
            } else {
                return out;
            }
        }
    }

    fn paced(kind: PacerSpec, rate: Rate) -> Bump<P> {
        Bump::new(BumpSpec {
            classify: Classify::Flow,
            pacer: Some((kind, RateSource::Fixed(rate))),
            vqueue: None,
        })
    }

    #[test]
    fn a_line_rate_burst_leaves_paced_and_control_packets_are_not_held() {
        // Five 1,514-B packets of flow 1 at 10 Gb/s spacing, and a SYN-ACK among them.
        let mut arrivals: Vec<(Time, P)> =
            (0..5).map(|k| (Time::from_ns(1211 * k as u64), P(1, k, 1514))).collect();
        arrivals.insert(2, (Time::from_ns(2000), P(2, 0, 40)));
        let mut b = paced(PacerSpec::Delay, Rate::gbps(1));
        let out = drive(&mut b, Rate::gbps(10), &arrivals);
        let data: Vec<u64> = out.iter().filter(|(_, p)| p.0 == 1).map(|(t, _)| t.ps() / 1000).collect();
        assert_eq!(data, vec![0, 12_112, 24_224, 36_336, 48_448], "one packet per 12.112 µs");
        let syn = out.iter().find(|(_, p)| p.0 == 2).unwrap().0;
        assert_eq!(syn, Time::from_ns(2000), "the control packet passes at once");
        assert_eq!((b.stats.paced, b.stats.control), (4, 1));
    }

    #[test]
    fn flows_are_paced_apart_and_never_reordered() {
        // Two flows interleaved at line rate, each paced at 1 Gb/s by a token thread; every
        // packet leaves once, each flow in order, and each flow's gaps are its own pacer's.
        let arrivals: Vec<(Time, P)> =
            (0..40).map(|k| (Time::from_ns(600 * k as u64), P(k % 2, k / 2, 1000))).collect();
        let tt = PacerSpec::TokenThread { depth: 1000, tick: Time::from_ns(500) };
        let mut b = paced(tt, Rate::gbps(1));
        let out = drive(&mut b, Rate::gbps(10), &arrivals);
        assert_eq!(out.len(), 40);
        for flow in 0..2 {
            let seqs: Vec<u32> = out.iter().filter(|(_, p)| p.0 == flow).map(|(_, p)| p.1).collect();
            assert_eq!(seqs, (0..20).collect::<Vec<_>>(), "flow {flow} in order");
            let times: Vec<Time> = out.iter().filter(|(_, p)| p.0 == flow).map(|(t, _)| *t).collect();
            // 1,000 B at 1 Gb/s is 8 µs: after the first (the bucket starts full) each waits
            // for its tokens, so the flow's long-run rate is the pacer's.
            let span = (times[19] - times[1]).ps() as f64;
            let rate = 18.0 * 8000.0 / (span * 1e-12);
            assert!((rate / 1e9 - 1.0).abs() < 0.01, "flow {flow}: {rate}");
        }
        assert_eq!(b.backlog(), (0, 0));
    }

    #[test]
    fn the_virtual_queue_of_each_class_counts_its_overflows() {
        // A monitor bump, one virtual queue for all traffic at 1 Gb/s with room for two
        // packets: a line-rate burst of five overflows three times, paced it never does.
        let vq = VqSpec { rate: Rate::gbps(1), size: 3028, threshold: 3028, action: Action::Count };
        let spec = BumpSpec { classify: Classify::All, pacer: None, vqueue: Some(vq) };
        let burst: Vec<(Time, P)> = (0..5).map(|k| (Time::from_ns(1211 * k as u64), P(1, k, 1514))).collect();
        let mut b = Bump::new(spec);
        let out = drive(&mut b, Rate::gbps(10), &burst);
        assert_eq!(out.len(), 5, "monitor mode passes everything");
        assert_eq!(b.vqueue_stats().overflows, 3);
        let spaced: Vec<(Time, P)> =
            (0..5).map(|k| (Time::from_ns(12_200 * k as u64), P(1, k, 1514))).collect();
        let mut b = Bump::new(spec);
        drive(&mut b, Rate::gbps(10), &spaced);
        assert_eq!(b.vqueue_stats().overflows, 0);
    }

    #[test]
    fn a_measured_rate_paces_once_a_window_is_measured() {
        // The first window of 4 packets arrives at 1 Gb/s spacing (12.112 µs apart) and goes
        // through at once; then a burst of 3 (too few to close the next window and measure
        // its own line rate) arrives and is spaced at the measured 1 Gb/s.
        let mut arrivals: Vec<(Time, P)> =
            (0..4).map(|k| (Time::from_ns(12_112 * k as u64), P(1, k, 1514))).collect();
        arrivals.extend(
            (4..7).map(|k| (Time::from_us(100) + Time::from_ns(1211 * (k - 4) as u64), P(1, k, 1514))),
        );
        let spec = BumpSpec {
            classify: Classify::Flow,
            pacer: Some((PacerSpec::Delay, RateSource::Measured { window: 4 })),
            vqueue: None,
        };
        let mut b = Bump::new(spec);
        let out = drive(&mut b, Rate::gbps(10), &arrivals);
        let burst: Vec<u64> = out[4..].iter().map(|(t, _)| t.ps() / 1000).collect();
        assert_eq!(burst, vec![100_000, 112_112, 124_224]);
    }
}
