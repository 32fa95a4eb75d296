//! Where frames live while they wait: fixed slots of bytes, handed out and returned.
//!
//! Read first: nothing. A queue discipline holds [`Frame`]s, small copyable handles (the
//! disciplines' `Queued` contract wants `Copy`), while the bytes stay in their slot. The pool
//! is sized once, from the buffer and the delay lines, and never grows in the loop: a frame
//! that finds no free slot is counted as an overrun and dropped before anything else sees it.

use buflab_queue::{Flowing, Queued};

/// The largest frame a slot holds with offloads off: an Ethernet frame of up to 1514 B, plus
/// room for a VLAN tag and jumbo headroom.
pub const SLOT: usize = 2048;

/// The largest frame with offloads on: a GRO or TSO super-packet of up to 64 KB, and its
/// Ethernet header.
pub const SUPER_SLOT: usize = 65_536 + 256;

/// The room before each frame for its `virtio_net_hdr` (10 bytes, ending where the frame
/// begins, so that the two go out as one buffer): how the kernel describes a super-packet's
/// segmentation and checksum when offloads are on (`PACKET_VNET_HDR`).
pub const VNET_HDR: usize = 10;
const HEAD: usize = 16;

/// A frame waiting in the datapath: its slot, its length on the wire, what a discipline may
/// have done to it, and for the event log its flow and sequence number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub slot: u32,
    /// Bytes on the wire (the Ethernet frame, as the simulator counts a packet's size).
    pub len: u32,
    /// It carries an ECN-capable IP header (ECT(0) or ECT(1)).
    pub ect: bool,
    /// Its ECN field is ECT(1), the L4S identifier (RFC 9331 §4.1).
    pub ect1: bool,
    /// A discipline marked it Congestion Experienced: set in its IP header before it leaves.
    pub ce: bool,
    /// Its flow (the scenario's, from its flow address; the number of flows for frames of
    /// none) and its TCP sequence number, as the event log records them.
    pub flow: u32,
    pub seq: u32,
    /// A TCP segment of a flow that carries payload (random loss takes only those, as the
    /// simulator's takes only data packets).
    pub data: bool,
    /// The route it follows through the links in front of the bottleneck, and the next link
    /// on it (see [`crate::pipeline`]).
    pub route: u32,
    pub hop: u8,
}

impl Queued for Frame {
    fn size(&self) -> u32 {
        self.len
    }
    fn ect(&self) -> bool {
        self.ect
    }
    fn mark_ce(&mut self) {
        self.ce = true;
    }
}

/// A flow queue (FQ-CoDel) hashes a frame by its flow: the scenario's, read from its TCP port.
impl Flowing for Frame {
    fn flow(&self) -> u32 {
        self.flow
    }
    /// A frame without payload (a pure ACK, a SYN).
    fn is_control(&self) -> bool {
        !self.data
    }
}

/// Slots of bytes, each a frame of up to `size` bytes and the room for its vnet header.
pub struct Pool {
    bytes: Vec<u8>,
    free: Vec<u32>,
    size: usize,
}

impl Pool {
    /// A pool of `slots` slots for frames of up to `size` bytes.
    pub fn new(slots: u32, size: usize) -> Pool {
        Pool { bytes: vec![0; slots as usize * (HEAD + size)], free: (0..slots).rev().collect(), size }
    }

    /// The largest frame a slot holds.
    pub fn slot_size(&self) -> usize {
        self.size
    }

    fn at(&self, slot: u32) -> usize {
        slot as usize * (HEAD + self.size)
    }

    /// A free slot, if any.
    pub fn take(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// Returns `slot` to the pool.
    pub fn give(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot), "slot {slot} returned twice");
        self.free.push(slot);
    }

    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// The frame's bytes (the whole slot; the frame is its first `len`).
    pub fn slot(&self, slot: u32) -> &[u8] {
        let at = self.at(slot) + HEAD;
        &self.bytes[at..at + self.size]
    }

    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let at = self.at(slot) + HEAD;
        &mut self.bytes[at..at + self.size]
    }

    /// The vnet header kept before the frame in `slot` (zeros unless offloads are on).
    pub fn vnet(&self, slot: u32) -> &[u8] {
        let at = self.at(slot) + HEAD - VNET_HDR;
        &self.bytes[at..at + VNET_HDR]
    }

    /// The vnet header kept before the frame in `slot`.
    pub fn vnet_mut(&mut self, slot: u32) -> &mut [u8] {
        let at = self.at(slot) + HEAD - VNET_HDR;
        &mut self.bytes[at..at + VNET_HDR]
    }

    /// The vnet header and the frame's first `len` bytes, as one buffer.
    pub fn with_vnet(&self, slot: u32, len: usize) -> &[u8] {
        let at = self.at(slot) + HEAD;
        &self.bytes[at - VNET_HDR..at + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_handed_out_once_until_returned() {
        let mut p = Pool::new(2, SLOT);
        let (a, b) = (p.take().unwrap(), p.take().unwrap());
        assert_ne!(a, b);
        assert_eq!(p.take(), None);
        p.slot_mut(a)[0] = 7;
        p.give(a);
        assert_eq!(p.take(), Some(a));
        assert_eq!(p.slot(a)[0], 7);
        // The vnet header sits right before the frame, and the two read as one buffer.
        p.vnet_mut(a).copy_from_slice(&[1; VNET_HDR]);
        assert_eq!(p.with_vnet(a, 2), &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 7, 0]);
        assert_eq!(p.slot(b).len(), SLOT);
    }
}
