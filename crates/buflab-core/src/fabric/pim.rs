//! Parallel iterative matching (PIM): T. Anderson, S. Owicki, J. Saxe, C. Thacker,
//! "High-speed switch scheduling for local-area networks", ACM TOCS 11(4), 1993.
//!
//! Read first: [`super`] (the shared vocabulary and the slot model). Owns PIM's random grants and
//! accepts (from its own stream); must not know packets or time.
//!
//! Each iteration, among the inputs and outputs still unmatched:
//! 1. Request: each input requests every output for which its VOQ is non-empty.
//! 2. Grant: each output grants one requesting input, uniformly at random.
//! 3. Accept: each input accepts one granting output, uniformly at random.
//!
//! Every iteration that finds a free input with a non-empty VOQ to a free output adds at
//! least one pair (some output grants, and an input with a grant always accepts one), so N
//! iterations give a maximal matching; the paper shows about log₂ N + 4/3 suffice on average.
//! With one iteration and every VOQ backlogged, each output is matched with probability
//! 1 − (1 − 1/N)^N → 1 − 1/e ≈ 63 %, the classic throughput limit of 1-PIM.
//!
//! Randomness comes from the switch's own seeded stream ([`crate::rng`]); draws are made in a
//! fixed order (outputs by index, then inputs by index), so a seed gives one schedule.

use super::{Matching, Scheduler, VoqView};
use crate::rng::Rng;

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct Pim {
    n: usize,
    iterations: u32,
    rng: Rng,
    /// This iteration's grant of each output (an input), or NONE.
    grant: Vec<u32>,
    /// Scratch list of candidates (requesting inputs or granting outputs), capacity N.
    cand: Vec<u32>,
}

impl Pim {
    /// PIM for an `n`×`n` switch with `iterations` ≥ 1 (clamped), drawing from `rng`.
    pub fn new(n: usize, iterations: u32, rng: Rng) -> Pim {
        Pim { n, iterations: iterations.max(1), rng, grant: vec![NONE; n], cand: Vec::with_capacity(n) }
    }

    /// A uniformly random element of the non-empty `cand`.
    fn pick(&mut self) -> u32 {
        self.cand[self.rng.range_u64(0, self.cand.len() as u64 - 1) as usize]
    }

    /// One request-grant-accept iteration; returns whether it added a pair.
    fn iterate(&mut self, view: &VoqView, out: &mut Matching) -> bool {
        let n = self.n;
        for j in 0..n {
            self.grant[j] = NONE;
            if !out.output_free(j) {
                continue;
            }
            self.cand.clear();
            self.cand
                .extend((0..n as u32).filter(|&i| out.input_free(i as usize) && view.len(i as usize, j) > 0));
            if !self.cand.is_empty() {
                self.grant[j] = self.pick();
            }
        }
        let mut added = false;
        for i in 0..n {
            if !out.input_free(i) {
                continue;
            }
            self.cand.clear();
            self.cand.extend((0..n as u32).filter(|&j| self.grant[j as usize] == i as u32));
            if !self.cand.is_empty() {
                let j = self.pick() as usize;
                out.add(i, j);
                added = true;
            }
        }
        added
    }
}

impl Scheduler for Pim {
    fn schedule(&mut self, view: &VoqView, out: &mut Matching) {
        debug_assert_eq!(view.n(), self.n);
        out.clear();
        for _ in 0..self.iterations {
            if !self.iterate(view, out) {
                break;
            }
        }
    }

    /// With no requests there are no candidates, so nothing is drawn.
    fn idle(&mut self, _phases: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};
    use proptest::prelude::*;

    fn pim(n: usize, iterations: u32, seed: u64) -> Pim {
        Pim::new(n, iterations, Rng::stream(seed, Stream::Fabric, 0))
    }

    #[test]
    fn same_seed_same_matchings_other_seed_differs() {
        let view = VoqView::from_lens(6, &[1; 36]);
        let run = |seed| {
            let mut s = pim(6, 1, seed);
            let mut m = Matching::new(6);
            (0..20)
                .map(|_| {
                    s.schedule(&view, &mut m);
                    m.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn one_iteration_under_saturation_matches_about_one_minus_one_over_e() {
        // N = 16, every VOQ backlogged: E[size]/N = 1 − (15/16)^16 ≈ 0.644. Over 2000 slots
        // the standard error is below 0.003, so ±0.02 is a loose band.
        let n = 16;
        let view = VoqView::from_lens(n, &vec![1; n * n]);
        let mut s = pim(n, 1, 9);
        let mut m = Matching::new(n);
        let total: usize = (0..2000)
            .map(|_| {
                s.schedule(&view, &mut m);
                m.size()
            })
            .sum();
        let frac = total as f64 / (2000 * n) as f64;
        let expect = 1.0 - (1.0 - 1.0 / n as f64).powi(n as i32);
        assert!((frac - expect).abs() < 0.02, "{frac} vs {expect}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// N iterations always reach a maximal matching on a fixed matrix.
        #[test]
        fn n_iterations_give_a_maximal_matching(
            n in 1usize..=8,
            mask in proptest::collection::vec(0u32..3, 64),
            seed in 0u64..1000,
        ) {
            let lens: Vec<u32> = mask[..n * n].iter().map(|&x| (x == 0) as u32).collect();
            let view = VoqView::from_lens(n, &lens);
            let mut s = pim(n, n as u32, seed);
            let mut m = Matching::new(n);
            for _ in 0..3 {
                s.schedule(&view, &mut m);
                prop_assert!(m.is_valid_for(&view));
                prop_assert!(m.is_maximal_for(&view), "{:?}", m);
            }
        }
    }
}
