//! Request sequences for an optical buffer: at most one arrival and one departure request per
//! slot, not known in advance (thesis §6.2), from a seeded stream.
//!
//! Read first: [`super`]. Owns the families of sequences the checks run (random at a load,
//! and adversarial ones that fill, overflow and drain the buffer); must not know the model.

use buflab_base::rng::{Rng, Stream};

/// One slot's requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    pub departure: bool,
    pub arrival: bool,
}

/// A family of request sequences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// Each slot an arrival with probability load × `depart` and a departure with probability
    /// `depart`, independently: `load` is the arrival rate over the departure rate (at most
    /// 1 / `depart`).
    Bernoulli { load: f64, depart: f64 },
    /// Alternating runs of arrivals only and of departures only, each of a length drawn
    /// uniformly from 1 … `longest` slots: with `longest` ≥ N the buffer fills, drops and
    /// drains completely, over and over.
    Bursts { longest: u64 },
    /// N + N/2 arrivals in a row (the last N/2 + 1 dropped), then N slots with an arrival and
    /// a departure each (the buffer stays full, each slot's arrival taking the room its
    /// departure made), then departures until it is empty; over and over. Deterministic.
    Sawtooth,
}

impl Pattern {
    /// Its name and settings, for a table ("bernoulli load 0.9").
    pub fn label(&self) -> String {
        match *self {
            Pattern::Bernoulli { load, depart } => format!("bernoulli load {load} (departures p = {depart})"),
            Pattern::Bursts { longest } => format!("bursts of 1…{longest}"),
            Pattern::Sawtooth => "sawtooth".into(),
        }
    }
}

/// An endless sequence of one pattern's requests for a buffer of N − 1 packets.
#[derive(Clone, Debug)]
pub struct RequestStream {
    pattern: Pattern,
    n: u64,
    rng: Rng,
    /// Bursts: slots left in the current run, and whether it is of arrivals. Sawtooth: the
    /// slots so far.
    left: u64,
    arrivals: bool,
}

impl RequestStream {
    /// The requests of `pattern` for N = `n`, sequence `seed` of its random stream.
    pub fn new(pattern: Pattern, n: u64, seed: u64) -> RequestStream {
        RequestStream { pattern, n, rng: Rng::stream(seed, Stream::Requests, n), left: 0, arrivals: false }
    }
}

impl Iterator for RequestStream {
    type Item = Requests;

    fn next(&mut self) -> Option<Requests> {
        Some(match self.pattern {
            Pattern::Bernoulli { load, depart } => {
                let departure = self.rng.bernoulli(depart);
                let arrival = self.rng.bernoulli((load * depart).min(1.0));
                Requests { departure, arrival }
            }
            Pattern::Bursts { longest } => {
                if self.left == 0 {
                    self.arrivals = !self.arrivals;
                    self.left = self.rng.range_u64(1, longest.max(1));
                }
                self.left -= 1;
                Requests { departure: !self.arrivals, arrival: self.arrivals }
            }
            Pattern::Sawtooth => {
                // Phases by slot within the period: fill (N + N/2 arrivals), churn (N slots of
                // both), drain (N − 1 departures).
                let (fill, churn) = (self.n + self.n / 2, self.n);
                let period = fill + churn + (self.n - 1);
                let t = self.left % period;
                self.left += 1;
                Requests { departure: t >= fill, arrival: t < fill + churn }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rates_are_the_load_s() {
        // 200,000 slots at load 0.8, departures p = 0.5: arrivals p = 0.4. Binomial standard
        // deviations are √(n·p·(1 − p)) ≈ 219 and 224; 5 of them is a tolerance a correct
        // generator cannot plausibly miss, and swapping the two rates misses it by 20,000.
        let n = 200_000;
        let s: Vec<Requests> =
            RequestStream::new(Pattern::Bernoulli { load: 0.8, depart: 0.5 }, 64, 1).take(n).collect();
        let arrivals = s.iter().filter(|r| r.arrival).count() as f64;
        let departures = s.iter().filter(|r| r.departure).count() as f64;
        assert!((arrivals - 80_000.0).abs() < 5.0 * 219.0, "{arrivals}");
        assert!((departures - 100_000.0).abs() < 5.0 * 224.0, "{departures}");
    }

    #[test]
    fn bursts_alternate_runs_of_one_kind() {
        let s: Vec<Requests> = RequestStream::new(Pattern::Bursts { longest: 8 }, 4, 3).take(1000).collect();
        assert!(s.iter().all(|r| r.arrival != r.departure));
        let mut run = 0;
        for w in s.windows(2) {
            run = if w[0] == w[1] { run + 1 } else { 0 };
            assert!(run < 8, "a run longer than 8");
        }
    }

    #[test]
    fn sawtooth_fills_churns_and_drains() {
        let s: Vec<Requests> = RequestStream::new(Pattern::Sawtooth, 4, 1).take(13).collect();
        let code: String = s
            .iter()
            .map(|r| match (r.arrival, r.departure) {
                (true, false) => 'a',
                (true, true) => 'b',
                (false, true) => 'd',
                (false, false) => '-',
            })
            .collect();
        assert_eq!(code, "aaaaaabbbbddd", "N = 4: 6 arrivals, 4 of both, 3 departures");
    }
}
