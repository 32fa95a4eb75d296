//! The links in front of the bottleneck: each flow's own access link, or its machine's class
//! queue (the PSPacer role) and NIC link, and the cross link cross traffic leaves by; each a
//! serializer behind a buffer, run by the same timetable code as the bottleneck
//! ([`Bottleneck`]) over a `buflab-queue` discipline, as the simulator's links are.
//!
//! Read first: [`crate::bottleneck`]. A frame follows a route, a list of links: it joins the
//! next one when it leaves the last (at the end of its serialization), and comes out of the
//! route's end at the time it left its last link. Everything is computed from ideal times, in
//! time order, as a discrete-event simulation of these links up to the time the loop asks for:
//! a service due at t starts before a frame that reaches its link at t (the simulator's rule),
//! and frames come out in the order they left. The loop feeds frames in the order it read
//! them, each stamped no earlier than the last, and asks for what has come out by now, so
//! every link sees its arrivals in time order. Must not know sockets or clocks.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use buflab_base::units::Time;

use crate::bottleneck::{Bottleneck, Counts};
use crate::pool::Frame;

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
    routes: Vec<Vec<u32>>,
    moving: BinaryHeap<Reverse<Moving>>,
    /// (next service, link) of each link with frames waiting; an entry whose time is no longer
    /// its link's next service is stale and skipped.
    services: BinaryHeap<Reverse<(Time, u32)>>,
    seq: u64,
    out: Vec<(Frame, Time)>,
}

impl Pipeline {
    /// Adds a link; returns its number.
    pub fn link(&mut self, link: Bottleneck) -> u32 {
        self.links.push(link);
        self.links.len() as u32 - 1
    }

    /// Adds a route through `links`, in order; returns its number.
    pub fn route(&mut self, links: Vec<u32>) -> u32 {
        assert!(links.iter().all(|&l| (l as usize) < self.links.len()), "a route of links that exist");
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
            match (service, moving) {
                // A service due at t starts before a frame that reaches its link at t.
                (Some((t, l)), m) if t <= now && m.is_none_or(|m| t <= m) => {
                    self.services.pop();
                    self.links[l as usize].advance(t, &mut self.out, dropped);
                    self.collect(l);
                }
                (_, Some(m)) if m <= now => {
                    let Reverse(Moving { exit, frame, .. }) = self.moving.pop().expect("peeked");
                    self.reach(exit, frame, done, dropped);
                }
                _ => break,
            }
        }
    }

    /// Frame `f` reaches the link its hop names at `t`, or the end of its route.
    fn reach(&mut self, t: Time, f: Frame, done: &mut Vec<(Time, Frame)>, dropped: &mut Vec<Frame>) {
        match self.routes[f.route as usize].get(f.hop as usize) {
            None => done.push((t, f)),
            Some(&l) => {
                self.links[l as usize].arrive(t, f, &mut self.out, dropped);
                self.collect(l);
            }
        }
    }

    /// The frames link `l` started serving go on their way; its next service is scheduled.
    fn collect(&mut self, l: u32) {
        for (mut f, exit) in self.out.drain(..) {
            f.hop += 1;
            self.seq += 1;
            self.moving.push(Reverse(Moving { exit, seq: self.seq, frame: f }));
        }
        if let Some(t) = self.links[l as usize].next_service() {
            self.services.push(Reverse((t, l)));
        }
    }

    /// Frames held: waiting in a link, or between links.
    pub fn len(&self) -> usize {
        self.moving.len() + self.links.iter().map(|l| l.waiting().0 as usize).sum::<usize>()
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
}
