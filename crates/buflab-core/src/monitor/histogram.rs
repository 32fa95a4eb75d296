//! A log-linear histogram of picosecond values: exact below 128 ps, then 128 sub-buckets per
//! power of two (relative error under 0.8 %), in a fixed 64 KiB table. Used for queueing
//! delays, where storing every sample of a 10 Gb/s run would take gigabytes.
//!
//! Read first: nothing. Owns the buckets and the quantiles; must not know what it measures.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram { counts: vec![0; BUCKETS], total: 0, sum: 0 }
    }

    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // >= SUB_BITS
        let mantissa = (v >> (e - SUB_BITS)) & (SUB - 1);
        ((e - SUB_BITS + 1) as u64 * SUB + mantissa) as usize
    }

    /// The midpoint of a bucket's value range.
    fn value(i: usize) -> f64 {
        let i = i as u64;
        if i < SUB {
            return i as f64;
        }
        let e = (i / SUB) as u32 + SUB_BITS - 1;
        let mantissa = i % SUB;
        let lo = (SUB + mantissa) << (e - SUB_BITS);
        let width = 1u64 << (e - SUB_BITS);
        lo as f64 + (width as f64 - 1.0) / 2.0
    }

    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
        self.sum += v as u128;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// Exact mean.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The q-quantile (0 ≤ q ≤ 1), to within the bucket width.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i);
            }
        }
        Self::value(BUCKETS - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_bucket_precision() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1_000_000);
        }
        // Relative bucket width is 1/128, so 1 % is a safe bound.
        let p50 = h.quantile(0.5);
        let p99 = h.quantile(0.99);
        assert!((p50 / 5.0e9 - 1.0).abs() < 0.01, "{p50}");
        assert!((p99 / 9.9e9 - 1.0).abs() < 0.01, "{p99}");
        assert_eq!(h.mean(), 5_000.5 * 1e6);
        let mut z = Histogram::new();
        z.record(0);
        z.record(5);
        assert_eq!(z.quantile(1.0), 5.0);
    }
}
