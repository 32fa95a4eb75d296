//! SACK (`Recovery::Sack`): the option a receiver reports its blocks in, the sender's
//! scoreboard of them, and the loss recovery that runs on the scoreboard.
//!
//! Read first: RFC 2018 §3–4 (the option and which blocks a receiver reports) and §8 (timeouts),
//! then RFC 6675 §2–6 (the scoreboard, loss recovery, the retransmission timer). Sequence numbers
//! count segments, as everywhere in [`crate::tcp`].
//!
//! One file per part, each knowing only the ones before it:
//! - [`option`]: the blocks, their size on the wire, the receiver's choice of blocks and the
//!   side channel that carries them to the sender. Used by the receiver; knows nothing of the
//!   sender.
//! - [`scoreboard`]: RFC 6675 §3–4 (Update, IsLost, SetPipe, NextSeg) over the blocks, as a
//!   plain data structure: it is handed `una` and `high` and knows nothing of the sender's
//!   state, timers or window.
//! - [`recovery`]: RFC 6675 §5, the sender's side: what each ACK and each timeout do to the
//!   scoreboard and the window. It is part of the sender (an `impl TcpSender` block, sharing
//!   its sequence state, timer and congestion controller); the sender's Reno and NewReno paths
//!   know nothing of it beyond handing it each ACK and the end of each timeout.

pub mod option;
pub mod recovery;
pub mod scoreboard;
