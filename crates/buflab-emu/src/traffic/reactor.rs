//! The traffic generator's loop: one epoll set for every socket of a host, and timers (when a
//! user's next request is due, a UDP source's next datagram, the start of a flow) on one
//! timerfd, to the nanosecond.
//!
//! Read first: epoll(7), timerfd_create(2). Sockets and timers are named by a [`Token`]: what
//! kind of thing it is and which. [`Reactor::poll`] waits until a socket is ready or the
//! earliest timer is due and hands back what is ready; a timer carries the time it was due,
//! which the generator's models work from (a user's think time counts from when its download
//! ended, not from when the loop noticed), and how late it fired is kept ([`Lateness`]): the
//! generator's own fidelity, reported with the run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::RawFd;

use buflab_base::units::Time;

use crate::clock;
use crate::fidelity::Lateness;
use crate::sys::check;

/// What a socket or timer belongs to: a kind (the generator's parts number theirs) and an
/// index within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token {
    pub kind: u8,
    pub index: u64,
}

impl Token {
    pub const fn new(kind: u8, index: u64) -> Token {
        Token { kind, index }
    }

    fn pack(self) -> u64 {
        (self.kind as u64) << 56 | self.index
    }

    fn unpack(v: u64) -> Token {
        Token { kind: (v >> 56) as u8, index: v & ((1 << 56) - 1) }
    }
}

/// The timerfd's own token (no part uses kind 0).
const TIMER: Token = Token::new(0, 0);

/// Something ready: a socket with its epoll events, or a timer with the time it was due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    Io(Token, u32),
    Timer(Token, Time),
}

pub struct Reactor {
    ep: RawFd,
    timerfd: RawFd,
    timers: BinaryHeap<Reverse<(Time, Token)>>,
    /// The time the timerfd is set for.
    armed: Option<Time>,
    events: Vec<libc::epoll_event>,
    /// How late timers fired.
    pub late: Lateness,
}

impl Reactor {
    pub fn new() -> io::Result<Reactor> {
        // A timer fires within the thread's timer slack of its time: 50 µs unless lowered.
        // SAFETY: prctl with PR_SET_TIMERSLACK takes a number of nanoseconds.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1) };
        // SAFETY: epoll_create1 and timerfd_create have no pointer arguments.
        let ep = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?;
        let timerfd = check(
            unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) },
            "timerfd_create",
        )?;
        let r = Reactor {
            ep,
            timerfd,
            timers: BinaryHeap::new(),
            armed: None,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 1024],
            late: Lateness::default(),
        };
        r.add(timerfd, libc::EPOLLIN as u32, TIMER)?;
        Ok(r)
    }

    /// Watches `fd` for `events`, reporting them with `token`.
    pub fn add(&self, fd: RawFd, events: u32, token: Token) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token.pack() };
        // SAFETY: epoll_ctl reads the event it is given.
        check(unsafe { libc::epoll_ctl(self.ep, libc::EPOLL_CTL_ADD, fd, &mut ev) }, "epoll_ctl").map(|_| ())
    }

    /// Stops watching `fd` (before it is closed: a closed descriptor leaves the set anyway,
    /// unless another holds the same file).
    pub fn remove(&self, fd: RawFd) {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: epoll_ctl reads the event it is given (ignored for EPOLL_CTL_DEL).
        unsafe { libc::epoll_ctl(self.ep, libc::EPOLL_CTL_DEL, fd, &mut ev) };
    }

    /// A timer for `token`, due at `due` (monotonic).
    pub fn at(&mut self, due: Time, token: Token) {
        self.timers.push(Reverse((due, token)));
    }

    /// Timers pending.
    pub fn timers(&self) -> usize {
        self.timers.len()
    }

    /// Waits until a socket is ready, a timer is due or `until` (monotonic) has come, and
    /// pushes what is ready to `out`: sockets first, then every timer due by now, earliest
    /// first.
    pub fn poll(&mut self, until: Time, out: &mut Vec<Ready>) -> io::Result<()> {
        let wake = self.timers.peek().map_or(until, |r| r.0 .0.min(until));
        if self.armed != Some(wake) {
            self.arm(wake)?;
        }
        let now = clock::now();
        let timeout = if wake <= now { 0 } else { -1 };
        // SAFETY: epoll_wait writes at most events.len() entries.
        let n =
            unsafe { libc::epoll_wait(self.ep, self.events.as_mut_ptr(), self.events.len() as i32, timeout) };
        if n < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(io::Error::last_os_error());
        }
        for ev in &self.events[..n.max(0) as usize] {
            let token = Token::unpack(ev.u64);
            if token == TIMER {
                let mut expirations = 0u64;
                // SAFETY: a timerfd read writes 8 bytes.
                unsafe { libc::read(self.timerfd, &mut expirations as *mut u64 as *mut libc::c_void, 8) };
                self.armed = None;
            } else {
                out.push(Ready::Io(token, ev.events));
            }
        }
        let now = clock::now();
        while let Some(&Reverse((due, token))) = self.timers.peek() {
            if due > now {
                break;
            }
            self.timers.pop();
            self.late.record(due, now);
            out.push(Ready::Timer(token, due));
        }
        Ok(())
    }

    /// Sets the timerfd to fire at `at` (absolute, monotonic).
    fn arm(&mut self, at: Time) -> io::Result<()> {
        let ns = (at.ps() / 1000).max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as i64,
                tv_nsec: (ns % 1_000_000_000) as i64,
            },
        };
        // SAFETY: timerfd_settime reads the itimerspec it is given; the old value may be null.
        let r = unsafe {
            libc::timerfd_settime(self.timerfd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        check(r, "timerfd_settime")?;
        self.armed = Some(at);
        Ok(())
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        // SAFETY: both descriptors are ours.
        unsafe {
            libc::close(self.timerfd);
            libc::close(self.ep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_pack_and_unpack() {
        for t in [Token::new(1, 0), Token::new(7, 123_456), Token::new(255, (1 << 56) - 1)] {
            assert_eq!(Token::unpack(t.pack()), t);
        }
    }

    #[test]
    fn timers_come_back_in_order_with_their_due_times() {
        let mut r = Reactor::new().unwrap();
        let now = clock::now();
        r.at(now + Time::from_ms(3), Token::new(1, 2));
        r.at(now + Time::from_ms(1), Token::new(1, 1));
        let mut out = Vec::new();
        while out.len() < 2 {
            r.poll(now + Time::from_ms(100), &mut out).unwrap();
        }
        assert_eq!(
            out,
            vec![
                Ready::Timer(Token::new(1, 1), now + Time::from_ms(1)),
                Ready::Timer(Token::new(1, 2), now + Time::from_ms(3))
            ]
        );
        assert!(clock::now() >= now + Time::from_ms(3), "not before its time");
        assert_eq!(r.late.count, 2);
    }
}
