//! AF_PACKET sockets on the router's interfaces: whole Ethernet frames in and out, bypassing
//! the kernel's queueing discipline on the way out (`PACKET_QDISC_BYPASS`) and not seeing our
//! own transmissions on the way in (`PACKET_IGNORE_OUTGOING`).
//!
//! Read first: packet(7), then [`crate::ring`]. Frames come in through a memory-mapped
//! receive ring ([`PacketSocket::open`] maps one; reading a frame is a memory access, no system
//! call), or by `recv` on a socket opened without one. They go out one `send` each: every
//! frame leaves at its own time, so there is nothing to batch, and a transmit ring would add a
//! copy into the ring and still need a system call to flush each frame.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::ring::RxRing;
use crate::sys::{check, set_int};

/// The receive ring: 8 MiB an interface, in slots of 2 KiB (a 1514-byte frame and the
/// kernel's header fit), 4,096 of them; with offloads on, 32 MiB in slots that hold a 64 KB
/// super-packet, 448 of them.
const RING_BYTES: usize = 8 << 20;
const SUPER_RING_BYTES: usize = 32 << 20;
const PAGE: usize = 4096;

/// One interface's socket.
pub struct PacketSocket {
    fd: OwnedFd,
    pub name: String,
    ring: Option<(RxRing, Mapping)>,
}

/// A shared memory mapping, unmapped when dropped.
struct Mapping {
    base: *mut libc::c_void,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: base and len are a mapping of ours that nothing uses any more.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// `struct tpacket_req` (linux/if_packet.h).
#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

/// `struct tpacket_stats`: frames the socket saw, and frames dropped for want of a free slot.
#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    packets: u32,
    drops: u32,
}

impl PacketSocket {
    /// A socket bound to interface `name`, receiving every frame it gets through a ring whose
    /// slots hold frames of up to `frame_max` bytes. With `vnet`, each frame comes and goes
    /// with its `virtio_net_hdr` (`PACKET_VNET_HDR`): with offloads on, a super-packet keeps
    /// its segmentation and checksum state through the datapath.
    pub fn open(name: &str, frame_max: usize, vnet: bool) -> io::Result<PacketSocket> {
        let mut s = Self::open_copying(name)?;
        if vnet {
            set_int(s.fd.as_raw_fd(), libc::SOL_PACKET, libc::PACKET_VNET_HDR, 1, "PACKET_VNET_HDR")?;
        }
        s.map_ring(frame_max, vnet)?;
        Ok(s)
    }

    /// A socket bound to interface `name`, receiving with `recv` (no ring).
    pub fn open_copying(name: &str) -> io::Result<PacketSocket> {
        let cname = CString::new(name).map_err(|_| io::Error::other("an interface name without NUL"))?;
        // SAFETY: if_nametoindex reads a NUL-terminated string.
        let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if index == 0 {
            return Err(io::Error::other(format!("no interface named {name}")));
        }
        let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
        // SAFETY: socket has no pointer arguments.
        let raw = check(
            unsafe {
                libc::socket(
                    libc::AF_PACKET,
                    libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    proto,
                )
            },
            "socket(AF_PACKET) (needs root or CAP_NET_RAW)",
        )?;
        // SAFETY: raw is a socket we own from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        set_int(raw, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS")?;
        set_int(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING")?;
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid start.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        addr.sll_ifindex = index as i32;
        // SAFETY: bind reads the sockaddr_ll of the size given.
        let r = unsafe {
            libc::bind(
                raw,
                &addr as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        check(r, "bind")?;
        Ok(PacketSocket { fd, name: name.to_string(), ring: None })
    }

    /// Maps a TPACKET_V2 receive ring (see [`crate::ring`] for why not V3) with slots for
    /// frames of `frame_max` bytes: the kernel's header, a vnet header and the frame, rounded
    /// up to whole pages; one block a slot, so that slots follow each other without gaps.
    fn map_ring(&mut self, frame_max: usize, vnet: bool) -> io::Result<()> {
        let raw = self.fd.as_raw_fd();
        let v2 = libc::tpacket_versions::TPACKET_V2 as i32;
        set_int(raw, libc::SOL_PACKET, libc::PACKET_VERSION, v2, "PACKET_VERSION")?;
        let frame_size = (crate::ring::HEADER + 64 + frame_max).div_ceil(PAGE) * PAGE;
        let bytes = if frame_max > crate::pool::SLOT { SUPER_RING_BYTES } else { RING_BYTES };
        let frames = bytes / frame_size;
        let req = TpacketReq {
            block_size: frame_size as u32,
            block_nr: frames as u32,
            frame_size: frame_size as u32,
            frame_nr: frames as u32,
        };
        crate::sys::set_opt(raw, libc::SOL_PACKET, libc::PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        let len = frame_size * frames;
        // SAFETY: maps the ring the kernel just made for this socket; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                raw,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::other(format!(
                "mmap of the receive ring: {}",
                io::Error::last_os_error()
            )));
        }
        let mapping = Mapping { base, len };
        let start = std::ptr::NonNull::new(base as *mut u8).expect("mmap succeeded");
        // SAFETY: the mapping is `frames` slots of `frame_size` bytes (a block each),
        // page-aligned, and lives as long as the ring beside it in `self`.
        let ring = unsafe { RxRing::new(start, frame_size, frames, vnet) };
        self.ring = Some((ring, mapping));
        Ok(())
    }

    /// The next frame, handed to `take` (its bytes, whether it was cut short, too long for a
    /// slot, its vnet header on a socket that has them, and when the kernel wrote it into the
    /// ring, in nanoseconds on the real-time clock), and given back; false when none waits.
    /// For a socket without a ring, the frame is first read into `buf` (and has no stamp).
    pub fn receive(
        &mut self,
        buf: &mut [u8],
        take: impl FnOnce(&[u8], bool, Option<&[u8]>, Option<u64>),
    ) -> io::Result<bool> {
        match self.ring.as_mut() {
            Some((ring, _)) => {
                let Some(frame) = ring.peek() else { return Ok(false) };
                take(frame.bytes, frame.truncated, frame.vnet, Some(frame.written_ns));
                ring.release();
                Ok(true)
            }
            None => match self.recv(buf)? {
                Some(n) => {
                    take(&buf[..n.min(buf.len())], n > buf.len(), None, None);
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    /// Frames the kernel dropped for want of a free slot in the ring since the last call
    /// (`PACKET_STATISTICS` counts from one reading to the next).
    pub fn ring_drops(&self) -> io::Result<u64> {
        let mut stats = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `stats`.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut stats as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        check(r, "PACKET_STATISTICS")?;
        Ok(u64::from(stats.drops))
    }

    /// The next frame into `buf`, its length; None when none waits.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: recv writes at most buf.len() bytes into buf.
        let n = unsafe {
            libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr() as *mut libc::c_void, buf.len(), libc::MSG_TRUNC)
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
        }
        Ok(Some(n as usize))
    }

    /// Sends one frame; false when the interface's queue is full (the frame was not sent).
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        // SAFETY: send reads frame.len() bytes from frame.
        let n =
            unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS) {
                Ok(false)
            } else {
                Err(e)
            };
        }
        Ok(true)
    }
}
