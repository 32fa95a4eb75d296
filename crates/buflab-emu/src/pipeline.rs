//! The links in front of the bottleneck: each flow's own access link, or its machine's class
//! queue (the PSPacer role) and NIC link, and the cross link cross traffic leaves by; each a
//! serializer behind a buffer, run by the same timetable code as the bottleneck
//! ([`Bottleneck`]) over a `buflab-queue` discipline, as the simulator's links are.
//!
//! Read first: [`crate::bottleneck`]. A frame follows a route, a list of links: it joins the
//! next one when it leaves the last (at the end of its serialization), and comes out of the
//! route's end at the time it left its last link. Between its host's links (those the route
//! was made of) and any put on it later (bumps) it crosses its flow's propagation delay.
//! Everything is computed from ideal times, in time order, as a discrete-event simulation of
//! these links up to the time the loop asks for: a service due at t starts before a frame that
//! reaches its link at t (the simulator's rule), and frames come out in the order they left.
//! The loop feeds frames in the order it read them, each stamped no earlier than the last, and
//! asks for what has come out by now, so every link sees its arrivals in time order. Must not
//! know sockets or clocks.
//!
//! A link may be a bump in the wire ([`crate::bumps`] builds them): its discipline a
//! `buflab-queue` bump, its delay the bump's latency (a frame reaches the next link that long
//! after its serialization ends). Its timers (a pacer's release times, a batch's ticks) are
//! its services, asked for when the bump says; what reaches a bump from outside its queue is
//! a [`Notice`] at an ideal time, run in time order with everything else: a QCN message from
//! a congestion point (a bump whose queue samples its arrivals: its messages go, each one
//! propagation delay later, to the reaction point of the sampled frame's flow, as the
//! simulator's `sim/qcn.rs` carries them), or an ACK passing the bump the other way.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use buflab_base::units::Time;
use buflab_queue::bump::BumpStats;

use crate::bottleneck::{Bottleneck, Counts};
use crate::pool::Frame;

/// What reaches a bump from outside its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Notice {
    /// A QCN message for flow `flow`'s reaction point: quantized feedback `fb`.
    Feedback { flow: u32, fb: u8 },
    /// An ACK of flow `flow` passes the bump back to its sender, with ECN-Echo if `ece`.
    Ack { flow: u32, ece: bool },
}

/// The QCN messages the pipeline carried (whole run): sent, and sent to a flow with no
/// reaction point before its congestion point (a source without a rate limiter ignores them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QcnCounts {
    pub sent: u64,
    pub unheard: u64,
}

/// A frame between two links of its route: it left one at `exit`, `frame.hop` is the next.
struct Moving {
    exit: Time,
    seq: u64,
    frame: Frame,
}

impl PartialEq for Moving {
    fn eq(&self, o: &Self) -> bool {
        (self.exit, self.seq) == (o.exit, o.seq)
    }
}
impl Eq for Moving {}
impl PartialOrd for Moving {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Moving {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.exit, self.seq).cmp(&(o.exit, o.seq))
    }
}

#[derive(Default)]
pub struct Pipeline {
    links: Vec<Bottleneck>,
    /// Each link's latency after its serialization (a bump's `delay`; 0 for the others).
    delays: Vec<Time>,
    routes: Vec<Vec<u32>>,
    /// Notices due, in (time, order given) order: (time, seq, link, notice).
    notices: BinaryHeap<Reverse<(Time, u64, u32, Notice)>>,
    /// The congestion points' links, and (congestion point, flow) → (reaction point, delay).
    congestion_points: Vec<u32>,
    qcn_ways: HashMap<(u32, u32), (u32, Time)>,
    pub qcn: QcnCounts,
    /// When to take the bumps' counts (the end of the measured window), and what they were.
    snapshot_at: Option<Time>,
    snapshot: Option<Vec<(u32, BumpStats)>>,
    moving: BinaryHeap<Reverse<Moving>>,
    /// Each flow's propagation delay (indexed by `Frame::flow`; none for flows beyond it),
    /// crossed after the links a route was made of, its host's side (the access link, or the
    /// class queue and the NIC), before any link put on it later (bumps).
    propagation: Vec<Time>,
    /// Per route: how many of its first links are its host's side.
    host_links: Vec<usize>,
    /// (next service, link) of each link with frames waiting; an entry whose time is no longer
    /// its link's next service is stale and skipped.
    services: BinaryHeap<Reverse<(Time, u32)>>,
    seq: u64,
    out: Vec<(Frame, Time)>,
    /// The time the pipeline has run to.
    clock: Time,
}

impl Pipeline {
    /// Adds a link; returns its number.
    pub fn link(&mut self, link: Bottleneck) -> u32 {
        self.delayed_link(link, Time::ZERO)
    }

    /// Adds a link whose frames reach the next one `delay` after their serialization ends.
    pub fn delayed_link(&mut self, link: Bottleneck, delay: Time) -> u32 {
        self.links.push(link);
        self.delays.push(delay);
        self.links.len() as u32 - 1
    }

    /// Flow i's frames cross `delays[i]` when they leave their host's side of their route:
    /// the flow's forward propagation delay, before the bumps and the bottleneck, as the
    /// simulator's access links carry it.
    pub fn set_propagation(&mut self, delays: Vec<Time>) {
        self.propagation = delays;
    }

    /// Link `l` itself (a bump's counts and settings are read through it).
    pub fn link_mut(&mut self, l: u32) -> &mut Bottleneck {
        &mut self.links[l as usize]
    }

    /// Link `l`'s latency after serialization.
    pub fn delay(&self, l: u32) -> Time {
        self.delays[l as usize]
    }

    /// Route `route`'s links, in order.
    pub fn links_of(&self, route: u32) -> &[u32] {
        &self.routes[route as usize]
    }

    /// Puts `links` on route `route` before its hop `at` (its length: at its end).
    pub fn insert(&mut self, route: u32, at: usize, links: &[u32]) {
        assert!(links.iter().all(|&l| (l as usize) < self.links.len()), "links that exist");
        let r = &mut self.routes[route as usize];
        r.splice(at..at, links.iter().copied());
        if at < self.host_links[route as usize] {
            self.host_links[route as usize] += links.len();
        }
    }

    /// The bump on link `cp` runs a congestion point: its messages for flow `flow` go to the
    /// bump on link `rp`, `delay` after the arrival they answer.
    pub fn qcn_way(&mut self, cp: u32, flow: u32, rp: u32, delay: Time) {
        if !self.congestion_points.contains(&cp) {
            self.congestion_points.push(cp);
        }
        self.qcn_ways.insert((cp, flow), (rp, delay));
    }

    /// A congestion point on link `cp` with no way yet: its messages are counted as unheard
    /// until a way is given.
    pub fn congestion_point(&mut self, cp: u32) {
        if !self.congestion_points.contains(&cp) {
            self.congestion_points.push(cp);
        }
    }

    /// `notice` reaches the bump on link `l` at `t`, or as soon as it can if the pipeline has
    /// run past `t` already (a frame read late).
    pub fn notify(&mut self, t: Time, l: u32, notice: Notice) {
        self.seq += 1;
        self.notices.push(Reverse((t.max(self.clock), self.seq, l, notice)));
    }

    /// Takes every bump's counts when the pipeline's time reaches `t` (the end of the
    /// measured window): [`Pipeline::bump_counts`] then gives them.
    pub fn snapshot_at(&mut self, t: Time) {
        self.snapshot_at = Some(t);
    }

    /// Each bump's counts (link, counts): as the snapshot took them, or now if none was.
    pub fn bump_counts(&mut self, now: Time) -> Vec<(u32, BumpStats)> {
        if let Some(s) = &self.snapshot {
            return s.clone();
        }
        self.bump_stats(now)
    }

    fn bump_stats(&mut self, t: Time) -> Vec<(u32, BumpStats)> {
        let mut out = Vec::new();
        for (l, link) in self.links.iter_mut().enumerate() {
            if let Some(b) = link.bump_mut() {
                out.push((l as u32, b.stats(t)));
            }
        }
        out
    }

    /// Takes the snapshot if the pipeline is about to go past its time.
    fn snapshot_before(&mut self, next: Time) {
        if let Some(at) = self.snapshot_at.filter(|&at| next > at && self.snapshot.is_none()) {
            self.snapshot = Some(self.bump_stats(at));
        }
    }

    /// Adds a route through `links`, in order; returns its number.
    pub fn route(&mut self, links: Vec<u32>) -> u32 {
        assert!(links.iter().all(|&l| (l as usize) < self.links.len()), "a route of links that exist");
        self.host_links.push(links.len());
        self.routes.push(links);
        self.routes.len() as u32 - 1
    }

    /// Frame `f` enters route `route` at `t` (no earlier than the last frame entered): what
    /// comes out of any route by `t` is pushed to `done` first, with the time it left, and so
    /// may `f` itself; frames a link refuses or purges go to `dropped`.
    pub fn enter(
        &mut self,
        t: Time,
        mut f: Frame,
        route: u32,
        done: &mut Vec<(Time, Frame)>,
        dropped: &mut Vec<Frame>,
    ) {
        self.run(t, done, dropped);
        f.route = route;
        f.hop = 0;
        self.reach(t, f, done, dropped);
    }

    /// Runs every service and every move due by `now`, in time order, pushing what comes out
    /// of its route to `done`.
    pub fn run(&mut self, now: Time, done: &mut Vec<(Time, Frame)>, dropped: &mut Vec<Frame>) {
        loop {
            while let Some(&Reverse((t, l))) = self.services.peek() {
                if self.links[l as usize].next_service() == Some(t) {
                    break;
                }
                self.services.pop();
            }
            let service = self.services.peek().map(|r| r.0);
            let moving = self.moving.peek().map(|r| r.0.exit);
            let notice = self.notices.peek().map(|r| r.0 .0);
            let next = [service.map(|s| s.0), moving, notice].into_iter().flatten().min();
            self.snapshot_before(next.filter(|&t| t <= now).unwrap_or(now));
            match (service, moving, notice) {
                // A service due at t starts before a notice at t, and both before a frame that
                // reaches its link at t.
                (Some((t, l)), m, n) if t <= now && m.is_none_or(|m| t <= m) && n.is_none_or(|n| t <= n) => {
                    self.services.pop();
                    self.links[l as usize].advance(t, &mut self.out, dropped);
                    self.collect(l);
                }
                (_, m, Some(n)) if n <= now && m.is_none_or(|m| n <= m) => {
                    let Reverse((t, _, l, notice)) = self.notices.pop().expect("peeked");
                    self.deliver(t, l, notice, dropped);
                }
                (_, Some(m), _) if m <= now => {
                    let Reverse(Moving { exit, frame, .. }) = self.moving.pop().expect("peeked");
                    self.reach(exit, frame, done, dropped);
                }
                _ => break,
            }
        }
        // Everything due by `now` has run: a notice given from here on comes no earlier.
        self.clock = self.clock.max(now);
    }

    /// A notice reaches the bump on link `l` at `t`; its serializer asks again if the bump
    /// changed its mind.
    fn deliver(&mut self, t: Time, l: u32, notice: Notice, dropped: &mut Vec<Frame>) {
        let link = &mut self.links[l as usize];
        // Services due by `t` ran already (they come first); none is left before it.
        link.advance(t, &mut self.out, dropped);
        let bump = link.bump_mut().expect("notices go to bumps");
        match notice {
            Notice::Feedback { flow, fb } => bump.on_feedback(t, flow, fb),
            Notice::Ack { flow, ece } => bump.on_reverse(t, flow, ece),
        }
        link.rescheduled(t);
        link.advance(t, &mut self.out, dropped);
        self.collect(l);
    }

    /// The messages the congestion point on link `l` sent for the frame that just reached it
    /// at `t` go on their way.
    fn send_feedback(&mut self, t: Time, l: u32) {
        let Some(bump) = self.links[l as usize].bump_mut() else { return };
        if !bump.has_feedback() {
            return;
        }
        let messages: Vec<_> = bump.take_feedback().collect();
        for m in messages {
            self.qcn.sent += 1;
            match self.qcn_ways.get(&(l, m.flow)).copied() {
                Some((rp, delay)) => self.notify(t + delay, rp, Notice::Feedback { flow: m.flow, fb: m.fb }),
                None => self.qcn.unheard += 1,
            }
        }
    }

    /// Frame `f` reaches the link its hop names at `t`, or the end of its route.
    fn reach(&mut self, t: Time, f: Frame, done: &mut Vec<(Time, Frame)>, dropped: &mut Vec<Frame>) {
        match self.routes[f.route as usize].get(f.hop as usize) {
            None => done.push((t, f)),
            Some(&l) => {
                self.links[l as usize].arrive(t, f, &mut self.out, dropped);
                if self.congestion_points.contains(&l) {
                    self.send_feedback(t, l);
                }
                self.collect(l);
            }
        }
    }

    /// The frames link `l` started serving go on their way; its next service is scheduled.
    fn collect(&mut self, l: u32) {
        let delay = self.delays[l as usize];
        for (mut f, exit) in self.out.drain(..) {
            f.hop += 1;
            let host_side_done = f.hop as usize == self.host_links[f.route as usize];
            let propagation = match self.propagation.get(f.flow as usize) {
                Some(&d) if host_side_done => d,
                _ => Time::ZERO,
            };
            self.seq += 1;
            self.moving.push(Reverse(Moving { exit: exit + delay + propagation, seq: self.seq, frame: f }));
        }
        if let Some(t) = self.links[l as usize].next_service() {
            self.services.push(Reverse((t, l)));
        }
    }

    /// Frames held: waiting in a link, or between links.
    pub fn len(&self) -> usize {
        self.moving.len() + self.links.iter().map(|l| l.waiting().0 as usize).sum::<usize>()
    }

    /// Frames the links dropped: (the access links' and class queues', the bumps' (their
    /// virtual queues' and buffers')).
    pub fn drops(&mut self) -> (u64, u64) {
        let (mut links, mut bumps) = (0, 0);
        for l in self.links.iter_mut() {
            if l.bump_mut().is_some() {
                bumps += l.counts.drops;
            } else {
                links += l.counts.drops;
            }
        }
        (links, bumps)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What link `l` counted.
    pub fn counts(&self, l: u32) -> Counts {
        self.links[l as usize].counts
    }

    /// What link `l` counted, None past the last link.
    pub fn counts_of(&self, l: u32) -> Option<Counts> {
        self.links.get(l as usize).map(|b| b.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use buflab_base::units::{BufferLimit, Rate};
    use buflab_queue::drop_tail::DropTail;
    use buflab_queue::Fifo;

    fn link(rate: Rate, limit: BufferLimit) -> Bottleneck {
        Bottleneck::new(rate, limit, Box::new(Fifo::<DropTail, Frame>::new(DropTail)))
    }

    fn f(slot: u32) -> Frame {
        Frame { slot, len: 1250, ..Frame::default() }
    }

    /// Everything out by `now`, as (µs, slot).
    fn out(p: &mut Pipeline, now: Time) -> Vec<(u64, u32)> {
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        p.run(now, &mut done, &mut dropped);
        done.iter().map(|(t, f)| (t.ps() / 1_000_000, f.slot)).collect()
    }

    #[test]
    fn a_private_link_spaces_its_flow_and_flows_merge_by_exit() {
        // 10 Mb/s: 1250 B take 1 ms. Flow 0 bursts three frames at 0; flow 1 sends one at 1.5 ms.
        let mut p = Pipeline::default();
        let (a, b) = (
            p.link(link(Rate::mbps(10), BufferLimit::Unlimited)),
            p.link(link(Rate::mbps(10), BufferLimit::Unlimited)),
        );
        let (ra, rb) = (p.route(vec![a]), p.route(vec![b]));
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        for slot in 0..3 {
            p.enter(Time::ZERO, f(slot), ra, &mut done, &mut dropped);
        }
        assert_eq!(out(&mut p, Time::from_us(999)), vec![]);
        // Entering at 1.5 ms brings out what left by then.
        p.enter(Time::from_us(1500), f(9), rb, &mut done, &mut dropped);
        assert_eq!(
            done.iter().map(|(t, f)| (t.ps() / 1_000_000, f.slot)).collect::<Vec<_>>(),
            vec![(1000, 0)]
        );
        assert_eq!(out(&mut p, Time::from_ms(10)), vec![(2000, 1), (2500, 9), (3000, 2)]);
        assert!(p.is_empty());
    }

    #[test]
    fn class_queues_feed_a_shared_nic_in_the_order_they_serve() {
        // Two classes of 10 Mb/s (1 ms per frame) behind a 20 Mb/s NIC (0.5 ms): class 0 gets
        // three frames at 0, class 1 one at 0.2 ms. The NIC takes each when its class is done
        // with it: 0 leaves the NIC at 1.5 ms; 9 (done at its class at 1.2 ms) waits for it and
        // leaves at 2.0; 1 (class 0's second, done at 2.0) at 2.5. A class queue of one packet
        // drops the third, which does not fit behind the one it serves and the one waiting.
        let mut p = Pipeline::default();
        let c0 = p.link(link(Rate::mbps(10), BufferLimit::Packets(1)));
        let c1 = p.link(link(Rate::mbps(10), BufferLimit::Packets(1)));
        let nic = p.link(link(Rate::mbps(20), BufferLimit::Unlimited));
        let (r0, r1) = (p.route(vec![c0, nic]), p.route(vec![c1, nic]));
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        for slot in 0..3 {
            p.enter(Time::ZERO, f(slot), r0, &mut done, &mut dropped);
        }
        p.enter(Time::from_us(200), f(9), r1, &mut done, &mut dropped);
        assert_eq!(dropped, vec![f(2)], "class 0 holds one behind the one it serves");
        assert_eq!(out(&mut p, Time::from_ms(10)), vec![(1500, 0), (2000, 9), (2500, 1)]);
        assert_eq!(p.counts(nic).departures, 3);
        assert_eq!(p.counts(c0).drops, 1);
    }

    #[test]
    fn each_flows_propagation_delay_follows_its_hosts_side_of_the_route() {
        // Two flows share a class queue and a NIC (10 and 20 Mb/s: 1 and 0.5 ms a frame);
        // flow 0 is 5 ms from the bottleneck, flow 1 is 1 ms, flow 2 (beyond the list) none.
        // The delay comes after the NIC, not between the class queue and the NIC: frame 0
        // leaves the NIC at 1.5 ms and comes out at 6.5; flow 1's frame, entered at 0.2 ms,
        // leaves the NIC at 2.0 and comes out at 3.0, before it; flow 2's, behind it in the
        // class queue (done at 2.2), leaves the NIC at 2.7 and comes out then.
        let mut p = Pipeline::default();
        let (c0, c1) = (
            p.link(link(Rate::mbps(10), BufferLimit::Unlimited)),
            p.link(link(Rate::mbps(10), BufferLimit::Unlimited)),
        );
        let nic = p.link(link(Rate::mbps(20), BufferLimit::Unlimited));
        let (r0, r1) = (p.route(vec![c0, nic]), p.route(vec![c1, nic]));
        p.set_propagation(vec![Time::from_ms(5), Time::from_ms(1)]);
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        p.enter(Time::ZERO, Frame { flow: 0, ..f(0) }, r0, &mut done, &mut dropped);
        p.enter(Time::from_us(200), Frame { flow: 1, ..f(1) }, r1, &mut done, &mut dropped);
        p.enter(Time::from_us(300), Frame { flow: 2, ..f(2) }, r1, &mut done, &mut dropped);
        assert_eq!(out(&mut p, Time::from_ms(20)), vec![(2700, 2), (3000, 1), (6500, 0)]);
        assert!(p.is_empty());
        // A link put at a route's end later (a bump in front of the bottleneck) comes after
        // the delay: flow 0's frame reaches it at 6.5 ms and leaves it 0.1 ms later (100 Mb/s).
        let bump = p.link(link(Rate::mbps(100), BufferLimit::Unlimited));
        p.insert(r0, 2, &[bump]);
        p.enter(Time::from_ms(20), Frame { flow: 0, ..f(3) }, r0, &mut done, &mut dropped);
        assert_eq!(out(&mut p, Time::from_ms(40)), vec![(26600, 3)]);
        // One put on the host's side (between its class queue and NIC) comes before it:
        // 1 + 0.1 + 0.5 ms of links, then 5 ms, then the bump's 0.1 ms.
        let early = p.link(link(Rate::mbps(100), BufferLimit::Unlimited));
        p.insert(r0, 1, &[early]);
        p.enter(Time::from_ms(40), Frame { flow: 0, ..f(4) }, r0, &mut done, &mut dropped);
        assert_eq!(out(&mut p, Time::from_ms(60)), vec![(46700, 4)]);
    }
}
