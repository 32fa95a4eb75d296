//! A closed-loop user (Harpoon, thesis ch. 4.1): request a file over a new connection,
//! download it, think, request the next. The simulator drives it; this holds its state.
//!
//! Read first: `sim/users.rs` (when a user acts). Owns a user's draws (file sizes, think times) and
//! connection numbering; must not know TCP or the event loop.

use super::dist::Dist;
use crate::rng::Rng;
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct User {
    pub traffic: u32,
    file_size: Dist,
    /// None: an open-loop flow, which returns to its entry's idle slots instead of thinking.
    pub think: Option<Dist>,
    pub handshake: bool,
    rng: Rng,
    /// The current connection (1, 2, …; wraps after 65,535, long after its packets are gone).
    pub conn: u16,
    /// Size of the file being requested on `conn`, bytes.
    pub bytes: u64,
    /// Index of the transfer record of `conn`.
    pub record: Option<usize>,
    /// Index of the record of the connection the server is serving (it lags `record` until
    /// the request reaches the server).
    pub server_record: Option<usize>,
}

impl User {
    pub fn new(traffic: u32, file_size: Dist, think: Option<Dist>, handshake: bool, rng: Rng) -> User {
        User {
            traffic,
            file_size,
            think,
            handshake,
            rng,
            conn: 0,
            bytes: 0,
            record: None,
            server_record: None,
        }
    }

    /// Draws the next request: a new connection number and a file size (at least 1 byte).
    pub fn next_request(&mut self) -> (u16, u64) {
        self.conn = self.conn.wrapping_add(1).max(1);
        self.bytes = self.file_size.sample(&mut self.rng).round().max(1.0) as u64;
        (self.conn, self.bytes)
    }

    /// Draws a think time (None for an open-loop flow).
    pub fn think_time(&mut self) -> Option<Time> {
        let think = self.think.as_ref()?;
        Some(Time(think.sample(&mut self.rng).round().max(0.0) as u64))
    }
}
