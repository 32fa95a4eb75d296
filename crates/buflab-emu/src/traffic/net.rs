//! The socket calls the traffic generator makes, non-blocking throughout: each returns
//! `Ok(None)` where the call would block, so that one loop serves every socket.
//!
//! Read first: socket(7), tcp(7), udp(7). The only call with more to it is [`read_stamped`]:
//! the kernel's receive timestamp of the last segment read (`SO_TIMESTAMPNS`, taken as the
//! frame reached the host, before any queue inside it), so that a transfer's end is when its
//! last byte arrived, not when a busy loop got round to reading it.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::RawFd;

use buflab_base::units::Time;

use crate::sys::{check, set_int};

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
        sin_zero: [0; 8],
    }
}

fn socket(kind: libc::c_int) -> io::Result<RawFd> {
    // SAFETY: socket has no pointer arguments.
    check(
        unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) },
        "socket",
    )
}

/// A non-blocking TCP socket.
pub fn tcp_socket() -> io::Result<RawFd> {
    socket(libc::SOCK_STREAM)
}

/// A non-blocking UDP socket.
pub fn udp_socket() -> io::Result<RawFd> {
    socket(libc::SOCK_DGRAM)
}

pub fn bind(fd: RawFd, at: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr(at);
    // SAFETY: bind reads the sockaddr_in of the size given.
    let r = unsafe {
        libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32)
    };
    check(r, "bind").map(|_| ())
}

/// Starts connecting `fd` to `to` (a TCP connection completes later: the socket turns
/// writable).
pub fn connect(fd: RawFd, to: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr(to);
    // SAFETY: connect reads the sockaddr_in of the size given.
    let r = unsafe {
        libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32)
    };
    if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn listen(fd: RawFd, backlog: i32) -> io::Result<()> {
    // SAFETY: listen has no pointer arguments.
    check(unsafe { libc::listen(fd, backlog) }, "listen").map(|_| ())
}

/// A connection waiting on listener `fd`, non-blocking, if any.
pub fn accept(fd: RawFd) -> io::Result<Option<RawFd>> {
    // SAFETY: accept4 may take null address pointers.
    let c = unsafe {
        libc::accept4(
            fd,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    would_block(c as isize).map(|r| r.map(|_| c))
}

/// The address a socket is bound to (an accepted connection: the address it was reached at).
pub fn local_addr(fd: RawFd) -> io::Result<SocketAddrV4> {
    // SAFETY: sockaddr_in is plain data; getsockname writes at most `len` bytes into it.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of_val(&sa) as libc::socklen_t;
    let r = unsafe { libc::getsockname(fd, &mut sa as *mut _ as *mut libc::sockaddr, &mut len) };
    check(r, "getsockname")?;
    Ok(SocketAddrV4::new(Ipv4Addr::from(u32::from_be(sa.sin_addr.s_addr)), u16::from_be(sa.sin_port)))
}

/// `r` of a call that may block: None if it would have.
fn would_block(r: isize) -> io::Result<Option<usize>> {
    if r >= 0 {
        return Ok(Some(r as usize));
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
        _ => Err(e),
    }
}

/// Writes what the socket takes of `buf`.
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<Option<usize>> {
    // SAFETY: send reads at most buf.len() bytes from buf.
    would_block(unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, buf.len(), libc::MSG_NOSIGNAL) })
}

/// Reads into `buf`; Some(0) at the end of the stream.
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: read writes at most buf.len() bytes into buf.
    would_block(unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) })
}

/// Has the kernel stamp each received segment or datagram with its arrival time.
pub fn stamp_arrivals(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS")
}

/// What [`read_stamped`] read: bytes, the sender's address (datagrams) and the arrival time
/// of the last segment read, on the realtime clock (ps).
pub struct Stamped {
    pub bytes: usize,
    pub from: Option<SocketAddrV4>,
    pub realtime: Option<u128>,
}

/// Reads into `buf` as [`read`], with the kernel's receive timestamp (the socket has
/// [`stamp_arrivals`]) and the sender's address.
pub fn read_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<Stamped>> {
    let mut control = [0u64; 16];
    // SAFETY: sockaddr_in and msghdr are plain data, filled below or by recvmsg.
    let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = &mut from as *mut _ as *mut libc::c_void;
    msg.msg_namelen = std::mem::size_of_val(&from) as u32;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: recvmsg writes within the buffers msg points to.
    let Some(bytes) = would_block(unsafe { libc::recvmsg(fd, &mut msg, 0) })? else { return Ok(None) };
    let mut realtime = None;
    // SAFETY: the CMSG_* walk stays within msg_controllen bytes of `control`, filled by
    // recvmsg; SCM_TIMESTAMPNS carries a timespec.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                realtime = Some(ts.tv_sec as u128 * 1_000_000_000_000 + ts.tv_nsec as u128 * 1000);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let from = (msg.msg_namelen as usize >= std::mem::size_of::<libc::sockaddr_in>() && from.sin_family != 0)
        .then(|| {
            SocketAddrV4::new(Ipv4Addr::from(u32::from_be(from.sin_addr.s_addr)), u16::from_be(from.sin_port))
        });
    Ok(Some(Stamped { bytes, from, realtime }))
}

/// Realtime minus monotonic, ps: converts the kernel's receive stamps to the monotonic clock
/// the run counts on.
pub fn realtime_offset() -> u128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let real = ts.tv_sec as u128 * 1_000_000_000_000 + ts.tv_nsec as u128 * 1000;
    real - crate::clock::now().ps() as u128
}

/// A realtime stamp on the monotonic clock.
pub fn monotonic(realtime: u128, offset: u128) -> Time {
    Time(realtime.saturating_sub(offset) as u64)
}

/// Sends what the kernel will take of the TCP stream's end: no more writes (a FIN follows).
pub fn shutdown_write(fd: RawFd) -> io::Result<()> {
    // SAFETY: shutdown has no pointer arguments.
    check(unsafe { libc::shutdown(fd, libc::SHUT_WR) }, "shutdown").map(|_| ())
}

pub fn close(fd: RawFd) {
    // SAFETY: close has no pointer arguments; the caller owns fd and forgets it.
    unsafe { libc::close(fd) };
}

/// Sets the congestion control `name` (`TCP_CONGESTION`).
pub fn set_congestion_control(fd: RawFd, name: &str) -> io::Result<()> {
    // SAFETY: setsockopt reads name.len() bytes of the name.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr() as *const libc::c_void,
            name.len() as u32,
        )
    };
    check(r, "TCP_CONGESTION").map(|_| ())
}

/// CPU time this process used, user and system, seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the rusage it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}
