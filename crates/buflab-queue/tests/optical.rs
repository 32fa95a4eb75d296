//! Property tests of the optical FIFO (thesis §6.3, Appendix E) over random request
//! sequences, for every N from 2 to 1,024 and every K of Thm 6.2: each slot's departure and
//! drop are the electronic FIFO's of N − 1 packets, and the model's checks of Appendix E's
//! three properties and of W's lines (a waiting packet never goes back into a line) stay
//! silent at every slot. The exhaustive test in `optical::buffer` covers every reachable state
//! up to N = 32; these reach further, with sequences long enough to fill and drain the buffer
//! many times.

use buflab_queue::optical::check::against_fifo;
use buflab_queue::optical::{Layout, Pattern, RequestStream, Requests};
use proptest::prelude::*;

/// A pattern of requests: Bernoulli at loads from 0.3 to 1.2 and departure probabilities
/// from 0.2 to 1 (load above 1 overflows), bursts of any length up to 2N, or the sawtooth.
fn pattern(n: u64) -> impl Strategy<Value = Pattern> {
    prop_oneof![
        (0.3f64..1.2, 0.2f64..=1.0).prop_map(|(load, depart)| Pattern::Bernoulli { load, depart }),
        (1..=2 * n).prop_map(|longest| Pattern::Bursts { longest }),
        Just(Pattern::Sawtooth),
    ]
}

/// N = 2^1 … 2^10 and a K = 2^0 … N/2 of Thm 6.2.
fn sizes() -> impl Strategy<Value = (u64, u64)> {
    (1u32..=10).prop_flat_map(|log_n| (Just(1u64 << log_n), (0..log_n).prop_map(|log_k| 1u64 << log_k)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// 30·N + 2,000 slots of a random pattern: enough for a sawtooth period (3.5·N) several
    /// times over, and for a Bernoulli walk at load ≈ 1 to reach both ends of a small buffer.
    #[test]
    fn random_patterns_are_exact_at_every_slot(
        (n, k, p, seed) in sizes().prop_flat_map(|(n, k)| (Just(n), Just(k), pattern(n), any::<u64>())),
    ) {
        let slots = 30 * n as usize + 2_000;
        let r = against_fifo(Layout::new(n, k).unwrap(), RequestStream::new(p, n, seed).take(slots));
        prop_assert!(r.exact(), "N = {}, K = {}, {}: {:?}", n, k, p.label(), r);
        prop_assert!(r.counts.waiting_max < n / (2 * k), "W stays below N/(2K) (Appendix E (i))");
    }

    /// Arbitrary short sequences (shrunk to a minimal one on failure) at small N, where every
    /// line and W are reached within a few slots.
    #[test]
    fn arbitrary_sequences_are_exact_at_small_n(
        log_n in 1u32..=5,
        log_k in 0u32..5,
        slots in proptest::collection::vec((any::<bool>(), any::<bool>()), 0..400),
    ) {
        let n = 1u64 << log_n;
        let k = 1u64 << log_k.min(log_n - 1);
        let requests = slots.iter().map(|&(departure, arrival)| Requests { departure, arrival });
        let r = against_fifo(Layout::new(n, k).unwrap(), requests);
        prop_assert!(r.exact(), "N = {}, K = {}: {:?}", n, k, r);
    }
}

/// The largest size of the issue at full stretch: N = 1,024 under bursts that fill, overflow
/// and drain it, 200,000 slots, every K.
#[test]
fn n_1024_under_bursts_every_k() {
    let mut k = 1;
    while k <= 512 {
        let p = Pattern::Bursts { longest: 2048 };
        let r = against_fifo(Layout::new(1024, k).unwrap(), RequestStream::new(p, 1024, 1).take(200_000));
        assert!(r.exact(), "K = {k}: {r:?}");
        assert!(r.drops > 1000 && r.departures > 50_000, "the buffer filled and drained: {r:?}");
        k *= 2;
    }
}
