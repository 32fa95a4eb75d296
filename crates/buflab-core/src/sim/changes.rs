//! Changing a running simulation: flows added and closed, the settings of flows added from
//! then on, and the live auto-sizer started, re-aimed or stopped.
//!
//! Read first: [`crate::live`] (who applies a change, and when: between two steps of the loop,
//! so at a time every earlier event has run and no later one has). This file owns what a
//! change does to the simulator's tables, keeping the loop's invariants: a new flow is built
//! by the same [`super::FlowMaker`] as the flows built before the run (its own streams, by its
//! id), its routes are planned as open-loop arrivals' are (`plan.rs`), and it starts with a
//! `FlowStart` event like any flow; a closed flow keeps its slot and its lazy timers, which
//! find nothing due once its last segment is acknowledged; the auto-sizer keeps one pending
//! event, and an event of an auto-sizer stopped or started afresh is stale.

use super::Sim;
use crate::autosize::{AutoSizer, Config};
use crate::endpoint::Endpoints;
use crate::sched::Event;
use crate::tcp::cc::CcKind;
use crate::tcp::pacer::Pacing;
use crate::units::{BufferLimit, Rate, Time};

impl Sim {
    /// The access link rate, pacing and congestion control of entry `ti`'s flows added from
    /// now on (None: unchanged).
    pub fn set_new_flows(
        &mut self,
        ti: u32,
        access_rate: Option<Rate>,
        pacing: Option<Pacing>,
        cc: Option<CcKind>,
    ) {
        if let Some(maker) = self.maker.as_mut() {
            maker.set_new_flows(ti, access_rate, pacing, cc);
        }
    }

    /// Adds `n` flows of entry `ti` at `now`: each starts at `now` plus its draw from the
    /// entry's start range. Returns their ids.
    pub fn add_flows(&mut self, now: Time, ti: u32, n: u64) -> Vec<u32> {
        let mut maker = self.maker.take().expect("a network with traffic has a flow maker");
        let ids: Vec<u32> = (0..n).map(|_| maker.add(self, ti, now)).collect();
        self.maker = Some(maker);
        self.plan_new_routes();
        for &f in &ids {
            let start = self.flows[f as usize].info.start;
            if start < self.window.end {
                self.schedule_start(start, f, super::requests::Scheduled::Outside(now));
            }
        }
        // The scenario reader lets flows change only where the plan made before the run stays
        // right with newcomers of the same entry (see `scenario/change.rs`); a relay link's test
        // must still pass with them, or its receivers would see packets out of time.
        assert!(self.relays_still_hold(), "flows added during the run broke a relay link's conditions");
        ids
    }

    /// Closes long-lived flow `f` as its application would: nothing new is sent; what is
    /// outstanding is still delivered, then the connection is done (see `TcpSender::close`).
    pub fn close_flow(&mut self, f: u32) {
        if let Endpoints::Tcp(t) = &mut self.flows[f as usize].endpoints {
            t.sender.close();
        }
    }

    /// Starts the auto-sizer on `link` at `now` with `config` (afresh, if one runs): the link's
    /// limit becomes `config.start`, and its first interval begins now. The steps of an earlier
    /// auto-sizer stay in the table.
    pub fn start_autosizer(&mut self, now: Time, link: u32, config: &Config) {
        let mut a = AutoSizer::new(link, config, now);
        if let Some(old) = self.autosize.take() {
            a.steps = old.steps;
        }
        self.links[link as usize].set_limit(BufferLimit::Packets(config.start));
        if a.next_at() < self.window.end {
            self.sched.schedule(a.next_at(), Event::Autosize);
        }
        self.autosize = Some(a);
    }

    /// Stops the auto-sizer, if one runs: the link keeps its limit; its pending event is stale.
    pub fn stop_autosizer(&mut self) {
        if let Some(a) = self.autosize.as_mut() {
            a.stop();
        }
    }

    /// Whether every relay link still passes its test (see `plan.rs`).
    fn relays_still_hold(&self) -> bool {
        let facts: Vec<_> = self.flows.iter().map(|f| f.endpoints.facts()).collect();
        let mut data = vec![false; self.routes.id_bound()];
        for f in &facts {
            data[f.route as usize] = true;
        }
        (0..self.links.len() as u32)
            .filter(|&l| self.links[l as usize].is_relay())
            .all(|l| self.can_relay(l, &facts, &data))
    }
}
