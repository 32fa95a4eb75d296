//! Each flow's traffic model, built from its traffic entry and its own random streams by flow
//! id: what the topology gives a flow (`topology/flows.rs`), and what the emulator's traffic
//! generator (`buflab-traffic` in the `buflab-emu` crate) runs on real sockets, so that the same
//! scenario and seed draw the same RTTs, file sizes, think times, arrival gaps and UDP gaps in
//! both.
//!
//! Read first: [`super::closed_loop`], [`super::open_loop`] and [`super::udp`] (the models).
//! Owns which stream each draw comes from; must not know links, routes or the event loop.
//!
//! Streams, per flow id `id` (`crate::rng::Stream`): `Flow` draws the RTT and then the start
//! time; `User` a user's file sizes and think times; `Source` a UDP source's gaps; an open-loop
//! entry `ti`'s arrival gaps come from `Source` at `u64::MAX − ti`, apart from every flow's.

use super::closed_loop::{User, UserDraws};
use super::open_loop::Arrivals;
use super::rtt::Rtt;
use super::udp::UdpSource;
use crate::rng::{Rng, Stream};
use crate::scenario::{Traffic, Udp};
use crate::units::Time;

/// Flow `id`'s RTT (its first draw from its `Flow` stream) and that stream, which goes on to
/// draw its start time.
pub fn rtt(seed: u64, rtt: &Rtt, id: u64) -> (Time, Rng) {
    let mut rng = Rng::stream(seed, Stream::Flow, id);
    let drawn = rtt.draw(&mut rng);
    (drawn, rng)
}

/// A start time uniform over `lo..=hi`, from a flow's `Flow` stream (after its RTT).
pub fn uniform_time(rng: &mut Rng, lo: Time, hi: Time) -> Time {
    Time(rng.range_u64(lo.0, hi.0))
}

/// The user of flow `id`, of traffic entry `ti` (a closed-loop, repeated-download or open-loop
/// entry; None for the others), drawing from its own `User` stream.
pub fn user(seed: u64, ti: usize, traffic: &Traffic, id: u64) -> Option<User> {
    let rng = Rng::stream(seed, Stream::User, id);
    match traffic {
        Traffic::ClosedLoop(c) => Some(User::new(ti as u32, c.handshake, rng)),
        Traffic::OpenLoop(o) => Some(User::new(ti as u32, o.handshake, rng)),
        Traffic::LongLived(_) | Traffic::Udp(_) => None,
    }
}

/// What the users of a traffic entry draw from (None for entries without users).
pub fn user_draws(traffic: &Traffic) -> Option<UserDraws> {
    match traffic {
        Traffic::ClosedLoop(c) => {
            Some(UserDraws { file_size: c.file_size.clone(), think: Some(c.think.clone()) })
        }
        // An open-loop flow returns to its entry's idle slots instead of thinking.
        Traffic::OpenLoop(o) => Some(UserDraws { file_size: o.file_size.clone(), think: None }),
        Traffic::LongLived(_) | Traffic::Udp(_) => None,
    }
}

/// The arrival process of open-loop entry `ti`.
pub fn arrivals(seed: u64, ti: usize, per_second: f64, start: Time) -> Arrivals {
    let rng = Rng::stream(seed, Stream::Source, u64::MAX - ti as u64);
    Arrivals::new(ti as u32, per_second, start, rng)
}

/// UDP flow `id`, flow `k` of its entry, as a source (at the entry's rate for its `k`-th
/// flow), its packets on route `route`.
pub fn udp_source(seed: u64, u: &Udp, k: u32, id: u64, route: u32) -> UdpSource {
    let rng = Rng::stream(seed, Stream::Source, id);
    UdpSource::new(u.pattern, id as u32, route, u.rate(k), u.packet, rng)
}

/// Where flow `id` sits among `machines` server machines of `classes` class queues each (the
/// dumbbell's `network.access.machines`): machines in turn, then classes in turn.
pub fn placement(id: u64, machines: u32, classes: u32) -> (u32, u32) {
    let m = id % machines as u64;
    let c = id / machines as u64 % classes as u64;
    (m as u32, c as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_take_machines_in_turn_then_classes() {
        let placed: Vec<(u32, u32)> = (0..8).map(|id| placement(id, 2, 3)).collect();
        assert_eq!(placed, vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 0), (1, 0)]);
    }
}
