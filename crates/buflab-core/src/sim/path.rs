//! Moving packets along their routes, by the plan `plan.rs` made, and handing them to their
//! endpoints at the end.
//!
//! Read first: `plan.rs` (what each [`Step`] means and why it is safe). This file owns the
//! per-packet hot path and the conservation counts; it knows endpoints only through
//! [`crate::endpoint`], and hands what they report to `users.rs`.

use super::plan::Step;
use super::Sim;
use crate::endpoint::{Notice, Side};
use crate::link::Outcome;
use crate::packet::{Kind, Packet};
use crate::units::Time;

impl Sim {
    /// The packet at the head of link `l`'s pipe reaches its far end.
    #[inline]
    pub(super) fn on_link_exit(&mut self, now: Time, l: u32) {
        let mut pkt = self.links[l as usize].pop_exit(now, &mut self.sched, l);
        if self.plan.parked_total > 0
            && matches!(self.plan.step(self.routes.index(pkt.route, pkt.hop)), Step::ToAhead(_))
        {
            // Only a packet held back from its sender waits in a link whose step is `ToAhead`.
            self.plan.unpark(l);
        }
        pkt.hop += 1;
        if pkt.hop == self.routes.len(pkt.route) {
            // Only a link that hands its packets to endpoints is worth looking ahead on: the
            // next exits of one that feeds another link (an access link) are few, cold and
            // its own flow's.
            self.prefetch_exits(l);
            self.deliver(now, pkt);
        } else {
            self.forward(now, pkt);
        }
    }

    /// While the packets leaving link `l` reach their endpoints one exit event at a time (a
    /// bottleneck that cannot relay: its receivers delay their ACKs), starts loading what the
    /// coming exits will touch, each a few exits ahead so that the load has time to land
    /// (the link's record of the packet four exits ahead is loaded by every exit, see
    /// `Link::pop_exit`): the flow record of the one three ahead (its packet's record was
    /// prefetched the exit before), and the boxed state of the flow two ahead (whose record
    /// was prefetched the exit before, so reading its pointer does not wait). With a thousand
    /// flows each delivery otherwise waits on a chain of cache misses. A hint only: nothing
    /// changes but the timing.
    #[inline]
    fn prefetch_exits(&self, l: u32) {
        let link = &self.links[l as usize];
        if let Some(f) = link.exit_flow(2) {
            crate::prefetch::prefetch(&self.flows[f as usize]);
        }
        if let Some(f) = link.exit_flow(1) {
            self.flows[f as usize].endpoints.prefetch();
        }
    }

    /// A switch's slot event: the packets that crossed go on to their output links.
    pub(super) fn on_switch_slot(&mut self, now: Time, s: u32) {
        let mut out = std::mem::take(&mut self.crossed);
        if self.switches[s as usize].on_slot(now, &mut out, &mut self.sched, s) {
            for mut pkt in out.drain(..) {
                pkt.hop += 1;
                self.forward(now, pkt);
            }
        }
        self.crossed = out;
    }

    /// Moves `pkt` into the hop it points at, at time `t` (`t` > now only when computing
    /// ahead into a link fed by one FIFO upstream, or for a jittered first hop).
    pub(super) fn forward(&mut self, mut t: Time, mut pkt: Packet) {
        loop {
            match self.plan.step(self.routes.index(pkt.route, pkt.hop)) {
                Step::Loss(i) => {
                    if self.losses[i as usize].drops_next() {
                        self.counts.loss_drops += 1;
                        if self.window.contains(t) {
                            self.loss_drops_window += 1;
                        }
                        return;
                    }
                    pkt.hop += 1;
                }
                Step::Held(l) => {
                    // Only a held link chained into ahead can see an arrival at or after the
                    // end: on the global clock its event would never run.
                    if self.beyond_end(t) {
                        return;
                    }
                    // Drops are counted by the link (it also drops packets it admitted
                    // earlier), and summed at the end of the run; a held link never relays.
                    self.links[l as usize].arrive(t, pkt, &mut self.sched, l);
                    self.after_arrival(l, t);
                    return;
                }
                Step::Queue(l) => {
                    match self.links[l as usize].arrive(t, pkt, &mut self.sched, l) {
                        // Drops are counted by the link, and summed at the end of the run.
                        Outcome::Accepted | Outcome::Dropped => {}
                        Outcome::Relayed(exit, flags) => {
                            pkt.flags = flags; // as admitted: perhaps marked CE
                            pkt.hop += 1;
                            if !self.requests_ahead.is_empty() {
                                self.run_requests_until(l, t, exit);
                            }
                            self.deliver(exit, pkt);
                        }
                    }
                    return;
                }
                Step::Chain(l) => {
                    t = self.links[l as usize].transit(t, pkt.size);
                    pkt.hop += 1;
                }
                Step::Park(l) => {
                    if !self.plan.compute_ahead {
                        self.note_shared_arrival(l, t, &pkt);
                    }
                    let link = &mut self.links[l as usize];
                    let exit = link.transit(t, pkt.size);
                    link.push_exit(exit, pkt, &mut self.sched, l);
                    return;
                }
                Step::ToAhead(l) => {
                    let link = &mut self.links[l as usize];
                    let exit = link.transit(t, pkt.size);
                    // Not to or past a change that closes flows (see `plan.rs`).
                    if self.plan.holds_back(l, exit) {
                        link.push_exit(exit, pkt, &mut self.sched, l);
                        return;
                    }
                    pkt.hop += 1;
                    self.deliver(exit, pkt);
                    return;
                }
                Step::Tap(l) => {
                    self.links[l as usize].on_reverse(t, &pkt);
                    pkt.hop += 1;
                }
                Step::Switch(p) => {
                    let port = self.plan.ports[p as usize];
                    let sw = &mut self.switches[port.switch as usize];
                    sw.arrive(t, pkt, port.input, port.output, &mut self.sched, port.switch);
                    return;
                }
            }
        }
    }

    /// `pkt` reaches its flow's endpoint at `t` (`t` > now when computed ahead: a relay link's
    /// exit, or a source side running ahead). A timer of that side due at or before `t` fires
    /// first, exactly as it would have on the global clock.
    pub(super) fn deliver(&mut self, t: Time, pkt: Packet) {
        if self.beyond_end(t) {
            return;
        }
        self.counts.delivered += 1;
        // One copy of the path per side, so that each knows its side's timers at compile time.
        match pkt.kind.side() {
            Side::Source => self.deliver_to(Side::Source, t, pkt),
            Side::Sink => self.deliver_to(Side::Sink, t, pkt),
        }
    }

    #[inline(always)]
    fn deliver_to(&mut self, side: Side, t: Time, pkt: Packet) {
        let f = pkt.flow;
        let mark = self.out.len();
        if side == Side::Source {
            self.plan.sources_reached = self.plan.sources_reached.max(t);
            self.fire_due_timers(t, f, mark);
        }
        let notice = self.flows[f as usize].endpoints.on_packet(t, pkt, &mut self.out);
        if notice.has(Notice::REQUEST) {
            self.serve(t, f, pkt.conn);
        }
        self.after(t, f, side, notice, mark);
    }

    /// What follows an endpoint's action on `side` at `t`: its timers re-armed, a trace
    /// sample, its packets sent, and a completed transfer reported to its user.
    #[inline(always)]
    pub(super) fn after(&mut self, t: Time, f: u32, side: Side, notice: Notice, mark: usize) {
        self.sync_timers(f, side);
        if notice.has(Notice::TRACE) {
            self.trace(t, f);
        }
        self.release(t, f, mark);
        if notice.has(Notice::COMPLETED) {
            self.transfer_completed(t, f);
        }
    }

    /// A packet computed ahead to reach its endpoint at or after the end of the run stays in
    /// flight, as it would on the global clock, where that event never runs.
    #[inline]
    fn beyond_end(&mut self, t: Time) -> bool {
        let beyond = t >= self.window.end;
        if beyond {
            self.counts.in_flight += 1;
        }
        beyond
    }

    /// Sends the packets an endpoint appended to `out` after `mark`, applying send jitter if
    /// configured. `out` works as a stack: sending may hand an ACK to a sender running ahead,
    /// which appends and releases its own packets above ours before we continue.
    pub(super) fn release(&mut self, now: Time, f: u32, mark: usize) {
        let end = self.out.len();
        if end == mark {
            return;
        }
        self.counts.injected += (end - mark) as u64;
        // One draw for all the data this event released: a host is late in handling the ACK
        // (or timer), then sends what it releases back to back, as Linux sends a GSO packet's
        // segments together.
        let mut late: Option<Time> = None;
        for i in mark..end {
            let flow = &mut self.flows[f as usize];
            let mut t = now;
            // Jitter applies to data only (ACKs leave the receiver at once).
            let data = self.out[i].kind != Kind::Ack;
            if let (Some(j), true) = (flow.jitter.as_deref_mut(), data) {
                let d = *late.get_or_insert_with(|| Time(j.rng.range_u64(0, j.bound.0)));
                t = (now + d).max(j.last_release);
                j.last_release = t;
            }
            // The packet is read where `forward` takes it: a copy held across the branch
            // above was stored and reloaded in overlapping pieces, which stalled every send.
            self.forward(t, self.out[i]);
        }
        self.out.truncate(mark);
    }
}
