//! Traffic sources other than TCP's own logic: open-loop UDP streams.

pub mod udp;
