//! A random-loss element: drops each packet independently with probability p, in zero time.
//! Placed before a link's queue (the scenario's `network.loss` on the bottleneck).

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct RandomLoss {
    pub p: f64,
    rng: Rng,
    pub drops: u64,
    pub passed: u64,
}

impl RandomLoss {
    pub fn new(p: f64, rng: Rng) -> RandomLoss {
        RandomLoss { p, rng, drops: 0, passed: 0 }
    }

    /// Decides the fate of one packet: true if it is dropped.
    #[inline]
    pub fn drops_next(&mut self) -> bool {
        let d = self.rng.bernoulli(self.p);
        if d {
            self.drops += 1;
        } else {
            self.passed += 1;
        }
        d
    }
}
