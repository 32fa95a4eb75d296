//! Traffic sources other than TCP's own logic: open-loop UDP streams, closed-loop users, and
//! the distributions that drive finite transfers (file sizes, think times).

pub mod closed_loop;
pub mod dist;
pub mod udp;
