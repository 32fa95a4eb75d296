//! Pacers: when the packet at the head of a flow's queue may leave, so that a bursty flow
//! leaves evenly spaced (NetBump seed ch. 5; the bump in [`crate::bump`] runs them, one per
//! class of traffic).
//!
//! Read first: [`Pacer`] (the contract) and [`Tokens`] (the exact arithmetic every bucket
//! uses). Each pacer is one file:
//! - [`delay`]: the seed's delay-based pacer (§5.3.3): each packet leaves one inter-packet
//!   time after the previous one, the time a packet takes at the pacing rate;
//! - [`token_bucket`]: the classic token bucket, tokens accruing with elapsed time up to a
//!   depth, a packet leaving as soon as its tokens are there;
//! - [`modified_token_bucket`]: the seed's modified token bucket (§5.3.4): tokens added at
//!   packet arrivals (primary events) and at idle polls (secondary events, every `tick`),
//!   each addition capped to `cap` of elapsed time, packets released only at those events;
//! - [`token_thread`]: the seed's token thread (§5.4): tokens added on a fixed grid of `tick`,
//!   independent of arrivals, at a rate that feedback may change;
//! - [`batch`]: the opposite, a host's timer-driven batching: every packet waits for the next
//!   tick and those waiting go together (the bursts of the seed's Fig 5.3).
//!
//! Sans-IO like everything in this crate: times in, times out. A pacer knows one queue's
//! head packet only; it must not know queues, classes, links or clocks.

pub mod batch;
pub mod delay;
pub mod modified_token_bucket;
pub mod token_bucket;
pub mod token_thread;

use buflab_base::units::{Rate, Time, PS_PER_S};

/// The contract: the owner of a FIFO queue asks when its head may leave, and tells the
/// pacer when a packet arrived and when one left.
pub trait Pacer {
    /// A packet of `size` bytes joined the queue at `now` (a primary event).
    fn on_arrival(&mut self, _now: Time, _size: u32) {}
    /// The earliest time, at or after `now`, when a head packet of `size` bytes may leave.
    /// Asking twice without events in between gives the same answer.
    fn release_at(&mut self, now: Time, size: u32) -> Time;
    /// A packet of `size` bytes left at `now` (never before its release time).
    fn on_departure(&mut self, now: Time, size: u32);
    /// The pacing rate from `now` on (feedback, or a newly measured rate).
    fn set_rate(&mut self, now: Time, rate: Rate);
}

/// Tokens, counted exactly: one bit is 10¹² tokens, so that a rate in bits per second times
/// an elapsed time in picoseconds is a whole number of them, and no token is ever rounded
/// away. A packet of `size` bytes costs `size · 8 · 10¹²`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tokens(pub u128);

impl Tokens {
    /// What `rate` earns in `elapsed`.
    pub fn earned(rate: Rate, elapsed: Time) -> Tokens {
        Tokens(rate.bits_per_s() as u128 * elapsed.ps() as u128)
    }

    /// What a packet of `bytes` bytes costs.
    pub fn cost(bytes: u64) -> Tokens {
        Tokens(bytes as u128 * 8 * PS_PER_S as u128)
    }

    /// How long `rate` takes to earn `self`, rounded up to a whole picosecond.
    pub fn time_at(self, rate: Rate) -> Time {
        let r = rate.bits_per_s().max(1) as u128;
        Time(self.0.div_ceil(r).min(u64::MAX as u128) as u64)
    }

    pub fn saturating_sub(self, o: Tokens) -> Tokens {
        Tokens(self.0.saturating_sub(o.0))
    }

    pub fn plus(self, o: Tokens) -> Tokens {
        Tokens(self.0 + o.0)
    }

    pub fn times(self, n: u64) -> Tokens {
        Tokens(self.0 * n as u128)
    }
}

/// A bucket of tokens, `depth` deep: what the three token pacers share. It starts full; it
/// never holds more than its depth; a packet larger than the depth needs a full bucket.
#[derive(Clone, Copy, Debug)]
pub struct Bucket {
    depth: Tokens,
    tokens: Tokens,
}

impl Bucket {
    /// A full bucket `depth_bytes` deep.
    pub fn full(depth_bytes: u64) -> Bucket {
        let depth = Tokens::cost(depth_bytes);
        Bucket { depth, tokens: depth }
    }

    /// Adds `t`, up to the depth.
    pub fn add(&mut self, t: Tokens) {
        self.tokens = self.tokens.plus(t).min(self.depth);
    }

    /// Takes what a packet of `size` bytes costs (never below empty).
    pub fn spend(&mut self, size: u32) {
        self.tokens = self.tokens.saturating_sub(Tokens::cost(size as u64));
    }

    /// What the bucket lacks before a packet of `size` bytes may leave.
    pub fn shortfall(&self, size: u32) -> Tokens {
        Tokens::cost(size as u64).min(self.depth).saturating_sub(self.tokens)
    }

    /// How many additions of `per_tick` cover the shortfall of a packet of `size` bytes.
    pub fn ticks_until(&self, size: u32, per_tick: Tokens) -> u64 {
        self.shortfall(size).0.div_ceil(per_tick.0.max(1)) as u64
    }

    #[cfg(test)]
    pub fn empty(&mut self) {
        self.tokens = Tokens(0);
    }
}

/// The pacers by their names in scenario files, and none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacerKind {
    None,
    Delay,
    TokenBucket,
    ModifiedTokenBucket,
    TokenThread,
    Batch,
}

buflab_base::names!(PacerKind {
    None = "none",
    Delay = "delay",
    TokenBucket = "token_bucket",
    ModifiedTokenBucket = "modified_token_bucket",
    TokenThread = "token_thread",
    Batch = "batch",
});

/// How a pacer is chosen and set up (a bump's `pacer` keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacerSpec {
    Delay,
    TokenBucket { depth: u64 },
    ModifiedTokenBucket { depth: u64, tick: Time, cap: Time },
    TokenThread { depth: u64, tick: Time },
    Batch { tick: Time },
}

impl PacerSpec {
    /// Its kind, as scenario files name it.
    pub fn kind(self) -> PacerKind {
        match self {
            PacerSpec::Delay => PacerKind::Delay,
            PacerSpec::TokenBucket { .. } => PacerKind::TokenBucket,
            PacerSpec::ModifiedTokenBucket { .. } => PacerKind::ModifiedTokenBucket,
            PacerSpec::TokenThread { .. } => PacerKind::TokenThread,
            PacerSpec::Batch { .. } => PacerKind::Batch,
        }
    }

    /// A pacer of this kind at `rate` (None: not known yet, as a measured rate before its first
    /// window: the pacer lets packets go until it gets one).
    pub fn build(self, rate: Option<Rate>) -> AnyPacer {
        match self {
            PacerSpec::Delay => AnyPacer::Delay(delay::DelayPacer::new(rate)),
            PacerSpec::TokenBucket { depth } => {
                AnyPacer::TokenBucket(token_bucket::TokenBucket::new(rate, depth))
            }
            PacerSpec::ModifiedTokenBucket { depth, tick, cap } => AnyPacer::ModifiedTokenBucket(
                modified_token_bucket::ModifiedTokenBucket::new(rate, depth, tick, cap),
            ),
            PacerSpec::TokenThread { depth, tick } => {
                AnyPacer::TokenThread(token_thread::TokenThread::new(rate, depth, tick))
            }
            PacerSpec::Batch { tick } => AnyPacer::Batch(batch::Batch::new(tick)),
        }
    }
}

/// Any one pacer, held in place: a bump keeps one per class and asks it at every packet, so
/// it sits beside the class's other state rather than behind a pointer of its own.
#[derive(Clone, Debug)]
pub enum AnyPacer {
    Delay(delay::DelayPacer),
    TokenBucket(token_bucket::TokenBucket),
    ModifiedTokenBucket(modified_token_bucket::ModifiedTokenBucket),
    TokenThread(token_thread::TokenThread),
    Batch(batch::Batch),
}

/// Calls `$call` on whichever pacer `$p` holds.
macro_rules! each_pacer {
    ($p:expr, $x:ident => $call:expr) => {
        match $p {
            AnyPacer::Delay($x) => $call,
            AnyPacer::TokenBucket($x) => $call,
            AnyPacer::ModifiedTokenBucket($x) => $call,
            AnyPacer::TokenThread($x) => $call,
            AnyPacer::Batch($x) => $call,
        }
    };
}

impl Pacer for AnyPacer {
    #[inline]
    fn on_arrival(&mut self, now: Time, size: u32) {
        each_pacer!(self, p => p.on_arrival(now, size))
    }
    #[inline]
    fn release_at(&mut self, now: Time, size: u32) -> Time {
        each_pacer!(self, p => p.release_at(now, size))
    }
    #[inline]
    fn on_departure(&mut self, now: Time, size: u32) {
        each_pacer!(self, p => p.on_departure(now, size))
    }
    #[inline]
    fn set_rate(&mut self, now: Time, rate: Rate) {
        each_pacer!(self, p => p.set_rate(now, rate))
    }
}
