//! The scheduler's near tier: an implicit 4-ary min-heap of 128-bit keys.
//!
//! Read first: [`super`] (the keys and the two tiers). Owns the heap's layout and its sifts;
//! must not know what a key means beyond its order.
//!
//! Four children are shallower than two and fit one cache line (four 16-byte keys). Removal
//! uses Floyd's bottom-up sift, which compares children only; and the slot of a key just
//! taken stays reserved until the next call, so that a key pushed meanwhile — most events
//! schedule a successor soon after now — fills the root and sifts down a little.

/// Children per heap node.
const ARITY: usize = 4;

/// The keys, in heap order: node i's children are 4i + 1 … 4i + 4.
pub(super) struct Heap {
    h: Vec<u128>,
    /// The root was taken but not yet removed: the next push reuses its slot.
    root_vacant: bool,
}

impl Heap {
    pub(super) fn new() -> Heap {
        Heap { h: Vec::with_capacity(1024), root_vacant: false }
    }

    /// Keys held, but for a vacant root.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.h.len() - self.root_vacant as usize
    }

    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    pub(super) fn push(&mut self, key: u128) {
        if self.root_vacant {
            // Most events schedule a successor soon after now (the next packet of the same
            // pipe): it belongs near the top, so sifting down from the root stops early.
            self.root_vacant = false;
            self.sift_down(key);
        } else {
            self.h.push(key);
            self.sift_up(self.h.len() - 1, key);
        }
    }

    /// The least key (removing a vacant root for good first).
    #[inline(always)]
    pub(super) fn first(&mut self) -> Option<u128> {
        if self.root_vacant {
            self.root_vacant = false;
            let last = self.h.pop().unwrap();
            if !self.h.is_empty() {
                self.refill_root(last);
            }
        }
        self.h.first().copied()
    }

    /// Takes the least key (just returned by `first`): its slot stays reserved until the
    /// next call, so that a key pushed meanwhile can take it.
    #[inline(always)]
    pub(super) fn take_first(&mut self) {
        self.root_vacant = true;
    }

    /// The least key but for a vacant root.
    #[inline]
    pub(super) fn next(&self) -> Option<u128> {
        let i = if self.root_vacant { Self::smallest_child(&self.h, 0)? } else { 0 };
        self.h.get(i).copied()
    }

    /// Index of the smallest child of node `i`, if it has any.
    #[inline(always)]
    fn smallest_child(h: &[u128], i: usize) -> Option<usize> {
        let c = ARITY * i + 1;
        if c + ARITY <= h.len() {
            return Some(Self::smallest_of_four(h, c));
        }
        (c..h.len()).min_by_key(|&j| h[j])
    }

    /// Index of the smallest of the four children starting at `c`, as a tournament of three
    /// comparisons the compiler can turn into conditional moves.
    #[inline(always)]
    fn smallest_of_four(h: &[u128], c: usize) -> usize {
        let a = if h[c + 1] < h[c] { c + 1 } else { c };
        let d = if h[c + 3] < h[c + 2] { c + 3 } else { c + 2 };
        if h[d] < h[a] {
            d
        } else {
            a
        }
    }

    /// Places `e` at the root and moves it down past smaller children (top-down).
    #[inline]
    fn sift_down(&mut self, e: u128) {
        let h = self.h.as_mut_slice();
        let mut i = 0;
        while let Some(best) = Self::smallest_child(h, i).filter(|&b| h[b] < e) {
            h[i] = h[best];
            i = best;
        }
        h[i] = e;
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize, e: u128) {
        let h = self.h.as_mut_slice();
        while i > 0 {
            let p = (i - 1) / ARITY;
            if e < h[p] {
                h[i] = h[p];
                i = p;
            } else {
                break;
            }
        }
        h[i] = e;
    }

    /// Fills the empty root with `e` (the former last entry): the hole walks down along the
    /// smallest children to a leaf, comparing children only, then `e` sifts up from there
    /// (Floyd's bottom-up method; `e` came from the bottom, so it rarely climbs far).
    #[inline]
    fn refill_root(&mut self, e: u128) {
        let h = self.h.as_mut_slice();
        let mut hole = 0;
        while let Some(best) = Self::smallest_child(h, hole) {
            h[hole] = h[best];
            hole = best;
        }
        self.sift_up(hole, e);
    }
}
