//! Maximum weight matching (MWM) on VOQ occupancies: the matching whose matched VOQs hold the
//! most cells. The baseline scheduler of seed 003 §3.1 (item 3): it delivers 100 % throughput
//! for any admissible load (McKeown, Mekkittikul, Anantharam, Walrand, "Achieving 100 %
//! throughput in an input-queued switch", IEEE Trans. Commun. 1999 — the "longest queue first"
//! weight), but is too complex for real routers.
//!
//! Read first: [`super`] (the shared vocabulary and the slot model). Owns the Hungarian algorithm
//! and its tie rule; must not know packets or time (it sees VOQ counts only).
//!
//! Exact, by the Hungarian (Kuhn–Munkres) algorithm with potentials, O(N³) per matching: about
//! 33k inner steps at N = 32. Weights are integers (cells), so the optimum is exact.
//!
//! Ties: when several matchings reach the maximum weight, which one is returned is a fixed
//! function of the occupancies and of the call count. The algorithm takes its rows (inputs) in
//! order and scans its columns (outputs) in order, keeping the first of equal minima, so the
//! earlier of two inputs or outputs wins their tie. Each call therefore relabels both before
//! running: the outputs rotated by `k mod N`, the inputs by `⌊k/N⌋ mod N`, and each order
//! reversed in alternate blocks of N² calls (see `Mwm::labels`). Over 4N² calls every input
//! meets every output equally often at an all-equal tie, and of any two inputs (or outputs)
//! tied for one port each wins half the time. Rotation alone does not do that: the earlier
//! label still goes first in N − 1 of N rotations. (Rotating the outputs only, input 8 of the
//! 8×8 TCP baseline of seed 003 §3.2 dropped four times as often as input 1.)
//! Pairs of weight 0 (empty VOQs) that the algorithm needs to complete its perfect assignment
//! are dropped from the result.

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
    /// The columns outside this row's alternating tree, in ascending order (so that the scan
    /// keeps the first of equal minima, as the textbook's scan over all columns does).
    outside: Vec<usize>,
    /// The columns of this row's alternating tree, in the order they joined it, and the
    /// running sum of the tree steps' deltas when each joined (see `assign`).
    tree: Vec<usize>,
    shift_at_join: Vec<i64>,
    /// This call's costs, row-major over (row, column): filled once per call so that the
    /// O(N³) inner loop reads a flat array instead of relabelling per step.
    cost: Vec<i64>,
    /// This call's labels: the input of each row and the output of each column (0-based).
    input_of_row: Vec<usize>,
    output_of_col: Vec<usize>,
    /// Call count mod 4N²: the tie-breaking relabelling (see `labels`).
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
            outside: Vec::with_capacity(n),
            tree: Vec::with_capacity(n + 1),
            shift_at_join: vec![0; n + 1],
            cost: vec![0; n * n],
            input_of_row: vec![0; n],
            output_of_col: vec![0; n],
            rot: 0,
        }
    }

    /// Sets this call's labels from the call count `rot` (module doc): the outputs rotated by
    /// `rot mod N`, the inputs by `⌊rot/N⌋ mod N`; the outputs' order reversed in odd blocks of
    /// N² calls, the inputs' in odd blocks of 2N².
    fn labels(&mut self) {
        let n = self.n;
        let label = |idx: usize, offset: usize, reversed: bool| {
            if reversed {
                (offset + n - idx) % n
            } else {
                (idx + offset) % n
            }
        };
        let (col_offset, row_offset) = (self.rot % n, self.rot / n % n);
        let (cols_reversed, rows_reversed) = (self.rot / (n * n) % 2 == 1, self.rot / (2 * n * n) == 1);
        for idx in 0..n {
            self.output_of_col[idx] = label(idx, col_offset, cols_reversed);
            self.input_of_row[idx] = label(idx, row_offset, rows_reversed);
        }
    }

    /// Minimum-cost assignment with cost(r, c) = −len(input of row r, output of column c);
    /// leaves `p` filled (1-based: `p[c]` is the row assigned to column c).
    fn assign(&mut self, view: &VoqView) {
        let n = self.n;
        self.labels();
        for r in 0..n {
            let row = view.row(self.input_of_row[r]);
            for c in 0..n {
                self.cost[r * n + c] = -(row[self.output_of_col[c]] as i64);
            }
        }
        // Slices of the exact length n + 1, so that the compiler drops the bounds checks of
        // the O(N³) loop below (which dominates a switch run).
        let Mwm { u, v, p, way, minv, outside, tree, shift_at_join, cost, .. } = self;
        let (u, v, p, way) = (&mut u[..=n], &mut v[..=n], &mut p[..=n], &mut way[..=n]);
        let (minv, shift_at_join) = (&mut minv[..=n], &mut shift_at_join[..=n]);
        u.fill(0);
        v.fill(0);
        p.fill(0);
        way.fill(0);
        for row in 1..=n {
            p[0] = row;
            let mut c0 = 0;
            minv.fill(INF);
            outside.clear();
            outside.extend(1..=n);
            tree.clear();
            // Grow an alternating tree from `row` until it reaches a free column. Each step of
            // the textbook algorithm ends by adding its delta to u (and subtracting it from v)
            // over the tree and subtracting it from every other column's slack. Here the steps'
            // deltas are summed in `shift` instead: the slacks are kept as `minv + shift` (all
            // shifted alike, so every comparison and every first-of-equal-minima choice is the
            // textbook one) and each tree column's potentials get the deltas since it joined
            // once, when the tree is done. Same integers, and one loop per step over only the
            // columns outside the tree, where the textbook has two over all of them.
            let mut shift = 0;
            loop {
                tree.push(c0);
                shift_at_join[c0] = shift;
                let r0 = p[c0];
                let (u0, costs) = (u[r0], &cost[(r0 - 1) * n..r0 * n]);
                let mut lowest = INF;
                let mut k1 = 0;
                for (k, &c) in outside.iter().enumerate() {
                    let cur = costs[c - 1] - u0 - v[c] + shift;
                    if cur < minv[c] {
                        minv[c] = cur;
                        way[c] = c0;
                    }
                    if minv[c] < lowest {
                        lowest = minv[c];
                        k1 = k;
                    }
                }
                // This step's delta is lowest − shift; the running sum becomes lowest.
                shift = lowest;
                c0 = outside.remove(k1);
                if p[c0] == 0 {
                    break;
                }
            }
            for &c in tree.iter() {
                let gained = shift - shift_at_join[c];
                u[p[c]] += gained;
                v[c] -= gained;
            }
            // Flip the augmenting path.
            loop {
                let c1 = way[c0];
                p[c0] = p[c1];
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
            let (i, j) = (self.input_of_row[self.p[c] - 1], self.output_of_col[c - 1]);
            if view.len(i, j) > 0 {
                out.add(i, j);
            }
        }
        self.rot = (self.rot + 1) % (4 * self.n * self.n);
    }

    /// Every call moves the tie rotation on, whatever the occupancies.
    fn idle(&mut self, phases: u64) {
        let period = (4 * self.n * self.n) as u64;
        self.rot = ((self.rot as u64 + phases % period) % period) as usize;
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
    fn every_input_and_output_wins_ties_in_turn() {
        for n in [2, 3, 4, 8] {
            let period = 4 * n * n;
            let mut s = Mwm::new(n);
            let mut m = Matching::new(n);
            // One cell at every VOQ: every perfect matching ties. Over a period each input
            // meets each output equally often.
            let view = VoqView::from_lens(n, &vec![1; n * n]);
            let mut count = vec![0; n * n];
            for _ in 0..period {
                s.schedule(&view, &mut m);
                m.pairs().for_each(|(i, j)| count[i * n + j] += 1);
            }
            assert_eq!(count, vec![period / n; n * n], "n = {n}");
            // Any two inputs tied for one output, and any two outputs tied for one input: each
            // wins half the time.
            for (a, b) in (0..n).flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b))) {
                let mut lens = vec![0; n * n];
                (lens[a * n], lens[b * n]) = (1, 1);
                let inputs = VoqView::from_lens(n, &lens);
                let mut lens = vec![0; n * n];
                (lens[a], lens[b]) = (1, 1);
                let outputs = VoqView::from_lens(n, &lens);
                let mut wins = |view: &VoqView, won: &dyn Fn(&Matching) -> bool| {
                    (0..period)
                        .filter(|_| {
                            s.schedule(view, &mut m);
                            won(&m)
                        })
                        .count()
                };
                let input_wins = wins(&inputs, &|m| m.input_of(0) == Some(a));
                let output_wins = wins(&outputs, &|m| m.output_of(0) == Some(a));
                assert_eq!((input_wins, output_wins), (period / 2, period / 2), "n = {n}: {a} vs {b}");
            }
        }
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

    /// The textbook Hungarian algorithm (e-maxx's O(n³) form, both potential updates every
    /// step) on a row-major cost matrix: the column assigned to each row, 0-based.
    fn textbook_assignment(n: usize, cost: &[i64]) -> Vec<usize> {
        let (mut u, mut v, mut p, mut way) = (vec![0; n + 1], vec![0; n + 1], vec![0; n + 1], vec![0; n + 1]);
        for row in 1..=n {
            p[0] = row;
            let mut c0 = 0;
            let (mut minv, mut used) = (vec![INF; n + 1], vec![false; n + 1]);
            loop {
                used[c0] = true;
                let r0 = p[c0];
                let (mut delta, mut c1) = (INF, 0);
                for c in 1..=n {
                    if !used[c] {
                        let cur = cost[(r0 - 1) * n + c - 1] - u[r0] - v[c];
                        if cur < minv[c] {
                            minv[c] = cur;
                            way[c] = c0;
                        }
                        if minv[c] < delta {
                            delta = minv[c];
                            c1 = c;
                        }
                    }
                }
                for c in 0..=n {
                    if used[c] {
                        u[p[c]] += delta;
                        v[c] -= delta;
                    } else {
                        minv[c] -= delta;
                    }
                }
                c0 = c1;
                if p[c0] == 0 {
                    break;
                }
            }
            loop {
                let c1 = way[c0];
                p[c0] = p[c1];
                c0 = c1;
                if c0 == 0 {
                    break;
                }
            }
        }
        let mut col_of_row = vec![0; n];
        for c in 1..=n {
            col_of_row[p[c] - 1] = c - 1;
        }
        col_of_row
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// The lazy potential updates of `assign` change no step of the textbook algorithm:
        /// the same assignment, ties included, for every matrix and tie rotation. (The switch
        /// results of the recipes were measured with the textbook form.)
        #[test]
        fn assignment_equals_the_textbook_algorithm(
            n in 1usize..=12,
            lens in proptest::collection::vec((0u32..12).prop_map(|x| x.saturating_sub(6)), 144),
            calls in 1usize..=8,
        ) {
            let view = VoqView::from_lens(n, &lens[..n * n]);
            let mut s = Mwm::new(n);
            for _ in 0..calls {
                s.assign(&view);
                let expected = textbook_assignment(n, &s.cost);
                let mut got = vec![0; n];
                for c in 1..=n {
                    got[s.p[c] - 1] = c - 1;
                }
                prop_assert_eq!(got, expected);
                s.rot = (s.rot + 1) % (4 * n * n);
            }
        }

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
