//! Lazy timers: one pending event per endpoint timer slot; a stale event is ignored.
//!
//! Read first: [`crate::endpoint`] (an endpoint states a deadline per slot and checks, when the
//! event fires, whether anything is due). This file owns the bookkeeping that keeps exactly
//! one event pending per armed slot, at or before its deadline: a deadline that moves later
//! needs no new event (the pending one fires early, finds nothing due, and re-arms); one that
//! moves earlier gets a new event, and the old one goes stale. It knows nothing of what a
//! slot means.

use super::Sim;
use crate::endpoint::{dispatch, Endpoint, Side};
use crate::sched::{Event, MAX_TIMER_SLOTS};
use crate::units::Time;

/// The time of the pending event of each timer slot of one flow; `Time::MAX` for none (no
/// deadline is ever that late), which keeps a flow's bookkeeping in 32 bytes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending([Time; MAX_TIMER_SLOTS]);

impl Pending {
    pub const NONE: Pending = Pending([Time::MAX; MAX_TIMER_SLOTS]);
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
                flow.pending.0[slot] = Time::MAX;
            }
        }
    }

    /// The event of timer `slot` of flow `f` fires at `now`: the endpoint acts if it is the
    /// pending one (not stale).
    pub(super) fn on_timer_event(&mut self, now: Time, f: u32, slot: usize) {
        let flow = &mut self.flows[f as usize];
        if !take_event(&mut flow.pending.0[slot], now) {
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
            if let Some(d) = arm(e.deadline(slot), &mut pending.0[slot]) {
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
}
