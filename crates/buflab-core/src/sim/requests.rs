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
//! its clients due before `e` runs, at its own time, in the order the events would have run
//! (time, then the order they were scheduled), and so does one due at `e` itself whose event
//! would have been scheduled before the packet's exit event (see [`runs_before_exit`]). This is
//! exact because:
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
//! The request's own event still fires at `r` and then finds it done (or, left for after the
//! exit at `r`, runs it then). Requests due at or after the end of the run never run, as their
//! events never would.
//!
//! **A request due at an exit's picosecond.** With one event per hop the two events run in the
//! order they were scheduled. A packet's exit event is scheduled when the packet ahead of it
//! leaves (the link schedules its next exit before it hands on the packet leaving), or at its
//! admission when the link holds nothing else; a request's event when its user's last download
//! completed (handed on by this link at an exit, after that exit scheduled the next), at the
//! start of the run, or when a change added the flow. Which came first follows from those
//! times, except where they too are equal in a way only the order of two other events at that
//! picosecond decides (a packet admitted at the very exit of the one ahead of it, or a change
//! at an admission's time): then the request waits for the exit, and the case is counted
//! ([`Sim::request_ties`]) so that the test comparing the two modes sets it aside, as
//! it does two packets reaching a queue at one picosecond. It takes a think time equal to a
//! packet's transmission time, or the like, to make a request fall on an exit at all.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Sim;
use crate::sched::Event;
use crate::units::Time;

/// When a request's event was scheduled (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scheduled {
    /// Before the run: before every event of it.
    Begin,
    /// While the relay link handed on the packet leaving at this time (the user's download
    /// completed), after that exit had scheduled the next.
    Delivery(Time),
    /// In another event at this time (a change that added the flow).
    Outside(Time),
}

/// A [`Scheduled`] in eight bytes, kept in the user's flow record (a user has one request
/// pending at a time): the kind in the top two bits, the time (below 2⁶² ps, 53 days) below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PackedScheduled(u64);

impl PackedScheduled {
    pub(super) const BEGIN: PackedScheduled = PackedScheduled(0);
    const TIME_BITS: u32 = 62;
    const TIME_MASK: u64 = (1 << Self::TIME_BITS) - 1;

    fn pack(s: Scheduled) -> PackedScheduled {
        let (kind, t) = match s {
            Scheduled::Begin => (0, Time::ZERO),
            Scheduled::Delivery(t) => (1, t),
            Scheduled::Outside(t) => (2, t),
        };
        debug_assert!(t.0 <= Self::TIME_MASK, "a request scheduled past 2^62 ps");
        PackedScheduled(kind << Self::TIME_BITS | t.0.min(Self::TIME_MASK))
    }

    fn unpack(self) -> Scheduled {
        let t = Time(self.0 & Self::TIME_MASK);
        match self.0 >> Self::TIME_BITS {
            0 => Scheduled::Begin,
            1 => Scheduled::Delivery(t),
            _ => Scheduled::Outside(t),
        }
    }
}

/// When the exit event of a packet the relay link admits at `admitted` would have been
/// scheduled, with one event per hop, given the exit of the packet ahead of it (`ahead`, None
/// if it is the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExitScheduled {
    /// When the packet ahead left, which was after the admission.
    Leaving(Time),
    /// At the admission, to an empty link.
    Admitted(Time),
    /// At this time, the admission and the exit of the packet ahead both: which of their
    /// events ran first decides.
    Either(Time),
}

impl ExitScheduled {
    fn of(admitted: Time, ahead: Option<Time>) -> ExitScheduled {
        match ahead {
            Some(e) if e > admitted => ExitScheduled::Leaving(e),
            Some(e) if e == admitted => ExitScheduled::Either(e),
            _ => ExitScheduled::Admitted(admitted),
        }
    }
}

/// Whether a request scheduled `request` runs before the exit event scheduled `exit` when both
/// are due at one picosecond; None when the two modes' orders of other events decide.
fn runs_before_exit(request: Scheduled, exit: ExitScheduled) -> Option<bool> {
    use ExitScheduled::{Admitted, Either, Leaving};
    let at = match exit {
        Leaving(t) | Admitted(t) | Either(t) => t,
    };
    match request {
        Scheduled::Begin => Some(true),
        Scheduled::Delivery(t) | Scheduled::Outside(t) if t != at => Some(t < at),
        // Handed on at the exit that scheduled this one, after scheduling it.
        Scheduled::Delivery(_) if matches!(exit, Leaving(_)) => Some(false),
        _ => None,
    }
}

/// The requests not yet run of the clients behind one relay link.
pub(super) struct RequestsAhead {
    /// The relay link.
    link: u32,
    /// (due time, order scheduled, flow), earliest first; when each was scheduled is in its
    /// flow's record.
    pending: BinaryHeap<Reverse<(Time, u64, u32)>>,
    next_seq: u64,
    /// Requests due at an exit's picosecond: whose order against it was decided, and left
    /// undecided (see the module doc). A request left for after an exit counts at each.
    ties: (u64, u64),
}

impl Sim {
    /// After the relay links are chosen: a queue for each one whose receivers include users'
    /// clients (whose requests must then run ahead of its exits).
    pub(super) fn prepare_requests_ahead(&mut self) {
        self.requests_ahead.clear();
        for f in 0..self.flows.len() {
            if let Some(link) = self.relay_link_of_client(f as u32) {
                if !self.requests_ahead.iter().any(|q| q.link == link) {
                    let pending = BinaryHeap::new();
                    self.requests_ahead.push(RequestsAhead { link, pending, next_seq: 0, ties: (0, 0) });
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

    /// Schedules flow `f`'s start at `at` (the event scheduled as `scheduled` says): for a
    /// user, its next request, queued with its relay link if it has one.
    pub(super) fn schedule_start(&mut self, at: Time, f: u32, scheduled: Scheduled) {
        self.sched.schedule(at, Event::FlowStart(f));
        if let Some(q) = self.queue_of(f) {
            q.pending.push(Reverse((at, q.next_seq, f)));
            q.next_seq += 1;
            self.flows[f as usize].request_scheduled = PackedScheduled::pack(scheduled);
        }
    }

    /// Runs the queued requests of relay link `l`'s clients that come before the exit at `t`
    /// it is about to hand on (of the packet it just admitted at `admitted`), in order: those
    /// due before `t`, and those due at `t` whose events were scheduled before the packet's
    /// exit event would have been.
    pub(super) fn run_requests_until(&mut self, l: u32, admitted: Time, t: Time) {
        let Some(qi) = self.requests_ahead.iter().position(|q| q.link == l) else { return };
        while let Some(&Reverse((at, _, f))) = self.requests_ahead[qi].pending.peek() {
            if at > t || at >= self.window.end {
                return;
            }
            if at == t {
                let exit = ExitScheduled::of(admitted, self.links[l as usize].exit_ahead_of_relayed());
                let scheduled = self.flows[f as usize].request_scheduled.unpack();
                let q = &mut self.requests_ahead[qi];
                match runs_before_exit(scheduled, exit) {
                    Some(first) => {
                        q.ties.0 += 1;
                        if !first {
                            return;
                        }
                    }
                    None => {
                        q.ties.1 += 1;
                        return;
                    }
                }
            }
            self.requests_ahead[qi].pending.pop();
            self.request(at, f);
        }
    }

    /// Users' requests that fell on the picosecond of an exit of their relay link: those whose
    /// order against it was decided, and those where only the order of other events at that
    /// time decides which ran first with one event per hop (see the module doc). Where the
    /// second is not 0, computing ahead may differ from one event per hop.
    pub fn request_ties(&self) -> (u64, u64) {
        self.requests_ahead.iter().fold((0, 0), |(d, u), q| (d + q.ties.0, u + q.ties.1))
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
