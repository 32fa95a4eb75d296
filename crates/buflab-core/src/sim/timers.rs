//! Lazy timers: one pending event per endpoint timer slot; a stale event is ignored.
//!
//! Read first: [`crate::endpoint`] (an endpoint states a deadline per slot and checks, when the
//! event fires, whether anything is due). This file owns the bookkeeping that keeps exactly
//! one event pending per armed slot, at or before its deadline: a deadline that moves later
//! needs no new event (the pending one fires early, finds nothing due, and re-arms); one that
//! moves earlier gets a new event, and the old one goes stale. It knows nothing of what a
//! slot means.
//!
//! **Sink-side events that find nothing due.** A receiver's delayed-ACK deadline is set by one
//! segment and mostly cleared by the next, so most of its events come at a deadline that has
//! since moved later or gone. Such an event needs only the re-arm that `sync` would make; the
//! endpoint would do nothing ([`crate::endpoint`]'s contract). So `sync` also notes each
//! sink-side deadline beside the pending events (one cache line the loop prefetches), and an
//! event that finds its noted deadline later than now re-arms from the note without touching
//! the endpoint. The note is exact: a sink side's deadlines change only in its own actions,
//! each followed by a `sync` of that side (and a client's `connect`, which `users.rs` syncs
//! too). Every event is scheduled as before, at the same point of the run, so the event order
//! and every result are unchanged. Source-side slots are not noted: a sender's timer event
//! may sample a trace even when nothing is due.

use super::Sim;
use crate::endpoint::{dispatch, Endpoint, Side};
use crate::sched::{Event, MAX_TIMER_SLOTS};
use crate::units::Time;

/// The time of the pending event of each timer slot of one flow (`Time::MAX` for none: no
/// deadline is ever that late), and each sink-side slot's deadline as of its last `sync`
/// (`Time::MAX`: none; zero for source-side slots, which are never skipped): 64 bytes, one
/// cache line, which the loop prefetches before a timer event.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct Pending {
    at: [Time; MAX_TIMER_SLOTS],
    sink_deadline: [Time; MAX_TIMER_SLOTS],
}

impl Pending {
    pub const NONE: Pending =
        Pending { at: [Time::MAX; MAX_TIMER_SLOTS], sink_deadline: [Time::ZERO; MAX_TIMER_SLOTS] };
}

impl Sim {
    /// Schedules events for the timers of flow `f`'s `side` that need one.
    #[inline(always)]
    pub(super) fn sync_timers(&mut self, f: u32, side: Side) {
        let flow = &mut self.flows[f as usize];
        let (pending, sched) = (&mut flow.pending, &mut self.sched);
        dispatch!(&flow.endpoints, e => sync(e, side, pending, |d, slot| sched.schedule(d, Event::Timer(f, slot))));
    }

    /// Forgets the pending events of flow `f`'s `side`: its endpoint started afresh (a server's
    /// new connection), so they are stale, and its new deadlines get events of their own.
    pub(super) fn forget_timers(&mut self, f: u32, side: Side) {
        let flow = &mut self.flows[f as usize];
        for (slot, &s) in flow.endpoints.timers().iter().enumerate() {
            if s == side {
                flow.pending.at[slot] = Time::MAX;
            }
        }
    }

    /// The event of timer `slot` of flow `f` fires at `now`: the endpoint acts if it is the
    /// pending one (not stale) and, on the sink side, if its deadline has come (see the module
    /// doc).
    pub(super) fn on_timer_event(&mut self, now: Time, f: u32, slot: usize) {
        let flow = &mut self.flows[f as usize];
        if !take_event(&mut flow.pending.at[slot], now) {
            return;
        }
        if let Some(rearm) = without_endpoint(&mut flow.pending, slot, now) {
            debug_assert_eq!(
                flow.endpoints.deadline(slot).unwrap_or(Time::MAX),
                flow.pending.sink_deadline[slot],
                "a sink-side deadline changed without a sync"
            );
            if let Some(d) = rearm {
                self.sched.schedule(d, Event::Timer(f, slot as u8));
            }
            return;
        }
        let side = flow.endpoints.timers()[slot];
        let mark = self.out.len();
        let notice = flow.endpoints.on_timer(now, slot, &mut self.out);
        self.after(now, f, side, notice, mark);
    }

    /// Fires, in time order, the source-side timers of flow `f` due at or before `t` (ties:
    /// the lower slot first), before it takes a packet at `t`: a source running ahead of the
    /// global clock does at its own pace what their events would have done. A pending event
    /// for a timer fired here finds nothing due when it comes (lazy timers).
    pub(super) fn fire_due_timers(&mut self, t: Time, f: u32, mark: usize) {
        loop {
            let endpoints = &mut self.flows[f as usize].endpoints;
            let Some((d, slot)) = dispatch!(&*endpoints, e => next_due(e, Side::Source, t)) else { return };
            let notice = endpoints.on_timer(d, slot, &mut self.out);
            if notice.has(crate::endpoint::Notice::TRACE) {
                self.trace(d, f);
            }
            self.release(d, f, mark);
        }
    }
}

/// Arms each timer of `e` on `side` whose deadline needs an event: `schedule(deadline, slot)`.
#[inline(always)]
fn sync<E: Endpoint>(e: &E, side: Side, pending: &mut Pending, mut schedule: impl FnMut(Time, u8)) {
    for (slot, &s) in E::TIMERS.iter().enumerate() {
        if s == side {
            let deadline = e.deadline(slot);
            if side == Side::Sink {
                pending.sink_deadline[slot] = deadline.unwrap_or(Time::MAX);
            }
            if let Some(d) = arm(deadline, &mut pending.at[slot]) {
                schedule(d, slot as u8);
            }
        }
    }
}

/// The earliest timer of `e` on `side` due at or before `t`, and its slot (ties: the lower
/// slot).
#[inline(always)]
fn next_due<E: Endpoint>(e: &E, side: Side, t: Time) -> Option<(Time, usize)> {
    let mut due: Option<(Time, usize)> = None;
    for (slot, &s) in E::TIMERS.iter().enumerate() {
        if s != side {
            continue;
        }
        if let Some(d) = e.deadline(slot).filter(|&d| d <= t) {
            if due.is_none_or(|(earliest, _)| d < earliest) {
                due = Some((d, slot));
            }
        }
    }
    due
}

/// The current event of timer `slot` fires at `now`: if the slot is on the sink side and its
/// deadline as noted by the last `sync` has not come, the endpoint would do nothing, and all
/// the event needs is the re-arm `sync` would make of that deadline (the side's other slots
/// keep their events, at or before their deadlines): returns it, the time of the event to
/// schedule if any. None: the endpoint must act.
#[inline]
fn without_endpoint(pending: &mut Pending, slot: usize, now: Time) -> Option<Option<Time>> {
    let noted = pending.sink_deadline[slot];
    (noted > now).then(|| arm((noted < Time::MAX).then_some(noted), &mut pending.at[slot]))
}

/// A lazy timer's deadline wants an event at `deadline` unless one is pending at or before it
/// (that one will re-check and re-arm): returns the time to schedule, and records it.
#[inline]
fn arm(deadline: Option<Time>, event_at: &mut Time) -> Option<Time> {
    let d = deadline?;
    (*event_at > d).then(|| {
        *event_at = d;
        d
    })
}

/// Whether a lazy timer's event at `now` is the pending one (and no longer pending); false for
/// a stale event, superseded by an earlier re-arm.
#[inline]
fn take_event(event_at: &mut Time, now: Time) -> bool {
    let current = *event_at == now;
    if current {
        *event_at = Time::MAX;
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_gets_one_event_until_it_moves_earlier() {
        let mut at = Time::MAX;
        assert_eq!(arm(None, &mut at), None, "no deadline, no event");
        assert_eq!(arm(Some(Time(50)), &mut at), Some(Time(50)));
        // Later deadlines ride on the pending event, which re-checks when it fires.
        assert_eq!(arm(Some(Time(80)), &mut at), None);
        assert_eq!(arm(Some(Time(50)), &mut at), None);
        // An earlier one needs its own event; the one at 50 goes stale.
        assert_eq!(arm(Some(Time(20)), &mut at), Some(Time(20)));
        assert!(!take_event(&mut at, Time(50)), "the stale event is ignored");
        assert!(take_event(&mut at, Time(20)));
        assert_eq!(at, Time::MAX, "nothing pending after it fired");
        assert_eq!(arm(Some(Time(80)), &mut at), Some(Time(80)), "re-armed after firing");
    }

    #[test]
    fn a_sink_event_before_its_noted_deadline_only_re_arms() {
        // Slot 2 (sink) noted a deadline of 80 when its event at 50 was pending; the event
        // fires: the endpoint is not needed, and the event at 80 is what `sync` would schedule.
        let mut p = Pending::NONE;
        p.at[2] = Time(50);
        p.sink_deadline[2] = Time(80);
        assert!(take_event(&mut p.at[2], Time(50)));
        assert_eq!(without_endpoint(&mut p, 2, Time(50)), Some(Some(Time(80))));
        assert_eq!(p.at[2], Time(80), "the new event is the pending one");
        // Its deadline gone (the held ACK went with the next segment): nothing to re-arm.
        p.sink_deadline[2] = Time::MAX;
        assert!(take_event(&mut p.at[2], Time(80)));
        assert_eq!(without_endpoint(&mut p, 2, Time(80)), Some(None));
        assert_eq!(p.at[2], Time::MAX);
        // A deadline that has come, and any source-side slot (noted zero), need the endpoint.
        p.sink_deadline[2] = Time(90);
        assert_eq!(without_endpoint(&mut p, 2, Time(90)), None);
        assert_eq!(without_endpoint(&mut p, 0, Time(90)), None);
    }
}
