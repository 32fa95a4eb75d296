//! Switch-fabric schedulers for the CIOQ router of the thesis (seed 003, Figure 1.1, §2.2,
//! chapter 3): which input sends a cell to which output in each fabric slot.
//!
//! Read first: this page, then [`mwm`] (the baseline). Owns the shared vocabulary and the dispatch
//! over schedulers; must not know packets, links, the event loop or the scenario (the router node
//! in [`crate::switch`] feeds it VOQ counts).
//!
//! Pure and self-contained: a scheduler sees a [`VoqView`] and writes a [`Matching`]. Nothing
//! here knows about packets, links or the event loop; the router node owns those.
//!
//! ## Map
//! - this file: the shared vocabulary — [`VoqView`], [`Matching`], the [`Scheduler`] trait and
//!   its enum dispatch ([`SchedulerKind`] → [`FabricScheduler`]).
//! - [`speedup`]: how many matchings each line cell slot gets, for real-valued speedup.
//! - [`mwm`]: maximum weight matching on VOQ occupancies (Hungarian algorithm).
//! - [`islip`]: iSLIP, round-robin grant and accept pointers (McKeown 1999).
//! - [`pim`]: parallel iterative matching, random grants and accepts (Anderson et al. 1993).
//! - [`oq_emulation`]: stable-marriage matching that, with speedup 2, makes the CIOQ switch
//!   leave every cell exactly when a shadow output-queued switch would (Chuang et al. 1999),
//!   and that shadow switch ([`oq_emulation::ShadowOq`]).
//!
//! ## Cell-time model
//! The fabric is slotted. A *line cell slot* is the time an input or output line takes to
//! carry one cell: `T = cell_bytes · 8 / line_rate` (exact in integer picoseconds for the
//! thesis's 1000 B cells at 2.5 Gb/s: 3.2 µs). Each slot has, in this order (the phase model
//! of Chuang et al. 1999):
//! 1. an arrival phase: at most one cell joins each input, at the tail of its VOQ(i, j);
//! 2. `m` scheduling phases: each computes one matching and moves the head cell of every
//!    matched VOQ(i, j) to output j;
//! 3. a departure phase: each output line starts sending at most one cell.
//!
//! With speedup `s` the fabric runs `s` times faster than a line, so it makes `s` matchings
//! per line slot on average. Integer `s` gives `m = s` every slot (speedup 1: an input-queued
//! switch, no queueing at the outputs; speedup N: an output-queued switch, §3.2). A real `s`
//! (1.2 in §3.3.1) is held as a fraction `num/den` and realised by an integer accumulator
//! ([`speedup::SpeedupClock`]): every slot adds `num`, runs `⌊acc/den⌋` matchings and keeps the
//! remainder, so each slot gets `⌊s⌋` or `⌈s⌉` matchings, the extra ones evenly spread
//! (Bresenham), and any `den` consecutive slots get exactly `num` matchings. No floating point,
//! so the same scenario always gives the same schedule.
//!
//! ## Packets and cells
//! In the thesis every scheduling cycle moves "either zero or one packet" from each input
//! (§3.1), with all data packets 1000 B; §3.4.3 varies the packet size (50–1000 B) but keeps
//! it fixed within a run. So the thesis schedules whole packets with the slot scaled to the
//! packet time. The proposal for the router node, which contains that as a special case:
//! - the fabric cell has a fixed size, by default the run's data packet size (so a slot is one
//!   data packet time and one matching moves one packet, exactly as in §3.1 and §3.4.3);
//! - a packet of `b` bytes is segmented into `⌈b / cell⌉` cells that queue in its VOQ; the output
//!   reassembles it and queues it for its line once its last cell has crossed; buffers are
//!   still counted in packets (or bytes) as the thesis does;
//! - a 40 B control packet (SYN, SYN-ACK, FIN, pure ACK) takes one whole cell: the padding
//!   costs fabric capacity, as it does in a real cell fabric;
//! - VOQs are FIFO, so a packet's cells cross in order and an output reassembles at most one
//!   partial packet per input at a time.
//!
//! ## The router node
//! [`crate::switch`] is the N×N router that uses these schedulers in the packet simulator: it
//! keeps one packet FIFO per VOQ, mirrors the cell counts into a [`VoqView`], and at each line
//! cell slot asks its [`speedup::SpeedupClock`] for `m` and calls [`Scheduler::schedule`] `m`
//! times, moving one cell per matched pair after each call. It runs no slot while it is empty
//! and catches up with [`Scheduler::idle`] and [`speedup::SpeedupClock::skip`] instead, so that
//! a schedule never depends on whether empty slots were simulated.

pub mod islip;
pub mod mwm;
pub mod oq_emulation;
pub mod pim;
pub mod speedup;

#[cfg(test)]
mod harness;
#[cfg(test)]
mod tests;

use crate::rng::Rng;

/// Marks "no partner" in a [`Matching`].
const UNMATCHED: u32 = u32::MAX;

/// A departure slot for a VOQ with no head cell, or for cells that carry no deadline.
pub const NO_DEADLINE: u64 = u64::MAX;

/// What a scheduler sees in a scheduling phase: per input i and output j the number of cells
/// in VOQ(i, j), plus the two per-VOQ facts the OQ-emulation scheduler needs (the head cell's
/// departure slot in the shadow OQ switch, and when the VOQ last became non-empty).
///
/// The owner (router node or test harness) keeps the cells themselves and mirrors every change
/// here; storage is allocated once for N×N and never per cell.
#[derive(Clone, Debug)]
pub struct VoqView {
    n: usize,
    /// Cells in VOQ(i, j), row-major (`i * n + j`).
    len: Vec<u32>,
    /// Per input, a bit per output whose VOQ holds cells: `words` words per input, so that a
    /// scheduler of a sparse switch visits the non-empty VOQs only.
    nonempty: Vec<u64>,
    words: usize,
    /// The most cells any VOQ has held: a bound on the longest kept as cells arrive, so that
    /// MWM's call for each matching does not scan the N² lengths for one.
    longest_ever: u32,
    /// Shadow-OQ departure slot of VOQ(i, j)'s head cell; [`NO_DEADLINE`] if empty or unused.
    head_deadline: Vec<u64>,
    /// Arrival stamp of the cell that last turned VOQ(i, j) from empty to non-empty.
    active_since: Vec<u64>,
    /// Cells pushed so far: the arrival stamp, unique, so two VOQs never tie on `active_since`.
    arrivals: u64,
}

impl VoqView {
    pub fn new(n: usize) -> VoqView {
        assert!(n > 0 && n < UNMATCHED as usize, "switch size {n}");
        let words = n.div_ceil(64);
        VoqView {
            n,
            len: vec![0; n * n],
            nonempty: vec![0; n * words],
            words,
            longest_ever: 0,
            head_deadline: vec![NO_DEADLINE; n * n],
            active_since: vec![0; n * n],
            arrivals: 0,
        }
    }

    /// A view with the given row-major occupancies and no deadlines (for tests and tools).
    pub fn from_lens(n: usize, lens: &[u32]) -> VoqView {
        assert_eq!(lens.len(), n * n);
        let mut v = VoqView::new(n);
        for (k, &l) in lens.iter().enumerate() {
            for _ in 0..l {
                v.push(k / n, k % n, NO_DEADLINE);
            }
        }
        v
    }

    /// Number of ports N (the switch is N×N).
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// Cells waiting in VOQ(i, j).
    #[inline]
    pub fn len(&self, i: usize, j: usize) -> u32 {
        self.len[i * self.n + j]
    }

    /// The occupancies of input i's VOQs, indexed by output.
    #[inline]
    pub fn row(&self, i: usize) -> &[u32] {
        &self.len[i * self.n..(i + 1) * self.n]
    }

    /// The outputs whose VOQ at input i holds cells, in increasing order.
    #[inline]
    pub fn nonempty_outputs(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let words = &self.nonempty[i * self.words..(i + 1) * self.words];
        words.iter().enumerate().flat_map(|(w, &word)| {
            std::iter::successors((word != 0).then_some(word), |&b| Some(b & (b - 1)).filter(|&b| b != 0))
                .map(move |b| w * 64 + b.trailing_zeros() as usize)
        })
    }

    /// Sets VOQ(i, j) to `len` cells at once (for tests that build a view of given
    /// occupancies; deadlines are left as they are).
    #[cfg(test)]
    pub(crate) fn set_len(&mut self, i: usize, j: usize, len: u32) {
        self.len[i * self.n + j] = len;
        self.longest_ever = self.longest_ever.max(len);
        self.mark(i, j, len > 0);
    }

    #[inline]
    fn mark(&mut self, i: usize, j: usize, nonempty: bool) {
        let (word, bit) = (&mut self.nonempty[i * self.words + j / 64], 1u64 << (j % 64));
        if nonempty {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// A bound on the longest VOQ, cells: the most any VOQ has held so far.
    #[inline]
    pub fn longest_bound(&self) -> u32 {
        self.longest_ever
    }

    /// Cells waiting at input i, all VOQs together: Q(i, t) of Theorem 2.1.
    pub fn input_len(&self, i: usize) -> u64 {
        self.row(i).iter().map(|&l| l as u64).sum()
    }

    /// Departure slot, in the shadow OQ switch, of the head cell of VOQ(i, j).
    #[inline]
    pub fn head_deadline(&self, i: usize, j: usize) -> u64 {
        self.head_deadline[i * self.n + j]
    }

    /// Arrival stamp of the cell that opened VOQ(i, j)'s current busy period (larger = later).
    #[inline]
    pub fn active_since(&self, i: usize, j: usize) -> u64 {
        self.active_since[i * self.n + j]
    }

    /// A cell joins the tail of VOQ(i, j). `deadline` is its departure slot in the shadow OQ
    /// switch ([`NO_DEADLINE`] if the scheduler does not use deadlines); it only becomes the
    /// head deadline if the VOQ was empty.
    pub fn push(&mut self, i: usize, j: usize, deadline: u64) {
        let k = i * self.n + j;
        self.arrivals += 1;
        if self.len[k] == 0 {
            self.head_deadline[k] = deadline;
            self.active_since[k] = self.arrivals;
            self.mark(i, j, true);
        }
        self.len[k] += 1;
        self.longest_ever = self.longest_ever.max(self.len[k]);
    }

    /// The head cell of VOQ(i, j) leaves (crosses the fabric or is dropped); `next_deadline` is
    /// the deadline of the new head, [`NO_DEADLINE`] if the VOQ is now empty.
    pub fn pop(&mut self, i: usize, j: usize, next_deadline: u64) {
        let k = i * self.n + j;
        assert!(self.len[k] > 0, "pop from empty VOQ({i}, {j})");
        self.len[k] -= 1;
        self.head_deadline[k] = if self.len[k] == 0 { NO_DEADLINE } else { next_deadline };
        if self.len[k] == 0 {
            self.mark(i, j, false);
        }
    }
}

/// A matching of inputs to outputs: each input sends to at most one output and each output
/// receives from at most one input. Reused across slots: [`Matching::clear`] keeps the storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matching {
    /// Output matched to input i, or `UNMATCHED`.
    out_of: Vec<u32>,
    /// Input matched to output j, or `UNMATCHED`.
    in_of: Vec<u32>,
    size: usize,
}

impl Matching {
    pub fn new(n: usize) -> Matching {
        Matching { out_of: vec![UNMATCHED; n], in_of: vec![UNMATCHED; n], size: 0 }
    }

    pub fn n(&self) -> usize {
        self.out_of.len()
    }

    pub fn clear(&mut self) {
        self.out_of.fill(UNMATCHED);
        self.in_of.fill(UNMATCHED);
        self.size = 0;
    }

    /// Matches input i to output j; both must be free.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize) {
        assert!(
            self.out_of[i] == UNMATCHED && self.in_of[j] == UNMATCHED,
            "input {i} or output {j} is already matched"
        );
        self.out_of[i] = j as u32;
        self.in_of[j] = i as u32;
        self.size += 1;
    }

    /// The output input i sends to, if any.
    #[inline]
    pub fn output_of(&self, i: usize) -> Option<usize> {
        let j = self.out_of[i];
        (j != UNMATCHED).then_some(j as usize)
    }

    /// The input output j receives from, if any.
    #[inline]
    pub fn input_of(&self, j: usize) -> Option<usize> {
        let i = self.in_of[j];
        (i != UNMATCHED).then_some(i as usize)
    }

    #[inline]
    pub fn input_free(&self, i: usize) -> bool {
        self.out_of[i] == UNMATCHED
    }

    #[inline]
    pub fn output_free(&self, j: usize) -> bool {
        self.in_of[j] == UNMATCHED
    }

    /// Number of matched pairs.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The matched pairs `(input, output)`, by input.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.out_of.iter().enumerate().filter(|(_, &j)| j != UNMATCHED).map(|(i, &j)| (i, j as usize))
    }

    /// Total VOQ occupancy over the matched pairs: the weight MWM maximises.
    pub fn weight(&self, view: &VoqView) -> u64 {
        self.pairs().map(|(i, j)| view.len(i, j) as u64).sum()
    }

    /// Whether this is a matching the fabric can carry out on `view`: sizes agree, the two
    /// directions agree (so no input or output is used twice), and only non-empty VOQs are
    /// matched.
    pub fn is_valid_for(&self, view: &VoqView) -> bool {
        let n = view.n();
        n == self.n()
            && self.pairs().count() == self.size
            && self.pairs().all(|(i, j)| self.in_of[j] == i as u32 && view.len(i, j) > 0)
            && self.in_of.iter().filter(|&&i| i != UNMATCHED).count() == self.size
    }

    /// Whether no non-empty VOQ joins a free input to a free output (nothing could be added).
    pub fn is_maximal_for(&self, view: &VoqView) -> bool {
        let n = view.n();
        (0..n).all(|i| !self.input_free(i) || (0..n).all(|j| !self.output_free(j) || view.len(i, j) == 0))
    }
}

/// A fabric scheduler: one matching per scheduling phase.
pub trait Scheduler {
    /// Writes into `out` (cleared first) a matching of non-empty VOQs of `view`. Must not
    /// allocate: called `s` times per line cell slot.
    fn schedule(&mut self, view: &VoqView, out: &mut Matching);

    /// Advances the scheduler's state exactly as `phases` calls of [`Scheduler::schedule`] on
    /// a view with every VOQ empty would. The router node calls it for the slots it skips
    /// while empty, so its schedules are the same whether or not empty slots run. Required
    /// (no default body): a scheduler with state that moves on empty slots must say how.
    fn idle(&mut self, phases: u64);
}

/// Which scheduler a switch runs (§3.1 uses MWM, §3.3.1 iSLIP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// Maximum weight matching on VOQ occupancies.
    Mwm,
    /// iSLIP with this many iterations (≥ 1).
    Islip { iterations: u32 },
    /// Parallel iterative matching with this many iterations (≥ 1).
    Pim { iterations: u32 },
    /// Stable marriage on shadow-OQ departure times; exact OQ emulation with speedup ≥ 2.
    OqEmulation,
}

impl SchedulerKind {
    /// A scheduler for an `n`×`n` switch. `rng` is the switch's own stream (only PIM draws).
    pub fn build(self, n: usize, rng: Rng) -> FabricScheduler {
        match self {
            SchedulerKind::Mwm => FabricScheduler::Mwm(Box::new(mwm::Mwm::new(n))),
            SchedulerKind::Islip { iterations } => FabricScheduler::Islip(islip::Islip::new(n, iterations)),
            SchedulerKind::Pim { iterations } => FabricScheduler::Pim(pim::Pim::new(n, iterations, rng)),
            SchedulerKind::OqEmulation => FabricScheduler::OqEmulation(oq_emulation::OqEmulation::new(n)),
        }
    }

    /// Whether the owner must stamp cells with shadow-OQ departure slots ([`VoqView::push`]).
    pub fn needs_deadlines(self) -> bool {
        matches!(self, SchedulerKind::OqEmulation)
    }
}

/// A running scheduler. An enum rather than a trait object so the slot loop inlines (the same
/// choice as `tcp::cc`); adding a scheduler means one file and one arm per match here. MWM is
/// boxed: its workspace is the largest by far.
#[derive(Clone, Debug)]
pub enum FabricScheduler {
    Mwm(Box<mwm::Mwm>),
    Islip(islip::Islip),
    Pim(pim::Pim),
    OqEmulation(oq_emulation::OqEmulation),
}

impl Scheduler for FabricScheduler {
    #[inline]
    fn schedule(&mut self, view: &VoqView, out: &mut Matching) {
        match self {
            FabricScheduler::Mwm(s) => s.schedule(view, out),
            FabricScheduler::Islip(s) => s.schedule(view, out),
            FabricScheduler::Pim(s) => s.schedule(view, out),
            FabricScheduler::OqEmulation(s) => s.schedule(view, out),
        }
    }

    fn idle(&mut self, phases: u64) {
        match self {
            FabricScheduler::Mwm(s) => s.idle(phases),
            FabricScheduler::Islip(s) => s.idle(phases),
            FabricScheduler::Pim(s) => s.idle(phases),
            FabricScheduler::OqEmulation(s) => s.idle(phases),
        }
    }
}
