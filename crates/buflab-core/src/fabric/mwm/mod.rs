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
//! 33k inner steps at N = 32 at worst. Weights are integers (cells), so the optimum is exact.
//! Two computations of the same steps, chosen per call by how many VOQs hold cells (the tests
//! check both against the textbook algorithm, ties included):
//! - [`dense`]: each step one vectorised pass over all N columns;
//! - [`sparse`]: each step visits the non-empty VOQs of its row only, and runs of steps that
//!   change no key join the tree as a word of bits. In the S4 32-port runs about 20 of 1,024
//!   VOQs hold a cell and a matching takes about 400 steps, five in six of them such no-ops.
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

mod dense;
mod sparse;

use super::{Matching, Scheduler, VoqView};
use dense::solve;
#[cfg(target_arch = "x86_64")]
use dense::solve_avx2;
use sparse::{solve_sparse, Sparse, SPARSE_FROM_PORTS, SPARSE_PER_ROW};

/// Largest N: a column index then takes at most 12 bits of a key (see [`Key`]).
const MAX_N: usize = 1 << 12;

/// The integer type of one call's keys, costs and potentials.
///
/// A column's slack is kept as a *key*, `(slack + bias)·2^b + c` with c the column (0-based)
/// and b the bits of N − 1, so that the smallest key is the smallest slack and, of equal
/// slacks, the first column: the textbook's choice in one minimum. The bounds: with L at
/// least the longest VOQ of the call (the most cells any VOQ has held), the costs −len lie in
/// [−L, 0]; within one row's search the
/// running shift stays in [−L, 0] (its first step can be negative, each later one adds a
/// non-negative reduced cost, and it never passes the slack of a free column, whose potential
/// is still 0); so a row moves each potential by at most L, and u ∈ [−L, N·L], v ∈ [−N·L, 0];
/// a slack, cost − u − v + shift, lies in [−(N + 2)·L, (N + 1)·L]. With bias (N + 2)·L every
/// key, and every partial sum forming one, lies in [0, ((2N + 3)·L + 1)·2^b). `i32` is used
/// when that is below 2³¹ (eight columns per AVX2 instruction); else `i64`, which holds it for
/// every VOQ length below 2³² at N ≤ [`MAX_N`].
trait Key:
    Copy
    + Ord
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// A slack not yet set: above every key.
    const OPEN: Self;
    /// A column in the tree: below every key as a signed number (so no slack replaces it),
    /// above every key as an unsigned one (so the minimum never picks it).
    const CLOSED: Self;
    const ZERO: Self;
    /// Bound (inclusive) on the keys this type holds: [`Key::OPEN`].
    const LIMIT: u128;
    /// The same bits as an unsigned number.
    type Unsigned: Copy + Ord;
    fn unsigned(self) -> Self::Unsigned;
    fn signed(u: Self::Unsigned) -> Self;
    fn of(x: u64) -> Self;
    /// The column of a key (the low `bits` bits) and its slack plus the bias.
    fn split(self, bits: u32) -> (usize, Self);
    /// A non-negative value as an index.
    fn index(self) -> usize;
    /// This type's arrays, of the two an [`Mwm`] holds.
    fn workspace<'a>(narrow: &'a mut Workspace<i32>, wide: &'a mut Workspace<i64>)
        -> &'a mut Workspace<Self>;
}

/// `Key` for a signed integer `$t` of unsigned twin `$u`; `$pick` chooses its workspace of
/// the two, 0 the narrow and 1 the wide. The two widths differ only in these names.
macro_rules! key_impl {
    ($t:ty, $u:ty, $pick:tt) => {
        impl Key for $t {
            const OPEN: $t = <$t>::MAX;
            const CLOSED: $t = <$t>::MIN;
            const ZERO: $t = 0;
            const LIMIT: u128 = <$t>::MAX as u128;
            type Unsigned = $u;
            #[inline(always)]
            fn unsigned(self) -> $u {
                self as $u
            }
            #[inline(always)]
            fn signed(u: $u) -> $t {
                u as $t
            }
            #[inline(always)]
            fn of(x: u64) -> $t {
                x as $t
            }
            #[inline(always)]
            fn split(self, bits: u32) -> (usize, $t) {
                ((self & ((1 << bits) - 1)) as usize, self >> bits)
            }
            #[inline(always)]
            fn index(self) -> usize {
                self as usize
            }
            fn workspace<'a>(
                narrow: &'a mut Workspace<i32>,
                wide: &'a mut Workspace<i64>,
            ) -> &'a mut Workspace<$t> {
                (narrow, wide).$pick
            }
        }
    };
}

key_impl!(i32, u32, 0);
key_impl!(i64, u64, 1);

/// The Hungarian algorithm's arrays of one key type, allocated once for N.
#[derive(Clone, Debug)]
struct Workspace<T> {
    /// Row potentials (1-based; index 0 unused).
    u: Vec<T>,
    /// Column potentials as `v·2^b − c` (0-based), so that a key is `cost·2^b − vkey + offset`.
    vkey: Vec<T>,
    /// Each column's slack key (0-based), [`Key::CLOSED`] once the column is in the tree.
    key: Vec<T>,
    /// The running sum of the tree steps' deltas when each column joined (1-based, index 0
    /// the virtual column; see `solve`).
    shift_at_join: Vec<T>,
    /// This call's costs times 2^b, row-major over (row, column), 0-based.
    cost: Vec<T>,
}

impl<T: Key> Workspace<T> {
    fn new(n: usize) -> Workspace<T> {
        Workspace {
            u: vec![T::ZERO; n + 1],
            vkey: vec![T::ZERO; n],
            key: vec![T::OPEN; n],
            shift_at_join: vec![T::ZERO; n + 1],
            cost: vec![T::ZERO; n * n],
        }
    }
}

/// Workspace of the Hungarian algorithm, allocated once for N.
#[derive(Clone, Debug)]
pub struct Mwm {
    n: usize,
    /// Bits of the largest column index, N − 1.
    bits: u32,
    /// `p[c]`: row assigned to column c (1-based, 0 = none; index 0 is the virtual column).
    p: Vec<usize>,
    /// Augmenting path back-pointers, set for the path's columns only (1-based).
    way: Vec<u32>,
    /// The columns of this row's alternating tree, in the order they joined it.
    tree: Vec<usize>,
    narrow: Workspace<i32>,
    wide: Workspace<i64>,
    /// This call's labels: the input of each row and the output of each column (0-based).
    input_of_row: Vec<usize>,
    output_of_col: Vec<usize>,
    /// The inverse of `output_of_col`: each output's column.
    col_of_output: Vec<u32>,
    sparse: Sparse,
    /// Non-empty VOQs up to which a call runs [`solve_sparse`] (the tests set it to check both).
    sparse_limit: usize,
    /// Call count mod 4N²: the tie-breaking relabelling (see `labels`).
    rot: usize,
    /// Whether this CPU has AVX2, for `solve`'s pass (eight `i32` columns per instruction;
    /// the portable build has SSE2's four, and no packed minimum). The same integers either way.
    #[cfg(target_arch = "x86_64")]
    avx2: bool,
}

impl Mwm {
    pub fn new(n: usize) -> Mwm {
        assert!((1..=MAX_N).contains(&n), "MWM takes 1 to {MAX_N} ports, not {n}");
        Mwm {
            n,
            bits: usize::BITS - (n - 1).leading_zeros(),
            p: vec![0; n + 1],
            way: vec![0; n + 1],
            tree: Vec::with_capacity(n + 1),
            narrow: Workspace::new(n),
            wide: Workspace::new(n),
            input_of_row: vec![0; n],
            output_of_col: vec![0; n],
            col_of_output: vec![0; n],
            sparse: Sparse::new(n),
            sparse_limit: if n >= SPARSE_FROM_PORTS { SPARSE_PER_ROW * n } else { 0 },
            rot: 0,
            #[cfg(target_arch = "x86_64")]
            avx2: std::arch::is_x86_feature_detected!("avx2"),
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
        for (c, &out) in self.output_of_col.iter().enumerate() {
            self.col_of_output[out] = c as u32;
        }
    }

    /// A bound L on the longest VOQ of `view` (see [`VoqView::longest_bound`]: any L at least
    /// the longest keeps the bounds of [`Key`]), and the bound on every key of a call on it.
    fn key_bound(&self, view: &VoqView) -> (u64, u128) {
        let longest = view.longest_bound() as u64;
        (longest, ((2 * self.n as u128 + 3) * longest as u128 + 1) << self.bits)
    }

    /// Minimum-cost assignment with cost(r, c) = −len(input of row r, output of column c);
    /// leaves `p` filled (1-based: `p[c]` is the row assigned to column c). In `i32` keys when
    /// the longest VOQ allows it (see [`Key`]), else in `i64`: the same integers either way.
    #[cfg(test)]
    fn assign(&mut self, view: &VoqView) {
        self.assign_unless_forced(view, false);
    }

    /// As `assign`, but with `may_skip`, when the sparse search gathers VOQs no two of which
    /// share an input or an output, it returns false and leaves `p` alone: such a set is
    /// itself a matching, and every maximum-weight matching holds all of it (one without a
    /// non-empty VOQ (i, j) has i and j matched at weight 0 or not at all, and trading those
    /// pairs for (i, j) weighs more), so the Hungarian's answer, whatever its tie rule, is
    /// that set once its pairs of weight 0 are dropped. About one call in nine of recipe S4's
    /// 32-port runs (17.7 non-empty VOQs a call on average).
    fn assign_unless_forced(&mut self, view: &VoqView, may_skip: bool) -> bool {
        self.labels();
        let bounds = self.key_bound(view);
        if bounds.1 <= <i32 as Key>::LIMIT {
            self.assign_in::<i32>(view, bounds, may_skip)
        } else {
            self.assign_in::<i64>(view, bounds, may_skip)
        }
    }

    /// `assign_unless_forced` in keys of type `T`, with `view`'s `key_bound`.
    fn assign_in<T: Key>(&mut self, view: &VoqView, (longest, bound): (u64, u128), may_skip: bool) -> bool {
        let (n, bits) = (self.n, self.bits);
        debug_assert!(bound <= T::LIMIT, "keys up to {bound} in {}", std::any::type_name::<T>());
        let bias = T::of((n as u64 + 2) * longest);
        let scale = T::of(1 << bits);
        let ws = T::workspace(&mut self.narrow, &mut self.wide);
        let (p, way, tree) = (&mut self.p, &mut self.way, &mut self.tree);
        let (input_of_row, output_of_col) = (&self.input_of_row, &self.output_of_col);
        if let Some(disjoint) = self.sparse.gather(view, input_of_row, &self.col_of_output, self.sparse_limit)
        {
            if disjoint && may_skip {
                return false;
            }
            solve_sparse(n, bits, bias, ws, &mut self.sparse, p, way, tree);
            return true;
        }
        for (costs, &input) in ws.cost.chunks_exact_mut(n).zip(input_of_row) {
            let row = view.row(input);
            for (cost, &out) in costs.iter_mut().zip(output_of_col) {
                *cost = -T::of(row[out] as u64) * scale;
            }
        }
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: this CPU has AVX2 (checked when the workspace was built).
            unsafe { solve_avx2(n, bits, bias, ws, p, way, tree) };
            return true;
        }
        solve(n, bits, bias, ws, p, way, tree);
        true
    }
}

/// Sets the back-pointers `way` along the augmenting path, from the free column `free` back
/// to the virtual column 0, before the potentials move: `back(c, steps)` is the index in
/// `tree` of the step that gave column c its lowest key among the first `steps` (see
/// [`path_step`]). The free column's key was lowered by the rows of every step; a tree
/// column's by those of the steps before it joined.
fn trace_path(free: usize, tree: &[usize], way: &mut [u32], mut back: impl FnMut(usize, usize) -> usize) {
    way[free] = 0;
    let (mut c, mut steps) = (free, tree.len());
    while c != 0 {
        let s = back(c, steps);
        way[c] = tree[s] as u32;
        (c, steps) = (tree[s], s);
    }
}

/// Flips the augmenting path from the free column `free`: each of its columns takes the row
/// of the column before it, the virtual column's (the new row) going to the first. `moved`
/// sees each column whose row changed.
fn flip_path(free: usize, way: &[u32], p: &mut [usize], mut moved: impl FnMut(usize)) {
    let mut c0 = free;
    while c0 != 0 {
        let c1 = way[c0] as usize;
        p[c0] = p[c1];
        moved(c0);
        c0 = c1;
    }
}

/// The textbook's back-pointer of column `c` (1-based): the first of the search's steps
/// `steps` (pairs of an index into the tree and the tree column there, in join order) whose
/// row gave `c` its lowest key, as its index in the tree. The same keys as the pass computed, so the same comparisons: a step replaces the
/// pointer only with a strictly lower key.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn path_step<T: Key>(
    bits: u32,
    bias: T,
    c: usize,
    steps: impl Iterator<Item = (usize, usize)>,
    cost_at: impl Fn(usize, usize) -> T,
    u: &[T],
    vkey: &[T],
    shift_at_join: &[T],
    p: &[usize],
) -> usize {
    let scale = T::of(1 << bits);
    let (mut best, mut at) = (T::OPEN, 0);
    for (s, t) in steps {
        let r = p[t];
        let cand = cost_at(r, c) - vkey[c - 1] + (shift_at_join[t] - u[r] + bias) * scale;
        if cand < best {
            (best, at) = (cand, s);
        }
    }
    at
}

impl Mwm {
    /// The pairs of `assign`'s assignment that have cells (the Hungarian completes its
    /// assignment with pairs of weight 0, which are no part of the matching).
    fn take_assigned(&self, view: &VoqView, out: &mut Matching) {
        for c in 1..=self.n {
            let (i, j) = (self.input_of_row[self.p[c] - 1], self.output_of_col[c - 1]);
            if view.len(i, j) > 0 {
                out.add(i, j);
            }
        }
    }
}

impl Scheduler for Mwm {
    fn schedule(&mut self, view: &VoqView, out: &mut Matching) {
        debug_assert_eq!(view.n(), self.n);
        out.clear();
        if self.assign_unless_forced(view, true) {
            self.take_assigned(view, out);
        } else {
            for (r, c) in self.sparse.pairs() {
                out.add(self.input_of_row[r], self.output_of_col[c]);
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
        const INF: i64 = i64::MAX / 4;
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

    /// A view with the given row-major occupancies times `scale`, set directly (pushing
    /// 2²⁸ cells one by one would take too long).
    fn view_of(n: usize, lens: &[u32], scale: u32) -> VoqView {
        let mut view = VoqView::new(n);
        for (k, &l) in lens.iter().enumerate().take(n * n) {
            view.set_len(k / n, k % n, l * scale);
        }
        view
    }

    /// One call of `assign` at the current rotation against the textbook algorithm on the
    /// same labelled costs: in the key width `assign` picks, in `i64` keys, and without AVX2;
    /// then moves the rotation on.
    fn check_call(s: &mut Mwm, view: &VoqView) -> Result<(), TestCaseError> {
        let n = s.n;
        let assignment = |s: &Mwm| {
            let mut col_of_row = vec![0; n];
            for c in 1..=n {
                col_of_row[s.p[c] - 1] = c - 1;
            }
            col_of_row
        };
        s.assign(view);
        let cost: Vec<i64> =
            (0..n * n).map(|k| -(view.len(s.input_of_row[k / n], s.output_of_col[k % n]) as i64)).collect();
        let expected = textbook_assignment(n, &cost);
        prop_assert_eq!(assignment(s), expected.clone());
        // Both solvers, the vectorised pass (0) and the sparse one (all), in both widths.
        let auto = s.sparse_limit;
        for limit in [0, usize::MAX] {
            s.sparse_limit = limit;
            s.assign(view);
            prop_assert_eq!(assignment(s), expected.clone());
            s.assign_in::<i64>(view, s.key_bound(view), false);
            prop_assert_eq!(assignment(s), expected.clone());
        }
        s.sparse_limit = 0;
        // The portable build of the pass, where this CPU would take the AVX2 one.
        #[cfg(target_arch = "x86_64")]
        {
            s.avx2 = false;
            s.assign(view);
            s.avx2 = std::arch::is_x86_feature_detected!("avx2");
            prop_assert_eq!(assignment(s), expected);
        }
        s.sparse_limit = auto;
        s.rot = (s.rot + 1) % (4 * n * n);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// `assign`'s lazy potentials, keys and `i32` arithmetic change no step of the
        /// textbook algorithm: the same assignment, ties included, for every matrix and tie
        /// rotation, in either width. (The switch results of the recipes were measured with
        /// the textbook form.) Small weights, many ties; `scale` multiplies them up to where
        /// `assign` must take `i64` (2²⁸ · 5 · 26 > 2³⁰ at N = 12).
        #[test]
        fn assignment_equals_the_textbook_algorithm(
            n in 1usize..=12,
            lens in proptest::collection::vec((0u32..12).prop_map(|x| x.saturating_sub(6)), 144),
            calls in 1usize..=8,
            scale in prop_oneof![Just(1u32), Just(1 << 28)],
        ) {
            let view = view_of(n, &lens[..n * n], scale);
            let mut s = Mwm::new(n);
            for _ in 0..calls {
                check_call(&mut s, &view)?;
            }
        }

        /// The same at the switch sizes of recipe S4 and up to the largest switch (64 ports),
        /// with the VOQs of at most one cell that its 1-packet VOQs give (ties everywhere),
        /// and from a random point of the tie rotation.
        #[test]
        fn large_switches_assign_as_the_textbook_algorithm(
            n in prop_oneof![Just(16usize), Just(32), 1usize..=64],
            lens in proptest::collection::vec((0u32..5).prop_map(|x| x.saturating_sub(3)), 64 * 64),
            rot in 0usize..4 * 64 * 64,
            calls in 1usize..=3,
        ) {
            let view = view_of(n, &lens[..n * n], 1);
            let mut s = Mwm::new(n);
            s.rot = rot % (4 * n * n);
            for _ in 0..calls {
                check_call(&mut s, &view)?;
            }
        }

        /// The same for sparse matrices, the case [`solve_sparse`] is for (and which the
        /// cases above, half or a fifth of their VOQs non-empty, seldom give it): up to four
        /// non-empty VOQs per row of 1 to 3 cells, from a random point of the tie rotation.
        #[test]
        fn sparse_switches_assign_as_the_textbook_algorithm(
            n in 1usize..=40,
            cells in proptest::collection::vec((0usize..40, 0usize..40, 1u32..=3), 0..160),
            rot in 0usize..4 * 40 * 40,
            calls in 1usize..=3,
        ) {
            let mut lens = vec![0; n * n];
            for &(i, j, len) in cells.iter().take(4 * n) {
                lens[i % n * n + j % n] = len;
            }
            let view = view_of(n, &lens, 1);
            let mut s = Mwm::new(n);
            s.rot = rot % (4 * n * n);
            for _ in 0..calls {
                check_call(&mut s, &view)?;
            }
        }

        /// `schedule` answers as the Hungarian does, ties included, also where it skips it
        /// (`assign_unless_forced`): against the pairs of positive weight of `assign`'s assignment
        /// at the same rotation, over views of few non-empty VOQs (most calls disjoint, many
        /// not: two on one input or one output) and from a random point of the rotation.
        #[test]
        fn schedule_is_the_hungarians_matching_where_it_skips_it_too(
            n in 1usize..=40,
            cells in proptest::collection::vec((0usize..40, 0usize..40, 1u32..=3), 0..12),
            rot in 0usize..4 * 40 * 40,
        ) {
            let mut lens = vec![0; n * n];
            for &(i, j, len) in &cells {
                lens[i % n * n + j % n] = len;
            }
            let view = view_of(n, &lens, 1);
            let mut s = Mwm::new(n);
            s.rot = rot % (4 * n * n);
            let mut reference = Mwm::new(n);
            reference.rot = s.rot;
            reference.assign(&view);
            let mut expected = Matching::new(n);
            reference.take_assigned(&view, &mut expected);
            let mut m = Matching::new(n);
            s.schedule(&view, &mut m);
            prop_assert_eq!(m, expected);
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
