//! MWM's Hungarian algorithm as one vectorised pass over the columns per step: for matrices
//! with cells in many VOQs (the 8×8 baselines, diagonal loads). See [`solve`].
//!
//! Read first: [`super`] (the keys, the workspace and the tie rule). Owns the pass; must not
//! know the labels or the view.

use super::{flip_path, path_step, trace_path, Key, Workspace};

/// The Hungarian algorithm (Kuhn–Munkres with potentials, rows added one at a time) on
/// `ws.cost`; leaves `p` filled. The textbook's steps and ties exactly (the tests check it
/// against the textbook form), computed so that each step of the O(N³) part is one pass over
/// flat arrays that the compiler vectorises:
/// - the textbook's step ends by adding its delta to the potentials of the tree and
///   subtracting it from every other column's slack; here the deltas are summed in `shift`
///   instead: the slacks are kept as `slack + shift` (all shifted alike, so every comparison
///   and every first-of-equal-minima choice is the textbook one) and each tree column's
///   potentials get the deltas since it joined once, when the row is done;
/// - slacks are keys (see [`Key`]): the smallest key is the textbook's choice, the lowest
///   slack and the first column holding it, so one minimum replaces the scan for it;
/// - the columns in the tree hold [`Key::CLOSED`], which no slack replaces and the (unsigned)
///   minimum never picks, so the pass runs over every column with no list of the others;
/// - the textbook's back-pointers (`way`: for each column, the tree column whose row last
///   lowered its slack) are not kept in the pass; only the augmenting path needs them, and
///   [`path_step`] recomputes them for its columns after the search (within a row's search
///   the costs, potentials and shifts it needs do not change). Keeping them cost a masked
///   store per column and step, the slowest instruction of the pass on the AMD cores measured
///   (the 32-port switch benchmark ran about 15 % faster without it), while the S4 32-port
///   runs take about 12 steps per row and augment along 1.2 columns.
#[inline(always)]
pub(super) fn solve<T: Key>(
    n: usize,
    bits: u32,
    bias: T,
    ws: &mut Workspace<T>,
    p: &mut [usize],
    way: &mut [u32],
    tree: &mut Vec<usize>,
) {
    let Workspace { u, vkey, key, shift_at_join, cost } = ws;
    // Slices of the exact lengths, so that the compiler drops the bounds checks.
    let (u, p, way, shift_at_join) = (&mut u[..=n], &mut p[..=n], &mut way[..=n], &mut shift_at_join[..=n]);
    let (vkey, key) = (&mut vkey[..n], &mut key[..n]);
    let scale = T::of(1 << bits);
    u.fill(T::ZERO);
    for (c, vk) in vkey.iter_mut().enumerate() {
        *vk = -T::of(c as u64);
    }
    p.fill(0);
    for row in 1..=n {
        p[0] = row;
        let mut c0 = 0;
        key.fill(T::OPEN);
        tree.clear();
        let mut shift = T::ZERO;
        loop {
            tree.push(c0);
            shift_at_join[c0] = shift;
            let r0 = p[c0];
            let costs = &cost[(r0 - 1) * n..r0 * n];
            // Every column's key of cost − u[r0] − v[c] + shift (the tree's cannot change).
            let offset = (shift - u[r0] + bias) * scale;
            let mut lowest = T::OPEN.unsigned();
            for ((k, &c), &vk) in key.iter_mut().zip(costs).zip(vkey.iter()) {
                *k = (*k).min(c - vk + offset);
                lowest = lowest.min(k.unsigned());
            }
            let (k, slack) = T::signed(lowest).split(bits);
            // This step's delta is the new slack − shift; the running sum becomes the slack.
            shift = slack - bias;
            c0 = k + 1;
            if p[c0] == 0 {
                break;
            }
            key[k] = T::CLOSED;
        }
        let cost_at = |r: usize, c: usize| cost[(r - 1) * n + c - 1];
        trace_path(c0, tree, way, |c, steps| {
            let before = tree[..steps].iter().copied().enumerate();
            path_step(bits, bias, c, before, cost_at, u, vkey, shift_at_join, p)
        });
        for &c in tree.iter() {
            let gained = shift - shift_at_join[c];
            u[p[c]] = u[p[c]] + gained;
            if c > 0 {
                vkey[c - 1] = vkey[c - 1] - gained * scale;
            }
        }
        flip_path(c0, way, p, |_| {});
    }
}

/// [`solve`] compiled for AVX2.
///
/// # Safety
/// Only on a CPU with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn solve_avx2<T: Key>(
    n: usize,
    bits: u32,
    bias: T,
    ws: &mut Workspace<T>,
    p: &mut [usize],
    way: &mut [u32],
    tree: &mut Vec<usize>,
) {
    solve(n, bits, bias, ws, p, way, tree)
}
