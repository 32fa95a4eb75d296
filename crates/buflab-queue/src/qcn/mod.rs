//! QCN, IEEE 802.1Qau congestion notification (NetBump seed §7.6; the algorithm as Alizadeh
//! et al., "Data center transport mechanisms: congestion control theory and IEEE
//! standardization", Allerton 2008, describe it): a *congestion point* on a switch queue
//! samples arriving packets and sends the source of a sampled packet a quantized measure of
//! congestion; a *reaction point*, a rate limiter at that source, cuts its rate on each
//! message and recovers it on its own.
//!
//! Read first: [`congestion_point`] (the feedback), then [`reaction_point`] (the rate). The
//! bump ([`crate::bump`]) runs a congestion point on its queue and reaction points as the
//! rate of its pacers; carrying a message from one to the other is the caller's (the
//! simulator delivers it one propagation delay later). Sans-IO: times, sizes and random draws
//! in, feedback and rates out.
//!
//! Parameter names and defaults are the standard's (the Allerton paper's Table 1 and the QCN
//! pseudo-code): `Q_EQ`, `W = 2`, 6-bit feedback, `Gd = 1/128`, byte counter 150 KB, timer
//! 15 ms, 5 cycles of fast recovery, `R_AI = 5 Mb/s`, `R_HAI = 50 Mb/s`, minimum rate
//! 10 Mb/s. The seed's changes, settings here: sampling 20 % → 5 %, and the feedback scale
//! 128 → 1024 (each message cutting the rate eight times less). What is left out: the
//! standard's random jitter of the byte counter and timer periods (runs stay deterministic
//! without a draw per cycle), and its extra fast recovery variants.

pub mod congestion_point;
pub mod reaction_point;

pub use congestion_point::{CongestionPoint, CpSpec, CpStats, Sampling};
pub use reaction_point::{ReactionPoint, RpSpec};

/// The largest quantized feedback: the standard's 6 bits.
pub const FB_MAX: u8 = 63;
