//! Queue disciplines: who decides, for each packet arriving at a link, whether it is admitted,
//! admitted with a congestion mark, or dropped.
//!
//! Read [`crate::link`] first: the link owns the buffer and the FIFO timetable, and finds out
//! how many packets are waiting at each arrival by its lazy dequeue.
//!
//! **Drop-tail is no discipline at all.** A link without one drops an arrival when its buffer
//! limit is reached and admits everything else, inline in `Link::arrive`: that is the queue
//! of every experiment in the seeds, and its path stays one comparison. The buffer limit
//! (`network.bottleneck.buffer`) is the *hard* limit under every discipline too: a packet
//! that finds the buffer full is dropped whatever the discipline would have decided.
//!
//! **How a discipline plugs in.** The link calls it once per arrival, after the lazy dequeue
//! has brought the waiting count up to the arrival instant, with what the link knows then:
//!
//! - `now`, the arrival time;
//! - `waiting`, the packets waiting (the one being serialized not counted, as the buffer
//!   limit counts them);
//! - `busy_until`, when the serializer finishes its last admitted packet: a time not after
//!   `now` means the link has been idle since then;
//! - `full`, whether the hard limit refuses the packet anyway;
//! - `ect`, whether the packet is ECN-capable ([`crate::packet::flags::ECT`]).
//!
//! It answers with a [`Verdict`]. `Mark` admits the packet with
//! [`crate::packet::flags::CE`] set; the link counts it (`Link::marks`) and reports it to its
//! monitor right after the enqueue, so the event log and the results tell a mark from a
//! drop. `Drop` is counted and reported exactly as a buffer overflow is (`Link::drops`).
//!
//! A discipline keeps its own state and its own random stream ([`crate::rng::Stream::Queue`],
//! numbered by hop), so its draws never shift anyone else's. Queues are measured in
//! packets.
//!
//! - [`red`]: Random Early Detection (Floyd & Jacobson 1993), optionally gentle, marking
//!   ECN-capable packets instead of dropping them when asked (RFC 3168).

pub mod red;

/// What a discipline decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admit it unchanged.
    Admit,
    /// Admit it with Congestion Experienced set (RFC 3168 §5); only for ECT packets.
    Mark,
    /// Refuse it.
    Drop,
}
