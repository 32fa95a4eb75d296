//! A cell-level CIOQ switch for tests: Bernoulli arrivals, VOQs, a scheduler, speedup, and
//! output queues; optionally a shadow OQ switch that stamps each cell with its time to leave.
//!
//! Read first: [`super`] (the slot model). Owns the test switch; must not be used by the engine
//! (the router node in [`crate::switch`] is the real one).
//!
//! Slot order as in the module doc: arrivals, the speedup clock's scheduling phases, one
//! departure per output. The harness allocates freely (VecDeque, BinaryHeap): it is a test
//! oracle, not the router node.

use super::oq_emulation::ShadowOq;
use super::speedup::{Speedup, SpeedupClock};
use super::{FabricScheduler, Matching, Scheduler, SchedulerKind, VoqView, NO_DEADLINE};
use crate::rng::{Rng, Stream};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Where the cells arriving at input i go (seed 003, §3.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Every output equally likely.
    Uniform,
    /// 2/3 to output i + 1, 1/3 to output i + 2 (mod N).
    Diagonal,
    /// On-off bursts: a burst sends one cell per slot to one uniformly chosen output and
    /// lasts a geometric number of slots with this mean; the idle gaps are sized so the
    /// input's load is still `p`. Harder for schedulers than Bernoulli arrivals (§3.3.1).
    Bursty { mean_burst: u32 },
}

/// What a run measured. Occupancies are taken after each arrival phase, the slot's peak.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub admitted: u64,
    pub dropped: u64,
    pub departed: u64,
    /// Cells that left in exactly their shadow-OQ slot (emulation runs only).
    pub departed_on_time: u64,
    /// Cells that left in another slot than their shadow-OQ slot (emulation runs only).
    pub late: u64,
    /// Largest Q(i, t) over inputs and slots.
    pub max_input_len: u64,
    /// Largest and last total VOQ occupancy over all inputs.
    pub max_total_len: u64,
    pub final_total_len: u64,
}

#[derive(Clone, Copy, Debug)]
struct Cell {
    /// Arrival sequence number: FIFO order at the outputs of a plain switch.
    id: u64,
    /// Shadow-OQ time to leave (emulation runs), else NO_DEADLINE.
    tl: u64,
}

pub struct CellSwitch {
    n: usize,
    sched: FabricScheduler,
    clock: SpeedupClock,
    view: VoqView,
    matching: Matching,
    voq: Vec<VecDeque<Cell>>,
    /// Per output, cells keyed by (tl, id): by TL when emulating, else FIFO by id.
    out: Vec<BinaryHeap<Reverse<(u64, u64)>>>,
    shadow: Option<ShadowOq>,
}

impl CellSwitch {
    pub fn new(n: usize, kind: SchedulerKind, speedup: Speedup, seed: u64) -> CellSwitch {
        CellSwitch {
            n,
            sched: kind.build(n, Rng::stream(seed, Stream::Fabric, 0)),
            clock: speedup.clock(),
            view: VoqView::new(n),
            matching: Matching::new(n),
            voq: vec![VecDeque::new(); n * n],
            out: vec![BinaryHeap::new(); n],
            shadow: None,
        }
    }

    /// Runs a shadow OQ switch with output buffers of `buffer` cells (None: unlimited): cells
    /// carry its departure slots, the CIOQ switch drops exactly its drops, and each output
    /// sends its smallest-TL cell once that TL has come.
    pub fn emulate_oq(&mut self, buffer: Option<u32>) {
        self.shadow = Some(ShadowOq::new(self.n, buffer));
    }

    /// Where input i's cell of this slot goes, or `None` if it has none. `burst[i]` is the
    /// output of input i's current burst (bursty load only).
    fn arrival(
        &self,
        load: Load,
        p: f64,
        i: usize,
        burst: &mut [Option<usize>],
        rng: &mut Rng,
    ) -> Option<usize> {
        let n = self.n;
        match load {
            Load::Uniform => rng.bernoulli(p).then(|| rng.range_u64(0, n as u64 - 1) as usize),
            Load::Diagonal => rng.bernoulli(p).then(|| (i + if rng.range_u64(0, 2) < 2 { 1 } else { 2 }) % n),
            Load::Bursty { mean_burst } => {
                let lb = mean_burst.max(1) as f64;
                // An idle input starts a burst with probability q = 1/(1 + lb·(1 − p)/p) per
                // slot, so the mean gap (1 − q)/q = lb·(1 − p)/p makes the load p.
                if burst[i].is_none() && rng.bernoulli(1.0 / (1.0 + lb * (1.0 - p) / p)) {
                    burst[i] = Some(rng.range_u64(0, n as u64 - 1) as usize);
                }
                let j = burst[i]?;
                if rng.bernoulli(1.0 / lb) {
                    burst[i] = None;
                }
                Some(j)
            }
        }
    }

    /// `slots` slots of arrivals of load `p` per input. Emulation runs then drain (no more
    /// arrivals) until every admitted cell has left, so each is counted on time or late.
    pub fn run(&mut self, load: Load, p: f64, slots: u64, seed: u64) -> Report {
        let n = self.n;
        let mut rng = Rng::stream(seed, Stream::Source, 0);
        let mut r = Report::default();
        let mut next_id = 0u64;
        let mut burst = vec![None; n];
        let mut t = 0u64;
        loop {
            let arriving = t < slots;
            if !arriving && (self.shadow.is_none() || r.departed == r.admitted) {
                break;
            }
            assert!(t < 100 * slots.max(n as u64), "drain does not end: {r:?}");
            // Arrival phase.
            for i in 0..n {
                let Some(j) = arriving.then(|| self.arrival(load, p, i, &mut burst, &mut rng)).flatten()
                else {
                    continue;
                };
                let tl = match self.shadow.as_mut().map(|oq| oq.admit(j, t)) {
                    Some(None) => {
                        r.dropped += 1;
                        continue;
                    }
                    Some(Some(tl)) => tl,
                    None => NO_DEADLINE,
                };
                self.voq[i * n + j].push_back(Cell { id: next_id, tl });
                self.view.push(i, j, tl);
                next_id += 1;
                r.admitted += 1;
            }
            let mut total = 0;
            for i in 0..n {
                let q = self.view.input_len(i);
                r.max_input_len = r.max_input_len.max(q);
                total += q;
            }
            r.max_total_len = r.max_total_len.max(total);
            // Scheduling phases.
            for _ in 0..self.clock.next_slot() {
                self.sched.schedule(&self.view, &mut self.matching);
                assert!(self.matching.is_valid_for(&self.view), "{:?}", self.matching);
                for (i, j) in self.matching.pairs() {
                    let q = &mut self.voq[i * n + j];
                    let cell = q.pop_front().expect("matched VOQ is non-empty");
                    self.view.pop(i, j, q.front().map_or(NO_DEADLINE, |c| c.tl));
                    self.out[j].push(Reverse((cell.tl, cell.id)));
                }
            }
            // Departure phase.
            for q in &mut self.out {
                let Some(&Reverse((tl, _))) = q.peek() else { continue };
                if self.shadow.is_some() {
                    if tl > t {
                        continue; // its OQ slot has not come: an emulating output waits
                    }
                    if tl == t {
                        r.departed_on_time += 1;
                    } else {
                        r.late += 1;
                    }
                }
                q.pop();
                r.departed += 1;
            }
            t += 1;
        }
        r.final_total_len = (0..n).map(|i| self.view.input_len(i)).sum();
        r
    }
}
