//! Fabric speedup: how many matchings each line cell slot gets.
//!
//! Read first: [`super`] (the slot model). Owns the speedup clock; must not know matchings or
//! cells.
//!
//! Speedup `s` ≥ 1 means the fabric moves cells `s` times faster than a line carries them
//! (seed 003, §2.2 and §3.2), so it makes `s` matchings per line cell slot on average. The
//! thesis uses 1, 1.2, 2 and 8 (= N). A real `s` is held as an exact fraction `num/den` and
//! an integer accumulator hands out the matchings: every slot adds `num`, the slot gets
//! `⌊acc / den⌋` matchings and the remainder carries over. Hence every slot gets `⌊s⌋` or `⌈s⌉`
//! matchings, any `den` consecutive slots get exactly `num`, and the schedule is a pure
//! function of `s`: no floating point in the slot loop.

/// A speedup `num / den` ≥ 1, in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Speedup {
    num: u32,
    den: u32,
}

/// Finest speedup step accepted from a decimal: 1/1000 (1.2 → 6/5, 1.125 → 9/8).
const DECIMAL_DEN: u32 = 1000;

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Speedup {
    /// Speedup 1: an input-queued switch.
    pub const ONE: Speedup = Speedup { num: 1, den: 1 };

    /// The speedup `num / den`, or `None` unless `den > 0` and `num ≥ den` (speedup ≥ 1).
    pub fn ratio(num: u32, den: u32) -> Option<Speedup> {
        if den == 0 || num < den {
            return None;
        }
        let g = gcd(num, den);
        Some(Speedup { num: num / g, den: den / g })
    }

    /// The speedup `s` rounded to the nearest thousandth, or `None` if `s` is not a finite
    /// number in [1, 4·10⁶].
    pub fn from_f64(s: f64) -> Option<Speedup> {
        if !s.is_finite() || !(1.0..=4.0e6).contains(&s) {
            return None;
        }
        Speedup::ratio((s * DECIMAL_DEN as f64).round() as u32, DECIMAL_DEN)
    }

    pub fn num(self) -> u32 {
        self.num
    }

    pub fn den(self) -> u32 {
        self.den
    }

    pub fn as_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// A fresh clock handing out this speedup's matchings slot by slot.
    pub fn clock(self) -> SpeedupClock {
        SpeedupClock { speedup: self, acc: 0 }
    }
}

/// Hands out the number of matchings of each successive line cell slot.
#[derive(Clone, Debug)]
pub struct SpeedupClock {
    speedup: Speedup,
    /// Matching credit carried over, in units of `1/den` matchings; always `< den`.
    acc: u32,
}

impl SpeedupClock {
    /// Number of matchings (scheduling phases) in the next line cell slot.
    #[inline]
    pub fn next_slot(&mut self) -> u32 {
        let Speedup { num, den } = self.speedup;
        // acc < den and both fit u32, so the sum fits u64 without overflow.
        let total = self.acc as u64 + num as u64;
        let m = total / den as u64;
        self.acc = (total - m * den as u64) as u32;
        m as u32
    }

    /// Skips `slots` slots at once; returns their matchings in all. The clock ends where
    /// `slots` calls of [`SpeedupClock::next_slot`] would leave it (the router node's lazy
    /// catch-up over slots it did not run).
    pub fn skip(&mut self, slots: u64) -> u64 {
        let Speedup { num, den } = self.speedup;
        let total = self.acc as u128 + slots as u128 * num as u128;
        let m = total / den as u128;
        self.acc = (total - m * den as u128) as u32;
        m as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(s: Speedup, k: usize) -> Vec<u32> {
        let mut c = s.clock();
        (0..k).map(|_| c.next_slot()).collect()
    }

    #[test]
    fn integer_speedup_gives_the_same_count_every_slot() {
        assert_eq!(slots(Speedup::ONE, 4), [1, 1, 1, 1]);
        assert_eq!(slots(Speedup::ratio(2, 1).unwrap(), 3), [2, 2, 2]);
        assert_eq!(slots(Speedup::from_f64(8.0).unwrap(), 2), [8, 8]);
    }

    #[test]
    fn speedup_1_2_gives_six_matchings_per_five_slots() {
        let s = Speedup::from_f64(1.2).unwrap();
        assert_eq!((s.num(), s.den()), (6, 5));
        assert_eq!(slots(s, 10), [1, 1, 1, 1, 2, 1, 1, 1, 1, 2]);
    }

    #[test]
    fn every_slot_gets_floor_or_ceil_and_the_long_run_rate_is_exact() {
        for (num, den) in [(7, 3), (1001, 1000), (5, 2), (13, 8)] {
            let s = Speedup::ratio(num, den).unwrap();
            let v = slots(s, 10 * den as usize);
            let (lo, hi) = (num / den, num.div_ceil(den));
            assert!(v.iter().all(|&m| m == lo || m == hi), "{num}/{den}: {v:?}");
            for w in v.chunks(den as usize) {
                assert_eq!(w.iter().sum::<u32>(), num, "{num}/{den}");
            }
        }
    }

    #[test]
    fn skipping_slots_equals_running_them() {
        for (num, den) in [(1, 1), (6, 5), (7, 3), (8, 1), (1001, 1000)] {
            let s = Speedup::ratio(num, den).unwrap();
            for (warm, skip) in [(0, 0), (0, 7), (3, 1), (4, 12), (2, 1000)] {
                let (mut a, mut b) = (s.clock(), s.clock());
                for _ in 0..warm {
                    a.next_slot();
                    b.next_slot();
                }
                let ran: u64 = (0..skip).map(|_| a.next_slot() as u64).sum();
                assert_eq!(b.skip(skip), ran, "{num}/{den} after {warm}, skip {skip}");
                assert_eq!(slots_of(&mut a, 2 * den as usize), slots_of(&mut b, 2 * den as usize));
            }
        }
    }

    fn slots_of(c: &mut SpeedupClock, k: usize) -> Vec<u32> {
        (0..k).map(|_| c.next_slot()).collect()
    }

    #[test]
    fn below_one_or_nonsense_is_refused() {
        assert_eq!(Speedup::ratio(1, 2), None);
        assert_eq!(Speedup::ratio(1, 0), None);
        assert_eq!(Speedup::from_f64(0.99), None);
        assert_eq!(Speedup::from_f64(f64::NAN), None);
        assert_eq!(Speedup::ratio(4, 2), Some(Speedup::ratio(2, 1).unwrap()));
    }
}
