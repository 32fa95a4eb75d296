//! AF_PACKET sockets on the router's interfaces: whole Ethernet frames in and out, bypassing
//! the kernel's queueing discipline on the way out (`PACKET_QDISC_BYPASS`) and not seeing our
//! own transmissions on the way in (`PACKET_IGNORE_OUTGOING`).
//!
//! Read first: packet(7). Non-blocking: the loop busy-polls. This first version copies each
//! frame with `recv` and `send`; memory-mapped rings (TPACKET_V3) come next and will keep the
//! same interface.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::sys::{check, set_int};

/// One interface's socket.
pub struct PacketSocket {
    fd: OwnedFd,
    pub name: String,
}

impl PacketSocket {
    /// A socket bound to interface `name`, receiving every frame it gets.
    pub fn open(name: &str) -> io::Result<PacketSocket> {
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
        Ok(PacketSocket { fd, name: name.to_string() })
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
