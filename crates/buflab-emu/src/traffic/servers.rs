//! The users' servers on a sender machine: one listening socket on every flow address of the
//! host (they are all local to it), a connection per download. A connection reads its request
//! (the connection's number and the file's size), writes the file, closes its side, waits for
//! the client's close, and is gone; what its `TCP_INFO` counted goes to its flow's totals and
//! to the transfers table (the server's retransmissions and timeouts of that download).
//!
//! Read first: [`super`] and [`super::senders`] (the connections' settings). The server closes
//! first, so the TIME_WAIT of every download stays here; its clients' ports come from the
//! receiver's kernel, a new one per connection, so no 4-tuple is reused while it waits.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::RawFd;

use serde_json::{json, Value};

use super::net;
use super::reactor::{Reactor, Token};
use super::senders::set_pacing;
use super::{Counters, FlowTotals, TcpSettings, Window, REQUEST, TCP_PORT};
use crate::address;
use crate::sys::{set_int, set_opt};
use crate::tcp_info;

/// The reactor's kinds: the listening socket, and the connections (by slot).
pub const LISTENER: u8 = 2;
pub const CONNECTION: u8 = 3;

enum Phase {
    /// Reading the request: bytes of it so far.
    Request(usize),
    /// Writing the file: bytes left.
    Sending(u64),
    /// Written and closed on our side: waiting for the client to close.
    Draining,
}

struct Conn {
    fd: RawFd,
    flow: u32,
    /// Its number within the flow (from the request), 0 until read.
    conn: u64,
    request: [u8; REQUEST],
    phase: Phase,
    /// Its counters when the measured window began (zero if it opened after), None before.
    base: Option<Counters>,
}

pub struct Servers {
    listener: RawFd,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    /// Per flow: what its connections counted.
    totals: HashMap<u32, FlowTotals>,
    /// Per download: (flow, connection, retransmissions, timeouts).
    served: Vec<(u32, u64, u64, u64)>,
    data: Vec<u8>,
    /// Connections that failed before their file was sent (reset by the client, or a
    /// request that was not one).
    pub failed: u64,
}

impl Servers {
    /// Listens on every flow address of the host, port `TCP_PORT`, with the run's settings.
    pub fn listen(tcp: &TcpSettings, reactor: &Reactor) -> std::io::Result<Servers> {
        let fd = net::tcp_socket()?;
        set_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
        // Accepted connections inherit the listener's MSS and congestion control.
        set_opt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &tcp.mss, "TCP_MAXSEG")?;
        net::set_congestion_control(fd, &tcp.cc)?;
        net::bind(fd, SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, TCP_PORT))?;
        net::listen(fd, 65_535)?;
        reactor.add(fd, libc::EPOLLIN as u32, Token::new(LISTENER, 0))?;
        Ok(Servers {
            listener: fd,
            conns: Vec::new(),
            free: Vec::new(),
            totals: HashMap::new(),
            served: Vec::new(),
            data: vec![0u8; 1 << 16],
            failed: 0,
        })
    }

    /// Accepts every waiting connection.
    pub fn accept(&mut self, tcp: &TcpSettings, window: &Window, reactor: &Reactor) -> std::io::Result<()> {
        while let Some(fd) = net::accept(self.listener)? {
            let flow = net::local_addr(fd).ok().and_then(|a| address::flow(u32::from(*a.ip())));
            let Some(flow) = flow else {
                net::close(fd);
                self.failed += 1;
                continue;
            };
            set_pacing(fd, tcp)?;
            let slot = self.free.pop().unwrap_or(self.conns.len());
            let conn = Conn {
                fd,
                flow: flow as u32,
                conn: 0,
                request: [0; REQUEST],
                phase: Phase::Request(0),
                base: window.base_at_open(),
            };
            if slot == self.conns.len() {
                self.conns.push(Some(conn));
            } else {
                self.conns[slot] = Some(conn);
            }
            let events = libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET;
            reactor.add(fd, events as u32, Token::new(CONNECTION, slot as u64))?;
            // Its request may be there already (edge-triggered: no event would say so).
            self.ready(slot, 0, reactor);
        }
        Ok(())
    }

    /// Connection `slot`'s socket is ready: it goes as far as it can through its phases.
    pub fn ready(&mut self, slot: usize, events: u32, reactor: &Reactor) {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else { return };
        let failed = events & libc::EPOLLERR as u32 != 0;
        loop {
            match c.phase {
                Phase::Request(got) => match net::read(c.fd, &mut c.request[got..]) {
                    Ok(Some(0)) | Err(_) => return self.finish(slot, false, reactor),
                    Ok(Some(n)) if got + n == REQUEST => {
                        c.conn = u64::from_le_bytes(c.request[..8].try_into().expect("8 bytes"));
                        c.phase =
                            Phase::Sending(u64::from_le_bytes(c.request[8..].try_into().expect("8 bytes")));
                    }
                    Ok(Some(n)) => c.phase = Phase::Request(got + n),
                    Ok(None) => break,
                },
                Phase::Sending(0) => {
                    let _ = net::shutdown_write(c.fd);
                    c.phase = Phase::Draining;
                }
                Phase::Sending(left) => {
                    let chunk = left.min(self.data.len() as u64) as usize;
                    match net::write(c.fd, &self.data[..chunk]) {
                        Ok(Some(n)) => c.phase = Phase::Sending(left - n as u64),
                        Ok(None) => break,
                        Err(_) => return self.finish(slot, false, reactor),
                    }
                }
                Phase::Draining => {
                    let mut sink = [0u8; 256];
                    match net::read(c.fd, &mut sink) {
                        Ok(Some(0)) | Err(_) => return self.finish(slot, true, reactor),
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                    }
                }
            }
        }
        if failed {
            self.finish(slot, false, reactor);
        }
    }

    /// Connection `slot` is over (`sent`: its file went out and the client closed): its
    /// counts go to its flow and its download's row, and its socket is closed.
    fn finish(&mut self, slot: usize, sent: bool, reactor: &Reactor) {
        let Some(c) = self.conns[slot].take() else { return };
        self.free.push(slot);
        self.record(&c);
        if !sent {
            self.failed += 1;
        }
        reactor.remove(c.fd);
        net::close(c.fd);
    }

    fn record(&mut self, c: &Conn) {
        if let Ok(r) = tcp_info::read(c.fd) {
            self.totals.entry(c.flow).or_default().add(&r, c.base);
            if c.conn > 0 {
                self.served.push((
                    c.flow,
                    c.conn,
                    u64::from(r.info.total_retrans),
                    u64::from(r.info.total_rto),
                ));
            }
        }
    }

    /// The measured window begins: each open connection's counters are its base.
    pub fn window_begins(&mut self) {
        for c in self.conns.iter_mut().flatten() {
            c.base = Some(tcp_info::read(c.fd).map_or(Counters::default(), |r| Counters::of(&r.info)));
        }
    }

    /// (flow, socket) of every open connection.
    pub fn sockets(&self) -> impl Iterator<Item = (u32, RawFd)> + '_ {
        self.conns.iter().flatten().map(|c| (c.flow, c.fd))
    }

    /// The report at the end: every connection still open counted as it is now; each flow's
    /// row (see [`FlowTotals::row`]) and each download's (flow, connection, retransmissions,
    /// timeouts).
    pub fn report(&mut self) -> Value {
        let open: Vec<usize> = (0..self.conns.len()).filter(|&i| self.conns[i].is_some()).collect();
        for slot in open {
            let c = self.conns[slot].take().expect("open");
            self.record(&c);
            net::close(c.fd);
        }
        let mut flows: Vec<(&u32, &FlowTotals)> = self.totals.iter().collect();
        flows.sort_by_key(|(f, _)| **f);
        let rto_known = flows.iter().all(|(_, t)| t.rto_known);
        json!({
            "flows": flows.iter().map(|(f, t)| t.row(**f, None)).collect::<Vec<_>>(),
            "served": self.served,
            "failed": self.failed,
            "timeouts_known": rto_known,
        })
    }
}
