//! The optical FIFO of fiber delay lines (thesis ch. 6) as a queue discipline: any link of a
//! scenario can buffer in fiber, and report what the fiber did.
//!
//! Read first: the crate doc (the contract; this is an [`Admission`]: it decides at arrivals
//! and the queue stays FIFO), then [`crate::optical`] (the construction and how the chapter is
//! read). Owns the mapping of a link's requests to the model's slots and the discipline's
//! description for scenario files; the rules of the fiber are the model's.
//!
//! **Size.** The link's `buffer`, N − 1 packets with N a power of two (a buffer of another
//! size is refused, naming the nearest two), `optical_k` the trade-off of Thm 6.2.
//!
//! **The link and the fiber side by side.** The link keeps its timetable (each admitted
//! packet's service start, first in first out) and asks at every arrival; the model is driven
//! by the same requests. At an arrival the service starts due by then are the model's
//! departure requests, in order (a service that starts at t comes before an arrival at t);
//! then the arrival is the model's arrival request, and the model decides: its drop is the
//! link's drop. At each departure the packet the fiber brings to the output is compared with
//! the one the link's FIFO starts sending; a difference (there is none: Thm 6.1) would be
//! counted in `unlike_fifo`, and a drop the fiber would not make would change the run, so a
//! run identical to drop-tail's, with `unlike_fifo` = 0, is the end-to-end check. (Driving the
//! link from the fiber instead, as a discipline that holds its packets, gives the same runs,
//! at the cost of an event per service and of the link's computing ahead.)
//!
//! **Slots.** The chapter's slot is a packet time, and its buffer takes at most one arrival
//! and one departure request per slot (§6.2). While packets wait the link starts a service
//! every packet time, so each service start opens a slot (its departure request), and the
//! first arrival that follows joins it. An arrival that finds its packet time's arrival
//! already taken (a link fed by several inputs can bring more than one) gets a slot of its
//! own, an arrival-only slot: the fiber turns one slot further than the wall clock, and
//! `extra_slots` counts how often. An arrival at an idle link with nothing held passes
//! straight through to the line (`cut_through`), as through switches in the parallel state.
//! (A link with a single input at its own rate never queues at all: a buffer fills only when
//! packets come faster than the link sends them, that is, more than one a packet time.)
//!
//! **Sizes.** The chapter's packets are all of one size. A link whose traffic sends several
//! sizes is refused unless `optical_pad` is true; then every packet takes a slot of the
//! largest one's time in the fiber, and the link still sends its own bytes.

use std::collections::VecDeque;

use buflab_base::rng::Rng;
use buflab_base::units::{Rate, Time};

use crate::describe::{BuildAdmission, Described, LinkInfo, PacketSource, Param, ParamError, ParamKind, Value, Values};
use crate::optical::{Arrived, Counts, Layout, OpticalBuffer, Violations, MAX_N};
use crate::{Admission, Arrival, Limit, Verdict};

/// Light's speed in standard single-mode fiber, km/s: c over the group index 1.4682 of
/// Corning SMF-28 at 1550 nm, about 4.9 µs per km. A slot of fiber is a packet time of it.
pub const FIBER_KM_PER_S: f64 = 299_792.458 / 1.4682;

/// The slot the link's requests currently fill.
#[derive(Clone, Copy, Debug)]
struct OpenSlot {
    /// When it began: its service start, or its arrival for an arrival-only slot.
    opened: Time,
    by_departure: bool,
    arrival: bool,
}

/// What the discipline adds to the model's counts, over the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounts {
    /// Arrivals in a packet time whose arrival was taken: slots the fiber ran ahead.
    pub extra_slots: u64,
    /// Arrivals at an idle link with nothing held: straight to the line.
    pub cut_through: u64,
    /// Arrivals refused by the link's buffer limit while the fiber had room (the auto-sizer
    /// lowered it): not requests the fiber saw.
    pub limit_drops: u64,
    /// Packets shorter than the slot, padded (`optical_pad`).
    pub padded: u64,
    /// Service starts at which the fiber brought another packet to the output than the
    /// link's FIFO sends (or none).
    pub unlike_fifo: u64,
}

/// Everything a run's results need of one optical FIFO.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub layout: Layout,
    /// The slot: a packet time of the largest packet at the link's rate.
    pub slot: Time,
    pub slot_bytes: u32,
    pub counts: Counts,
    pub link: LinkCounts,
    /// Appendix E's properties, over the whole run.
    pub violations: Violations,
}

/// An optical FIFO beside a link's timetable (see the module doc).
pub struct OpticalFifo {
    model: OpticalBuffer,
    /// The service starts of the admitted packets the model holds, in order: the link's
    /// timetable, mirrored.
    starts: VecDeque<Time>,
    /// The seq of the packet the link's FIFO sends next (packets are numbered as admitted).
    fifo_next: u64,
    open: Option<OpenSlot>,
    slot: Time,
    slot_bytes: u32,
    count_from: Time,
    counting: bool,
    counts: LinkCounts,
}

impl OpticalFifo {
    /// An optical FIFO of `layout` for a link of `rate` whose slot holds `slot_bytes`.
    pub fn new(layout: Layout, rate: Rate, slot_bytes: u32) -> OpticalFifo {
        OpticalFifo {
            model: OpticalBuffer::new(layout),
            starts: VecDeque::new(),
            fifo_next: 0,
            open: None,
            slot: Time(rate.serialization(slot_bytes as u64).0.max(1)),
            slot_bytes,
            count_from: Time::ZERO,
            counting: true,
            counts: LinkCounts::default(),
        }
    }

    /// Counts only what happens from `t` on (the measured window's start).
    pub fn count_from(&mut self, t: Time) {
        self.count_from = t;
        self.set_counting(t == Time::ZERO);
    }

    fn set_counting(&mut self, on: bool) {
        self.counting = on;
        self.model.set_counting(on);
    }

    /// Turns counting on at the first request of the measured window.
    fn tick(&mut self, now: Time) {
        if !self.counting && now >= self.count_from {
            self.set_counting(true);
        }
    }

    /// Ends the open slot, if any: the fiber's moves.
    fn close(&mut self) {
        if self.open.take().is_some() {
            self.model.end_slot();
        }
    }

    /// The service starts due by `now`, in order: each opens a slot with its departure
    /// request, and the packet the fiber sends is compared with the link's.
    pub fn settle(&mut self, now: Time) {
        while let Some(&start) = self.starts.front() {
            if start > now {
                break;
            }
            self.starts.pop_front();
            self.tick(start);
            self.close();
            self.open = Some(OpenSlot { opened: start, by_departure: true, arrival: false });
            let sent = self.model.depart();
            if sent != Some(self.fifo_next) && self.counting {
                self.counts.unlike_fifo += 1;
            }
            self.fifo_next += 1;
        }
    }

    /// The slot an arrival at `now` joins: the open one if it was opened by a service start
    /// in this packet time and has no arrival yet, else a new arrival-only slot.
    fn slot_for_arrival(&mut self, now: Time) {
        if let Some(o) = self.open {
            let same_time = now < o.opened + self.slot;
            if o.by_departure && !o.arrival && same_time {
                self.open = Some(OpenSlot { arrival: true, ..o });
                return;
            }
            if same_time && self.counting {
                self.counts.extra_slots += 1;
            }
            self.close();
        }
        self.open = Some(OpenSlot { opened: now, by_departure: false, arrival: true });
    }

    /// What it did, for a run's results (after [`OpticalFifo::settle`] to the end of the
    /// run).
    pub fn report(&self) -> Report {
        Report {
            layout: self.model.layout().clone(),
            slot: self.slot,
            slot_bytes: self.slot_bytes,
            counts: self.model.counts(),
            link: self.counts,
            violations: self.model.violations(),
        }
    }
}

impl Admission for OpticalFifo {
    fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        self.settle(a.now);
        self.tick(a.now);
        if a.busy_until <= a.now && self.model.is_empty() {
            if self.counting {
                self.counts.cut_through += 1;
            }
            return Verdict::Admit;
        }
        if a.full && !self.model.is_full() {
            if self.counting {
                self.counts.limit_drops += 1;
            }
            return Verdict::Drop;
        }
        self.slot_for_arrival(a.now);
        match self.model.arrive() {
            Arrived::Admitted(_) => {
                if self.counting && a.size < self.slot_bytes {
                    self.counts.padded += 1;
                }
                // The link's timetable: it starts serving this packet when the serializer
                // frees up from the packets before it.
                self.starts.push_back(a.busy_until.max(a.now));
                Verdict::Admit
            }
            Arrived::Dropped => Verdict::Drop,
        }
    }
}

/// The description of the optical FIFO for scenario files (`queue = "optical_fifo"`).
pub struct OpticalFifoKind;

/// N − 1 packets of buffer with N a power of two: its N, if `limit` is one.
fn n_of(limit: Limit) -> Option<u64> {
    match limit {
        Limit::Packets(b) if (b + 1).is_power_of_two() && (2..=MAX_N).contains(&(b + 1)) => Some(b + 1),
        _ => None,
    }
}

impl Described for OpticalFifoKind {
    const NAME: &'static str = "optical_fifo";
    const LABEL: &'static str = "optical FIFO";
    const DOC: &'static str = "an all-optical FIFO of fiber delay lines with 2×2 switches (thesis ch. 6, Algorithms A and B): `buffer` must be N − 1 packets with N a power of two (15, 31, 63, …), held in 2·log N − 1 loops (Thm 6.1; `optical_k` trades lines for length, Thm 6.2). It drops and sends exactly as drop-tail of the same buffer, and reports the fiber's per-line occupancy, passes and recirculations per packet and switch changes per slot in the `optical` and `optical_lines` tables.";
    const PARAMS: &'static [Param] = &[
        Param { key: "optical_k", kind: ParamKind::Count, ty: "integer (a power of two)", default: "1", doc: "Optical FIFO: Thm 6.2's K. 1 is Thm 6.1's construction: delay lines of 1, 2, 4, …, N/2 packets and a waiting line of lines 1, 2, …, N/4, 2·log N − 1 lines (one 2×2 switch each) and 1.5N − 2 packet times of fiber. K = 2^k halves the longest line k times: 2(log N + K − log K) − 3 lines and N − 1 + (N − 2K)/(2K) packet times of fiber (K = N/2: N − 1 loops of one packet, Fig 6.1(b)). A power of two from 1 to N/2." },
        Param { key: "optical_pad", kind: ParamKind::Bool, ty: "boolean", default: "false", doc: "Optical FIFO: the chapter's slots hold packets of one size (§6.2), so a link whose traffic sends several sizes (entries with different `packet`, or downloads, whose last segments are shorter and whose SYN-ACKs are 40 B) is refused unless this is true; then each packet fills a slot of the largest packet's time in the fiber (padding, counted in `optical.padded`), and the link still sends its own bytes." },
    ];

    /// The buffer is N − 1 packets, N a power of two from 2 to 2^20; K a power of two from 1
    /// to N/2.
    fn check(v: &Values, limit: Limit) -> Result<(), ParamError> {
        let Some(n) = n_of(limit) else {
            let (got, expected) = match limit {
                Limit::Packets(b) if b >= MAX_N => (
                    b as f64,
                    format!("at most {}pkt for queue = \"optical_fifo\" (N = 2^20)", MAX_N - 1),
                ),
                Limit::Packets(b) => {
                    let below = (b + 2).next_power_of_two() / 2;
                    let nearest = if below >= 2 {
                        format!("{}pkt or {}pkt", below - 1, below * 2 - 1)
                    } else {
                        "1pkt, 3pkt or 7pkt".to_string()
                    };
                    (
                        b as f64,
                        format!(
                            "N − 1 packets with N a power of two for queue = \"optical_fifo\" (thesis \
                             §6.3): {nearest}, the nearest"
                        ),
                    )
                }
                Limit::Bytes(b) => (
                    b as f64,
                    "a buffer in packets for queue = \"optical_fifo\": N − 1 with N a power of two \
                     (15pkt, 31pkt, 63pkt, …)"
                        .to_string(),
                ),
                Limit::Unlimited => (
                    f64::INFINITY,
                    "a buffer in packets for queue = \"optical_fifo\": N − 1 with N a power of two \
                     (15pkt, 31pkt, 63pkt, …)"
                        .to_string(),
                ),
            };
            return Err(ParamError { key: "buffer", got: Value::Number(got), expected });
        };
        let k = v.number("optical_k");
        if Layout::new(n, k as u64).is_err() || k.fract() != 0.0 {
            let expected =
                format!("a power of two from 1 to N/2 = {} (thesis Thm 6.2; buffer = N − 1 = {}pkt)", n / 2, n - 1);
            return Err(ParamError { key: "optical_k", got: Value::Number(k), expected });
        }
        Ok(())
    }

    /// Packets of one size through the link, unless padded.
    fn check_traffic(v: &Values, sources: &[PacketSource]) -> Result<(), ParamError> {
        if v.boolean("optical_pad") {
            return Ok(());
        }
        let why = if let Some(s) = sources.iter().find(|s| !s.uniform) {
            format!(
                "traffic.{}'s downloads end in shorter segments and open with 40-B SYN-ACKs",
                s.entry
            )
        } else if let Some(w) = sources.windows(2).find(|w| w[0].size != w[1].size) {
            format!(
                "traffic.{} sends {}-B packets through this link and traffic.{} {}-B ones",
                w[0].entry, w[0].size, w[1].entry, w[1].size
            )
        } else {
            return Ok(());
        };
        let expected = format!(
            "true, or traffic of one packet size: {why}, and an optical FIFO's slots hold packets \
             of one size (thesis §6.2)"
        );
        Err(ParamError { key: "optical_pad", got: Value::Bool(false), expected })
    }
}

impl BuildAdmission for OpticalFifoKind {
    fn build(values: &Values, link: LinkInfo, _rng: Rng) -> Box<dyn Admission> {
        let n = n_of(link.limit).expect("the buffer was checked");
        let layout = Layout::new(n, values.number("optical_k") as u64).expect("K was checked");
        Box::new(OpticalFifo::new(layout, link.rate, link.largest.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drop_tail::DropTail;
    use buflab_base::rng::Stream;

    /// 1000 B at 8 Mb/s: a packet time of exactly 1 ms.
    const RATE: Rate = Rate(8_000_000);
    const T: u64 = 1_000_000_000;

    fn optical(n: u64) -> OpticalFifo {
        OpticalFifo::new(Layout::new(n, 1).unwrap(), RATE, 1000)
    }

    /// A link's timetable kept by hand (as `Link::arrive` keeps it): 1000-B packets arriving
    /// at the given times (ps), each asked of the admission with the packets waiting and the
    /// serializer's end; returns the ids dropped and the last service's end.
    fn drive(q: &mut dyn Admission, arrivals: &[u64], limit: u64) -> (Vec<u32>, u64) {
        let mut starts: VecDeque<u64> = VecDeque::new();
        let (mut busy_until, mut dropped) = (0u64, Vec::new());
        for (id, &t) in arrivals.iter().enumerate() {
            while starts.front().is_some_and(|&s| s <= t) {
                starts.pop_front();
            }
            let waiting = starts.len() as u64;
            let a = Arrival::new(Time(t), waiting, waiting * 1000, Time(busy_until), Limit::Packets(limit), 1000, false);
            if q.on_arrival(&a) == Verdict::Drop {
                dropped.push(id as u32);
                continue;
            }
            let start = t.max(busy_until);
            busy_until = start + T;
            if start > t {
                starts.push_back(start);
            }
        }
        (dropped, busy_until)
    }

    /// Bursts of simultaneous arrivals (several a packet time, as a link with many inputs
    /// brings them) and gaps that let the link go idle: the optical FIFO drops exactly what
    /// drop-tail of N − 1 drops, the fiber sends each packet the link's FIFO sends, and the
    /// slots the fiber ran ahead are counted.
    #[test]
    fn a_link_s_requests_get_exactly_drop_tail_s_answers() {
        let mut rng = Rng::stream(5, Stream::Requests, 0);
        let mut arrivals = Vec::new();
        let mut t = 0u64;
        for _ in 0..5000 {
            t += match rng.range_u64(0, 9) {
                0..=4 => 0,                   // together with the previous one
                5..=8 => rng.range_u64(1, T), // within a packet time
                _ => rng.range_u64(T, 20 * T), // a gap
            };
            arrivals.push(t);
        }
        let mut o = optical(16);
        let (dropped_o, end) = drive(&mut o, &arrivals, 15);
        let (dropped_t, _) = drive(&mut DropTail, &arrivals, 15);
        assert_eq!(dropped_o, dropped_t);
        assert!(dropped_o.len() > 100, "{} dropped", dropped_o.len());
        o.settle(Time(end));
        let r = o.report();
        assert_eq!(r.violations, Violations::default());
        assert_eq!(r.link.unlike_fifo, 0);
        assert!(r.link.extra_slots > 100 && r.link.cut_through > 10, "{:?}", r.link);
        assert_eq!(r.counts.drops, dropped_o.len() as u64, "every drop is the fiber's");
        assert_eq!(r.counts.departures + r.link.cut_through + r.counts.drops, arrivals.len() as u64);
    }

    /// The slots, counted by hand: three packets arrive together every three packet times.
    /// The first finds the line idle and passes straight through; the second opens an
    /// arrival-only slot; the third finds that packet time's arrival taken and gets a slot of
    /// its own (an extra slot); each of the two then leaves at a service start, which opens a
    /// slot. So per triple: 1 cut through, 1 extra slot, 2 departures and 4 slots (the last
    /// slot of the run is still open: 4M − 1 ended).
    #[test]
    fn slots_are_service_starts_and_arrivals_beyond_one_a_packet_time_get_their_own() {
        let m = 50u64;
        let arrivals: Vec<u64> = (0..m).flat_map(|i| [3 * i * T; 3]).collect();
        let mut o = optical(16);
        let (dropped, end) = drive(&mut o, &arrivals, 15);
        assert!(dropped.is_empty());
        o.settle(Time(end));
        let r = o.report();
        assert_eq!((r.link.cut_through, r.link.extra_slots), (m, m));
        assert_eq!((r.counts.departures, r.counts.arrivals, r.counts.slots), (2 * m, 2 * m, 4 * m - 1));
        assert_eq!((r.violations, r.link.unlike_fifo), (Violations::default(), 0));
    }

    /// A discipline's keys: N − 1 from the buffer, K a power of two up to N/2, one line each.
    #[test]
    fn bad_sizes_and_k_name_the_key_and_what_was_expected() {
        let values = |k: f64| {
            let mut v = Values::new();
            v.set("optical_k", Value::Number(k), true);
            v.set("optical_pad", Value::Bool(false), false);
            v
        };
        assert_eq!(OpticalFifoKind::check(&values(1.0), Limit::Packets(15)), Ok(()));
        let e = OpticalFifoKind::check(&values(1.0), Limit::Packets(20)).unwrap_err();
        assert_eq!(e.key, "buffer");
        assert_eq!(
            e.expected,
            "N − 1 packets with N a power of two for queue = \"optical_fifo\" (thesis §6.3): 15pkt or 31pkt, the nearest"
        );
        let e = OpticalFifoKind::check(&values(1.0), Limit::Packets(0)).unwrap_err();
        assert!(e.expected.contains("1pkt, 3pkt or 7pkt"), "{}", e.expected);
        let e = OpticalFifoKind::check(&values(1.0), Limit::Bytes(15_000)).unwrap_err();
        assert!(e.expected.starts_with("a buffer in packets"), "{}", e.expected);
        let e = OpticalFifoKind::check(&values(3.0), Limit::Packets(15)).unwrap_err();
        assert_eq!((e.key, e.got), ("optical_k", Value::Number(3.0)));
        assert_eq!(e.expected, "a power of two from 1 to N/2 = 8 (thesis Thm 6.2; buffer = N − 1 = 15pkt)");
        assert!(OpticalFifoKind::check(&values(16.0), Limit::Packets(15)).is_err());
        assert!(OpticalFifoKind::check(&values(8.0), Limit::Packets(15)).is_ok());
    }

    #[test]
    fn several_packet_sizes_are_refused_unless_padded() {
        let mut v = Values::new();
        v.set("optical_k", Value::Number(1.0), false);
        v.set("optical_pad", Value::Bool(false), false);
        let one = [PacketSource { entry: 0, size: 1000, uniform: true }, PacketSource { entry: 2, size: 1000, uniform: true }];
        assert_eq!(OpticalFifoKind::check_traffic(&v, &one), Ok(()));
        let two = [PacketSource { entry: 0, size: 1000, uniform: true }, PacketSource { entry: 1, size: 1500, uniform: true }];
        let e = OpticalFifoKind::check_traffic(&v, &two).unwrap_err();
        assert_eq!(e.key, "optical_pad");
        assert_eq!(
            e.expected,
            "true, or traffic of one packet size: traffic.0 sends 1000-B packets through this link and traffic.1 1500-B ones, and an optical FIFO's slots hold packets of one size (thesis §6.2)"
        );
        let downloads = [PacketSource { entry: 3, size: 1000, uniform: false }];
        let e = OpticalFifoKind::check_traffic(&v, &downloads).unwrap_err();
        assert!(e.expected.contains("traffic.3's downloads end in shorter segments"), "{}", e.expected);
        v.set("optical_pad", Value::Bool(true), true);
        assert_eq!(OpticalFifoKind::check_traffic(&v, &two), Ok(()));
    }
}
