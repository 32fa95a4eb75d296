//! Driving the live auto-sizer: its one pending event, and applying the limit it decides.
//!
//! Read first: [`crate::autosize`] (the search itself, which never sees the simulator). This
//! file owns when the auto-sizer steps and how its answer reaches its link.

use super::Sim;
use crate::autosize::AutoSizer;
use crate::sched::Event;
use crate::units::{BufferLimit, Time};

impl Sim {
    /// Schedules the auto-sizer's first step, if the scenario has one.
    pub(super) fn start_autosize(&mut self) {
        if let Some(a) = &self.autosize {
            self.sched.schedule(a.next_at(), Event::Autosize);
        }
    }

    /// The auto-sizer's event: a step, the new limit on its link, and the next event.
    pub(super) fn on_autosize(&mut self, now: Time) {
        // Lazy: the event of an auto-sizer stopped, or started afresh by a timed change, is
        // stale (the one the scenario starts always finds its own time).
        if self.autosize.as_ref().is_none_or(|a| !a.running() || a.next_at() != now) {
            return;
        }
        if let Some(limit) = self.autosize_tick(now) {
            let a = self.autosize.as_ref().expect("an Autosize event comes from the auto-sizer");
            self.links[a.link as usize].set_limit(BufferLimit::Packets(limit));
        }
        let next = self.autosize.as_ref().map(AutoSizer::next_at);
        if let Some(next) = next.filter(|&t| t < self.window.end) {
            self.sched.schedule(next, Event::Autosize);
        }
    }

    /// An auto-sizer interval that ends exactly with the run is measured too (its new limit
    /// would apply to no packet, so it is not set).
    pub(super) fn finish_autosize(&mut self, end: Time) {
        if self.autosize.as_ref().is_some_and(|a| a.running() && a.next_at() == end) {
            self.autosize_tick(end);
        }
    }

    /// The auto-sizer's step at `now`: it reads its link's running totals and returns the
    /// limit for the next interval (None for the first event, which only takes the baseline).
    fn autosize_tick(&mut self, now: Time) -> Option<u64> {
        let a = self.autosize.as_mut()?;
        let totals = self.links[a.link as usize]
            .running_totals(now, &mut self.sched, a.link)
            .expect("the auto-sized link is monitored");
        a.tick(now, totals)
    }
}
