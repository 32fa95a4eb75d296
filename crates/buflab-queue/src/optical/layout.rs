//! The hardware of an optical FIFO of N − 1 packets: its delay lines and their lengths, as
//! thesis §6.3 (Thm 6.1) and its trade-off (Thm 6.2) build them, and the formulas they are
//! checked against.
//!
//! Read first: [`super`] (the chapter, and how this module reads it). Owns [`Layout`]: which
//! lines exist, how long each is, and which line a head-of-line packet of a given departure
//! order is sent to. It knows nothing of time or packets.
//!
//! Lengths are in slots (packets): a line of length L holds L back-to-back packets and takes
//! L slots to go round once.
//!
//! - **Thm 6.1 (K = 1).** The delay lines D_1 … D_{log N} have lengths 1, 2, 4, …, N/2 (total
//!   N − 1); the waiting line W is built (§6.3.2) from lines D′_1 … D′_{log N − 1} of lengths
//!   1, 2, …, N/4 (total N/2 − 1; the thesis's "1, 2, 4, …, 2^{log N − 1}, overall N − 1" there
//!   repeats the D lines' sequence, but W only ever has to hold a packet N/2 − 1 slots,
//!   Appendix E (i), which needs log N − 1 lines, and it is with them that the chapter counts
//!   2·log N − 1 lines and ≈ 1.5N of fiber). So 2·log N − 1 lines, 1.5N − 2 slots of fiber.
//! - **Thm 6.2 (K = 2^k).** The longest line is split in two half-length lines, k times over
//!   (Fig 6.3): the D lines are 1, 2, …, M with M = N/(2K), and 2K − 2 more of length M (total
//!   still N − 1); W then needs to hold a packet at most M − 1 slots, so its lines are 1, 2, …,
//!   M/2. In all 2(log N + K − log K) − 3 lines and N − 1 + (N − 2K)/(2K) slots of fiber, as the
//!   theorem states; K = N/2 leaves N − 1 lines of length 1 and no W: the linear buffer of
//!   Fig 6.1(b).
//!
//! Which line a packet goes to: the chapter's rule, "the longest delay line whose length is
//! not greater than the departure order" (Algorithm A, step 3), sends order k < M to the line
//! of length 2^⌊log k⌋. With several lines of length M the theorem does not say which; here
//! the j-th of them (j = 1 … 2K − 1) takes the orders jM … (j + 1)M − 1, so that every line's
//! orders span its own length, as in Thm 6.1 (2^i … 2^{i+1} − 1 for the line of 2^i). Appendix
//! E's argument for (ii) then carries over word for word: two head-of-line packets in lines
//! d_a ≤ d_b differ in order by a multiple of d_a, at least d_a, so they never fall in the
//! order span of one line no longer than d_a. The model checks it at every slot anyway.

/// The largest N a model or a scenario may ask for: 2^20 (its state is a few words per
/// packet and per slot of fiber, some 30 MB at this size).
pub const MAX_N: u64 = 1 << 20;

/// An optical FIFO's delay lines (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    n: u64,
    k: u64,
    /// M = N/(2K): the longest line's length.
    longest: u64,
    /// Lengths of the delay lines D, in the order of the departure orders they take.
    delay: Vec<u64>,
    /// Lengths of the waiting line's lines D′ (1, 2, …, M/2).
    waiting: Vec<u64>,
}

/// Why a layout cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// N is not a power of two from 2 to [`MAX_N`].
    N(u64),
    /// K is not a power of two from 1 to N/2.
    K { n: u64, k: u64 },
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            LayoutError::N(n) => {
                write!(f, "N = {n}: expected a power of two from 2 to {MAX_N} (N − 1 packets of buffer)")
            }
            LayoutError::K { n, k } => {
                write!(f, "K = {k}: expected a power of two from 1 to N/2 = {}", n / 2)
            }
        }
    }
}

/// log2 of a power of two.
fn log2(x: u64) -> u64 {
    x.trailing_zeros() as u64
}

impl Layout {
    /// The lines of an optical FIFO of `n` − 1 packets with trade-off `k` (1: Thm 6.1).
    pub fn new(n: u64, k: u64) -> Result<Layout, LayoutError> {
        if !n.is_power_of_two() || !(2..=MAX_N).contains(&n) {
            return Err(LayoutError::N(n));
        }
        if !k.is_power_of_two() || k > n / 2 {
            return Err(LayoutError::K { n, k });
        }
        let longest = n / (2 * k);
        let mut delay: Vec<u64> = (0..log2(longest)).map(|i| 1 << i).collect();
        delay.extend(std::iter::repeat_n(longest, (2 * k - 1) as usize));
        let waiting = (0..log2(longest)).map(|i| 1 << i).collect();
        Ok(Layout { n, k, longest, delay, waiting })
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    pub fn k(&self) -> u64 {
        self.k
    }

    /// The packets it holds: N − 1.
    pub fn capacity(&self) -> u64 {
        self.n - 1
    }

    /// M = N/(2K), the longest line: W's occupancy stays below it (Appendix E (i)).
    pub fn longest(&self) -> u64 {
        self.longest
    }

    /// Lengths of the delay lines D, in order.
    pub fn delay_lines(&self) -> &[u64] {
        &self.delay
    }

    /// Lengths of the waiting line's lines D′, in order.
    pub fn waiting_lines(&self) -> &[u64] {
        &self.waiting
    }

    /// Delay lines of both kinds: one 2×2 switch each.
    pub fn lines(&self) -> u64 {
        (self.delay.len() + self.waiting.len()) as u64
    }

    /// Fiber of all lines, in slots (packet times).
    pub fn length(&self) -> u64 {
        self.delay.iter().chain(&self.waiting).sum()
    }

    /// The D line (index in [`Layout::delay_lines`]) a head-of-line packet of departure order
    /// `order` (1 … N − 1) is sent to (module doc).
    #[inline]
    pub fn line_for(&self, order: u64) -> usize {
        debug_assert!((1..self.n).contains(&order), "order {order} of N = {}", self.n);
        if order < self.longest {
            (63 - order.leading_zeros()) as usize
        } else {
            (log2(self.longest) + order / self.longest - 1) as usize
        }
    }

    /// The lowest departure order line `line` takes (its span is its length from there).
    pub fn first_order(&self, line: usize) -> u64 {
        let short = log2(self.longest) as usize;
        if line < short {
            1 << line
        } else {
            (line - short + 1) as u64 * self.longest
        }
    }
}

/// Thm 6.2's count of delay lines, 2(log N + K − log K) − 3 (Thm 6.1's 2·log N − 1 at K = 1).
pub fn theorem_lines(n: u64, k: u64) -> u64 {
    2 * (log2(n) + k - log2(k)) - 3
}

/// Thm 6.2's aggregate length, N − 1 + (N − 2K)/(2K) slots (whole for K ≤ N/2).
pub fn theorem_length(n: u64, k: u64) -> u64 {
    n - 1 + (n - 2 * k) / (2 * k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact counts, N = 2 … 1,024 and every K the theorem allows: the construction has
    /// the lines and the fiber Thm 6.2 states (Thm 6.1 at K = 1), the D lines hold N − 1, and
    /// the longest line is N/(2K).
    #[test]
    fn lines_and_lengths_match_theorems_6_1_and_6_2() {
        for log_n in 1..=10 {
            let n = 1u64 << log_n;
            let mut k = 1;
            while k <= n / 2 {
                let l = Layout::new(n, k).unwrap();
                assert_eq!(l.lines(), theorem_lines(n, k), "lines, N = {n}, K = {k}");
                assert_eq!(l.length(), theorem_length(n, k), "length, N = {n}, K = {k}");
                assert_eq!(l.delay_lines().iter().sum::<u64>(), n - 1, "D holds N − 1, N = {n}, K = {k}");
                assert_eq!(l.longest(), n / (2 * k));
                assert_eq!(l.waiting_lines().iter().sum::<u64>(), l.longest() - 1, "W holds M − 1");
                k *= 2;
            }
        }
    }

    /// Thm 6.1 by hand: N = 16 has D = 1, 2, 4, 8 and W = 1, 2, 4: 7 = 2·4 − 1 lines and
    /// 15 + 7 = 22 = 1.5·16 − 2 slots; and the chapter's ≈ 1.5N at N = 1,024: 1,534.
    #[test]
    fn theorem_6_1_by_hand() {
        let l = Layout::new(16, 1).unwrap();
        assert_eq!((l.delay_lines(), l.waiting_lines()), (&[1, 2, 4, 8][..], &[1, 2, 4][..]));
        assert_eq!((l.lines(), l.length()), (7, 22));
        assert_eq!(Layout::new(1024, 1).unwrap().length(), 1534);
        assert_eq!(theorem_lines(1024, 1), 19);
    }

    /// Thm 6.2 by hand at N = 16: K = 2 splits the 8 in two 4s (D = 1, 2, 4, 4, 4, W = 1, 2:
    /// 7 lines, 15 + 3 = 18 slots, "0.25N extra" of the text); K = 4: D = 1, 2, 2 × 6, W = 1
    /// (9 lines, 16 slots); K = 8: fifteen lines of 1, no W (Fig 6.1(b)). The switches added
    /// to Thm 6.1's are 2^{k+1} − 2k − 2 (0, 0, 2, 8 for k = 0 … 3).
    #[test]
    fn theorem_6_2_by_hand() {
        let l = Layout::new(16, 2).unwrap();
        assert_eq!((l.delay_lines(), l.waiting_lines()), (&[1, 2, 4, 4, 4][..], &[1, 2][..]));
        assert_eq!((l.lines(), l.length()), (7, 18));
        let l = Layout::new(16, 4).unwrap();
        assert_eq!((l.delay_lines(), l.waiting_lines()), (&[1, 2, 2, 2, 2, 2, 2, 2][..], &[1][..]));
        assert_eq!((l.lines(), l.length()), (9, 16));
        let l = Layout::new(16, 8).unwrap();
        assert_eq!(l.delay_lines(), &[1; 15][..]);
        assert!(l.waiting_lines().is_empty());
        assert_eq!((l.lines(), l.length()), (15, 15));
        let base = theorem_lines(64, 1);
        for k in 0..6u32 {
            let added = theorem_lines(64, 1 << k) - base;
            assert_eq!(added, (1u64 << (k + 1)) - 2 * k as u64 - 2, "k = {k}");
        }
    }

    /// Algorithm A's rule: order k goes to the longest line not longer than k, and every line
    /// takes a span of orders as long as itself, the spans tiling 1 … N − 1 in line order.
    #[test]
    fn line_for_tiles_the_orders_with_spans_of_each_line_s_length() {
        for (n, k) in [(2, 1), (16, 1), (16, 2), (16, 8), (1024, 1), (1024, 4), (1024, 512)] {
            let l = Layout::new(n, k).unwrap();
            let mut order = 1;
            for (i, &len) in l.delay_lines().iter().enumerate() {
                assert_eq!(l.first_order(i), order, "N = {n}, K = {k}, line {i}");
                for o in order..order + len {
                    assert_eq!(l.line_for(o), i, "order {o}, N = {n}, K = {k}");
                    assert!(len <= o, "a line no longer than the order");
                }
                order += len;
            }
            assert_eq!(order, n, "the spans end at N − 1");
        }
    }

    #[test]
    fn bad_n_and_k_are_refused_with_what_was_expected() {
        assert_eq!(Layout::new(12, 1), Err(LayoutError::N(12)));
        assert_eq!(Layout::new(1, 1), Err(LayoutError::N(1)));
        assert_eq!(Layout::new(MAX_N * 2, 1), Err(LayoutError::N(MAX_N * 2)));
        assert_eq!(Layout::new(16, 3), Err(LayoutError::K { n: 16, k: 3 }));
        assert_eq!(Layout::new(16, 16), Err(LayoutError::K { n: 16, k: 16 }));
        assert_eq!(Layout::new(16, 0), Err(LayoutError::K { n: 16, k: 0 }));
        assert_eq!(
            LayoutError::N(12).to_string(),
            "N = 12: expected a power of two from 2 to 1048576 (N − 1 packets of buffer)"
        );
        assert_eq!(
            LayoutError::K { n: 16, k: 3 }.to_string(),
            "K = 3: expected a power of two from 1 to N/2 = 8"
        );
    }
}
