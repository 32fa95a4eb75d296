//! The receive ring of an AF_PACKET socket: frames the kernel writes into memory shared with
//! us (`PACKET_RX_RING`, TPACKET_V2; packet(7) and the kernel's `packet_mmap` documentation),
//! read without a system call per frame.
//!
//! Read first: [`crate::afpacket`] (which maps the ring). This file owns walking the ring —
//! reading a slot's header once the kernel hands it over, giving it back — and knows nothing
//! of sockets or mappings, so that its tests drive it on plain memory written as the kernel
//! writes it.
//!
//! Why TPACKET_V2 and not V3: V3 hands memory over a *block* at a time, and a block that is
//! not full is handed over only when its retire timer fires (`tp_retire_blk_tov`, counted in
//! whole milliseconds). A lone ACK could wait a millisecond in the ring: a hundred times the
//! timing error the datapath is allowed. V2 hands each frame over the moment it is written.
//!
//! The ring is `frames` slots of `frame_size` bytes, used in order and wrapping around. A slot
//! belongs to the kernel while its header's status is `TP_STATUS_KERNEL` (0) and to us once the
//! kernel sets `TP_STATUS_USER`; after reading it we set it back to 0. The status word is read
//! with acquire and written with release ordering: the kernel writes the frame before its
//! status, and must not see the slot free before we are done with it.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// Slot status bits (linux/if_packet.h).
pub const TP_STATUS_KERNEL: u32 = 0;
pub const TP_STATUS_USER: u32 = 1;
/// The frame was longer than the slot: only its first `snaplen` bytes are here.
pub const TP_STATUS_COPY: u32 = 2;
/// The kernel dropped frames because the ring was full (told on the next frame it wrote).
pub const TP_STATUS_LOSING: u32 = 4;

/// Offsets in `struct tpacket2_hdr`: status, len, snaplen (u32), mac (u16).
const STATUS: usize = 0;
const LEN: usize = 4;
const SNAPLEN: usize = 8;
const MAC: usize = 12;
/// `tp_sec`, `tp_nsec` (u32 each): when the kernel wrote the frame, on the real-time clock
/// (af_packet.c's `tpacket_rcv` stamps every frame it puts in a ring).
const SEC: usize = 16;
const NSEC: usize = 20;
/// `sizeof(struct tpacket2_hdr)`.
pub const HEADER: usize = 32;
/// `sizeof(struct virtio_net_hdr)`.
const VNET: usize = 10;

/// A frame the kernel handed over.
#[derive(Debug, PartialEq, Eq)]
pub struct Received<'a> {
    /// The bytes in the ring (all of the frame unless `truncated`).
    pub bytes: &'a [u8],
    /// The frame's length on the wire.
    pub len: u32,
    /// It did not fit in a slot (`TP_STATUS_COPY`): a frame the datapath cannot forward.
    pub truncated: bool,
    /// The kernel dropped frames before this one, ring full (`TP_STATUS_LOSING`).
    pub after_losses: bool,
    /// On a socket with `PACKET_VNET_HDR`, the frame's `virtio_net_hdr` (the 10 bytes the
    /// kernel writes right before it).
    pub vnet: Option<&'a [u8]>,
    /// When the kernel wrote the frame into the ring: nanoseconds on `CLOCK_REALTIME`.
    pub written_ns: u64,
}

/// A reader of a ring of `frames` slots of `frame_size` bytes at `base`.
pub struct RxRing {
    base: NonNull<u8>,
    frame_size: usize,
    frames: usize,
    /// The slot to look at next.
    next: usize,
    /// Frames come with their vnet header before them (`PACKET_VNET_HDR`).
    vnet: bool,
}

impl RxRing {
    /// # Safety
    /// `base` must point to `frame_size × frames` bytes, 16-byte aligned (`frame_size` a
    /// multiple of 16), that stay valid and are written only by the kernel's ring protocol
    /// (or a test playing its part) for the life of the reader.
    pub unsafe fn new(base: NonNull<u8>, frame_size: usize, frames: usize, vnet: bool) -> RxRing {
        assert!(
            frame_size >= HEADER && frame_size.is_multiple_of(16) && frames > 0,
            "a ring of aligned slots"
        );
        RxRing { base, frame_size, frames, next: 0, vnet }
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: i < frames, so the slot lies inside the ring (`new`'s contract).
        unsafe { self.base.as_ptr().add(i * self.frame_size) }
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: the status word is the slot's first, 4-byte aligned (slots are 16-aligned),
        // and shared with the kernel only through atomic accesses.
        unsafe { AtomicU32::from_ptr(self.slot(i).add(STATUS) as *mut u32) }
    }

    fn read_u32(&self, i: usize, at: usize) -> u32 {
        // SAFETY: inside the slot's header; the kernel wrote it before it set the status,
        // which we read with acquire ordering first.
        unsafe { (self.slot(i).add(at) as *const u32).read() }
    }

    /// The next frame, if the kernel has handed it over; it stays ours until [`Self::release`].
    pub fn peek(&self) -> Option<Received<'_>> {
        let status = self.status(self.next).load(Ordering::Acquire);
        if status & TP_STATUS_USER == 0 {
            return None;
        }
        let i = self.next;
        let len = self.read_u32(i, LEN);
        let snaplen = self.read_u32(i, SNAPLEN) as usize;
        // SAFETY: as read_u32; the mac offset is a u16 in the header.
        let mac = unsafe { (self.slot(i).add(MAC) as *const u16).read() } as usize;
        // A header the kernel would never write (a test's mistake, or memory not a ring)
        // yields an empty frame rather than a read outside the slot.
        let end = (mac + snaplen).min(self.frame_size);
        let start = mac.min(end);
        // SAFETY: start..end lies inside slot i, which the kernel will not touch until we
        // release it.
        let bytes = unsafe { std::slice::from_raw_parts(self.slot(i).add(start), end - start) };
        let vnet = (self.vnet && start >= HEADER + VNET).then(|| {
            // SAFETY: the VNET bytes before the frame, inside slot i after its header.
            unsafe { std::slice::from_raw_parts(self.slot(i).add(start - VNET), VNET) }
        });
        Some(Received {
            bytes,
            len,
            truncated: status & TP_STATUS_COPY != 0 || snaplen < len as usize,
            after_losses: status & TP_STATUS_LOSING != 0,
            vnet,
            written_ns: u64::from(self.read_u32(i, SEC)) * 1_000_000_000 + u64::from(self.read_u32(i, NSEC)),
        })
    }

    /// Gives the frame [`Self::peek`] returned back to the kernel and moves on.
    pub fn release(&mut self) {
        self.status(self.next).store(TP_STATUS_KERNEL, Ordering::Release);
        self.next = (self.next + 1) % self.frames;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: usize = 128;
    /// Where the kernel puts a frame's first byte in a slot (TPACKET_ALIGN of the header and
    /// a sockaddr_ll; any offset past the header does).
    const MAC_AT: usize = 64;

    /// Ring memory, 16-byte aligned, and the kernel's side of the protocol.
    struct Kernel {
        memory: Vec<u128>,
        next: usize,
        frames: usize,
    }

    impl Kernel {
        fn new(frames: usize) -> Kernel {
            Kernel { memory: vec![0; frames * FRAME / 16], next: 0, frames }
        }

        fn base(&mut self) -> NonNull<u8> {
            NonNull::new(self.memory.as_mut_ptr() as *mut u8).expect("allocated")
        }

        fn slot(&mut self, i: usize) -> &mut [u8] {
            // SAFETY: the Vec's bytes, viewed as bytes.
            let all = unsafe {
                std::slice::from_raw_parts_mut(self.memory.as_mut_ptr() as *mut u8, self.frames * FRAME)
            };
            &mut all[i * FRAME..(i + 1) * FRAME]
        }

        /// Writes a frame of `len` bytes filled with `fill` as the kernel does, or returns
        /// false when the next slot is still the reader's (the kernel would drop the frame).
        fn write(&mut self, len: usize, fill: u8, extra: u32) -> bool {
            let i = self.next;
            let s = self.slot(i);
            if u32::from_ne_bytes(s[0..4].try_into().unwrap()) != TP_STATUS_KERNEL {
                return false;
            }
            let snap = len.min(FRAME - MAC_AT);
            s[MAC_AT..MAC_AT + snap].fill(fill);
            s[MAC_AT - 10..MAC_AT].fill(0xee);
            s[LEN..LEN + 4].copy_from_slice(&(len as u32).to_ne_bytes());
            s[SNAPLEN..SNAPLEN + 4].copy_from_slice(&(snap as u32).to_ne_bytes());
            s[MAC..MAC + 2].copy_from_slice(&(MAC_AT as u16).to_ne_bytes());
            // Written at 7 s and `len` µs on the real-time clock.
            s[SEC..SEC + 4].copy_from_slice(&7u32.to_ne_bytes());
            s[NSEC..NSEC + 4].copy_from_slice(&(len as u32 * 1_000).to_ne_bytes());
            let copy = if snap < len { TP_STATUS_COPY } else { 0 };
            s[0..4].copy_from_slice(&(TP_STATUS_USER | copy | extra).to_ne_bytes());
            self.next = (i + 1) % self.frames;
            true
        }
    }

    #[test]
    fn frames_come_in_order_and_slots_go_back_to_the_kernel_round_the_ring() {
        let mut k = Kernel::new(4);
        // SAFETY: the kernel's memory outlives the ring, and only the protocol touches it.
        let mut ring = unsafe { RxRing::new(k.base(), FRAME, 4, false) };
        assert_eq!(ring.peek(), None, "nothing written yet");
        for round in 0..3u8 {
            for j in 0..4u8 {
                assert!(k.write(20 + j as usize, round * 4 + j, 0), "a slot free for the kernel");
            }
            assert!(!k.write(20, 99, 0), "the ring is full until the reader gives slots back");
            for j in 0..4u8 {
                let f = ring.peek().expect("handed over");
                assert_eq!((f.len, f.bytes.len()), (20 + j as u32, 20 + j as usize));
                assert!(f.bytes.iter().all(|&b| b == round * 4 + j) && !f.truncated);
                assert_eq!(f.written_ns, 7_000_000_000 + (20 + j as u64) * 1_000, "the kernel's stamp");
                ring.release();
            }
            assert_eq!(ring.peek(), None, "every frame read");
        }
    }

    #[test]
    fn a_frame_too_long_for_its_slot_and_losses_before_it_are_told() {
        let mut k = Kernel::new(2);
        // SAFETY: as above.
        let mut ring = unsafe { RxRing::new(k.base(), FRAME, 2, true) };
        assert!(k.write(1500, 1, TP_STATUS_LOSING));
        let f = ring.peek().expect("handed over");
        assert!(f.truncated && f.after_losses && f.len == 1500);
        assert_eq!(f.bytes.len(), FRAME - MAC_AT, "only what fits");
        ring.release();
        assert!(k.write(60, 2, 0));
        let f = ring.peek().expect("handed over");
        assert!(!f.truncated && !f.after_losses);
        // With vnet headers on, the 10 bytes before the frame are its header.
        assert_eq!(f.vnet, Some(&[0xee; 10][..]));
    }
}
