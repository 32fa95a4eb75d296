//! Traffic sources other than TCP's own logic: open-loop UDP streams, closed-loop users,
//! open-loop flow arrivals, and the distributions that drive finite transfers.

pub mod closed_loop;
pub mod dist;
pub mod open_loop;
pub mod udp;
