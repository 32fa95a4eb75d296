//! Packets: small `Copy` values moved through queues and pipes without allocation.
//!
//! Read first: nothing (a leaf of the engine). Owns the packet and its flag bits; must not know
//! what an endpoint or a queue does with them.

use crate::units::Time;

/// What a packet is, which decides where it goes at the end of its route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A TCP data segment (`seq` is the segment number).
    Data = 0,
    /// A TCP acknowledgement (`seq` is the cumulative ACK: the next segment expected).
    Ack = 1,
    /// A UDP datagram (`seq` counts the source's packets).
    Udp = 2,
}

impl Kind {
    /// The end of its flow a packet of this kind goes to: an ACK answers the source, every
    /// other packet is for the sink.
    #[inline]
    pub fn side(self) -> crate::endpoint::Side {
        match self {
            Kind::Ack => crate::endpoint::Side::Source,
            Kind::Data | Kind::Udp => crate::endpoint::Side::Sink,
        }
    }
}

/// Flag bits (a `u16`: the eight of RFC-era TCP and ECN filled a byte; PSH needed a ninth).
pub mod flags {
    /// The data segment is a retransmission.
    pub const RETRANSMIT: u16 = 1;
    /// Connection set-up: the client's SYN (on an ACK route) or the server's SYN-ACK (on a
    /// data route), both 40 B control packets.
    pub const SYN: u16 = 2;
    /// The last data segment of a transfer (FIN piggybacked on it).
    pub const FIN: u16 = 4;
    /// ECN-Capable Transport (RFC 3168 §5): the IP ECN field is ECT(0). Set by an ECN-capable
    /// sender on new data segments (§6.1.5: never on retransmissions, §6.1.4: never on pure
    /// ACKs, §6.1.1: never on SYN or SYN-ACK).
    pub const ECT: u16 = 8;
    /// Congestion Experienced (RFC 3168 §5): a queue marked this ECT packet instead of
    /// dropping it. The packet keeps ECT: the IP field's CE codepoint (11) has both bits.
    pub const CE: u16 = 16;
    /// ECN-Echo, on ACKs (RFC 3168 §6.1.3): the receiver saw CE and has not yet seen CWR.
    pub const ECE: u16 = 32;
    /// Congestion Window Reduced, on data (RFC 3168 §6.1.2): the first new segment after the
    /// sender reduced its window; the receiver stops echoing ECE.
    pub const CWR: u16 = 64;
    /// With ECT: the IP ECN field is ECT(1) (01), the L4S identifier of RFC 9331 §4.1, not
    /// ECT(0). Set by a sender with `ecn_codepoint = "ect1"` wherever it sets ECT.
    pub const ECT1: u16 = 128;
    /// PSH, on data: a Linux sender sets it on the last segment of every GSO packet of two
    /// or more segments, and a Linux receiver acknowledges a full-sized PSH segment as soon as
    /// its application has read it (see `tcp::quickack`).
    pub const PSH: u16 = 256;
}

/// A packet on the wire. 40 bytes, `Copy`.
///
/// A packet carries its source route: `route` names a hop list computed once when the network
/// is built, and `hop` is the index of the hop it is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// When the sender released it (for delay metrics).
    pub sent_at: Time,
    pub flow: u32,
    pub seq: u32,
    /// Size on the wire, bytes (headers included).
    pub size: u32,
    pub route: u32,
    /// Connection number on this flow (finite transfers open a new one each time); endpoints
    /// ignore packets of an earlier connection still in flight.
    pub conn: u16,
    /// An ACK of a SACK flow that carries the SACK option: the option's serial number in the
    /// flow's side channel (see `tcp::sack::option`; the blocks do not fit in the packet). 0
    /// on every other packet.
    pub sack: u16,
    pub hop: u8,
    pub kind: Kind,
    pub flags: u16,
    /// Its time stamp under the Bounded Jitter Policy (the `bjp` discipline): zero until its
    /// first BJP router, then a global time or its slack (`buflab_queue::bjp`).
    pub stamp: Time,
}

#[cfg(test)]
impl Packet {
    /// A packet for unit tests: of `kind`, flow `flow`, number `seq`, `size` bytes, sent at
    /// time 0 on route 0, no flags.
    pub(crate) fn for_test(kind: Kind, flow: u32, seq: u32, size: u32) -> Packet {
        Packet {
            sent_at: Time::ZERO,
            flow,
            seq,
            size,
            route: 0,
            conn: 0,
            sack: 0,
            hop: 0,
            kind,
            flags: 0,
            stamp: Time::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_stays_small() {
        // 32 bytes of fields and BJP's 8-byte stamp: the stamp costs a word per packet
        // moved, and no allocation.
        assert!(std::mem::size_of::<super::Packet>() <= 40);
    }
}
