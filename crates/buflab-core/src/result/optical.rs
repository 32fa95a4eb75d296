//! The optical tables: one row per link whose queue is an optical FIFO (`optical`), and one
//! per delay line of each (`optical_lines`).
//!
//! Read first: [`super::table`] (how a table is described) and the `buflab-queue` crate's
//! `optical_fifo` (what the discipline counts, and how a link's requests become slots). This
//! file owns the two tables' columns and reading their rows from the links at the end of a
//! run; the hardware's arithmetic (km of fiber) is here, the construction's in the model.

use super::table::table;
use crate::queue::{OpticalReport, FIBER_KM_PER_S};
use crate::sim::Sim;
use crate::topology::MonitoredLink;

/// One optical FIFO over the measured window; each field is the column of the same name.
#[derive(Clone, Debug, PartialEq)]
pub struct OpticalRow {
    pub link: String,
    pub n: u64,
    pub k: u64,
    pub buffer_pkts: u64,
    pub lines: u64,
    pub delay_lines: u64,
    pub waiting_lines: u64,
    pub fiber_slots: u64,
    pub fiber_km: f64,
    pub slot_s: f64,
    pub slot_bytes: u64,
    pub arrivals: u64,
    pub cut_through: u64,
    pub drops: u64,
    pub departures: u64,
    pub slots: u64,
    pub extra_slots: u64,
    pub padded: u64,
    pub passes_mean: f64,
    pub passes_max: u64,
    pub recirculations_mean: f64,
    pub recirculations_max: u64,
    pub from_waiting: u64,
    pub reconfigurations_per_slot: f64,
    pub reconfigurations_max: u64,
    pub waiting_max_pkts: u64,
    pub violations: u64,
    pub unlike_fifo: u64,
}

table!(OpticalRow, "optical",
    "One row per link whose queue is `optical_fifo` (thesis ch. 6), over the measured time: the \
     fiber it is built of and what the fiber did, driven by the link's own arrivals and \
     service starts. Slots are packet times: one per service the link starts from the fiber, \
     and one more for each arrival beyond the first in a packet time (the chapter's buffer \
     takes one arrival per slot). Empty without one.",
{
    link: "", "The link: `bottleneck`, `hop1`, ….", |r| r.link.clone();
    n: "", "N: the buffer holds N − 1 packets.", |r| r.n;
    k: "", "Thm 6.2's K (`optical_k`; 1: Thm 6.1's construction).", |r| r.k;
    buffer_pkts: "pkt", "N − 1.", |r| r.buffer_pkts;
    lines: "", "Delay lines, one 2×2 switch each: 2(log N + K − log K) − 3 (Thm 6.2).", |r| r.lines;
    delay_lines: "", "Of them, the delay lines D that hold the queue.", |r| r.delay_lines;
    waiting_lines: "", "Of them, the lines of the waiting line W (Algorithm B).", |r| r.waiting_lines;
    fiber_slots: "",
        "Fiber of all lines, in packet times: N − 1 + (N − 2K)/(2K) (Thm 6.2; 1.5N − 2 at K = 1).",
        |r| r.fiber_slots;
    fiber_km: "",
        "The same in km of standard single-mode fiber at the link's rate (light at c / 1.4682, \
         SMF-28's group index at 1550 nm).",
        |r| r.fiber_km;
    slot_s: "s", "A slot: one packet time of the largest packet crossing the link, at its rate.", |r| r.slot_s;
    slot_bytes: "B", "The packet a slot holds (the largest crossing the link).", |r| r.slot_bytes;
    arrivals: "pkt", "Packets that reached the link.", |r| r.arrivals;
    cut_through: "pkt",
        "Of them, packets that found the line idle and nothing held: straight to the line, never in the fiber.",
        |r| r.cut_through;
    drops: "pkt", "Arrivals dropped: the fiber held N − 1 packets (or the link's limit, if lowered, refused them).",
        |r| r.drops;
    departures: "pkt", "Packets sent from the fiber to the line.", |r| r.departures;
    slots: "", "Slots the fiber went through.", |r| r.slots;
    extra_slots: "",
        "Of them, slots for arrivals beyond the first in a packet time: the fiber ran this many \
         slots ahead of the link (0 when the link never gets two arrivals in a packet time).",
        |r| r.extra_slots;
    padded: "pkt", "Packets shorter than the slot, padded to it (`optical_pad`).", |r| r.padded;
    passes_mean: "",
        "Mean delay-line traversals of a packet sent from the fiber: each is one more pass \
         through a 2×2 switch, the attenuation the chapter counts; NaN without one.",
        |r| r.passes_mean;
    passes_max: "", "The most traversals of one packet (the power budget's worst case).", |r| r.passes_max;
    recirculations_mean: "",
        "Mean traversals of the line a packet was already in (its head sent round again); NaN \
         without a packet sent.",
        |r| r.recirculations_mean;
    recirculations_max: "", "The most recirculations of one packet.", |r| r.recirculations_max;
    from_waiting: "pkt",
        "Packets sent from the waiting line's last line: their order reached one in the slot \
         they were due out of W.",
        |r| r.from_waiting;
    reconfigurations_per_slot: "",
        "Switches that changed state (crossed ↔ parallel) per slot, on average; a switch whose \
         line does nothing keeps its state; NaN without a slot.",
        |r| r.reconfigurations_per_slot;
    reconfigurations_max: "", "The most switch changes in one slot.", |r| r.reconfigurations_max;
    waiting_max_pkts: "pkt",
        "The most packets the waiting line held at once; below N/(2K) (Appendix E (i)).",
        |r| r.waiting_max_pkts;
    violations: "",
        "Breaches of Appendix E's properties over the whole run (W full, contention for a \
         line, the packet of order one away from a head, a waiting packet sent back into W's \
         lines): 0, the construction being exact.",
        |r| r.violations;
    unlike_fifo: "",
        "Service starts at which the fiber brought another packet to the output than the one \
         the link's FIFO sends (or none), over the measured time: 0, the construction being exact.",
        |r| r.unlike_fifo;
});

/// One delay line of an optical FIFO over the measured window.
#[derive(Clone, Debug, PartialEq)]
pub struct OpticalLineRow {
    pub link: String,
    pub line: String,
    pub waiting: bool,
    pub length: u64,
    pub occupancy_mean: f64,
    pub occupancy_max: u64,
    pub entries: u64,
    pub recirculations: u64,
}

table!(OpticalLineRow, "optical_lines",
    "One row per delay line of each optical FIFO (the `optical` table's links), over the \
     measured time: D1, D2, … hold the queue, W1, W2, … make the waiting line. Empty without one.",
{
    link: "", "The link: `bottleneck`, `hop1`, ….", |r| r.link.clone();
    line: "", "D1, D2, … (delay lines, by the orders they take), W1, W2, … (the waiting line's).",
        |r| r.line.clone();
    waiting: "", "A line of the waiting line W.", |r| r.waiting;
    length: "pkt", "Its length: the packets it holds back to back (one packet time each).", |r| r.length;
    occupancy_mean: "pkt",
        "Packets in it at the end of a slot, averaged over the measured slots (the fiber's own \
         time: while nothing is held there are no slots, and a burst's extra slots count as \
         many); NaN without a slot.",
        |r| r.occupancy_mean;
    occupancy_max: "pkt", "The most packets in it at once.", |r| r.occupancy_max;
    entries: "pkt", "Packets switched into it from elsewhere (an arrival, the waiting line, another line).",
        |r| r.entries;
    recirculations: "pkt", "Head packets it sent round again.", |r| r.recirculations;
});

/// NaN over 0.
fn mean(sum: u64, count: u64) -> f64 {
    if count == 0 {
        f64::NAN
    } else {
        sum as f64 / count as f64
    }
}

/// The rows of every monitored link that runs an optical FIFO, with a row per line, from
/// `sim` at the end of its measured window.
pub(super) fn optical_rows(sim: &mut Sim, links: &[MonitoredLink]) -> (Vec<OpticalRow>, Vec<OpticalLineRow>) {
    let end = sim.window.end;
    let (mut rows, mut lines) = (Vec::new(), Vec::new());
    for m in links {
        let Some(optical) = sim.links[m.link as usize].optical_mut() else { continue };
        // The services started by the end, which the fiber would hear of at the next arrival.
        optical.settle(end);
        let r = optical.report();
        rows.push(row(&m.name, &r));
        let c = &r.counts;
        let delay = r.layout.delay_lines().iter().map(|&l| (false, l));
        let waiting = r.layout.waiting_lines().iter().map(|&l| (true, l));
        let (mut d, mut w) = (0, 0);
        for (i, (is_waiting, length)) in delay.chain(waiting).enumerate() {
            let number = if is_waiting { &mut w } else { &mut d };
            *number += 1;
            lines.push(OpticalLineRow {
                link: m.name.clone(),
                line: format!("{}{number}", if is_waiting { "W" } else { "D" }),
                waiting: is_waiting,
                length,
                occupancy_mean: mean(c.occupancy_sum[i], c.slots),
                occupancy_max: c.occupancy_max[i],
                entries: c.entries[i],
                recirculations: c.recirculations[i],
            });
        }
    }
    (rows, lines)
}

/// The `optical` row of link `name` from its report.
fn row(name: &str, r: &OpticalReport) -> OpticalRow {
    let l = &r.layout;
    let c = &r.counts;
    let slot_s = r.slot.secs_f64();
    // The fiber's length is its packet times of light: slots × slot time × speed in fiber.
    let fiber_km = l.length() as f64 * slot_s * FIBER_KM_PER_S;
    OpticalRow {
        link: name.to_string(),
        n: l.n(),
        k: l.k(),
        buffer_pkts: l.capacity(),
        lines: l.lines(),
        delay_lines: l.delay_lines().len() as u64,
        waiting_lines: l.waiting_lines().len() as u64,
        fiber_slots: l.length(),
        fiber_km,
        slot_s,
        slot_bytes: r.slot_bytes as u64,
        arrivals: c.arrivals + r.link.cut_through + r.link.limit_drops,
        cut_through: r.link.cut_through,
        drops: c.drops + r.link.limit_drops,
        departures: c.departures,
        slots: c.slots,
        extra_slots: r.link.extra_slots,
        padded: r.link.padded,
        passes_mean: mean(c.passes_sum, c.departures),
        passes_max: c.passes_max,
        recirculations_mean: mean(c.recirculations_sum, c.departures),
        recirculations_max: c.recirculations_max,
        from_waiting: c.from_waiting,
        reconfigurations_per_slot: mean(c.reconfigurations_sum, c.slots),
        reconfigurations_max: c.reconfigurations_max,
        waiting_max_pkts: c.waiting_max,
        violations: r.violations.total(),
        unlike_fifo: r.link.unlike_fifo,
    }
}
