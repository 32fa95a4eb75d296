//! The users' clients on the receiver: closed-loop users (request a file, download it, think,
//! request the next), repeated downloads (the same without thinking) and open-loop arrivals
//! (a Poisson process of downloads, each taking an idle flow slot or a new one), each user a
//! state machine on the one loop, with the simulator's own user and arrival models.
//!
//! Read first: [`super`] and `buflab_core::sim::users` (when a simulated user acts: this
//! repeats it on sockets). A user's draws come from `buflab_core::traffic::by_flow::user`,
//! the same stream as the simulator's user of that flow, in the same order (a file size at
//! each request, a think time at each completion), so its k-th file and k-th think time are
//! the simulator's. Times are the events' own: a request at its timer's due time, a
//! completion at the kernel's receive stamp of the last byte, the next request at that
//! completion plus the think time; how late the loop acted is the reactor's to report.

use std::net::SocketAddrV4;
use std::os::fd::RawFd;

use buflab_base::units::Time;
use buflab_core::scenario::Traffic;
use buflab_core::traffic::by_flow;
use buflab_core::traffic::closed_loop::{User, UserDraws};
use buflab_core::traffic::open_loop::Arrivals;
use serde_json::{json, Value};

use super::net;
use super::reactor::{Reactor, Token};
use super::{REQUEST, TCP_PORT};
use crate::address;
use crate::sys::set_int;

/// The reactor's kinds: a user's socket and timer (by user), and the open-loop arrivals.
pub const USER: u8 = 7;
pub const ARRIVAL: u8 = 8;

/// One download, as the transfers table has it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub flow: u32,
    pub traffic: u32,
    pub conn: u16,
    /// When the client connected (its SYN left), monotonic.
    pub start: Time,
    /// When its last byte arrived, monotonic; None if it did not.
    pub end: Option<Time>,
    pub bytes: u64,
    /// The connection failed before the file was in (reset, refused).
    pub failed: bool,
}

struct Client {
    flow: u32,
    model: User,
    fd: Option<RawFd>,
    /// Its current download's row, bytes received of it, and whether its request went out.
    record: Option<usize>,
    got: u64,
    requested: bool,
}

/// The open-loop entry: its arrivals, and its flow slots (users from `fixed` on).
struct OpenLoop {
    arrivals: Arrivals,
    /// Slots whose download has completed, ready for the next arrival (users).
    idle: Vec<usize>,
    /// The flow id of its first slot, and how many slots it may take.
    first: u32,
    slots: u32,
}

pub struct Clients {
    users: Vec<Client>,
    /// Per traffic entry, what its users draw from.
    draws: Vec<Option<UserDraws>>,
    /// Users that are not open-loop slots (they come first).
    fixed: usize,
    open_loop: Option<OpenLoop>,
    /// Open-loop arrivals that found no slot left.
    pub no_slot: u64,
    seed: u64,
    pub transfers: Vec<Transfer>,
    clamp: i32,
    quickack: bool,
    buf: Vec<u8>,
    /// Realtime minus monotonic: converts the kernel's receive stamps.
    offset: u128,
}

impl Clients {
    /// The users of `flows` ((flow, traffic entry), each a closed-loop or repeated-download
    /// user), and the open-loop entry's arrivals if the plan has one.
    pub fn new(plan: &super::Plan, flows: &[(u32, usize)]) -> Clients {
        let s = &plan.scenario;
        let users = flows
            .iter()
            .map(|&(flow, ti)| {
                let model = by_flow::user(s.seed, ti, &s.traffic[ti], flow as u64).expect("a user's entry");
                Client { flow, model, fd: None, record: None, got: 0, requested: false }
            })
            .collect();
        let open_loop = plan.open_loop.map(|(ti, first, slots)| {
            let Traffic::OpenLoop(o) = &s.traffic[ti] else { panic!("traffic.{ti} is not open-loop") };
            let arrivals = by_flow::arrivals(s.seed, ti, o.arrivals_per_s, o.start);
            OpenLoop { arrivals, idle: Vec::new(), first, slots }
        });
        Clients {
            users,
            draws: s.traffic.iter().map(by_flow::user_draws).collect(),
            fixed: flows.len(),
            open_loop,
            no_slot: 0,
            seed: s.seed,
            transfers: Vec::new(),
            clamp: plan.tcp.window_clamp,
            quickack: plan.tcp.quickack,
            buf: vec![0u8; 1 << 16],
            offset: net::realtime_offset(),
        }
    }

    /// Schedules user `i`'s first request at `at`.
    pub fn schedule(&self, i: usize, at: Time, reactor: &mut Reactor) {
        reactor.at(at, Token::new(USER, i as u64));
    }

    /// Schedules the first open-loop arrival, from time 0 at `epoch`.
    pub fn schedule_arrivals(&mut self, epoch: Time, reactor: &mut Reactor) {
        if let Some(o) = self.open_loop.as_mut() {
            let first = o.arrivals.start + o.arrivals.gap();
            reactor.at(epoch + first, Token::new(ARRIVAL, 0));
        }
    }

    /// An open-loop arrival at `due`: the next is scheduled, and the download goes out on an
    /// idle slot or a new one (as the simulator's `on_arrival`).
    pub fn arrive(&mut self, due: Time, traffic: &[Traffic], reactor: &mut Reactor) {
        let Some(o) = self.open_loop.as_mut() else { return };
        reactor.at(due + o.arrivals.gap(), Token::new(ARRIVAL, 0));
        let ti = o.arrivals.traffic as usize;
        let i = match o.idle.pop() {
            Some(i) => i,
            None => {
                let taken = self.users.len() - self.fixed;
                if taken >= o.slots as usize {
                    self.no_slot += 1;
                    return;
                }
                let id = o.first as usize + taken;
                let model =
                    by_flow::user(self.seed, ti, &traffic[ti], id as u64).expect("an open-loop entry");
                self.users.push(Client {
                    flow: id as u32,
                    model,
                    fd: None,
                    record: None,
                    got: 0,
                    requested: false,
                });
                self.users.len() - 1
            }
        };
        self.request(i, due, reactor);
    }

    /// User `i` is done with its download at `t`: it thinks until its next request, or, an
    /// open-loop slot, goes idle until the next arrival.
    fn done(&mut self, i: usize, t: Time, reactor: &mut Reactor) {
        let model = &mut self.users[i].model;
        match model.think_time(self.draws[model.traffic as usize].as_ref().expect("a user's entry")) {
            Some(think) => reactor.at(t + think, Token::new(USER, i as u64)),
            None => {
                if let Some(o) = self.open_loop.as_mut() {
                    o.idle.push(i);
                }
            }
        }
    }

    /// User `i` requests its next file at `now`: a new connection to its server.
    pub fn request(&mut self, i: usize, now: Time, reactor: &mut Reactor) {
        self.close(i, reactor);
        let u = &mut self.users[i];
        let draws = self.draws[u.model.traffic as usize].as_ref().expect("a user's entry");
        let (conn, bytes) = u.model.next_request(draws);
        let start = crate::clock::now().max(now);
        u.record = Some(self.transfers.len());
        (u.got, u.requested) = (0, false);
        let mut t =
            Transfer { flow: u.flow, traffic: u.model.traffic, conn, start, end: None, bytes, failed: false };
        let server = SocketAddrV4::new(address::address(u.flow as usize), TCP_PORT);
        let opened = (|| {
            let fd = net::tcp_socket()?;
            set_int(fd, libc::IPPROTO_TCP, libc::TCP_WINDOW_CLAMP, self.clamp, "TCP_WINDOW_CLAMP")?;
            net::stamp_arrivals(fd)?;
            net::connect(fd, server)?;
            let events = libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET;
            reactor.add(fd, events as u32, Token::new(USER, i as u64))?;
            Ok::<RawFd, std::io::Error>(fd)
        })();
        match opened {
            Ok(fd) => u.fd = Some(fd),
            Err(_) => t.failed = true,
        }
        self.transfers.push(t);
    }

    /// User `i`'s timer: its next (or first) request.
    pub fn timer(&mut self, i: usize, due: Time, reactor: &mut Reactor) {
        self.request(i, due, reactor);
    }

    /// User `i`'s socket is ready: the request goes out once connected, the file comes in,
    /// and when its last byte has, the user thinks (or its slot goes idle).
    pub fn ready(&mut self, i: usize, events: u32, reactor: &mut Reactor) {
        let Some(fd) = self.users[i].fd else { return };
        let u = &mut self.users[i];
        if !u.requested && events & libc::EPOLLOUT as u32 != 0 && events & libc::EPOLLERR as u32 == 0 {
            let record = u.record.expect("a download in progress");
            let t = self.transfers[record];
            let mut request = [0u8; REQUEST];
            request[..8].copy_from_slice(&u64::from(t.conn).to_le_bytes());
            request[8..].copy_from_slice(&t.bytes.to_le_bytes());
            // 16 bytes on a new connection: the socket takes them whole.
            u.requested = matches!(net::write(fd, &request), Ok(Some(REQUEST)));
        }
        let mut last_stamp = None;
        let mut closed = events & libc::EPOLLERR as u32 != 0;
        loop {
            match net::read_stamped(fd, &mut self.buf) {
                Ok(Some(r)) if r.bytes == 0 => {
                    closed = true;
                    break;
                }
                Ok(Some(r)) => {
                    u.got += r.bytes as u64;
                    last_stamp = r.realtime.or(last_stamp);
                    if self.quickack {
                        let _ = set_int(fd, libc::IPPROTO_TCP, libc::TCP_QUICKACK, 1, "TCP_QUICKACK");
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        if let Some(record) = u.record {
            let t = &mut self.transfers[record];
            if u.got >= t.bytes {
                // The last byte's arrival: the kernel's stamp, or now if it gave none.
                let end = last_stamp.map_or_else(crate::clock::now, |r| net::monotonic(r, self.offset));
                let end = end.max(t.start);
                t.end = Some(end);
                u.record = None;
                self.done(i, end, reactor);
            } else if closed {
                // Closed before its file was in: a failed download; the user goes on as if it
                // had completed now, so that it keeps making requests.
                t.failed = true;
                u.record = None;
                self.done(i, crate::clock::now(), reactor);
            }
        }
        if closed {
            self.close(i, reactor);
        }
    }

    /// Closes user `i`'s connection, if open.
    fn close(&mut self, i: usize, reactor: &Reactor) {
        if let Some(fd) = self.users[i].fd.take() {
            reactor.remove(fd);
            net::close(fd);
        }
    }

    /// The report: every download (flow, traffic, connection, start and end on the
    /// monotonic clock in ps, −1 for none, bytes, failed), the open-loop slots taken (flow
    /// ids) and the arrivals that found none.
    pub fn report(&self) -> Value {
        let rows: Vec<Value> = self
            .transfers
            .iter()
            .map(|t| {
                let end = t.end.map_or(-1, |e| e.ps() as i128);
                json!([t.flow, t.traffic, t.conn, t.start.ps(), end, t.bytes, t.failed])
            })
            .collect();
        let slots: Vec<u32> = self.users[self.fixed..].iter().map(|u| u.flow).collect();
        json!({ "transfers": rows, "slots": slots, "no_slot": self.no_slot })
    }
}
