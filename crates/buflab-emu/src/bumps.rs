//! Bumps in the wire in the datapath: each `[[network.bump]]` entry of the scenario built as
//! links of the pipeline, run by the `buflab-queue` bump the simulator runs, placed where the
//! simulator places them (`buflab-core`'s `topology/bumps.rs`).
//!
//! Read first: [`crate::pipeline`] (links, routes, notices) and the `buflab-queue` crate's
//! `bump` module (what one does). Owns building the instances, putting them on the routes,
//! the ways of QCN messages and ACKs to them, and reading their counts into the simulator's
//! `bumps` and `rates` rows; must not know sockets or clocks.
//!
//! - **access**: one instance per flow, right after its access link and its propagation delay
//!   (the simulator's access link carries the delay before the bump). A bump that paces on
//!   ECN-Echo hears its flow's ACKs as they come back into the datapath, before their delay
//!   line, where the simulator's tap sees them (before the reverse access link).
//! - **bottleneck**: one instance in front of the bottleneck, on every route that reaches it.
//!
//! A congestion point's messages reach the reaction point of the sampled frame's flow (the
//! last bump before the congestion point on its route that has one) after the delay the
//! simulator gives them: the flow's one-way delay from its source up to the congestion point,
//! its access link's share (half its RTT less the bottleneck's delay) and the latencies of the
//! bumps before it. The loop a message closes (reaction point → congestion point → reaction
//! point) is then the simulator's, as no delay lies between the two here either.
//! Instances are built in the simulator's order (the shared ones, then each flow's in flow
//! order), so a congestion point draws its samples from the simulator's stream.

use buflab_base::rng::{Rng, Stream};
use buflab_base::units::Time;
use buflab_core::result::bumps::bump_row;
use buflab_core::result::rates::rate_row;
use buflab_core::result::{BumpRow, RateRow};
use buflab_core::scenario::{BumpAt, BumpEntry, Scenario};
use buflab_queue::bump::{Bump, BumpStats};
use buflab_queue::qcn::CongestionPoint;

use crate::bottleneck::Bottleneck;
use crate::flows::Flows;
use crate::pipeline::{Notice, Pipeline};
use crate::pool::Frame;

#[derive(Default)]
pub struct Bumps {
    entries: Vec<BumpEntry>,
    /// (entry, link) of every instance, in the order built.
    sites: Vec<(usize, u32)>,
    /// Per flow: its own instances that hear its ACKs, the last crossed first.
    hear_acks: Vec<Vec<u32>>,
}

impl Bumps {
    /// Builds the bumps of `s` in `pipeline` and puts them on the routes of `flows`.
    pub fn build(s: &Scenario, flows: &Flows, pipeline: &mut Pipeline) -> Result<Bumps, String> {
        let entries = s.network.bumps.clone();
        let mut bumps = Bumps { entries, sites: Vec::new(), hear_acks: vec![Vec::new(); flows.len()] };
        if bumps.entries.is_empty() {
            return Ok(bumps);
        }
        let mut shared = Vec::new();
        for e in 0..bumps.entries.len() {
            match bumps.entries[e].at {
                BumpAt::Access => {}
                BumpAt::Bottleneck => shared.push(bumps.instance(pipeline, e, s.seed)),
                BumpAt::Hop(k) => {
                    return Err(format!(
                        "network.bump.{e}.at: got \"hop{}\"; expected access or bottleneck",
                        k + 1
                    ))
                }
            }
        }
        // The shared bumps end every route that reaches the bottleneck.
        for (r, &through) in flows.through_bottleneck.iter().enumerate() {
            if through {
                let end = pipeline.links_of(r as u32).len();
                pipeline.insert(r as u32, end, &shared);
            }
        }
        let access: Vec<usize> =
            (0..bumps.entries.len()).filter(|&e| bumps.entries[e].at == BumpAt::Access).collect();
        if !access.is_empty() && flows.machines_given {
            return Err("network.bump: a bump at \"access\" needs a private access link per flow".into());
        }
        for flow in 0..flows.len() {
            let own: Vec<u32> = access.iter().map(|&e| bumps.instance(pipeline, e, s.seed)).collect();
            let route = flows.route[flow];
            // Each flow's route is its own without machines: its access link, then its bumps.
            pipeline.insert(route, 1, &own);
            for &l in own.iter().rev() {
                if pipeline.link_mut(l).bump_mut().is_some_and(|b| b.hears_acks()) {
                    bumps.hear_acks[flow].push(l);
                }
            }
        }
        // Every bump on a flow's route learns its destination port (its traffic entry, one
        // server per entry, as the simulator's), and its QCN messages' way.
        let there = s.network.hops[0].delay;
        for flow in 0..flows.len() {
            let route = pipeline.links_of(flows.route[flow]).to_vec();
            for &l in &route {
                if let Some(b) = pipeline.link_mut(l).bump_mut() {
                    b.set_port(flow as u32, flows.traffic[flow] as u16);
                }
            }
            let access_delay = Time((flows.rtts[flow].ps() / 2).saturating_sub(there.ps()));
            let (mut delay, mut rp) = (access_delay, None);
            for &l in &route {
                let bump = pipeline.link_mut(l).bump_mut();
                if bump.as_ref().is_some_and(|b| b.has_congestion_point()) {
                    pipeline.congestion_point(l);
                    if let Some(rp) = rp {
                        pipeline.qcn_way(l, flow as u32, rp, delay);
                    }
                }
                if pipeline.link_mut(l).bump_mut().is_some_and(|b| b.is_reaction_point()) {
                    rp = Some(l);
                }
                delay += pipeline.delay(l);
            }
        }
        Ok(bumps)
    }

    /// Builds an instance of entry `e`: a link of the pipeline whose discipline is the bump,
    /// counting nothing until [`Bumps::count_from`].
    fn instance(&mut self, pipeline: &mut Pipeline, e: usize, seed: u64) -> u32 {
        let entry = &self.entries[e];
        let mut bump = Bump::<Frame>::new(entry.spec);
        bump.count_from(Time::MAX);
        if let Some(cp) = entry.congestion_point {
            // The simulator's stream: bumps' sit above the hops', numbered in building order.
            let id = (1 << 32) + self.sites.len() as u64;
            bump.set_congestion_point(CongestionPoint::new(cp, Rng::stream(seed, Stream::Queue, id)));
        }
        let link = Bottleneck::new(entry.rate, entry.buffer, Box::new(bump));
        let l = pipeline.delayed_link(link, entry.delay);
        self.sites.push((e, l));
        l
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// The measured window starts at `t`: the bumps count from then on.
    pub fn count_from(&self, pipeline: &mut Pipeline, t: Time) {
        for &(_, l) in &self.sites {
            pipeline.link_mut(l).bump_mut().expect("a bump's link").count_from(t);
        }
    }

    /// Whether flow `flow`'s ACKs pass a bump that listens to them.
    pub fn hears_acks(&self, flow: usize) -> bool {
        self.hear_acks.get(flow).is_some_and(|b| !b.is_empty())
    }

    /// An ACK of flow `flow` passes its bumps back to the sender at `t`, with ECN-Echo if `ece`.
    pub fn on_ack(&self, pipeline: &mut Pipeline, t: Time, flow: usize, ece: bool) {
        for &l in &self.hear_acks[flow] {
            pipeline.notify(t, l, Notice::Ack { flow: flow as u32, ece });
        }
    }

    /// The `bumps` table's rows: each entry's instances' counts (taken at the end of the
    /// measured window, or at `now`) summed over `measured`, as the simulator's.
    pub fn rows(&self, pipeline: &mut Pipeline, now: Time, measured: Time) -> Vec<BumpRow> {
        let counts = pipeline.bump_counts(now);
        (0..self.entries.len())
            .map(|e| {
                let mut s = BumpStats::default();
                let mut instances = 0;
                for &(_, l) in self.sites.iter().filter(|site| site.0 == e) {
                    let c = counts.iter().find(|c| c.0 == l).expect("every bump counted");
                    s.add(&c.1);
                    instances += 1;
                }
                bump_row(&self.entries[e], &s, instances, measured)
            })
            .collect()
    }

    /// The `rates` table's rows: every reaction point's rate changes up to `end`, their times
    /// from `epoch`, in (time, class) order.
    pub fn rate_rows(&self, pipeline: &mut Pipeline, epoch: Time, end: Time) -> Vec<RateRow> {
        let mut rows = Vec::new();
        for &(e, l) in &self.sites {
            let bump = pipeline.link_mut(l).bump_mut().expect("a bump's link");
            let changes = bump.rate_changes().iter().filter(|c| c.time <= end);
            rows.extend(changes.map(|c| rate_row(&self.entries[e], c, epoch)));
        }
        rows.sort_by_key(|r| (r.time, r.class));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A scenario of `flows` long-lived flows of `rtt` with these bumps, its flows file, and
    /// the pipeline they make.
    fn build(bumps: serde_json::Value, flows: usize, rtt: f64) -> (Pipeline, Flows, Bumps) {
        let s = Scenario::from_value(&json!({
            "duration": "1s", "warmup": "0s",
            "network": {"bottleneck": {"rate": "100Mbps"}, "access": {"rate": "1Gbps"}, "bump": bumps},
            "traffic": [{"kind": "long_lived", "flows": flows}],
        }))
        .expect("a valid scenario");
        let v = json!({
            "rtt_s": vec![rtt; flows], "machine": vec![0; flows], "class": vec![0; flows],
            "cross": vec![false; flows],
            "access": {"rate": "1Gbps", "buffer": "unlimited", "machines": 0, "classes": 1, "nic": "1Gbps"},
        });
        let mut p = Pipeline::default();
        let f = Flows::read(&v, &mut p).expect("a valid flows file");
        let b = Bumps::build(&s, &f, &mut p).expect("bumps the datapath runs");
        (p, f, b)
    }

    fn data(slot: u32, flow: u32, len: u32) -> Frame {
        Frame { slot, len, flow, seq: slot, data: true, ..Frame::default() }
    }

    #[test]
    fn a_token_bucket_at_access_spaces_a_burst_by_its_rate() {
        // Five frames of 1,250 B at once through a 1 Gb/s access link (10 µs each) into a
        // bucket of one frame at 10 Mb/s (1 ms a frame), on a port at the access rate, then an
        // unbounded monitor in front of the bottleneck (1 ps a frame): the first leaves the
        // access link at 10 µs and the bump at 20 µs, each next one 1 ms later.
        let (mut p, f, b) = build(
            json!([
                {"name": "pacer", "pacer": "token_bucket", "pace_rate": "10Mbps", "depth": "1250B"},
                {"name": "monitor", "at": "bottleneck",
                 "vqueue": {"rate": "10Mbps", "size": "2500B", "action": "count"}},
            ]),
            1,
            0.002,
        );
        assert_eq!(p.links_of(f.route[0]).len(), 3, "access link, its bump, the shared bump");
        b.count_from(&mut p, Time::ZERO);
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        for k in 0..5 {
            p.enter(Time::ZERO, data(k, 0, 1250), f.route[0], &mut done, &mut dropped);
        }
        p.run(Time::from_ms(10), &mut done, &mut dropped);
        let times: Vec<u64> = done.iter().map(|(t, _)| t.ps()).collect();
        let us = 1_000_000;
        assert_eq!(times, (0..5).map(|k| 20 * us + k * 1000 * us + 1).collect::<Vec<_>>());
        let rows = b.rows(&mut p, Time::from_ms(10), Time::from_ms(10));
        assert_eq!((rows[0].paced, rows[0].gap_min_s), (4, 1e-3));
        // The monitor's bucket drains at the pacing rate: paced, nothing overflows it.
        assert_eq!((rows[1].vq_arrivals, rows[1].vq_overflows), (5, 0));
        assert!(dropped.is_empty());
    }

    #[test]
    fn a_congestion_points_message_reaches_the_flows_reaction_point_after_its_delay() {
        // A congestion point sampling every frame on a 10 Mb/s port of its own in front of the
        // bottleneck (Q_EQ one frame), the flow's reaction point at access. A burst of four
        // frames builds a queue there: the messages go back, each arriving half the RTT
        // (1 ms; the bottleneck has no delay of its own) after the frame it answers, and cut
        // the reaction point's rate at that time.
        let (mut p, f, b) = build(
            json!([
                {"name": "rp", "pacer": "token_thread", "pace_rate": "qcn", "depth": "3000B"},
                {"name": "cp", "at": "bottleneck", "rate": "10Mbps", "classify": "all",
                 "congestion_point": {"q_eq": "1500B", "sample": 1.0}},
            ]),
            1,
            0.002,
        );
        b.count_from(&mut p, Time::ZERO);
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        for k in 0..4 {
            p.enter(Time::ZERO, data(k, 0, 1500), f.route[0], &mut done, &mut dropped);
        }
        p.run(Time::from_ms(50), &mut done, &mut dropped);
        let rows = b.rows(&mut p, Time::from_ms(50), Time::from_ms(50));
        let (rp, cp) = (&rows[0], &rows[1]);
        assert!(cp.cp_messages > 0, "the queue grew past Q_EQ");
        assert_eq!((p.qcn.sent, p.qcn.unheard, rp.rp_messages), (cp.cp_messages, 0, cp.cp_messages));
        // The first cut: one delay after the arrival at the congestion point that sent it,
        // which is one of the frames' arrivals there (each leaves the reaction point's
        // 1 Gb/s port 12 µs after the last, and the access link 12 µs before it).
        let rates = b.rate_rows(&mut p, Time::ZERO, Time::from_ms(50));
        let first = rates[0].time.ps() - Time::from_ms(1).ps();
        let arrivals: Vec<u64> = (0..4).map(|k| 24_000_000 + 12_000_000 * k).collect();
        assert!(arrivals.contains(&first), "first cut {first} ps after 1 ms; rates {rates:?}");
        assert!(rates[0].rate_bps < 1_000_000_000);
    }

    #[test]
    fn an_ecn_echo_passing_back_puts_the_flow_in_the_paced_set() {
        // A delay pacer at 10 Mb/s that paces on ECN-Echo, hold 5 ms: a burst before any goes
        // at line rate; after an ACK with ECE at 1 ms, the next burst is spaced 1.2 ms apart.
        let (mut p, f, b) = build(
            json!([{"name": "hull", "pacer": "delay", "pace_rate": "10Mbps", "paced": "ecn_echo", "hold": "5ms"}]),
            1,
            0.002,
        );
        assert!(b.hears_acks(0));
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        for k in 0..2 {
            p.enter(Time::ZERO, data(k, 0, 1500), f.route[0], &mut done, &mut dropped);
        }
        b.on_ack(&mut p, Time::from_ms(1), 0, true);
        for k in 2..4 {
            p.enter(Time::from_ms(2), data(k, 0, 1500), f.route[0], &mut done, &mut dropped);
        }
        p.run(Time::from_ms(20), &mut done, &mut dropped);
        let gaps: Vec<u64> = done.windows(2).map(|w| (w[1].0 - w[0].0).ps() / 1_000_000).collect();
        assert_eq!(gaps[0], 12, "unpaced: one 1 Gb/s serialization apart");
        assert_eq!(gaps[2], 1200, "paced at 10 Mb/s");
    }
}
