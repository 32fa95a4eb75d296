//! The bumps table: one row per `[[network.bump]]` entry, its instances' counts summed.
//!
//! Read first: [`super::table`] (how a table is described) and the `buflab-queue` crate's
//! `bump` module (what a bump counts). This file owns the table's columns and reading a row
//! from an entry's instances at the end of a run.

use super::table::table;
use crate::queue::BumpStats;
use crate::scenario::BumpEntry;
use crate::sim::Sim;
use crate::units::{Rate, Time, PS_PER_S};

/// One bump entry over the measured window; each field is the column of the same name.
#[derive(Clone, Debug, PartialEq)]
pub struct BumpRow {
    pub name: String,
    pub at: String,
    pub instances: u64,
    pub rate_bps: u64,
    pub pacer: String,
    pub classes: u64,
    pub arrivals: u64,
    pub drops: u64,
    pub departures: u64,
    pub control: u64,
    pub paced: u64,
    pub paced_joins: u64,
    pub mean_queue_pkts: f64,
    pub max_queue_pkts: u64,
    pub gap_mean_s: f64,
    pub gap_min_s: f64,
    pub gap_max_s: f64,
    pub vq_arrivals: u64,
    pub vq_above_threshold: u64,
    pub vq_overflows: u64,
    pub vq_marks: u64,
    pub vq_drops: u64,
    pub cp_samples: u64,
    pub cp_messages: u64,
    pub cp_mean_feedback: f64,
    pub rp_messages: u64,
}

table!(BumpRow, "bumps",
    "One row per `[[network.bump]]` entry, over the measured time, its instances' counts summed \
     (a bump at `access` has one per flow). Empty without bumps.",
{
    name: "", "The entry's `name`.", |b| b.name.clone();
    at: "", "Where it sits: `access`, `bottleneck`, `hop1`, ….", |b| b.at.clone();
    instances: "", "How many bumps the entry made: one per flow at `access`, else one.", |b| b.instances;
    rate_bps: "bit/s", "Its port's rate (0: unbounded).", |b| b.rate_bps;
    pacer: "", "Its pacer: `none`, `delay`, `token_bucket`, `modified_token_bucket` or `token_thread`.",
        |b| b.pacer.clone();
    classes: "", "Classes seen over the whole run, all instances.", |b| b.classes;
    arrivals: "pkt", "Packets that reached it.", |b| b.arrivals;
    drops: "pkt", "Packets it refused: its virtual queues' drops and its own buffer's.", |b| b.drops;
    departures: "pkt", "Packets it sent.", |b| b.departures;
    control: "pkt", "Control packets (SYN-ACK, pure ACKs) it passed unpaced.", |b| b.control;
    paced: "pkt", "Packets its pacers held: they left later than its port could have sent them.", |b| b.paced;
    paced_joins: "", "With `paced = \"ecn_echo\"`: times a class joined the paced set on an ECN-Echo.",
        |b| b.paced_joins;
    mean_queue_pkts: "pkt", "Time-average packets it held, per instance.", |b| b.mean_queue_pkts;
    max_queue_pkts: "pkt", "The most packets one instance held.", |b| b.max_queue_pkts;
    gap_mean_s: "s",
        "Mean time between consecutive data packets of one class leaving it (the seed's inter-packet \
         time); NaN without two.",
        |b| b.gap_mean_s;
    gap_min_s: "s", "The shortest such gap; NaN without one.", |b| b.gap_min_s;
    gap_max_s: "s", "The longest such gap; NaN without one.", |b| b.gap_max_s;
    vq_arrivals: "pkt", "Packets its virtual queues saw (0 without a `vqueue`).", |b| b.vq_arrivals;
    vq_above_threshold: "pkt", "Packets that took a virtual queue above its threshold.", |b| b.vq_above_threshold;
    vq_overflows: "pkt",
        "Packets that did not fit in a virtual queue's size: the downstream port would have dropped \
         them (the seed's \"buffer overflows\", §7.5).",
        |b| b.vq_overflows;
    vq_marks: "pkt", "Packets a virtual queue marked CE.", |b| b.vq_marks;
    vq_drops: "pkt", "Packets a virtual queue dropped.", |b| b.vq_drops;
    cp_samples: "pkt", "Packets its QCN congestion point sampled (0 without a `congestion_point`).", |b| b.cp_samples;
    cp_messages: "", "QCN messages its congestion point sent (samples with negative feedback).", |b| b.cp_messages;
    cp_mean_feedback: "",
        "Their mean quantized feedback, 1 to 63 (the standard's 6 bits); NaN without a message.",
        |b| b.cp_mean_feedback;
    rp_messages: "", "QCN messages its reaction points heard (`pace_rate = \"qcn\"`).", |b| b.rp_messages;
});

/// The rows of every entry, from its instances in `sim`, at the end of the measured window.
pub(super) fn bump_rows(sim: &mut Sim, entries: &[BumpEntry]) -> Vec<BumpRow> {
    let (end, measured) = (sim.window.end, sim.window.len());
    entries
        .iter()
        .enumerate()
        .map(|(e, entry)| {
            let mut s = BumpStats::default();
            let mut instances = 0u64;
            for site in sim.bumps.iter().filter(|b| b.entry == e as u32) {
                let bump = sim.links[site.link as usize].bump_mut().expect("a bump site runs a bump");
                s.add(&bump.stats(end));
                instances += 1;
            }
            bump_row(entry, &s, instances, measured)
        })
        .collect()
}

/// The row of `entry` whose `instances` counted `s` (summed) over `measured`: the simulator's
/// and the emulator's datapath's (its bumps run the same code) are made here.
pub fn bump_row(entry: &BumpEntry, s: &BumpStats, instances: u64, measured: Time) -> BumpRow {
    let secs = |t: Time| t.ps() as f64 / PS_PER_S as f64;
    let g = s.gaps;
    let pacer = entry.spec.pacer.map_or("none", |(p, _)| p.kind().name());
    BumpRow {
        name: entry.name.clone(),
        at: entry.at.name(),
        instances,
        rate_bps: if entry.rate == Rate::UNBOUNDED { 0 } else { entry.rate.bits_per_s() },
        pacer: pacer.into(),
        classes: s.classes,
        arrivals: s.arrivals,
        drops: s.drops,
        departures: s.departures,
        control: s.control,
        paced: s.paced,
        paced_joins: s.paced_joins,
        mean_queue_pkts: s.mean_queue(measured) / instances.max(1) as f64,
        max_queue_pkts: s.max_queue,
        gap_mean_s: if g.count > 0 { secs(g.sum) / g.count as f64 } else { f64::NAN },
        gap_min_s: if g.count > 0 { secs(g.min) } else { f64::NAN },
        gap_max_s: if g.count > 0 { secs(g.max) } else { f64::NAN },
        vq_arrivals: s.vqueue.arrivals,
        vq_above_threshold: s.vqueue.above_threshold,
        vq_overflows: s.vqueue.overflows,
        vq_marks: s.vqueue.marks,
        vq_drops: s.vqueue.drops,
        cp_samples: s.cp.samples,
        cp_messages: s.cp.messages,
        cp_mean_feedback: if s.cp.messages > 0 {
            s.cp.feedback_sum as f64 / s.cp.messages as f64
        } else {
            f64::NAN
        },
        rp_messages: s.rp_messages,
    }
}
