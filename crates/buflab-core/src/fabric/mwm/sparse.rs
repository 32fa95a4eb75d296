//! MWM's Hungarian algorithm for sparse matrices, step by step as the vectorised pass takes
//! it but visiting only the non-empty VOQs: for switches whose VOQs are mostly empty (recipe
//! S4's 1-packet VOQs). See [`solve_sparse`].
//!
//! Read first: [`super`] (the keys, the workspace and the tie rule), then [`super::dense`]
//! (the same steps, one pass over every column each). Owns the sparse search and its bit
//! sets; must not know the labels beyond the columns it is given.

use std::cmp::Ordering;

use super::{flip_path, trace_path, Key, Workspace};
use crate::fabric::VoqView;

/// Non-empty VOQs per row (on average) up to which [`solve_sparse`] runs instead of the
/// vectorised pass, in switches of at least [`SPARSE_FROM_PORTS`] ports. Measured on the
/// switch benchmark: at 8 and 16 ports, where a step of the pass is one or two AVX2
/// instructions a column block, the pass was as fast or faster whatever the occupancy; at 32
/// ports with 1-packet VOQs the sparse search made the whole run about 20 % faster.
pub(super) const SPARSE_PER_ROW: usize = 4;
pub(super) const SPARSE_FROM_PORTS: usize = 32;

/// A set of columns, one bit each.
#[derive(Clone, Debug)]
struct ColumnSet(Vec<u64>);

impl ColumnSet {
    fn new(n: usize) -> ColumnSet {
        ColumnSet(vec![0; n.div_ceil(64)])
    }
    fn fill(&mut self, n: usize) {
        self.0.fill(!0);
        if !n.is_multiple_of(64) {
            *self.0.last_mut().expect("n > 0") = (1 << (n % 64)) - 1;
        }
    }
    fn clear(&mut self) {
        self.0.fill(0);
    }
    #[inline(always)]
    fn contains(&self, c: usize) -> bool {
        self.0[c / 64] >> (c % 64) & 1 == 1
    }
    #[inline(always)]
    fn insert(&mut self, c: usize) {
        self.0[c / 64] |= 1 << (c % 64);
    }
    #[inline(always)]
    fn remove(&mut self, c: usize) {
        self.0[c / 64] &= !(1 << (c % 64));
    }
    /// The first column in `self` and not in `other`.
    #[inline(always)]
    fn first_not_in(&self, other: &ColumnSet) -> Option<usize> {
        let words = self.0.iter().zip(&other.0).map(|(&a, &b)| a & !b);
        words.enumerate().find(|&(_, w)| w != 0).map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }
}

/// The non-empty VOQs of one call, row by row in its labels, and [`solve_sparse`]'s arrays.
#[derive(Clone, Debug)]
pub(super) struct Sparse {
    /// Row r's (0-based) non-empty VOQs are entries `start[r]..start[r + 1]`: their columns
    /// (0-based) and cells.
    start: Vec<u32>,
    col: Vec<u32>,
    len: Vec<u32>,
    /// The columns whose potential v is still 0 (every free column is one).
    untouched_v: ColumnSet,
    /// The columns in the current row's tree.
    closed: ColumnSet,
    /// The matched columns whose row is quiet: no non-empty VOQ and potential u ≤ 0, so that
    /// a step of its row after a pick by the dense part lowers no key (see `solve_sparse`).
    quiet: ColumnSet,
    /// The columns whose key a non-empty VOQ of the tree's rows has set in this row's search.
    touched: Vec<u32>,
    /// The columns (1-based) whose row or its potential changed in this row's search.
    moved: Vec<u32>,
    /// Per column (0-based), the step (an index into this row's tree) whose row set its
    /// sparse key (see `solve_sparse`'s back-pointers).
    sparse_step: Vec<u32>,
    /// Per column (1-based), its back-pointer as a step (an index into this row's tree), set
    /// when it joins the tree or is the free column found.
    back: Vec<u32>,
    /// The columns of the VOQs gathered so far (to see whether two share one).
    gathered: ColumnSet,
}

impl Sparse {
    pub(super) fn new(n: usize) -> Sparse {
        Sparse {
            start: vec![0; n + 1],
            col: vec![0; n * n],
            len: vec![0; n * n],
            untouched_v: ColumnSet::new(n),
            closed: ColumnSet::new(n),
            quiet: ColumnSet::new(n),
            touched: Vec::with_capacity(n),
            moved: Vec::with_capacity(2 * n + 2),
            sparse_step: vec![0; n],
            back: vec![0; n + 1],
            gathered: ColumnSet::new(n),
        }
    }

    /// The run of quiet columns that the dense part picks after quiet column `k` (just closed,
    /// the first open column of v = 0): the open columns of v = 0 after it, in order, up to the
    /// first that is not quiet or whose dense key is not below the least sparse one (column
    /// index below `below`, the least sparse key minus the dense part). Closes each, gives it
    /// the back-pointer `back` (the step of the least offset: each is picked by its dense key)
    /// and calls `join` with it.
    fn run_of_quiet<T: Key>(&mut self, k: usize, below: T, back: u32, mut join: impl FnMut(usize)) {
        let words = self.closed.0.len();
        let below = if below >= T::of(words as u64 * 64) { words * 64 } else { below.index() };
        for w in k / 64..words {
            let open = self.untouched_v.0[w] & !self.closed.0[w];
            // The columns from `below` on, in this word.
            let beyond = match below.saturating_sub(w * 64) {
                0 => !0,
                b if b >= 64 => 0,
                b => !((1u64 << b) - 1),
            };
            // The run ends before the first open column that is not quiet, or is beyond.
            let stop = (open & !self.quiet.0[w]) | beyond;
            let run = open & (stop & stop.wrapping_neg()).wrapping_sub(1);
            let mut bits = run;
            while bits != 0 {
                let c = w * 64 + bits.trailing_zeros() as usize;
                self.back[c + 1] = back;
                join(c);
                bits &= bits - 1;
            }
            self.closed.0[w] |= run;
            if stop != 0 {
                break;
            }
        }
    }

    /// Gathers the non-empty VOQs of `view` in this call's labels, if there are at most
    /// `limit` of them: None if there were more, else whether no two share a row or a column.
    pub(super) fn gather(
        &mut self,
        view: &VoqView,
        input_of_row: &[usize],
        col_of_output: &[u32],
        limit: usize,
    ) -> Option<bool> {
        let mut k = 0;
        let mut disjoint = true;
        self.gathered.clear();
        for (r, &input) in input_of_row.iter().enumerate() {
            for out in view.nonempty_outputs(input) {
                if k == limit {
                    return None;
                }
                let c = col_of_output[out];
                disjoint &= !self.gathered.contains(c as usize) && k == self.start[r] as usize;
                self.gathered.insert(c as usize);
                (self.col[k], self.len[k]) = (c, view.len(input, out));
                k += 1;
            }
            self.start[r + 1] = k as u32;
        }
        Some(disjoint)
    }

    /// The gathered VOQs (row, column), 0-based.
    pub(super) fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.start.len() - 1).flat_map(move |r| {
            (self.start[r] as usize..self.start[r + 1] as usize).map(move |k| (r, self.col[k] as usize))
        })
    }
}

/// The Hungarian algorithm as [`solve`] runs it — the same keys, steps and ties — for a
/// sparse matrix: most VOQs empty, as in recipe S4's switches with 1-packet VOQs (about 20 of
/// 1,024 non-empty at 32 ports). A row's key of column c is the minimum over its steps of
/// cost − v[c] + offset, and with cost 0 at every empty VOQ it splits into a dense part,
/// (the least offset so far) − v[c], and a sparse part from the steps whose row has a cell for
/// c. The least dense part among the columns not in the tree is at the first of them whose v
/// is 0: potentials v only fall, and a free column's is still 0 (it changes only while the
/// column is in a tree, and a tree holds matched columns), so one is always open, and in a key
/// −v·2^b + c every column of v = 0 comes before any other. So a step visits its row's
/// non-empty VOQs only and finds the least key in two bit sets and the least sparse key.
///
/// Most steps change nothing (five in six in the S4 32-port runs): the dense part picked a
/// column whose row has no cells and u ≤ 0, so its offset is no lower than the least so far.
/// The picks after it then follow the open columns of v = 0 in order, for as long as each is
/// such a quiet column and its dense key stays below the least sparse key; that run joins the
/// tree in one pass over a word of bits. (Such a step never sets a back-pointer either: its
/// keys are no lower than those of the step that set the least offset.)
///
/// Back-pointers (the textbook's `way`: for each column, the first step whose row gave it its
/// lowest key) are known when a column joins the tree, or is found free, from two steps: the
/// one that set its sparse key (a step replaces it only with a strictly lower key, so it is
/// the first) and the first to reach the least offset, whose dense key is the column's lowest
/// from any step whose row has no cell for it; of the two the lower key, or on a tie the
/// earlier step. The vectorised pass recomputes them afterwards instead (`path_step`), for
/// the path's columns only; here that recomputation took a tenth of a 32-port run.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_sparse<T: Key>(
    n: usize,
    bits: u32,
    bias: T,
    ws: &mut Workspace<T>,
    sp: &mut Sparse,
    p: &mut [usize],
    way: &mut [u32],
    tree: &mut Vec<usize>,
) {
    let Workspace { u, vkey, key, shift_at_join, .. } = ws;
    let scale = T::of(1 << bits);
    u.fill(T::ZERO);
    for (c, vk) in vkey.iter_mut().enumerate() {
        *vk = -T::of(c as u64);
    }
    p.fill(0);
    key.fill(T::OPEN);
    sp.untouched_v.fill(n);
    sp.quiet.clear();
    sp.touched.clear();
    for row in 1..=n {
        p[0] = row;
        let mut c0 = 0;
        tree.clear();
        sp.closed.clear();
        for &c in &sp.touched {
            key[c as usize] = T::OPEN;
        }
        sp.touched.clear();
        // The least offset so far (the dense part) and the first step to reach it, and the
        // least sparse key of an open column.
        let (mut shift, mut dense, mut dense_step, mut least_sparse) = (T::ZERO, T::OPEN, 0, T::OPEN);
        'search: loop {
            let step = tree.len() as u32;
            tree.push(c0);
            shift_at_join[c0] = shift;
            let r0 = p[c0];
            let offset = (shift - u[r0] + bias) * scale;
            if offset < dense {
                (dense, dense_step) = (offset, step);
            }
            let cells = sp.start[r0 - 1] as usize..sp.start[r0] as usize;
            for (&c, &len) in sp.col[cells.clone()].iter().zip(&sp.len[cells]) {
                let c = c as usize;
                let cand = offset - T::of(len as u64) * scale - vkey[c];
                if cand < key[c] && !sp.closed.contains(c) {
                    if key[c] == T::OPEN {
                        sp.touched.push(c as u32);
                    }
                    key[c] = cand;
                    sp.sparse_step[c] = step;
                    least_sparse = least_sparse.min(cand);
                }
            }
            loop {
                let first = sp.untouched_v.first_not_in(&sp.closed).expect("a free column is open");
                let dense_key = dense - vkey[first];
                let lowest = least_sparse.min(dense_key);
                let (k, slack) = lowest.split(bits);
                shift = slack - bias;
                c0 = k + 1;
                sp.back[c0] = match key[k].cmp(&(dense - vkey[k])) {
                    Ordering::Less => sp.sparse_step[k],
                    Ordering::Greater => dense_step,
                    Ordering::Equal => sp.sparse_step[k].min(dense_step),
                };
                if p[c0] == 0 {
                    break 'search;
                }
                sp.closed.insert(k);
                if key[k] == least_sparse {
                    // The least sparse key's column joined the tree: the next least.
                    least_sparse = T::OPEN;
                    for &c in &sp.touched {
                        if !sp.closed.contains(c as usize) {
                            least_sparse = least_sparse.min(key[c as usize]);
                        }
                    }
                }
                if lowest != dense_key || !sp.quiet.contains(k) {
                    continue 'search;
                }
                // A quiet column picked by the dense part (module doc above): it and the run
                // of quiet open columns of v = 0 after it, each below the least sparse key,
                // join the tree with this shift; their steps change no key.
                tree.push(c0);
                shift_at_join[c0] = shift;
                sp.run_of_quiet(k, least_sparse - dense, dense_step, |c| {
                    tree.push(c + 1);
                    shift_at_join[c + 1] = shift;
                });
            }
        }
        trace_path(c0, tree, way, |c, _| sp.back[c] as usize);
        // The potentials: most of the tree joined with the final shift and gains nothing. The
        // columns whose row's u moved, and the path's (whose rows move), may change quietness.
        sp.moved.clear();
        for &c in tree.iter() {
            let gained = shift - shift_at_join[c];
            if gained != T::ZERO {
                u[p[c]] = u[p[c]] + gained;
                if c > 0 {
                    vkey[c - 1] = vkey[c - 1] - gained * scale;
                    sp.untouched_v.remove(c - 1);
                    sp.moved.push(c as u32);
                }
            }
        }
        flip_path(c0, way, p, |c| sp.moved.push(c as u32));
        for &c in &sp.moved {
            let (c, r) = (c as usize, p[c as usize]);
            if sp.start[r - 1] == sp.start[r] && u[r] <= T::ZERO {
                sp.quiet.insert(c - 1);
            } else {
                sp.quiet.remove(c - 1);
            }
        }
    }
}
