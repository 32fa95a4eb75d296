//! A closed-loop user (Harpoon, thesis ch. 4.1): request a file over a new connection,
//! download it, think, request the next. The simulator drives it; this holds its state.
//!
//! Read first: `sim/users.rs` (when a user acts). Owns a user's draws (file sizes, think times) and
//! connection numbering; must not know TCP or the event loop.

use super::dist::Dist;
use crate::rng::Rng;
use crate::units::Time;

/// What a traffic entry's users draw from, kept once per entry (a user holds only its own
/// random stream: a million idle users are a million of these fewer).
#[derive(Clone, Debug)]
pub struct UserDraws {
    pub file_size: Dist,
    /// None: open-loop flows, which return to their entry's idle slots instead of thinking.
    pub think: Option<Dist>,
}

#[derive(Clone, Debug)]
pub struct User {
    pub traffic: u32,
    pub handshake: bool,
    rng: Rng,
    /// The current connection (1, 2, …; wraps after 65,535, long after its packets are gone).
    pub conn: u16,
    /// Size of the file being requested on `conn`, bytes.
    pub bytes: u64,
    /// Index of the transfer record of `conn`.
    pub record: Option<u32>,
    /// Index of the record of the connection the server is serving (it lags `record` until
    /// the request reaches the server).
    pub server_record: Option<u32>,
}

impl User {
    pub fn new(traffic: u32, handshake: bool, rng: Rng) -> User {
        User { traffic, handshake, rng, conn: 0, bytes: 0, record: None, server_record: None }
    }

    /// Draws the next request from its entry's `draws`: a new connection number and a file
    /// size (at least 1 byte).
    pub fn next_request(&mut self, draws: &UserDraws) -> (u16, u64) {
        self.conn = self.conn.wrapping_add(1).max(1);
        self.bytes = draws.file_size.sample(&mut self.rng).round().max(1.0) as u64;
        (self.conn, self.bytes)
    }

    /// Draws a think time from its entry's `draws` (None for an open-loop flow).
    pub fn think_time(&mut self, draws: &UserDraws) -> Option<Time> {
        let think = draws.think.as_ref()?;
        Some(Time(think.sample(&mut self.rng).round().max(0.0) as u64))
    }
}
