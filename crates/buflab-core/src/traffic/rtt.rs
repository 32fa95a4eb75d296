//! The two-way propagation delay a traffic entry's flows draw, one per flow.
//!
//! Read first: [`super::dist`]. Owns how an RTT is drawn: uniformly from a range (the
//! `network.rtt` every entry shares unless it gives its own `rtt`, drawn exactly as the engine
//! always drew it), or from any distribution, e.g. a choice of 100 ms and 280 ms for the pacing
//! seed's mixed-RTT flows. Must not know links: the topology splits the RTT over them.

use super::dist::Dist;
use crate::rng::Rng;
use crate::units::{Range, Time};

/// How the flows of one traffic entry draw their RTTs.
#[derive(Clone, Debug, PartialEq)]
pub enum Rtt {
    /// Uniform over the range, in whole picoseconds.
    Uniform(Range<Time>),
    /// Drawn from a distribution of picoseconds, rounded to whole ones.
    Drawn(Dist),
}

impl Rtt {
    /// One flow's RTT, from its own stream.
    pub fn draw(&self, rng: &mut Rng) -> Time {
        match self {
            Rtt::Uniform(r) => Time(rng.range_u64(r.lo.0, r.hi.0)),
            Rtt::Drawn(d) => Time(d.sample(rng).round() as u64),
        }
    }

    /// The smallest RTT a flow can draw: the shared links a flow crosses must leave its
    /// access links a delay of at least 0.
    pub fn min(&self) -> Time {
        match self {
            Rtt::Uniform(r) => r.lo,
            Rtt::Drawn(d) => Time(d.min().ceil() as u64),
        }
    }

    /// The mean RTT in whole picoseconds (a range's midpoint, rounded down, as eq. 3.1 has
    /// always taken it).
    pub fn mean(&self) -> Time {
        match self {
            Rtt::Uniform(r) => Time((r.lo.0 + r.hi.0) / 2),
            Rtt::Drawn(d) => Time(d.mean().round() as u64),
        }
    }

    /// The mean RTT, picoseconds.
    pub fn mean_ps(&self) -> f64 {
        match self {
            Rtt::Uniform(r) => (r.lo.0 as f64 + r.hi.0 as f64) / 2.0,
            Rtt::Drawn(d) => d.mean(),
        }
    }

    /// The distribution, as the load model and the facts describe it.
    pub fn dist(&self) -> Dist {
        match self {
            Rtt::Uniform(r) => Dist::Uniform { lo: r.lo.0 as f64, hi: r.hi.0 as f64 },
            Rtt::Drawn(d) => d.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn a_range_draws_as_the_engine_always_drew_network_rtt() {
        // Whole picoseconds from the flow's stream, bit for bit as before per-entry RTTs.
        let range = Range { lo: Time::from_ms(75), hi: Time::from_ms(125) };
        let (mut a, mut b) = (Rng::stream(1, Stream::Flow, 7), Rng::stream(1, Stream::Flow, 7));
        assert_eq!(Rtt::Uniform(range).draw(&mut a), Time(b.range_u64(range.lo.0, range.hi.0)));
        assert_eq!(Rtt::Uniform(range).min(), Time::from_ms(75));
        assert_eq!(Rtt::Uniform(range).mean_ps(), 100e9);
    }

    #[test]
    fn a_choice_draws_only_its_values() {
        let d = Dist::choice(vec![100e9, 280e9], vec![1.0, 1.0]).unwrap();
        let rtt = Rtt::Drawn(d);
        let mut r = Rng::stream(1, Stream::Flow, 3);
        for _ in 0..1000 {
            let t = rtt.draw(&mut r);
            assert!(t == Time::from_ms(100) || t == Time::from_ms(280), "{t}");
        }
        assert_eq!((rtt.min(), rtt.mean_ps()), (Time::from_ms(100), 190e9));
    }
}
