//! # buflab-queue
//!
//! Queue disciplines, sans-IO: time and packet in, verdict out. Each discipline is one file,
//! written once and run unchanged by the simulator's links (`buflab-core`) and by the
//! emulator's datapath on real packets. Nothing here knows an event loop, a scheduler, a
//! link's pipe or a socket: the caller owns the clock, the serializer and the buffer's hard
//! limit, and asks.
//!
//! Read first: this page (the contract), then one discipline ([`drop_tail`] is the shortest,
//! [`red`] the most complete).
//!
//! ## The contract
//!
//! A queue sits in front of a serializer (a link's transmitter). The **buffer limit**
//! ([`Limit`]) is the hard limit under every discipline: it counts the packets (or bytes)
//! *waiting*, not the one being serialized, as ns-2's drop-tail does, so a buffer of B packets
//! holds at most B + 1. A discipline decides at two moments:
//!
//! - **At each arrival**, after the caller has brought its queue up to the arrival instant
//!   (every service due by then has started; a service that starts at time t happens before
//!   an arrival at t), it gets an [`Arrival`]: the time, the waiting packets and bytes, when
//!   the serializer frees up, whether the hard limit refuses the packet anyway, and the
//!   packet's size and ECN capability. It answers with a [`Verdict`]: `Admit`; `Mark` (admit
//!   with Congestion Experienced set, RFC 3168 §5; only ever for an ECN-capable packet); or
//!   `Drop`. A packet that finds the buffer full is dropped whatever the discipline would
//!   have decided, unless the discipline makes room (see head drop below).
//! - **At each departure**, when the serializer is free: which waiting packet goes next, or
//!   that none may go before a given time (a pacer's release, a scheduled departure), or
//!   that none waits.
//!
//! Two forms of discipline implement those moments:
//!
//! 1. [`Admission`]: decides only at arrivals, and the queue is first in, first out. Every
//!    admitted packet is sent, in arrival order, as soon as the serializer is free. Such a
//!    discipline holds no packets: the caller keeps them, and may compute each packet's
//!    departure the moment it is admitted (the simulator does, which is what makes it fast).
//!    Drop-tail ([`drop_tail`]), RED ([`red`]) and the optical FIFO ([`optical_fifo`]) are
//!    admissions.
//! 2. [`Discipline`]: holds the waiting packets itself. At an arrival it may also drop packets
//!    it holds (a head drop makes room for the newcomer), reported in `purged`; at a
//!    departure it picks the next packet, may drop packets it holds (an AQM that drops at
//!    dequeue), may mark the packet it sends (an AQM that marks at dequeue answers
//!    [`Dequeue::Marked`], so that the caller counts and logs the mark), or asks to be asked
//!    again at a later time: that time is its timer, and the caller must ask no later than
//!    it. [`Fifo`] runs any admission as a discipline (the emulator's datapath holds its
//!    packets, and the simulator checks its fast path against it); [`drop_head`],
//!    [`codel`] and [`fq_codel`] are disciplines of their own.
//!
//! Active queue managers ([`codel`], [`fq_codel`], [`pie`], [`step`], and [`red`]) count what
//! they did by cause ([`aqm::AqmCounts`]: drops by their law, by overflow, marks), from the
//! time the caller names ([`Admission::count_from`], [`Discipline::count_from`]).
//!
//! Units: time in picoseconds ([`Time`]), sizes in bytes on the wire, queues in packets
//! unless a field says bytes. A discipline that draws random numbers gets its own stream
//! ([`buflab_base::rng::Rng`]), so its draws never shift anyone else's.
//!
//! ## Adding a discipline
//!
//! Write it in its own file here: its rules, implementing [`Admission`] if it only decides at
//! arrivals and keeps the queue FIFO, [`Discipline`] otherwise; and its description for
//! scenario files ([`describe::Described`]: name, documentation, parameters and the checks
//! between them, and how to build it). Then add one line to the `disciplines!` list below:
//! scenario files accept it, the reference documents it, and links build it.

pub mod aqm;
pub mod bump;
pub mod describe;
mod fifo;
pub mod log;
pub mod optical;
pub mod pacer;
pub mod qcn;
pub mod vqueue;

/// Declares each discipline's module and lists it, with the form it takes, in [`kinds`]: the
/// one line a new discipline adds.
macro_rules! disciplines {
    ($( $module:ident :: $ty:ident as $form:ident ),* $(,)?) => {
        $( pub mod $module; )*

        /// Every discipline, in the order the documentation lists them, ready to build for
        /// packets of type `P`.
        pub fn kinds<P: Flowing + 'static>() -> Vec<describe::Kind<P>> {
            vec![ $( describe::Kind::$form::<$module::$ty>(), )* ]
        }
    };
}

disciplines! {
    drop_tail::DropTail as inline,
    red::Red as admission,
    drop_head::DropHeadKind as held,
    optical_fifo::OpticalFifoKind as admission,
    bjp::BjpKind as held,
    codel::CodelKind as held,
    fq_codel::FqCodelKind as held,
    pie::Pie as admission,
    step::Step as admission,
}

pub use buflab_base::units::{BufferLimit as Limit, Time};
pub use fifo::Fifo;

/// What a discipline decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admit it unchanged.
    Admit,
    /// Admit it with Congestion Experienced set (RFC 3168 §5); only for ECT packets.
    Mark,
    /// Refuse it.
    Drop,
}

/// What the caller knows when a packet arrives, its queue brought up to the arrival instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The arrival time.
    pub now: Time,
    /// Packets and bytes waiting (the one being serialized not counted, as the limit counts).
    pub waiting: u64,
    pub waiting_bytes: u64,
    /// When the serializer finishes its last packet: a time not after `now` means it has been
    /// idle since then. Which packet is last depends on the link (`waiting_scheduled`).
    pub busy_until: Time,
    /// The waiting packets' service is already in `busy_until`: a timetable link (the
    /// simulator's, which books each admitted packet's service on arrival) gives the end of
    /// all admitted work; a link that holds its waiting packets (the simulator's held links,
    /// the emulator's bottleneck) gives the end of the packet in service only, false here.
    pub waiting_scheduled: bool,
    /// The buffer's hard limit, in force now (it may change during a run).
    pub limit: Limit,
    /// Whether the hard limit refuses this packet: the serializer is busy and the waiting
    /// packets leave no room for it.
    pub full: bool,
    /// The packet's size on the wire, bytes.
    pub size: u32,
    /// The packet is ECN-capable (ECT, RFC 3168 §5).
    pub ect: bool,
    /// Its ECN field is ECT(1), the L4S identifier (RFC 9331 §4.1), rather than ECT(0); only
    /// with `ect`. Classic disciplines treat both alike (RFC 3168 §5); a step marker may mark
    /// only these (`mark_ect1_only`).
    pub ect1: bool,
}

impl Arrival {
    /// The arrival of a `size`-byte packet (ECN-capable if `ect`) at `now`, with `waiting`
    /// packets of `waiting_bytes` bytes queued, the serializer busy until `busy_until` and
    /// buffer limit `limit`; `full` follows from them.
    pub fn new(
        now: Time,
        waiting: u64,
        waiting_bytes: u64,
        busy_until: Time,
        limit: Limit,
        size: u32,
        ect: bool,
    ) -> Arrival {
        let full = busy_until > now && !fits(limit, waiting, waiting_bytes, size);
        Arrival {
            now,
            waiting,
            waiting_bytes,
            busy_until,
            waiting_scheduled: false,
            limit,
            full,
            size,
            ect,
            ect1: false,
        }
    }

    /// The same arrival at a timetable link, whose `busy_until` includes the waiting packets'
    /// service (see the field).
    pub fn with_waiting_scheduled(self) -> Arrival {
        Arrival { waiting_scheduled: true, ..self }
    }

    /// The same arrival of an ECT(1) packet when `ect1` (the L4S identifier; see the field).
    pub fn with_ect1(self, ect1: bool) -> Arrival {
        Arrival { ect1: ect1 && self.ect, ..self }
    }
}

/// Whether a `size`-byte packet fits beside `waiting` packets of `waiting_bytes` bytes under
/// `limit` (a packet limit counts packets; a byte limit, bytes including the newcomer's).
#[inline]
pub fn fits(limit: Limit, waiting: u64, waiting_bytes: u64, size: u32) -> bool {
    match limit {
        Limit::Packets(b) => waiting < b,
        Limit::Bytes(b) => waiting_bytes + size as u64 <= b,
        Limit::Unlimited => true,
    }
}

/// A discipline that decides only at arrivals, the queue staying FIFO (see the crate doc). A
/// caller that built one of a known type may reach it again through `Any` (the simulator reads
/// an optical FIFO's counts). `Send`, so that a network running its disciplines can run on a
/// thread of its own (a live session steps on a worker thread while its server answers).
pub trait Admission: std::any::Any + Send {
    /// Decides for the packet described by `a`. `a.full` packets must be dropped.
    fn on_arrival(&mut self, a: &Arrival) -> Verdict;
    /// An active queue manager's counts by cause since [`Admission::count_from`]; None for a
    /// discipline that keeps none.
    fn aqm_counts(&self) -> Option<aqm::AqmCounts> {
        None
    }
    /// Counts only what happens from `t` on (the measured window's start).
    fn count_from(&mut self, _t: Time) {}
}

/// An admission chosen at run time (a scenario's `queue`) decides as the one it holds.
impl Admission for Box<dyn Admission> {
    fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        (**self).on_arrival(a)
    }
    fn aqm_counts(&self) -> Option<aqm::AqmCounts> {
        (**self).aqm_counts()
    }
    fn count_from(&mut self, t: Time) {
        (**self).count_from(t)
    }
}

/// A packet as a discipline holding it sees it.
pub trait Queued: Copy + Send + 'static {
    /// Size on the wire, bytes.
    fn size(&self) -> u32;
    /// Whether it is ECN-capable (ECT).
    fn ect(&self) -> bool;
    /// Sets Congestion Experienced (a `Mark` verdict).
    fn mark_ce(&mut self);
    /// The time stamp it carries for BJP ([`bjp`]): a global time or a slack, zero until a
    /// BJP router stamps it. Packets that cannot carry one always read zero, as a packet at
    /// its first router does.
    fn stamp(&self) -> Time {
        Time::ZERO
    }
    /// Writes its BJP time stamp as it leaves a BJP router (nothing for packets without one).
    fn set_stamp(&mut self, _stamp: Time) {}
}

/// What a discipline needs to know of a packet beyond a queue's view: its flow (a flow
/// queue's hashing, a bump's classes).
pub trait Flowing: Queued {
    /// The flow it belongs to.
    fn flow(&self) -> u32;
    /// A header-only control packet (SYN, SYN-ACK, pure ACK): never paced.
    fn is_control(&self) -> bool;
    /// Its destination port, if the packet carries one (a real datapath reads it from the
    /// header; otherwise a bump uses the ports set with [`bump::Bump::set_port`]).
    fn dst_port(&self) -> Option<u16> {
        None
    }
}

/// What a discipline answers when the serializer is free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequeue<P> {
    /// Serialize this packet now.
    Send(P),
    /// Serialize this packet now: the discipline has just marked it Congestion Experienced
    /// (`mark_ce`, RFC 3168 §5) instead of dropping it at dequeue (CoDel's ECN option, RFC
    /// 8289 §5.?). The caller counts the mark as it counts one made at an arrival.
    Marked(P),
    /// Nothing waits.
    Idle,
    /// Packets wait, but none may go before this time (later than now): ask again then.
    Wait(Time),
}

/// A discipline that holds the waiting packets (see the crate doc). A caller that built one of
/// a known type may reach it again through `Any` (the simulator reads a bump's counts).
/// `Send` as an [`Admission`] is.
pub trait Discipline<P: Queued>: std::any::Any + Send {
    /// A packet arrives. `Admit` or `Mark` keeps it (a marked packet gets CE); `Drop` does
    /// not. Packets it held and drops now (to make room) go to `purged`, oldest first.
    fn enqueue(&mut self, a: &Arrival, pkt: P, purged: &mut Vec<P>) -> Verdict;
    /// The serializer is free at `now`: the packet to send, if any may go. Packets it drops
    /// instead of sending go to `purged`.
    fn dequeue(&mut self, now: Time, purged: &mut Vec<P>) -> Dequeue<P>;
    /// Packets and bytes it holds.
    fn backlog(&self) -> (u64, u64);
    /// A time before which `dequeue` would send nothing (it would answer `Wait` or `Idle`),
    /// if the discipline knows one; the caller may then ask no earlier, which spares it calls
    /// that can only say wait. Zero (the default): ask whenever the serializer is free.
    fn not_before(&self) -> Time {
        Time::ZERO
    }
    /// Visits the packets it holds in the order it would send them if nothing arrived and
    /// the serializer stayed busy, and returns true; false (visiting nothing) if that order
    /// is not known in advance (a scheduler whose choice depends on time). The caller uses it
    /// at the end of a run, to charge the packets still waiting the delays a work-conserving
    /// queue would give them.
    fn in_send_order(&self, _visit: &mut dyn FnMut(&P)) -> bool {
        false
    }
    /// Whether it sends its packets in the order they arrived (those it drops left out): a
    /// reader of its event log may then match the k-th dequeue with the k-th enqueue. A flow
    /// queue does not.
    fn keeps_arrival_order(&self) -> bool {
        true
    }
    /// An active queue manager's counts by cause since [`Discipline::count_from`]; None for a
    /// discipline that keeps none.
    fn aqm_counts(&self) -> Option<aqm::AqmCounts> {
        None
    }
    /// Counts only what happens from `t` on (the measured window's start).
    fn count_from(&mut self, _t: Time) {}
}

impl<P> Dequeue<P> {
    /// The packet to send, marked or not.
    pub fn packet(self) -> Option<P> {
        match self {
            Dequeue::Send(p) | Dequeue::Marked(p) => Some(p),
            _ => None,
        }
    }
}
