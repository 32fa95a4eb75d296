//! Closed-loop users' requests run ahead of the global clock, so that a bottleneck whose
//! receivers are users' clients may still relay.
//!
//! Read first: `plan.rs` (*Relay links*) and `users.rs` (what a request does). This file owns
//! the queue of requests not yet run for each relay link whose clients send requests, and
//! when one runs ahead.
//!
//! A relay link hands each admitted packet to its receiver at once, at the packet's exit time
//! `e`, while the global clock is still at the admission. A client also acts on its own, at
//! its user's request events: it opens a new connection (the data of the old one that still
//! arrives is then stale) and, with a handshake, sends its SYN onto the same reverse link as
//! the ACKs. Handing it a packet at `e` before its request at `r < e` has run, or entering an
//! ACK at `e` into the reverse link before that SYN at `r`, would change what running each
//! exit as an event gives. So before a relay link hands on a packet at `e`, every request of
//! its clients due at or before `e` runs, at its own time, in the order the events would have
//! run (time, then the order they were scheduled). One due at `e` itself goes first: its event
//! was scheduled before the packet was admitted, so before the packet's exit event (scheduled
//! at the admission or later, when the packet ahead of it left), and ran first. This is exact
//! because:
//! - nothing else moves a client before `e`: its data comes only from this link, whose
//!   earlier exits have all been handed on (they come in exit order), and it has no timer
//!   (the link relays only receivers that answer at once);
//! - a request needs nothing else from the network: it draws from its user's own random
//!   stream, appends the next transfer record (in request order, as the events would), and
//!   its SYN enters the reverse link after every packet entered there before `r` and before
//!   every one entered after (each a later exit's answer);
//! - a request scheduled later (by a completed download at `c`, after a think time) is due at
//!   or after `c`, and `c` is at or after every exit handed on so far.
//!
//! The request's own event still fires at `r` and then finds it done. Requests due at or
//! after the end of the run never run, as their events never would.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Sim;
use crate::sched::Event;
use crate::units::Time;

/// The requests not yet run of the clients behind one relay link.
pub(super) struct RequestsAhead {
    /// The relay link.
    link: u32,
    /// (due time, order scheduled, flow), earliest first.
    pending: BinaryHeap<Reverse<(Time, u64, u32)>>,
    next_seq: u64,
}

impl Sim {
    /// After the relay links are chosen: a queue for each one whose receivers include users'
    /// clients (whose requests must then run ahead of its exits).
    pub(super) fn prepare_requests_ahead(&mut self) {
        self.requests_ahead.clear();
        for f in 0..self.flows.len() {
            if let Some(link) = self.relay_link_of_client(f as u32) {
                if !self.requests_ahead.iter().any(|q| q.link == link) {
                    self.requests_ahead.push(RequestsAhead { link, pending: BinaryHeap::new(), next_seq: 0 });
                }
            }
        }
    }

    /// The relay link that hands flow `f`'s data to its receiver, if that receiver is a
    /// user's client.
    fn relay_link_of_client(&self, f: u32) -> Option<u32> {
        let flow = &self.flows[f as usize];
        flow.user.as_ref()?;
        let facts = flow.endpoints.facts();
        let last = self.routes.len(facts.route) - 1;
        match self.routes.hop(facts.route, last) {
            super::Hop::Link(l) if self.links[l as usize].is_relay() => Some(l),
            _ => None,
        }
    }

    /// The queue of user `f`'s requests, if its client is behind a relay link.
    fn queue_of(&mut self, f: u32) -> Option<&mut RequestsAhead> {
        if self.requests_ahead.is_empty() {
            return None;
        }
        let link = self.relay_link_of_client(f)?;
        Some(self.requests_ahead.iter_mut().find(|q| q.link == link).expect("a relay link's queue"))
    }

    /// Schedules flow `f`'s start at `at`: for a user, its next request, queued with its relay
    /// link if it has one.
    pub(super) fn schedule_start(&mut self, at: Time, f: u32) {
        self.sched.schedule(at, Event::FlowStart(f));
        if let Some(q) = self.queue_of(f) {
            q.pending.push(Reverse((at, q.next_seq, f)));
            q.next_seq += 1;
        }
    }

    /// Runs every queued request of relay link `l`'s clients due at or before `t` (an exit
    /// about to be handed on), in order.
    pub(super) fn run_requests_until(&mut self, l: u32, t: Time) {
        let Some(qi) = self.requests_ahead.iter().position(|q| q.link == l) else { return };
        while let Some(&Reverse((at, _, f))) = self.requests_ahead[qi].pending.peek() {
            if at > t || at >= self.window.end {
                return;
            }
            self.requests_ahead[qi].pending.pop();
            self.request(at, f);
        }
    }

    /// Whether user `f`'s request event at `now` still has its request to run (false: it ran
    /// ahead, see the module doc).
    pub(super) fn request_is_due(&mut self, now: Time, f: u32) -> bool {
        let Some(q) = self.queue_of(f) else { return true };
        // Requests run in the events' order, so a request still queued is the first one.
        match q.pending.peek() {
            Some(&Reverse((at, _, g))) if at == now && g == f => {
                q.pending.pop();
                true
            }
            _ => false,
        }
    }
}
