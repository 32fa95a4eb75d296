//! Traffic sources other than TCP's own logic: open-loop UDP streams, closed-loop users,
//! open-loop flow arrivals, and the distributions that drive finite transfers.
//!
//! Read first: [`crate::endpoint`] (how sources meet the event loop). Owns the application side of
//! traffic; must not know TCP's rules or links.

pub mod by_flow;
pub mod closed_loop;
pub mod dist;
pub mod open_loop;
pub mod rtt;
pub mod udp;
