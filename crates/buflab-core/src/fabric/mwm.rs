//! Maximum weight matching (MWM) on VOQ occupancies: the matching whose matched VOQs hold the
//! most cells. The baseline scheduler of seed 003 §3.1 (item 3): it delivers 100 % throughput
//! for any admissible load (McKeown, Mekkittikul, Anantharam, Walrand, "Achieving 100 %
//! throughput in an input-queued switch", IEEE Trans. Commun. 1999 — the "longest queue first"
//! weight), but is too complex for real routers.
//!
//! Exact, by the Hungarian (Kuhn–Munkres) algorithm with potentials, O(N³) per matching: about
//! 33k inner steps at N = 32. Weights are integers (cells), so the optimum is exact.
//!
//! Ties: when several matchings reach the maximum weight, which one is returned is a fixed
//! function of the occupancies and of the call count mod N. Call `k` relabels the outputs as
//! `j → (j − k) mod N` before running the algorithm, whose scans go in increasing index and keep
//! the first of equal minima; rotating the labels stops one output (or input) from winning every
//! tie, as the identity would under symmetric load. Pairs of weight 0 (empty VOQs) that the
//! algorithm needs to complete its perfect assignment are dropped from the result.

use super::{Matching, Scheduler, VoqView};

/// Larger than any reduced cost: weights are below 2³² and the potentials stay within
/// N · 2³², below 2⁶¹ for any N < 2²⁹.
const INF: i64 = i64::MAX / 4;

/// Workspace of the Hungarian algorithm, allocated once for N (1-based, index 0 is the
/// algorithm's virtual row/column).
#[derive(Clone, Debug)]
pub struct Mwm {
    n: usize,
    /// Row and column potentials.
    u: Vec<i64>,
    v: Vec<i64>,
    /// `p[c]`: row assigned to column c (0 = none).
    p: Vec<usize>,
    /// Augmenting path back-pointers and slack per column.
    way: Vec<usize>,
    minv: Vec<i64>,
    used: Vec<bool>,
    /// Tie rotation: call count mod N.
    rot: usize,
}

impl Mwm {
    pub fn new(n: usize) -> Mwm {
        Mwm {
            n,
            u: vec![0; n + 1],
            v: vec![0; n + 1],
            p: vec![0; n + 1],
            way: vec![0; n + 1],
            minv: vec![0; n + 1],
            used: vec![false; n + 1],
            rot: 0,
        }
    }

    /// Real output of the algorithm's column `c` (1-based) under the current rotation.
    #[inline]
    fn output(&self, c: usize) -> usize {
        (c - 1 + self.rot) % self.n
    }

    /// Minimum-cost assignment with cost(i, c) = −len(i, output(c)); leaves `p` filled.
    fn assign(&mut self, view: &VoqView) {
        let n = self.n;
        self.u.fill(0);
        self.v.fill(0);
        self.p.fill(0);
        self.way.fill(0);
        for row in 1..=n {
            self.p[0] = row;
            let mut c0 = 0;
            self.minv.fill(INF);
            self.used.fill(false);
            // Grow an alternating tree from `row` until it reaches a free column.
            loop {
                self.used[c0] = true;
                let r0 = self.p[c0];
                let mut delta = INF;
                let mut c1 = 0;
                for c in 1..=n {
                    if self.used[c] {
                        continue;
                    }
                    let cost = -(view.len(r0 - 1, self.output(c)) as i64);
                    let cur = cost - self.u[r0] - self.v[c];
                    if cur < self.minv[c] {
                        self.minv[c] = cur;
                        self.way[c] = c0;
                    }
                    if self.minv[c] < delta {
                        delta = self.minv[c];
                        c1 = c;
                    }
                }
                for c in 0..=n {
                    if self.used[c] {
                        self.u[self.p[c]] += delta;
                        self.v[c] -= delta;
                    } else {
                        self.minv[c] -= delta;
                    }
                }
                c0 = c1;
                if self.p[c0] == 0 {
                    break;
                }
            }
            // Flip the augmenting path.
            loop {
                let c1 = self.way[c0];
                self.p[c0] = self.p[c1];
                c0 = c1;
                if c0 == 0 {
                    break;
                }
            }
        }
    }
}

impl Scheduler for Mwm {
    fn schedule(&mut self, view: &VoqView, out: &mut Matching) {
        debug_assert_eq!(view.n(), self.n);
        out.clear();
        self.assign(view);
        for c in 1..=self.n {
            let (i, j) = (self.p[c] - 1, self.output(c));
            if view.len(i, j) > 0 {
                out.add(i, j);
            }
        }
        self.rot = (self.rot + 1) % self.n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Heap's algorithm over all permutations: the best weight Σ len(i, π(i)). Weights are
    /// ≥ 0, so the best permutation's weight is the best matching's weight.
    fn brute_force_best(view: &VoqView) -> u64 {
        let n = view.n();
        let mut perm: Vec<usize> = (0..n).collect();
        let weight = |p: &[usize]| p.iter().enumerate().map(|(i, &j)| view.len(i, j) as u64).sum::<u64>();
        let mut best = weight(&perm);
        let mut c = vec![0; n];
        let mut k = 1;
        while k < n {
            if c[k] < k {
                let a = if k % 2 == 0 { 0 } else { c[k] };
                perm.swap(a, k);
                best = best.max(weight(&perm));
                c[k] += 1;
                k = 1;
            } else {
                c[k] = 0;
                k += 1;
            }
        }
        best
    }

    #[test]
    fn picks_the_heavy_anti_diagonal_over_the_greedy_corner() {
        // Greedy would take the 5 at (0,0) and then 1 at (1,1): 6. MWM takes 4 + 4 = 8.
        let view = VoqView::from_lens(2, &[5, 4, 4, 1]);
        let mut m = Matching::new(2);
        Mwm::new(2).schedule(&view, &mut m);
        assert_eq!(m.weight(&view), 8);
        assert_eq!((m.output_of(0), m.output_of(1)), (Some(1), Some(0)));
    }

    #[test]
    fn empty_voqs_are_never_matched() {
        let view = VoqView::from_lens(3, &[0, 0, 0, 0, 7, 0, 0, 0, 0]);
        let mut m = Matching::new(3);
        Mwm::new(3).schedule(&view, &mut m);
        assert_eq!(m.size(), 1);
        assert_eq!(m.output_of(1), Some(1));
    }

    #[test]
    fn ties_rotate_between_calls() {
        // All VOQs equal: every perfect matching is optimal; successive calls must not all
        // pick the same one.
        let view = VoqView::from_lens(3, &[1; 9]);
        let mut s = Mwm::new(3);
        let mut seen = Vec::new();
        for _ in 0..3 {
            let mut m = Matching::new(3);
            s.schedule(&view, &mut m);
            assert_eq!(m.size(), 3);
            seen.push(m);
        }
        assert!(seen[0] != seen[1] || seen[1] != seen[2], "{seen:?}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// The Hungarian result has the optimal weight, for every tie rotation.
        #[test]
        fn weight_equals_brute_force_optimum(
            n in 1usize..=6,
            // About 40 % empty VOQs, so sparse matrices with forced zero pairs appear too.
            lens in proptest::collection::vec((0u32..20).prop_map(|x| if x < 8 { 0 } else { x - 7 }), 36),
            calls in 1usize..=6,
        ) {
            let view = VoqView::from_lens(n, &lens[..n * n]);
            let best = brute_force_best(&view);
            let mut s = Mwm::new(n);
            let mut m = Matching::new(n);
            for _ in 0..calls {
                s.schedule(&view, &mut m);
                prop_assert!(m.is_valid_for(&view));
                prop_assert_eq!(m.weight(&view), best);
            }
        }
    }
}
