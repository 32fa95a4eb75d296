//! iSLIP: iterative round-robin matching with desynchronising pointers (N. McKeown, "The
//! iSLIP scheduling algorithm for input-queued switches", IEEE/ACM ToN 7(2), 1999). The
//! practical scheduler of seed 003 §3.3.1: 100 % throughput for uniform traffic, less for
//! non-uniform bursty traffic.
//!
//! Read first: [`super`] (the shared vocabulary and the slot model). Owns iSLIP's pointers and
//! iterations; must not know packets or time (it sees VOQ counts only).
//!
//! Each iteration, among the inputs and outputs still unmatched (the paper's three steps):
//! 1. Request: each input requests every output for which its VOQ is non-empty.
//! 2. Grant: each output grants the requesting input that appears next in a fixed
//!    round-robin starting from its grant pointer `g[j]`.
//! 3. Accept: each input accepts the granting output that appears next in a round-robin
//!    starting from its accept pointer `a[i]`. Then `a[i]` moves to one beyond the accepted
//!    output and `g[j]` to one beyond the accepted input.
//!
//! Pointers move only if the grant is accepted, and only in the first iteration (the paper's
//! rule for iSLIP with multiple iterations: moving them in later iterations could starve a
//! connection). The first rule is what desynchronises the grant pointers under heavy load, so
//! that 1-iteration iSLIP settles into a round-robin with 100 % throughput (the paper's
//! desynchronisation property; it is what distinguishes iSLIP from plain RRM).

use super::{Matching, Scheduler, VoqView};

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct Islip {
    n: usize,
    iterations: u32,
    /// Grant pointer of each output: the input it favours next.
    grant_ptr: Vec<u32>,
    /// Accept pointer of each input: the output it favours next.
    accept_ptr: Vec<u32>,
    /// This iteration's grant of each output (an input), or NONE.
    grant: Vec<u32>,
}

impl Islip {
    /// iSLIP for an `n`×`n` switch with `iterations` ≥ 1 (clamped); all pointers start at 0.
    pub fn new(n: usize, iterations: u32) -> Islip {
        Islip {
            n,
            iterations: iterations.max(1),
            grant_ptr: vec![0; n],
            accept_ptr: vec![0; n],
            grant: vec![NONE; n],
        }
    }

    pub fn grant_pointers(&self) -> &[u32] {
        &self.grant_ptr
    }

    pub fn accept_pointers(&self) -> &[u32] {
        &self.accept_ptr
    }

    /// Sets the pointers (to start from a given state, as in a worked example).
    pub fn set_pointers(&mut self, grant: &[u32], accept: &[u32]) {
        assert!(grant.len() == self.n && accept.len() == self.n);
        assert!(grant.iter().chain(accept).all(|&p| (p as usize) < self.n));
        self.grant_ptr.copy_from_slice(grant);
        self.accept_ptr.copy_from_slice(accept);
    }

    /// One request-grant-accept iteration; returns whether it added a pair.
    fn iterate(&mut self, view: &VoqView, out: &mut Matching, first: bool) -> bool {
        let n = self.n;
        // Grant: requests are implicit — a free input requests j iff VOQ(i, j) is non-empty.
        for j in 0..n {
            self.grant[j] = NONE;
            if !out.output_free(j) {
                continue;
            }
            let g = self.grant_ptr[j] as usize;
            if let Some(i) = (0..n).map(|d| (g + d) % n).find(|&i| out.input_free(i) && view.len(i, j) > 0) {
                self.grant[j] = i as u32;
            }
        }
        // Accept.
        let mut added = false;
        for i in 0..n {
            if !out.input_free(i) {
                continue;
            }
            let a = self.accept_ptr[i] as usize;
            if let Some(j) = (0..n).map(|d| (a + d) % n).find(|&j| self.grant[j] == i as u32) {
                out.add(i, j);
                added = true;
                if first {
                    // iSLIP step 3: one beyond the accepted output / granted input, and only
                    // in the first iteration.
                    self.accept_ptr[i] = ((j + 1) % n) as u32;
                    self.grant_ptr[j] = ((i + 1) % n) as u32;
                }
            }
        }
        added
    }
}

impl Scheduler for Islip {
    fn schedule(&mut self, view: &VoqView, out: &mut Matching) {
        debug_assert_eq!(view.n(), self.n);
        out.clear();
        for k in 0..self.iterations {
            // An iteration that adds nothing leaves nothing for the next one either.
            if !self.iterate(view, out, k == 0) {
                break;
            }
        }
    }

    /// With no requests no output grants, so no pointer moves.
    fn idle(&mut self, _phases: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 3×3 example worked by hand. Requests: input 0 → {0, 1}, input 1 → {0, 2},
    /// input 2 → {1}. Grant pointers g = [1, 2, 0], accept pointers a = [0, 2, 0].
    fn example() -> (VoqView, Islip) {
        let view = VoqView::from_lens(3, &[1, 1, 0, 1, 0, 1, 0, 1, 0]);
        let mut s = Islip::new(3, 1);
        s.set_pointers(&[1, 2, 0], &[0, 2, 0]);
        (view, s)
    }

    #[test]
    fn one_iteration_matches_the_hand_worked_3x3_example() {
        // Grant: output 0 (requests from 0, 1; g = 1) grants input 1; output 1 (requests from
        // 0, 2; g = 2) grants input 2; output 2 (request from 1; g = 0) grants input 1.
        // Accept: input 0 got no grant; input 1 got grants from outputs 0 and 2, a = 2 → 2;
        // input 2 got output 1 → 1. Pointers move past the accepted pairs only: a1 = 0,
        // g2 = 2, a2 = 2, g1 = 0; g0 keeps 1 (its grant was refused), a0 keeps 0.
        let (view, mut s) = example();
        let mut m = Matching::new(3);
        s.schedule(&view, &mut m);
        assert_eq!((m.output_of(0), m.output_of(1), m.output_of(2)), (None, Some(2), Some(1)));
        assert_eq!(s.grant_pointers(), [1, 0, 2]);
        assert_eq!(s.accept_pointers(), [0, 0, 2]);
    }

    #[test]
    fn second_iteration_fills_in_without_moving_pointers() {
        // Iteration 2: only input 0 and output 0 are free and VOQ(0, 0) is non-empty.
        let (view, mut s) = example();
        s.iterations = 2;
        let mut m = Matching::new(3);
        s.schedule(&view, &mut m);
        assert_eq!((m.output_of(0), m.output_of(1), m.output_of(2)), (Some(0), Some(2), Some(1)));
        assert_eq!(s.grant_pointers(), [1, 0, 2], "g0 must not move in iteration 2");
        assert_eq!(s.accept_pointers(), [0, 0, 2], "a0 must not move in iteration 2");
    }

    #[test]
    fn pointers_desynchronise_into_a_full_round_robin_under_saturation() {
        // All VOQs permanently backlogged, all pointers at 0 (fully synchronised): the first
        // slot matches one pair only. Pointers that move only on accepted grants
        // desynchronise (McKeown 1999), and 1-SLIP ends up serving every VOQ once per N slots.
        for n in [2usize, 3, 4, 8, 16] {
            let view = VoqView::from_lens(n, &vec![1; n * n]);
            let mut s = Islip::new(n, 1);
            let mut m = Matching::new(n);
            let mut sizes = Vec::new();
            for _ in 0..n {
                s.schedule(&view, &mut m);
                sizes.push(m.size());
            }
            assert_eq!(sizes[0], 1, "n = {n}");
            // From then on: a perfect matching every slot, and each VOQ once in every N slots.
            let mut served = vec![0u32; n * n];
            for _ in 0..n {
                s.schedule(&view, &mut m);
                assert_eq!(m.size(), n, "n = {n}: {m:?}");
                m.pairs().for_each(|(i, j)| served[i * n + j] += 1);
            }
            assert!(served.iter().all(|&c| c == 1), "n = {n}: {served:?}");
            // Desynchronised: all grant pointers distinct.
            let mut g = s.grant_pointers().to_vec();
            g.sort_unstable();
            g.dedup();
            assert_eq!(g.len(), n, "n = {n}");
        }
    }
}
