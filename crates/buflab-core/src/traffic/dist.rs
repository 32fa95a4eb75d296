//! Random distributions for file sizes (bytes) and think times (picoseconds).
//!
//! Read first: nothing. Owns the distributions, their draws and their means; must not know what
//! they size (users and the load model ask).
//!
//! Harpoon, as the seeds used it (thesis ch. 4, IMC §3): Pareto file sizes with mean 80 KB
//! and shape 1.5, exponential think times with mean 1 s. Values are drawn as floats from a
//! flow's own stream and rounded to whole units, so a draw is reproducible per seed.

use std::sync::Arc;

use crate::rng::Rng;

/// A distribution over non-negative values, in the caller's unit (bytes or picoseconds).
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Every draw is this value.
    Constant(f64),
    /// Uniform over `[lo, hi]`.
    Uniform { lo: f64, hi: f64 },
    /// Exponential with this mean.
    Exponential { mean: f64 },
    /// Pareto with this mean and shape α > 1: scale x_m = mean·(α − 1)/α,
    /// P(X > x) = (x_m / x)^α for x ≥ x_m.
    Pareto { mean: f64, shape: f64 },
    /// Lognormal with this mean and log-space standard deviation σ: μ = ln(mean) − σ²/2.
    Lognormal { mean: f64, sigma: f64 },
    /// An empirical CDF: points (value, P(X ≤ value)) with both coordinates nondecreasing
    /// and the last probability 1; values between points are interpolated linearly, and
    /// the first value carries the probability of its point.
    Empirical(Arc<[(f64, f64)]>),
    /// One of a few values, each with its probability: points (value, P(X ≤ the value's
    /// place in the list)), the last probability 1 (the mixed-RTT experiment of the pacing
    /// seed: 100 ms and 280 ms flows side by side).
    Choice(Arc<[(f64, f64)]>),
}

impl Dist {
    /// The names a scenario's `dist` key gives the kinds, in the order its errors list them.
    pub const NAMES: &'static [&'static str] =
        &["pareto", "exponential", "lognormal", "uniform", "constant", "empirical", "choice"];

    /// The name a scenario gives this kind (one of [`Dist::NAMES`]).
    pub fn name(&self) -> &'static str {
        match self {
            Dist::Constant(_) => "constant",
            Dist::Uniform { .. } => "uniform",
            Dist::Exponential { .. } => "exponential",
            Dist::Pareto { .. } => "pareto",
            Dist::Lognormal { .. } => "lognormal",
            Dist::Empirical(_) => "empirical",
            Dist::Choice(_) => "choice",
        }
    }

    /// The distribution's mean, for offered-load arithmetic.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Constant(v) => v,
            Dist::Uniform { lo, hi } => (lo + hi) / 2.0,
            Dist::Exponential { mean } | Dist::Pareto { mean, .. } | Dist::Lognormal { mean, .. } => mean,
            Dist::Empirical(ref points) => {
                let (v0, p0) = points[0];
                v0 * p0 + points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum::<f64>()
            }
            Dist::Choice(ref points) => {
                let mut below = 0.0;
                let mut sum = 0.0;
                for &(v, p) in points.iter() {
                    sum += v * (p - below);
                    below = p;
                }
                sum
            }
        }
    }

    /// The smallest value a draw can take (what a delay below which a flow cannot go is
    /// checked against).
    pub fn min(&self) -> f64 {
        match *self {
            Dist::Constant(v) => v,
            Dist::Uniform { lo, .. } => lo,
            Dist::Exponential { .. } | Dist::Lognormal { .. } => 0.0,
            Dist::Pareto { mean, shape } => mean * (shape - 1.0) / shape,
            Dist::Empirical(ref points) => points[0].0,
            Dist::Choice(ref points) => points.iter().map(|&(v, _)| v).fold(f64::INFINITY, f64::min),
        }
    }

    /// A choice among `values` with these `weights` (non-negative, not all 0); the error
    /// completes "expected …".
    pub fn choice(values: Vec<f64>, weights: Vec<f64>) -> Result<Dist, String> {
        let total: f64 = weights.iter().sum();
        let valid = values.iter().all(|v| v.is_finite() && *v >= 0.0)
            && weights.iter().all(|w| w.is_finite() && *w >= 0.0);
        if values.is_empty() || values.len() != weights.len() || !valid || total <= 0.0 {
            return Err("non-negative `values` and as many non-negative `weights`, not all 0".into());
        }
        let mut cumulative = 0.0;
        let mut points: Vec<(f64, f64)> = values
            .into_iter()
            .zip(weights)
            .map(|(v, w)| {
                cumulative += w;
                (v, cumulative / total)
            })
            .collect();
        // Rounding must not leave a draw of u close to 1 without a value.
        points.last_mut().expect("at least one value").1 = 1.0;
        Ok(Dist::Choice(points.into()))
    }

    /// Checks an empirical CDF's points; the error completes "expected …".
    pub fn empirical(points: Vec<(f64, f64)>) -> Result<Dist, String> {
        let ordered = points.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1);
        let valid = points.iter().all(|&(v, p)| v >= 0.0 && v.is_finite() && (0.0..=1.0).contains(&p));
        match points.last() {
            Some(&(_, last)) if ordered && valid && last == 1.0 => Ok(Dist::Empirical(points.into())),
            _ => Err("[value, probability] points with values and probabilities nondecreasing, \
                      probabilities in [0, 1] and the last one 1"
                .into()),
        }
    }

    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Constant(v) => v,
            Dist::Uniform { lo, hi } => lo + (hi - lo) * rng.uniform(),
            Dist::Exponential { mean } => rng.exponential(mean),
            Dist::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                // Inverse transform with 1 − U in (0, 1], so the power is finite.
                scale / (1.0 - rng.uniform()).powf(1.0 / shape)
            }
            Dist::Lognormal { mean, sigma } => {
                let mu = mean.ln() - sigma * sigma / 2.0;
                (mu + sigma * standard_normal(rng)).exp()
            }
            Dist::Empirical(ref points) => {
                let u = rng.uniform();
                // The first point whose probability reaches u; interpolate from the one before.
                let i = points.partition_point(|&(_, p)| p < u);
                let (v1, p1) = points[i.min(points.len() - 1)];
                match i.checked_sub(1).map(|j| points[j]) {
                    Some((v0, p0)) if p1 > p0 => v0 + (v1 - v0) * (u - p0) / (p1 - p0),
                    _ => v1,
                }
            }
            Dist::Choice(ref points) => {
                let u = rng.uniform();
                let i = points.partition_point(|&(_, p)| p <= u);
                points[i.min(points.len() - 1)].0
            }
        }
    }
}

/// A standard normal draw (Box–Muller, one of the pair).
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform();
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    fn mean_of(d: Dist, n: usize) -> f64 {
        let mut r = Rng::stream(5, Stream::Source, 1);
        (0..n).map(|_| d.sample(&mut r)).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match() {
        // 200k draws. Exponential and lognormal (σ = 1) have standard errors near 0.2 % and
        // 0.3 % of the mean, so 2 % is a wide margin.
        for d in [
            Dist::Exponential { mean: 3.0 },
            Dist::Lognormal { mean: 3.0, sigma: 1.0 },
            Dist::Uniform { lo: 1.0, hi: 5.0 },
        ] {
            let m = mean_of(d.clone(), 200_000);
            assert!((m / 3.0 - 1.0).abs() < 0.02, "{d:?}: {m}");
        }
        assert_eq!(mean_of(Dist::Constant(7.0), 10), 7.0);
    }

    #[test]
    fn empirical_cdf_is_sampled_by_interpolation() {
        // 30 % exactly 1000; then uniform up to 5000 (70 %): mean 0.3·1000 + 0.7·3000 = 2400.
        let d = Dist::empirical(vec![(1000.0, 0.3), (5000.0, 1.0)]).unwrap();
        assert_eq!(d.mean(), 2400.0);
        let m = mean_of(d.clone(), 200_000);
        // Standard deviation ≈ 1500; the standard error of 200k draws ≈ 3.4: 1 % is 7σ.
        assert!((m / 2400.0 - 1.0).abs() < 0.01, "{m}");
        let mut r = Rng::stream(5, Stream::Source, 3);
        let at_first = (0..100_000).filter(|_| d.sample(&mut r) == 1000.0).count() as f64 / 1e5;
        assert!((at_first - 0.3).abs() < 0.01, "{at_first}");
        assert!(Dist::empirical(vec![(5.0, 0.5), (1.0, 1.0)]).is_err());
        assert!(Dist::empirical(vec![(1.0, 0.5), (5.0, 0.9)]).is_err());
    }

    #[test]
    fn each_kind_has_its_own_scenario_name() {
        let kinds = [
            Dist::Constant(1.0),
            Dist::Uniform { lo: 0.0, hi: 1.0 },
            Dist::Exponential { mean: 1.0 },
            Dist::Pareto { mean: 1.0, shape: 1.5 },
            Dist::Lognormal { mean: 1.0, sigma: 1.0 },
            Dist::empirical(vec![(1.0, 1.0)]).unwrap(),
            Dist::choice(vec![1.0], vec![1.0]).unwrap(),
        ];
        let mut names: Vec<&str> = kinds.iter().map(Dist::name).collect();
        names.sort_unstable();
        let mut all = Dist::NAMES.to_vec();
        all.sort_unstable();
        assert_eq!(names, all);
    }

    #[test]
    fn a_choice_draws_each_value_with_its_weight() {
        // 100 ms three times as often as 280 ms: mean 0.75·100 + 0.25·280 = 145.
        let d = Dist::choice(vec![100.0, 280.0], vec![3.0, 1.0]).unwrap();
        assert_eq!((d.mean(), d.min()), (145.0, 100.0));
        let mut r = Rng::stream(5, Stream::Source, 4);
        let draws: Vec<f64> = (0..100_000).map(|_| d.sample(&mut r)).collect();
        assert!(draws.iter().all(|&x| x == 100.0 || x == 280.0));
        let short = draws.iter().filter(|&&x| x == 100.0).count() as f64 / 1e5;
        // Binomial standard error sqrt(0.75·0.25/1e5) ≈ 0.0014: 0.01 is 7σ.
        assert!((short - 0.75).abs() < 0.01, "{short}");
        assert!(Dist::choice(vec![1.0, 2.0], vec![1.0]).is_err(), "one weight per value");
        assert!(Dist::choice(vec![1.0], vec![0.0]).is_err(), "weights not all 0");
        assert!(Dist::choice(vec![], vec![]).is_err());
    }

    #[test]
    fn pareto_has_the_right_scale_and_tail() {
        // Shape 1.5 has infinite variance, so check the scale (minimum) and the tail
        // probability instead of the sample mean: P(X > 4·x_m) = 4^−1.5 = 1/8.
        let d = Dist::Pareto { mean: 80_000.0, shape: 1.5 };
        let scale = 80_000.0 / 3.0;
        let mut r = Rng::stream(5, Stream::Source, 2);
        let draws: Vec<f64> = (0..200_000).map(|_| d.sample(&mut r)).collect();
        assert!(draws.iter().all(|&x| x >= scale));
        let tail = draws.iter().filter(|&&x| x > 4.0 * scale).count() as f64 / draws.len() as f64;
        // Binomial standard error sqrt(0.125·0.875/2e5) ≈ 0.0007: 0.005 is 7σ.
        assert!((tail - 0.125).abs() < 0.005, "{tail}");
    }
}
