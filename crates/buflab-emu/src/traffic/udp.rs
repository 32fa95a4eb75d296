//! UDP sources (`udp_poisson`, `udp_cbr`) on a sender machine, and the sink that counts their
//! datagrams on the receiver.
//!
//! Read first: [`super`] and `buflab_core::traffic::udp` (the source's model). A source sends
//! from its flow address a datagram whose frame is the scenario's packet size (Ethernet, IPv4
//! and UDP headers included), at the times the simulator's own source would: each send at its
//! due time from the model's gaps (exponential or constant, from the flow's own stream), so the
//! sending pattern is the simulator's whatever the loop's lateness (which the reactor
//! reports). The sink counts each flow's datagrams, and those that arrived in the measured
//! window by the kernel's receive stamp.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::RawFd;

use buflab_base::units::Time;
use buflab_core::scenario::Traffic;
use buflab_core::traffic::by_flow;
use buflab_core::traffic::udp::UdpSource;
use serde_json::{json, Value};

use super::net;
use super::reactor::{Reactor, Token};
use super::{Window, UDP_PORT};
use crate::address;

/// The reactor's kinds: a source's timer (by source), the sink's socket.
pub const SOURCE: u8 = 4;
pub const SINK: u8 = 9;

/// Bytes of a frame around a datagram's payload: Ethernet (14), IPv4 (20) and UDP (8).
pub const HEADERS: u32 = 14 + 20 + 8;

struct Source {
    flow: u32,
    fd: Option<RawFd>,
    model: UdpSource,
    payload: usize,
    sent: u64,
    /// Sends the kernel refused (its buffer full): counted, not retried.
    refused: u64,
}

pub struct Sources {
    sources: Vec<Source>,
    buf: Vec<u8>,
}

impl Sources {
    /// The sources of `flows` ((flow, traffic entry), each a UDP entry).
    pub fn new(plan: &super::Plan, flows: &[(u32, usize)]) -> Sources {
        let s = &plan.scenario;
        let sources = flows
            .iter()
            .map(|&(flow, ti)| {
                let Traffic::Udp(u) = &s.traffic[ti] else { panic!("traffic.{ti} is not UDP") };
                let payload = u.packet.saturating_sub(HEADERS) as usize;
                // Its number within its entry (the entry's flows take consecutive ids), which
                // picks its rate from the entry's.
                let k = plan.flows.iter().filter(|f| f.traffic == ti && f.flow < flow).count() as u32;
                let model = by_flow::udp_source(s.seed, u, k, flow as u64, 0);
                Source { flow, fd: None, model, payload, sent: 0, refused: 0 }
            })
            .collect();
        Sources { sources, buf: vec![0u8; 1 << 16] }
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Opens every source's socket (bound to its flow address, sending to the sink).
    pub fn open(&mut self, sink: Ipv4Addr) -> std::io::Result<()> {
        for s in &mut self.sources {
            let fd = net::udp_socket()?;
            net::bind(fd, SocketAddrV4::new(address::address(s.flow as usize), 0))?;
            net::connect(fd, SocketAddrV4::new(sink, UDP_PORT))?;
            s.fd = Some(fd);
        }
        Ok(())
    }

    /// Schedules source `i`'s first datagram at `at`.
    pub fn schedule(&self, i: usize, at: Time, reactor: &mut Reactor) {
        reactor.at(at, Token::new(SOURCE, i as u64));
    }

    /// Source `i`'s datagram due at `due` (monotonic; `epoch` is time 0) goes out, and the
    /// next is scheduled at the model's next time.
    pub fn send(&mut self, i: usize, due: Time, epoch: Time, reactor: &mut Reactor) {
        let s = &mut self.sources[i];
        let (_, next) = s.model.emit(due - epoch);
        if let Some(fd) = s.fd {
            match net::write(fd, &self.buf[..s.payload]) {
                Ok(Some(_)) => s.sent += 1,
                _ => s.refused += 1,
            }
        }
        reactor.at(epoch + next, Token::new(SOURCE, i as u64));
    }

    /// Each source's (flow, datagrams sent, sends refused).
    pub fn report(&self) -> Value {
        json!(self.sources.iter().map(|s| json!([s.flow, s.sent, s.refused])).collect::<Vec<_>>())
    }
}

/// The UDP sink: each flow's datagrams, all and in the measured window.
pub struct Sink {
    fd: RawFd,
    counts: HashMap<u32, (u64, u64)>,
    buf: Vec<u8>,
    offset: u128,
}

impl Sink {
    pub fn listen(reactor: &Reactor) -> std::io::Result<Sink> {
        let fd = net::udp_socket()?;
        net::bind(fd, SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, UDP_PORT))?;
        net::stamp_arrivals(fd)?;
        crate::sys::set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, 8 << 20, "SO_RCVBUF")?;
        reactor.add(fd, (libc::EPOLLIN | libc::EPOLLET) as u32, Token::new(SINK, 0))?;
        Ok(Sink { fd, counts: HashMap::new(), buf: vec![0u8; 1 << 16], offset: net::realtime_offset() })
    }

    /// Reads every datagram waiting.
    pub fn readable(&mut self, window: &Window) {
        while let Ok(Some(r)) = net::read_stamped(self.fd, &mut self.buf) {
            let Some(flow) = r.from.and_then(|a| address::flow(u32::from(*a.ip()))) else { continue };
            let at = r.realtime.map_or_else(crate::clock::now, |t| net::monotonic(t, self.offset));
            let c = self.counts.entry(flow as u32).or_default();
            c.0 += 1;
            c.1 += u64::from(window.contains(at));
        }
    }

    /// Each flow's (flow, datagrams received, of them in the window).
    pub fn report(&self) -> Value {
        let mut rows: Vec<_> = self.counts.iter().map(|(f, c)| (*f, c.0, c.1)).collect();
        rows.sort_unstable();
        json!(rows)
    }
}
