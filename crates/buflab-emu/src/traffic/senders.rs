//! Long-lived flows' senders: one connection each, from its flow address to the sink, opened
//! at its start time and written to as fast as the socket takes data until the run ends. In
//! a live run, spare slots are opened and any sender closed on command ([`super::control`]).
//!
//! Read first: [`super`] and [`super::reactor`]. Owns the senders' sockets and what their
//! `TCP_INFO` counted; the loop calls [`Senders::start`] when a flow's timer fires and
//! [`Senders::writable`] when its socket is.

use std::io;
use std::net::SocketAddrV4;
use std::os::fd::RawFd;

use buflab_base::units::Time;
use serde_json::Value;

use super::net;
use super::reactor::{Reactor, Token};
use super::{Counters, FlowTotals, TcpSettings, Window};
use crate::address;
use crate::sys::set_opt;
use crate::tcp_info::{self, Reading};

/// The reactor's kind for the senders' sockets and start timers.
pub const KIND: u8 = 1;

struct Sender {
    flow: u32,
    /// Its `[[traffic]]` entry.
    traffic: usize,
    fd: Option<RawFd>,
    error: Option<String>,
    /// Its counters when the measured window began (zero if it had not started yet).
    base: Option<Counters>,
    /// A spare slot of a live run: it starts only when opened on command.
    spare: bool,
    /// When it was opened on command, or closed (monotonic).
    opened: Option<Time>,
    closed: Option<Time>,
    /// Its connection's last reading, taken as it closed.
    last: Option<Reading>,
}

pub struct Senders {
    flows: Vec<Sender>,
    data: Vec<u8>,
}

/// Opens a TCP connection from `local` to `to` with the run's settings (congestion control,
/// MSS, pacing); the connection completes later.
pub fn open(tcp: &TcpSettings, local: SocketAddrV4, to: SocketAddrV4) -> io::Result<RawFd> {
    let fd = net::tcp_socket()?;
    let setup = || -> io::Result<()> {
        net::set_congestion_control(fd, &tcp.cc)?;
        set_opt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &tcp.mss, "TCP_MAXSEG")?;
        set_pacing(fd, tcp)?;
        net::bind(fd, local)?;
        net::connect(fd, to)
    };
    setup().inspect_err(|_| net::close(fd))?;
    Ok(fd)
}

/// Linux's internal pacing at most at the plan's rate (`SO_MAX_PACING_RATE`, bytes/s), if
/// the flows pace.
pub fn set_pacing(fd: RawFd, tcp: &TcpSettings) -> io::Result<()> {
    match tcp.pacing_bps {
        Some(bps) => {
            set_opt(fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &(bps / 8), "SO_MAX_PACING_RATE")
        }
        None => Ok(()),
    }
}

impl Senders {
    /// The senders of `flows` ((flow id, entry)), each started when the loop says, and the
    /// spare slots `spare` of a live run, started on command.
    pub fn new(flows: &[(u32, usize)], spare: &[(u32, usize)]) -> Senders {
        let sender = |&(flow, traffic): &(u32, usize), spare| Sender {
            flow,
            traffic,
            fd: None,
            error: None,
            base: None,
            spare,
            opened: None,
            closed: None,
            last: None,
        };
        let flows =
            flows.iter().map(|f| sender(f, false)).chain(spare.iter().map(|f| sender(f, true))).collect();
        Senders { flows, data: vec![0u8; 1 << 16] }
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Schedules sender `i`'s start at `at`.
    pub fn schedule(&self, i: usize, at: Time, reactor: &mut Reactor) {
        reactor.at(at, Token::new(KIND, i as u64));
    }

    /// Sender `i` starts: its connection to `sink` opens (unless it was closed before it
    /// started).
    pub fn start(
        &mut self,
        i: usize,
        tcp: &TcpSettings,
        sink: SocketAddrV4,
        window: &Window,
        reactor: &Reactor,
    ) {
        let s = &mut self.flows[i];
        if s.closed.is_some() {
            return;
        }
        let local = SocketAddrV4::new(address::address(s.flow as usize), 0);
        let opened = open(tcp, local, sink).and_then(|fd| {
            if let Some(bytes) = tcp.notsent_lowat {
                set_opt(fd, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, &bytes, "TCP_NOTSENT_LOWAT")
                    .inspect_err(|_| net::close(fd))?;
            }
            reactor.add(fd, (libc::EPOLLOUT | libc::EPOLLET) as u32, Token::new(KIND, i as u64))?;
            Ok(fd)
        });
        match opened {
            Ok(fd) => {
                s.fd = Some(fd);
                s.base = window.base_at_open();
            }
            Err(e) => s.error = Some(e.to_string()),
        }
    }

    /// The long-lived flows open or due to start, as (flow, entry), in the order they were
    /// planned and then opened.
    pub fn open_flows(&self) -> Vec<(u32, usize)> {
        let mut open: Vec<&Sender> =
            self.flows.iter().filter(|s| s.closed.is_none() && (!s.spare || s.opened.is_some())).collect();
        open.sort_by_key(|s| (s.spare, s.opened));
        open.iter().map(|s| (s.flow, s.traffic)).collect()
    }

    /// Spare slots not opened yet.
    pub fn spare_left(&self) -> usize {
        self.flows.iter().filter(|s| s.spare && s.opened.is_none()).count()
    }

    /// Opens the next spare slot now (`now`, monotonic): returns its (flow, entry).
    pub fn open_spare(
        &mut self,
        now: Time,
        tcp: &TcpSettings,
        sink: SocketAddrV4,
        window: &Window,
        reactor: &Reactor,
    ) -> Result<(u32, usize), String> {
        let total = self.flows.iter().filter(|s| s.spare).count();
        let i = self
            .flows
            .iter()
            .position(|s| s.spare && s.opened.is_none())
            .ok_or(format!("open: no spare flow slot left (the run's plan declared {total})"))?;
        self.flows[i].opened = Some(now);
        self.start(i, tcp, sink, window, reactor);
        let s = &self.flows[i];
        match &s.error {
            Some(e) => Err(format!("open: flow {}: {e}", s.flow)),
            None => Ok((s.flow, s.traffic)),
        }
    }

    /// Closes flow `flow`'s connection now (`now`, monotonic), keeping its last reading; a
    /// flow not started yet never starts.
    pub fn close(&mut self, flow: u32, now: Time, reactor: &Reactor) -> Result<(), String> {
        let s = self
            .flows
            .iter_mut()
            .find(|s| s.flow == flow && (!s.spare || s.opened.is_some()))
            .ok_or(format!("close {flow}: no long-lived flow {flow} on this machine"))?;
        if s.closed.is_some() {
            return Err(format!("close {flow}: closed already"));
        }
        s.closed = Some(now);
        if let Some(fd) = s.fd.take() {
            s.last = tcp_info::read(fd).ok();
            reactor.remove(fd);
            net::close(fd);
        }
        Ok(())
    }

    /// The spare slots opened, with when (monotonic): (flow, time).
    pub fn opened(&self) -> Vec<(u32, Time)> {
        self.flows.iter().filter(|s| s.spare).filter_map(|s| s.opened.map(|t| (s.flow, t))).collect()
    }

    /// The senders closed, with when (monotonic): (flow, time).
    pub fn closed(&self) -> Vec<(u32, Time)> {
        self.flows.iter().filter_map(|s| s.closed.map(|t| (s.flow, t))).collect()
    }

    /// Sender `i`'s socket is writable (or failed): it writes what the socket takes.
    pub fn writable(&mut self, i: usize, events: u32) {
        let s = &mut self.flows[i];
        let Some(fd) = s.fd else { return };
        if events & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 && s.error.is_none() {
            s.error = Some("the connection failed".into());
        }
        while let Ok(Some(n)) = net::write(fd, &self.data) {
            if n == 0 {
                break;
            }
        }
    }

    /// The measured window begins: each open connection's counters are its base (one closed
    /// already has none: nothing of it falls in the window).
    pub fn window_begins(&mut self) {
        for s in self.flows.iter_mut().filter(|s| s.closed.is_none()) {
            s.base =
                s.fd.and_then(|fd| tcp_info::read(fd).ok())
                    .map(|r| Counters::of(&r.info))
                    .or(Some(Counters::default()));
        }
    }

    /// (flow, socket) of every open connection.
    pub fn sockets(&self) -> impl Iterator<Item = (u32, RawFd)> + '_ {
        self.flows.iter().filter_map(|s| s.fd.map(|fd| (s.flow, fd)))
    }

    /// Each flow's row (see [`FlowTotals::row`]), read now (the end of the window), and
    /// whether every kernel reading said its timeouts.
    pub fn report(&self) -> (Vec<Value>, bool) {
        let mut known = true;
        let rows = self
            .flows
            .iter()
            .filter(|s| !s.spare || s.opened.is_some())
            .map(|s| {
                let mut totals = FlowTotals::default();
                if let Some(r) = s.fd.and_then(|fd| tcp_info::read(fd).ok()).or(s.last) {
                    totals.add(&r, s.base);
                    known &= totals.rto_known;
                }
                totals.row(s.flow, s.error.as_deref())
            })
            .collect();
        (rows, known)
    }
}
