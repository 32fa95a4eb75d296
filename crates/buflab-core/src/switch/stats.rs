//! What a router node counts. Window figures cover the slots whose boundary lies in the
//! measured window; a slot the switch skipped while empty counts as zero, so every figure is
//! the same whether empty slots run or not (see the module doc of [`super`]).
//!
//! Read first: [`super`]. Owns the router's counters; must not compute the results' ratios (the
//! result tables do).

/// One input's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputStats {
    /// Packets that reached the arrival phase in the window, and those dropped there (VOQ
    /// full, or under OQ emulation dropped by the shadow OQ switch).
    pub arrivals: u64,
    pub drops: u64,
    /// Σ over the window's slots of the packets in this input's VOQs after the arrival phase
    /// (the slot's peak): divided by the window's slots, the mean VOQ occupancy.
    pub occupancy_slots: u64,
    /// Largest packets in this input's VOQs after an arrival phase, in the window.
    pub max_pkts: u64,
    /// The same over the whole run, warm-up included: Q(i, t) of Theorem 2.1.
    pub max_pkts_ever: u64,
    /// Largest single VOQ of this input, whole run (never above the VOQ limit).
    pub max_voq_ever: u64,
}

/// A switch's counts: per input, per output, and the fabric's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchStats {
    pub inputs: Vec<InputStats>,
    /// Per output, OQ emulation only: packets sent after the slot the shadow OQ switch sent
    /// them in (none with speedup ≥ 2).
    pub late: Vec<u64>,
    /// Window slots with cells at the inputs after the arrival phase.
    pub busy_slots: u64,
    /// Matchings computed on a non-empty view, and cells they moved, in the window.
    pub matchings: u64,
    pub cells: u64,
}

impl SwitchStats {
    pub fn new(n: usize) -> SwitchStats {
        SwitchStats {
            inputs: vec![InputStats::default(); n],
            late: vec![0; n],
            busy_slots: 0,
            matchings: 0,
            cells: 0,
        }
    }

    /// Mean cells per matching: the mean matching size.
    pub fn mean_matching(&self) -> f64 {
        if self.matchings == 0 {
            0.0
        } else {
            self.cells as f64 / self.matchings as f64
        }
    }
}
