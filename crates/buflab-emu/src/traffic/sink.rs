//! The long-lived flows' sink on the receiver: accepts their connections and reads and
//! discards everything, with the receivers' window clamp and, if the scenario turns delayed
//! ACKs off, an ACK for every segment.
//!
//! Read first: [`super`]. Linux has no switch for delayed ACKs; `TCP_QUICKACK` turns them off
//! until the stack next decides otherwise, so it is set again after every read (what
//! `delayed_ack = false` asks).

use std::net::SocketAddrV4;
use std::os::fd::RawFd;

use super::net;
use super::reactor::{Reactor, Token};
use super::TcpSettings;
use crate::sys::set_int;

/// The reactor's kinds: the listening socket, and the connections.
pub const LISTENER: u8 = 5;
pub const CONNECTION: u8 = 6;

pub struct Sink {
    listener: RawFd,
    /// Each connection and the bytes it received.
    conns: Vec<(RawFd, u64)>,
    quickack: bool,
    buf: Vec<u8>,
}

impl Sink {
    pub fn listen(at: SocketAddrV4, tcp: &TcpSettings, reactor: &Reactor) -> std::io::Result<Sink> {
        let l = net::tcp_socket()?;
        set_int(l, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
        set_int(l, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, tcp.window_clamp, "TCP_WINDOW_CLAMP")?;
        net::bind(l, at)?;
        net::listen(l, 4096)?;
        reactor.add(l, libc::EPOLLIN as u32, Token::new(LISTENER, 0))?;
        Ok(Sink { listener: l, conns: Vec::new(), quickack: tcp.quickack, buf: vec![0u8; 1 << 16] })
    }

    pub fn accept(&mut self, reactor: &Reactor) -> std::io::Result<()> {
        while let Some(c) = net::accept(self.listener)? {
            reactor.add(
                c,
                (libc::EPOLLIN | libc::EPOLLET) as u32,
                Token::new(CONNECTION, self.conns.len() as u64),
            )?;
            self.conns.push((c, 0));
            self.readable(self.conns.len() - 1);
        }
        Ok(())
    }

    pub fn readable(&mut self, i: usize) {
        let (fd, bytes) = &mut self.conns[i];
        while let Ok(Some(n)) = net::read(*fd, &mut self.buf) {
            if n == 0 {
                break;
            }
            *bytes += n as u64;
            if self.quickack {
                let _ = set_int(*fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 1, "TCP_QUICKACK");
            }
        }
    }

    /// Bytes received per connection.
    pub fn received(&self) -> Vec<u64> {
        self.conns.iter().map(|c| c.1).collect()
    }
}
