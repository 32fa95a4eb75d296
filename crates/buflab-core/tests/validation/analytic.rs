//! Queueing theory: Poisson arrivals into a drop-tail queue against the exact M/D/1/K loss.

use serde_json::json;

/// Exact loss probability of an M/D/1/K queue (K places including the one in service) at
/// load ρ, from the embedded Markov chain at departures (Gross & Harris, M/G/1/K):
/// a_k = P(k Poisson arrivals in one service time) = e^{−ρ} ρ^k / k!;
/// π_{j+1} = (π_j − π_0 a_j − Σ_{i=1..j} π_i a_{j−i+1}) / a_0 for j = 0..K−2, normalised;
/// the time-average probability of a full system is p_K = 1 − 1/(π_0 + ρ), which by PASTA
/// is the fraction of arrivals lost.
fn md1k_loss(rho: f64, k: usize) -> f64 {
    let mut a = vec![(-rho).exp()];
    for i in 1..k {
        let prev = a[i - 1];
        a.push(prev * rho / i as f64);
    }
    let mut pi = vec![1.0f64];
    for j in 0..k - 1 {
        let mut v = pi[j] - pi[0] * a[j];
        for i in 1..=j {
            v -= pi[i] * a[j - i + 1];
        }
        pi.push(v / a[0]);
    }
    let total: f64 = pi.iter().sum();
    let pi0 = pi[0] / total;
    1.0 - 1.0 / (pi0 + rho)
}

#[test]
fn md1k_formula_matches_known_limits() {
    // K = 1 (no waiting room) is M/D/1/1, an Erlang-B-like loss ρ/(1+ρ).
    assert!((md1k_loss(0.9, 1) - 0.9 / 1.9).abs() < 1e-12);
    // Loss falls as the buffer grows and stays below the ρ^B bound of thesis §2.1.3.
    let l11 = md1k_loss(0.9, 11);
    assert!(l11 < md1k_loss(0.9, 10) && l11 < 0.9f64.powi(10));
}

#[test]
fn poisson_into_drop_tail_matches_md1k() {
    // 90 Mb/s of 1000 B Poisson packets into a 100 Mb/s link with 10 waiting places: an
    // M/D/1/11 queue (10 waiting + 1 in service) at ρ = 0.9. The 10 Gb/s access link adds
    // 0.8 µs per packet, 1 % of a service time, so arrivals stay Poisson to within far less
    // than the tolerance.
    let r = super::run(json!({
        "duration": "150s", "warmup": "5s", "seed": 11,
        "network": { "bottleneck": { "rate": "100Mbps", "buffer": "10pkt" }, "rtt": "10ms" },
        "traffic": [ { "kind": "udp_poisson", "rate": "90Mbps", "packet": "1000B" } ],
    }));
    let expected = md1k_loss(0.9, 11);
    let measured = r.summary.drop_rate;
    // ~1.6M arrivals and ~20k drops; drops come in bursts (busy periods), so the effective
    // sample is smaller, but the standard error stays near 2 %. 10 % relative is the issue's
    // bound and leaves a margin of several standard errors.
    assert!((measured / expected - 1.0).abs() < 0.10, "drop rate {measured:.5} vs M/D/1/11 {expected:.5}");
    assert!((0.012..0.016).contains(&expected), "the issue quotes about 1.3 %: {expected}");
}
