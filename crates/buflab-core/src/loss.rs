//! A random-loss element: drops each packet independently with probability p, in zero time.
//! Placed before a link's queue (the scenario's `network.loss` on the bottleneck).
//!
//! Read first: nothing. Owns the drop decision and its stream; must not know queues, flows or the
//! scenario (the topology builder places it on a route).

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct RandomLoss {
    pub p: f64,
    rng: Rng,
}

impl RandomLoss {
    pub fn new(p: f64, rng: Rng) -> RandomLoss {
        RandomLoss { p, rng }
    }

    /// Decides the fate of one packet: true if it is dropped. (The simulator counts drops.)
    #[inline]
    pub fn drops_next(&mut self) -> bool {
        self.rng.bernoulli(self.p)
    }
}
