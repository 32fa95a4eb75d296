//! The applications that drive finite transfers: closed-loop users (request a file, download
//! it, think, repeat) and open-loop arrivals (a Poisson process of downloads), with a record
//! of every transfer.
//!
//! Read first: [`crate::traffic::closed_loop`] and [`crate::traffic::open_loop`] (the users'
//! own state and draws). This file owns when a user acts and the transfer records; a user is
//! a TCP application, so it opens and accepts connections through [`TcpFlow`]'s application
//! calls, and hears of a completed download from the flow's [`crate::endpoint::Notice`].

use super::requests::Scheduled;
use super::{Hop, Sim};
use crate::endpoint::{Endpoints, Side};
use crate::sched::Event;
use crate::tcp::cc::CcKind;
use crate::tcp::flow::TcpFlow;
use crate::tcp::pacer::Pacing;
use crate::units::{Rate, Time};

/// Builds flows of the scenario's traffic entries during the run: open-loop arrivals, and
/// the long-lived flows a timed change adds (`topology/flows.rs` implements it). `Send`, as
/// the rest of a network is (a live session steps on a worker thread).
pub trait FlowMaker: Send {
    /// Adds a flow of entry `ti` (its id is the next flow id); a long-lived or UDP flow starts
    /// at `offset` plus its entry's start draw, an open-loop one when a user requests.
    fn add(&mut self, sim: &mut Sim, ti: u32, offset: Time) -> u32;
    /// The access link rate, pacing and congestion control of entry `ti`'s flows added from
    /// now on (None: unchanged).
    fn set_new_flows(
        &mut self,
        ti: u32,
        access_rate: Option<Rate>,
        pacing: Option<Pacing>,
        cc: Option<CcKind>,
    );
}

/// One finite transfer (a connection carrying one file).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferRecord {
    pub flow: u32,
    pub traffic: u32,
    pub conn: u16,
    /// When the client sent its request.
    pub start: Time,
    /// When the client had the last byte (None: incomplete at the end of the run).
    pub end: Option<Time>,
    pub bytes: u64,
    /// The server's counts for this connection.
    pub retransmits: u64,
    pub timeouts: u64,
}

/// The TCP flow a user drives (users only ever drive TCP flows).
fn tcp(endpoints: &mut Endpoints) -> &mut TcpFlow {
    match endpoints {
        Endpoints::Tcp(t) => t,
        Endpoints::Udp(_) => unreachable!("users drive TCP flows"),
    }
}

impl Sim {
    /// Schedules the first arrival of every open-loop arrival process.
    pub(super) fn start_arrivals(&mut self) {
        for i in 0..self.arrivals.len() {
            let first = self.arrivals[i].start + self.arrivals[i].gap();
            self.sched.schedule(first, Event::Arrival(i as u32));
        }
    }

    /// A user sends its next request: a new connection for a new file.
    pub(super) fn request(&mut self, now: Time, f: u32) {
        let flow = &mut self.flows[f as usize];
        let user = flow.user.as_mut().expect("a request comes from a user");
        let draws = self.user_draws[user.traffic as usize].as_ref().expect("a user's entry has draws");
        let (conn, bytes) = user.next_request(draws);
        user.record = Some(self.transfers.len() as u32);
        self.transfers.push(TransferRecord {
            flow: f,
            traffic: user.traffic,
            conn,
            start: now,
            end: None,
            bytes,
            retransmits: 0,
            timeouts: 0,
        });
        let mark = self.out.len();
        tcp(&mut flow.endpoints).connect(now, conn, bytes, &mut self.out);
        // Connecting drops a held delayed ACK: the receiver's deadline only moves later, so
        // this schedules nothing, but it keeps the deadline noted for timer events exact
        // (see `timers.rs`).
        self.sync_timers(f, Side::Sink);
        self.release(now, f, mark);
    }

    /// A client's request for connection `conn` reached the server of flow `f` at `t`: the
    /// server serves the file its user asked for.
    pub(super) fn serve(&mut self, t: Time, f: u32, conn: u16) {
        self.close_server_record(f);
        let flow = &mut self.flows[f as usize];
        let user = flow.user.as_mut().expect("requests come from closed-loop users");
        let (bytes, handshake, record) = (user.bytes, user.handshake, user.record);
        user.server_record = record;
        tcp(&mut flow.endpoints).accept(t, conn, bytes, handshake, &mut self.out);
        // A new connection has new timers.
        self.forget_timers(f, Side::Source);
    }

    /// A user's download finished at `now`: record it and schedule the next request after
    /// the user thinks.
    pub(super) fn transfer_completed(&mut self, now: Time, f: u32) {
        let Some(user) = self.flows[f as usize].user.as_mut() else { return };
        if let Some(i) = user.record {
            self.transfers[i as usize].end = Some(now);
        }
        let draws = self.user_draws[user.traffic as usize].as_ref().expect("a user's entry has draws");
        match user.think_time(draws) {
            Some(think) => {
                self.schedule_start(now + think, f, Scheduled::Delivery(now));
                self.release_private_links(f);
            }
            // An open-loop flow's slot waits for the next arrival of its entry.
            None => {
                let traffic = user.traffic;
                if let Some(a) = self.arrivals.iter_mut().find(|a| a.traffic == traffic) {
                    a.idle.push(f);
                }
            }
        }
    }

    /// A user that starts to think frees the buffers of its own links (the first of its
    /// data route, its sender's access link or delay line, and the last of its ACK route)
    /// if they hold nothing: they grew to its largest window and would hold that memory
    /// while it is idle.
    fn release_private_links(&mut self, f: u32) {
        let facts = self.flows[f as usize].endpoints.facts();
        let first = Some(self.routes.hop(facts.route, 0));
        let last = facts.answer_route.map(|r| self.routes.hop(r, self.routes.len(r) - 1));
        for hop in [first, last].into_iter().flatten() {
            if let Hop::Link(l) = hop {
                self.links[l as usize].release_idle_buffers();
            }
        }
    }

    /// An open-loop flow arrives: it takes an idle slot of its entry, or a new one.
    pub(super) fn on_arrival(&mut self, now: Time, i: u32) {
        let a = &mut self.arrivals[i as usize];
        let next = now + a.gap();
        let traffic = a.traffic;
        let f = match a.idle.pop() {
            Some(f) => f,
            None => {
                let mut maker = self.maker.take().expect("a network with traffic has a flow maker");
                let f = maker.add(self, traffic, Time::ZERO);
                self.maker = Some(maker);
                self.plan_new_routes();
                f
            }
        };
        self.sched.schedule(next, Event::Arrival(i));
        self.request(now, f);
    }

    /// Copies the server's counts for the connection it has been serving into its record.
    fn close_server_record(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        let (Some(user), Endpoints::Tcp(tcp)) = (&flow.user, &flow.endpoints) else { return };
        if let Some(i) = user.server_record {
            let r = &mut self.transfers[i as usize];
            (r.retransmits, r.timeouts) = tcp.sender.conn_counts();
        }
    }

    /// At the end of the run: transfers still open get the server's counts so far.
    pub(super) fn close_open_transfers(&mut self) {
        for f in 0..self.flows.len() {
            self.close_server_record(f as u32);
        }
    }
}
