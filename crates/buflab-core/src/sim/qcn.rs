//! Carrying QCN messages (IEEE 802.1Qau) from the congestion points to the reaction points.
//!
//! Read first: the `buflab-queue` crate's `qcn` module (what the two points do) and its `bump`
//! module (where they run). This file owns only the carrying: after a packet joins a bump
//! with a congestion point, its messages are taken and each is scheduled to reach the
//! reaction point of the sampled packet's flow (its own bump at `access`) one propagation
//! delay later: the sum of the delays of the links on the flow's route from its source up to
//! the congestion point, the way back being as long (the topologies are symmetric). A
//! message for a flow without a reaction point is counted and dropped, as a source without a
//! rate limiter would ignore it. Must not know what a message does.

use std::collections::HashMap;

use super::{Hop, Sim};
use crate::sched::Event;
use crate::units::Time;

/// The messages in flight, and where each flow's go.
#[derive(Default)]
pub struct Qcn {
    /// Links whose bump has a congestion point, by link id.
    is_cp: Vec<bool>,
    /// (congestion point's link, flow) → (reaction point's link, delay), found on first use;
    /// None: the flow has no reaction point before that congestion point.
    ways: HashMap<(u32, u32), Option<(u32, Time)>>,
    /// Messages in flight: (reaction point's link, flow, feedback), by slot; free slots.
    in_flight: Vec<(u32, u32, u8)>,
    free: Vec<u32>,
    /// Messages sent and messages no reaction point heard (whole run).
    pub sent: u64,
    pub unheard: u64,
}

impl Sim {
    /// Finds the congestion points once the network is built (None without any).
    pub(super) fn prepare_qcn(&mut self) {
        let is_cp: Vec<bool> =
            self.links.iter_mut().map(|l| l.bump_mut().is_some_and(|b| b.has_congestion_point())).collect();
        self.qcn = is_cp.iter().any(|&c| c).then(|| Box::new(Qcn { is_cp, ..Qcn::default() }));
    }

    /// A packet just reached link `l` at `t`: if it runs a congestion point, its messages go.
    #[inline(always)]
    pub(super) fn after_arrival(&mut self, l: u32, t: Time) {
        let Some(q) = self.qcn.as_deref() else { return };
        if q.is_cp.get(l as usize).copied().unwrap_or(false) {
            self.send_feedback(l, t);
        }
    }

    #[cold]
    fn send_feedback(&mut self, l: u32, t: Time) {
        let Some(bump) = self.links[l as usize].bump_mut() else { return };
        if !bump.has_feedback() {
            return;
        }
        let messages: Vec<_> = bump.take_feedback().collect();
        for m in messages {
            let way = self.way(l, m.flow);
            let q = self.qcn.as_deref_mut().expect("checked by the caller");
            q.sent += 1;
            let Some((rp, delay)) = way else {
                q.unheard += 1;
                continue;
            };
            let slot = match q.free.pop() {
                Some(s) => {
                    q.in_flight[s as usize] = (rp, m.flow, m.fb);
                    s
                }
                None => {
                    q.in_flight.push((rp, m.flow, m.fb));
                    (q.in_flight.len() - 1) as u32
                }
            };
            self.sched.schedule(t + delay, Event::Feedback(slot));
        }
    }

    /// The reaction point of `flow` before congestion point `cp`, and the delay to it.
    fn way(&mut self, cp: u32, flow: u32) -> Option<(u32, Time)> {
        if let Some(&w) = self.qcn.as_deref().and_then(|q| q.ways.get(&(cp, flow))) {
            return w;
        }
        let route = self.flows[flow as usize].endpoints.facts().route;
        let (mut delay, mut rp, mut found) = (Time::ZERO, None, false);
        for h in 0..self.routes.len(route) {
            let Hop::Link(l) = self.routes.hop(route, h) else { continue };
            if l == cp {
                found = true;
                break;
            }
            let link = &mut self.links[l as usize];
            delay += link.delay;
            if link.bump_mut().is_some_and(|b| b.is_reaction_point()) {
                rp = Some(l);
            }
        }
        let w = rp.filter(|_| found).map(|rp| (rp, delay));
        self.qcn.as_deref_mut().expect("checked by the caller").ways.insert((cp, flow), w);
        w
    }

    /// The `Feedback` event: message `slot` reaches its reaction point at `now`.
    pub(super) fn on_feedback(&mut self, now: Time, slot: u32) {
        let q = self.qcn.as_deref_mut().expect("a message needs a congestion point");
        let (rp, flow, fb) = q.in_flight[slot as usize];
        q.free.push(slot);
        let link = &mut self.links[rp as usize];
        link.bump_mut().expect("a reaction point is a bump").on_feedback(now, flow, fb);
        link.rescheduled(now, &mut self.sched, rp);
    }
}
