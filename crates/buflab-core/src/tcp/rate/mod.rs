//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-00), for a congestion
//! controller that runs on rate samples instead of losses (BBR, [`crate::tcp::cc::bbr`]).
//!
//! Read first: the draft's §2–3, then Linux's `net/ipv4/tcp_rate.c`, which implements it and
//! settles what it leaves open. Senders of the other controllers keep none of this state.
//!
//! Two files, the second knowing the first:
//! - [`sample`]: the per-segment state and the samples (the draft's C.*, P.* and rs.*). It
//!   knows nothing of TCP: the sender tells it which segments leave and which an ACK delivers.
//! - [`sender`]: the sender's part, an `impl TcpSender` block: which segments each ACK
//!   delivers (cumulatively, by SACK, or counted from duplicate ACKs without SACK), what is in
//!   flight, where loss recovery stands and what it deems lost, and handing the controller its
//!   sample on every ACK. It reads the sender's sequence state and the SACK scoreboard, and
//!   writes only its own state, the window (through the controller) and the pacing rate: it
//!   decides nothing about loss recovery.

pub mod sample;
pub mod sender;
