//! The N×N router node of the thesis (seed 003, Figure 1.1, §2.2, chapter 3): N inputs, each
//! with a virtual output queue (VOQ) per output; a slotted fabric that a scheduler from
//! [`crate::fabric`] configures; N outputs. The output queues themselves are ordinary
//! drop-tail [`crate::link::Link`]s at the line rate, owned by the simulator: the switch hands
//! each packet that crosses the fabric to its output link at the slot boundary.
//!
//! Read first: [`crate::fabric`] (the slot model and the schedulers), then [`crate::sim`] (how a
//! route crosses a router). Owns VOQs, the slot loop and handing packets to output links; must not
//! know the scheduling algorithms' insides, TCP or the scenario (the topology builder configures
//! it).
//!
//! ```text
//!  input line i ──► staged ──► VOQ(i, 0..N) ──► fabric (m matchings per slot) ──► output link j
//! ```
//!
//! ## Slots
//! The fabric works in line cell slots: slot k is the boundary `k·T`, `T` the serialization
//! time of one cell at the line rate (3.2 µs for 1000 B at 2.5 Gb/s). A packet that reaches
//! input i at time t belongs to slot `⌊t/T⌋ + 1`, the first boundary strictly after it: a
//! packet arriving exactly on a boundary waits for the next one. So what a slot does never
//! depends on whether an arrival at the same picosecond was dispatched before or after it.
//! Each slot has the phases of `fabric` (Chuang et al. 1999):
//! 1. arrival: the packets of this slot join their VOQs, inputs in index order, each input's
//!    in arrival order; each gets a stamp in that order. A packet is dropped if its VOQ holds
//!    `voq_limit` packets already (drop-tail);
//! 2. `m` scheduling phases, `m` from the [`SpeedupClock`]: each computes a matching and moves
//!    the head cell of every matched VOQ across; a packet crosses with its last cell;
//! 3. hand-over: the packets that crossed enter their output links at `k·T`, in stamp order.
//!    All transfers of a slot are taken as simultaneous at its boundary, so some order is
//!    needed for packets reaching one output together: arrival order (oldest first) is the
//!    FIFO order of the router as a whole, and it makes speedup N identical to the
//!    output-queued mode below.
//!
//! ## Lazy slots
//! One pending event per switch (`Event::SwitchSlot`), for the next slot, and none while the
//! switch is empty: an arrival to an empty switch arms the slot it belongs to. Slots skipped
//! while empty are made up on waking: [`SpeedupClock::skip`] and [`Scheduler::idle`] bring the
//! clock and the scheduler (MWM's tie rotation) to where running the empty slots would have.
//! Statistics are counted per slot of the measured window by arithmetic, empty slots as zero.
//! So results do not depend on whether empty slots run; [`Switch::set_eager`] runs every slot
//! to check exactly that. Arrivals may be handed in before their time (the simulator computes
//! a packet's passage through the express input line ahead): each input's staged packets wait
//! in arrival order for their slot, and a stale event is ignored when it fires, like the TCP
//! timers.
//!
//! ## Cells and packets
//! A packet of `b` bytes is `⌈b / cell⌉` cells in the fabric (the `fabric` module's proposal);
//! the cell defaults to the run's data packet size, so a data packet is one cell and a slot is
//! one packet time, as in the thesis (§3.1: "either zero or one packet is removed from every
//! input port"). A 40 B control packet (a SYN-ACK on the forward path) takes a whole cell: the
//! padding costs fabric capacity, as in a real cell fabric. Buffers count packets.
//!
//! ## Output queued
//! [`Fabric::OutputQueued`] has no VOQs and no scheduler: at each slot's arrival phase every
//! packet goes straight to its output link. It is the OQ router of §3.2 on the same slot grid
//! (a packet waits under one cell time, 3.2 µs, for the boundary), so a CIOQ switch with
//! speedup N and a maximal scheduler behaves exactly like it: with at most one cell per input
//! per slot, N maximal matchings clear every VOQ each slot (each serves every non-empty output
//! once), and the hand-over order is the same.
//!
//! ## OQ emulation
//! With [`SchedulerKind::OqEmulation`] a shadow OQ switch ([`ShadowOq`]) gives each arriving
//! packet its time to leave (TL) and drops what that switch would drop; each output holds the
//! packets that crossed in a push-in-first-out queue and hands its smallest-TL packet to the
//! output link in slot TL (late only if the speedup is too small). The shadow's buffer is
//! `output_buffer + 1` cells, because a drop-tail link of B packets holds B waiting plus the
//! one on the line: with speedup ≥ 2 the switch then has exactly the departures and drops of
//! the output-queued mode (Chuang et al. 1999; §2.2's exact emulation). Each packet counts as
//! one cell here (the theorem's fixed-size packets).

mod stats;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub use stats::{InputStats, SwitchStats};

use crate::fabric::oq_emulation::ShadowOq;
use crate::fabric::speedup::{Speedup, SpeedupClock};
use crate::fabric::{FabricScheduler, Matching, Scheduler, SchedulerKind, VoqView, NO_DEADLINE};
use crate::monitor::MeasuredWindow;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::sched::{Event, Scheduler as EventQueue};
use crate::units::{Rate, Time};

/// What carries packets from the inputs to the outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fabric {
    /// No input queues: each packet joins its output queue at the first slot boundary after
    /// it arrives.
    OutputQueued,
    /// VOQs at the inputs, and a fabric configured by `scheduler` making `speedup` matchings
    /// per slot on average.
    Cioq { scheduler: SchedulerKind, speedup: Speedup },
}

/// How a router node is built.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchConfig {
    /// N: the switch has N inputs and N outputs.
    pub ports: usize,
    /// Line rate of every input and output.
    pub rate: Rate,
    /// Fabric cell, bytes: a slot is its serialization time at `rate`.
    pub cell: u32,
    pub fabric: Fabric,
    /// Drop-tail limit of each VOQ, packets (None: unlimited).
    pub voq_limit: Option<u32>,
    /// The output links' drop-tail limit, packets (None: unlimited). Only OQ emulation reads
    /// it, to size its shadow switch; the links enforce it themselves otherwise.
    pub output_buffer: Option<u32>,
}

/// A packet that has reached its input line but not yet its slot's arrival phase.
#[derive(Clone, Copy, Debug)]
struct Staged {
    pkt: Packet,
    output: u32,
    slot: u64,
}

/// A packet in a VOQ: its arrival stamp (the hand-over order) and, under OQ emulation, the
/// slot the shadow OQ switch sends it in.
#[derive(Clone, Copy, Debug)]
struct Queued {
    pkt: Packet,
    stamp: u64,
    tl: u64,
}

/// A packet that crossed under OQ emulation, waiting at its output for its slot.
#[derive(Clone, Copy, Debug)]
struct Held {
    tl: u64,
    stamp: u64,
    pkt: Packet,
}

impl PartialEq for Held {
    fn eq(&self, o: &Held) -> bool {
        (self.tl, self.stamp) == (o.tl, o.stamp)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Held) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Held) -> std::cmp::Ordering {
        (self.tl, self.stamp).cmp(&(o.tl, o.stamp))
    }
}

/// The router node. All storage is allocated when it is built (the queues grow to their
/// largest size once); nothing is allocated per packet.
pub struct Switch {
    n: usize,
    /// Slot length T, ps.
    slot: u64,
    cell: u32,
    voq_limit: Option<u32>,
    /// Per input: packets arrived, waiting for their slot, in arrival order.
    staged: Vec<VecDeque<Staged>>,
    /// VOQ(i, j) at `i * n + j`.
    voq: Vec<VecDeque<Queued>>,
    /// Cells of VOQ(i, j)'s head packet still to cross.
    head_left: Vec<u32>,
    view: VoqView,
    /// None in the output-queued mode.
    scheduler: Option<FabricScheduler>,
    clock: SpeedupClock,
    matching: Matching,
    /// OQ emulation: the shadow switch, and each output's packets waiting for their slot.
    shadow: Option<ShadowOq>,
    pifo: Vec<BinaryHeap<Reverse<Held>>>,
    /// This slot's packets for the output links, with their stamps.
    crossing: Vec<(u64, Packet)>,
    next_stamp: u64,
    /// Packets in each input's VOQs, and cells in all VOQs.
    voq_pkts: Vec<u64>,
    cells: u64,
    held_at_outputs: u64,
    /// Packets inside the switch (staged, in VOQs or held at outputs).
    held: u64,
    /// The last slot run (0: none; arrivals belong to slot 1 or later).
    last_slot: u64,
    /// The slot of the live pending event, if any.
    armed: Option<u64>,
    eager: bool,
    window: MeasuredWindow,
    pub stats: SwitchStats,
    /// Packets dropped at the inputs over the whole run.
    pub drops: u64,
}

impl Switch {
    /// A switch with its own random stream `rng` (only PIM draws) and the run's window.
    pub fn new(cfg: &SwitchConfig, rng: Rng, window: MeasuredWindow) -> Switch {
        let n = cfg.ports;
        assert!(n > 0 && cfg.cell > 0, "a switch has ports and a cell size");
        let slot = cfg.rate.serialization(cfg.cell as u64).0;
        let (scheduler, speedup, shadow) = match cfg.fabric {
            Fabric::OutputQueued => (None, Speedup::ONE, None),
            Fabric::Cioq { scheduler, speedup } => {
                // The shadow holds B waiting cells plus the one on the line (see the module doc).
                let shadow = scheduler
                    .needs_deadlines()
                    .then(|| ShadowOq::new(n, cfg.output_buffer.map(|b| b.saturating_add(1))));
                (Some(scheduler.build(n, rng)), speedup, shadow)
            }
        };
        let pifo = if shadow.is_some() { vec![BinaryHeap::new(); n] } else { Vec::new() };
        Switch {
            n,
            slot,
            cell: cfg.cell,
            voq_limit: cfg.voq_limit,
            staged: vec![VecDeque::new(); n],
            voq: vec![VecDeque::new(); n * n],
            head_left: vec![0; n * n],
            view: VoqView::new(n),
            scheduler,
            clock: speedup.clock(),
            matching: Matching::new(n),
            shadow,
            pifo,
            crossing: Vec::with_capacity(4 * n),
            next_stamp: 0,
            voq_pkts: vec![0; n],
            cells: 0,
            held_at_outputs: 0,
            held: 0,
            last_slot: 0,
            armed: None,
            eager: false,
            window,
            stats: SwitchStats::new(n),
            drops: 0,
        }
    }

    pub fn ports(&self) -> usize {
        self.n
    }

    /// The slot length T.
    pub fn slot(&self) -> Time {
        Time(self.slot)
    }

    /// Runs every slot from the first, empty or not (for the test that laziness changes
    /// nothing). Must be set before the run starts.
    pub fn set_eager(&mut self, on: bool) {
        self.eager = on;
    }

    /// Called when the run starts: an eager switch arms its first slot.
    pub fn start(&mut self, sched: &mut EventQueue, id: u32) {
        if self.eager {
            self.arm(1, sched, id);
        }
    }

    /// Packets inside the switch (not yet handed to an output link).
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Slots whose boundary lies in the measured window (every one, run or skipped).
    pub fn window_slots(&self) -> u64 {
        let first = self.window.start.0.div_ceil(self.slot).max(1);
        let end = self.window.end.0.div_ceil(self.slot);
        end.saturating_sub(first)
    }

    /// Makes sure an event fires for slot `k` (or earlier).
    fn arm(&mut self, k: u64, sched: &mut EventQueue, id: u32) {
        if self.armed.is_none_or(|a| a > k) {
            self.armed = Some(k);
            sched.schedule(Time(k * self.slot), Event::SwitchSlot(id));
        }
    }

    /// A packet reaches input `input`, for output `output`, at `t` (now, or later when the
    /// simulator computes ahead through the input line).
    pub fn arrive(&mut self, t: Time, pkt: Packet, input: u32, output: u32, sched: &mut EventQueue, id: u32) {
        let slot = t.0 / self.slot + 1;
        let q = &mut self.staged[input as usize];
        debug_assert!(q.back().is_none_or(|s| s.slot <= slot), "input {input}: arrivals out of order");
        q.push_back(Staged { pkt, output, slot });
        self.held += 1;
        self.arm(slot, sched, id);
    }

    /// The `SwitchSlot` event at `now`: runs the slot if it is the armed one, appending the
    /// packets for the output links to `out` in hand-over order; false for a stale event.
    pub fn on_slot(&mut self, now: Time, out: &mut Vec<Packet>, sched: &mut EventQueue, id: u32) -> bool {
        let k = now.0 / self.slot;
        if self.armed != Some(k) || !now.0.is_multiple_of(self.slot) {
            return false;
        }
        self.armed = None;
        // Slots skipped while empty: where running them would have left the clock and the
        // scheduler.
        let skipped = k - self.last_slot - 1;
        if skipped > 0 {
            let phases = self.clock.skip(skipped);
            if let Some(s) = self.scheduler.as_mut() {
                s.idle(phases);
            }
        }
        self.last_slot = k;
        self.run_slot(k, out);
        if let Some(next) = self.next_slot(k) {
            self.arm(next, sched, id);
        }
        true
    }

    /// The next slot to run after slot `k`: the next one while anything is inside, else the
    /// slot of the earliest staged arrival; None when empty.
    fn next_slot(&self, k: u64) -> Option<u64> {
        if self.eager || self.cells > 0 || self.held_at_outputs > 0 {
            return Some(k + 1);
        }
        self.staged.iter().filter_map(|q| q.front().map(|s| s.slot.max(k + 1))).min()
    }

    /// Runs slot `k`: arrival phase, scheduling phases, hand-over (module doc).
    fn run_slot(&mut self, k: u64, out: &mut Vec<Packet>) {
        let n = self.n;
        let counted = self.window.contains(Time(k * self.slot));
        self.arrival_phase(k, counted);
        let cioq = self.scheduler.is_some();
        if cioq {
            for i in 0..n {
                let st = &mut self.stats.inputs[i];
                let q = self.voq_pkts[i];
                st.max_pkts_ever = st.max_pkts_ever.max(q);
                if counted {
                    st.occupancy_slots += q;
                    st.max_pkts = st.max_pkts.max(q);
                }
            }
            if counted && self.cells > 0 {
                self.stats.busy_slots += 1;
            }
            self.scheduling_phases(counted);
        }
        // Departure phase of OQ emulation: each output sends its smallest-TL packet once due.
        for j in 0..self.pifo.len() {
            let Some(&Reverse(h)) = self.pifo[j].peek() else { continue };
            if h.tl > k {
                continue;
            }
            self.pifo[j].pop();
            self.held_at_outputs -= 1;
            if h.tl < k && counted {
                self.stats.late[j] += 1;
            }
            self.crossing.push((h.stamp, h.pkt));
        }
        self.held -= self.crossing.len() as u64;
        self.crossing.sort_unstable_by_key(|c| c.0);
        out.extend(self.crossing.drain(..).map(|c| c.1));
    }

    /// Every input's packets of slot `k`, in input order, join their VOQs (or, without VOQs,
    /// the hand-over list).
    fn arrival_phase(&mut self, k: u64, counted: bool) {
        let n = self.n;
        for i in 0..n {
            while let Some(&s) = self.staged[i].front().filter(|s| s.slot <= k) {
                self.staged[i].pop_front();
                let stamp = self.next_stamp;
                self.next_stamp += 1;
                if counted {
                    self.stats.inputs[i].arrivals += 1;
                }
                if self.scheduler.is_none() {
                    self.crossing.push((stamp, s.pkt));
                    continue;
                }
                let j = s.output as usize;
                let v = i * n + j;
                let full = self.voq_limit.is_some_and(|b| self.voq[v].len() as u64 >= b as u64);
                let tl = match (full, self.shadow.as_mut()) {
                    (true, _) => None,
                    (false, Some(shadow)) => shadow.admit(j, k),
                    (false, None) => Some(NO_DEADLINE),
                };
                let Some(tl) = tl else {
                    self.held -= 1;
                    self.drops += 1;
                    if counted {
                        self.stats.inputs[i].drops += 1;
                    }
                    continue;
                };
                let cells = cells(s.pkt.size, self.cell, self.shadow.is_some());
                if self.voq[v].is_empty() {
                    self.head_left[v] = cells;
                }
                self.voq[v].push_back(Queued { pkt: s.pkt, stamp, tl });
                for _ in 0..cells {
                    self.view.push(i, j, tl);
                }
                self.voq_pkts[i] += 1;
                self.cells += cells as u64;
                let st = &mut self.stats.inputs[i];
                st.max_voq_ever = st.max_voq_ever.max(self.voq[v].len() as u64);
            }
        }
    }

    /// The slot's matchings; each moves one cell per matched VOQ, and a packet whose last cell
    /// moves crosses (to the hand-over list, or under OQ emulation to its output's queue).
    fn scheduling_phases(&mut self, counted: bool) {
        let n = self.n;
        let m = self.clock.next_slot();
        let (cell, one_each) = (self.cell, self.shadow.is_some());
        let Some(scheduler) = self.scheduler.as_mut() else { return };
        for phase in 0..m {
            if self.cells == 0 {
                // Nothing left to match: the rest of the phases are empty ones.
                scheduler.idle((m - phase) as u64);
                break;
            }
            scheduler.schedule(&self.view, &mut self.matching);
            debug_assert!(self.matching.is_valid_for(&self.view));
            if counted {
                self.stats.matchings += 1;
                self.stats.cells += self.matching.size() as u64;
            }
            for (i, j) in self.matching.pairs() {
                let v = i * n + j;
                self.cells -= 1;
                self.head_left[v] -= 1;
                let q = &mut self.voq[v];
                let head = *q.front().expect("a matched VOQ is non-empty");
                if self.head_left[v] > 0 {
                    // The head packet's next cell is the new head cell.
                    self.view.pop(i, j, head.tl);
                    continue;
                }
                q.pop_front();
                self.voq_pkts[i] -= 1;
                let next_tl = match q.front() {
                    Some(next) => {
                        self.head_left[v] = cells(next.pkt.size, cell, one_each);
                        next.tl
                    }
                    None => NO_DEADLINE,
                };
                self.view.pop(i, j, next_tl);
                if self.shadow.is_some() {
                    self.pifo[j].push(Reverse(Held { tl: head.tl, stamp: head.stamp, pkt: head.pkt }));
                    self.held_at_outputs += 1;
                } else {
                    self.crossing.push((head.stamp, head.pkt));
                }
            }
        }
    }
}

/// Cells a packet of `size` bytes takes in a fabric of `cell`-byte cells: ⌈size / cell⌉, or
/// one under OQ emulation (`one_each`: the theorem's fixed-size packets).
#[inline]
fn cells(size: u32, cell: u32, one_each: bool) -> u32 {
    if one_each {
        1
    } else {
        size.div_ceil(cell).max(1)
    }
}
