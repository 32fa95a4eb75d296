//! Endpoints: what sits at the two ends of a flow's routes, and the one interface the
//! simulator drives them through.
//!
//! Read first: [`crate::sim`] (who calls this, and when). This module owns the contract
//! between the event loop and the things that make and take packets; it must not know what
//! happens inside them (TCP's rules live in [`crate::tcp`], a UDP source's in
//! [`crate::traffic::udp`]).
//!
//! **The contract.** An endpoint is sans-IO, as a queue discipline is: time and packets in,
//! packets out (appended to `out`), never a scheduler. It
//! - takes a packet of its flow that reached the end of a route ([`Endpoint::on_packet`]);
//! - takes a timer ([`Endpoint::on_timer`]): its timers are numbered slots whose meaning it
//!   alone knows (TCP: retransmission, pacing, the receiver's delayed ACK); the simulator
//!   schedules one lazy event per slot at the deadline the endpoint states
//!   ([`Endpoint::deadline`]), and the endpoint checks, when it fires, whether anything is
//!   still due — so a deadline may move freely, and a stale event finds nothing to do (on
//!   the sink side the loop then need not call it at all, see `sim/timers.rs`: a sink-side
//!   timer whose deadline is later than now, or unset, does nothing and sends nothing, and a
//!   sink side's deadlines change only in its own actions);
//! - answers with a [`Notice`] of what its owner must know: that a transfer completed, that a
//!   client's request reached the server, that the state a tracer follows may have changed.
//!
//! **Two sides.** A flow has a source side (TCP's sender, a UDP source) and a sink side (TCP's
//! receiver, a UDP sink); each timer slot belongs to one, and each arriving packet by its
//! kind ([`crate::packet::Kind::side`]: ACKs go to the source). The
//! simulator lets a source side run ahead of the global clock when its facts allow it
//! ([`Facts::runs_ahead`], see `sim/plan.rs`): before it takes a packet at a later time, its
//! due timers fire at their own deadlines.
//!
//! **Adding a kind of endpoint**: implement [`Endpoint`] in its own file and add one arm to
//! [`Endpoints`] (and to the `dispatch!` list below).

use crate::monitor::trace::TraceSample;
use crate::monitor::MeasuredWindow;
use crate::packet::Packet;
use crate::tcp::flow::TcpFlow;
use crate::traffic::udp::UdpSource;
use crate::units::Time;

/// Which end of a flow a timer or a packet belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Where the flow's data starts: a TCP sender, a UDP source.
    Source,
    /// Where it ends: a TCP receiver, a UDP sink.
    Sink,
}

/// What an endpoint's owner must know after it acted (bits; `Notice::NONE` for nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Notice(u8);

impl Notice {
    pub const NONE: Notice = Notice(0);
    /// The state a tracer follows (a TCP sender's window, RTT, ...) may have changed: sample it.
    pub const TRACE: Notice = Notice(1);
    /// The transfer in progress has been received in full.
    pub const COMPLETED: Notice = Notice(2);
    /// A client's request for a new connection reached the server, which waits for its
    /// application to accept it (the packet's `conn` names the connection).
    pub const REQUEST: Notice = Notice(4);

    #[inline]
    pub fn has(self, n: Notice) -> bool {
        self.0 & n.0 != 0
    }
}

impl std::ops::BitOr for Notice {
    type Output = Notice;
    #[inline]
    fn bitor(self, o: Notice) -> Notice {
        Notice(self.0 | o.0)
    }
}

/// What the simulator's planning needs to know of an endpoint (see `sim/plan.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The route its source side's packets take.
    pub route: u32,
    /// The route its sink side's answers take, if it answers.
    pub answer_route: Option<u32>,
    /// The sink side answers each arriving packet at once, with no timer of its own (a user's
    /// client also sends its requests, which the simulator runs ahead where a relay link
    /// needs them, see `sim/requests.rs`). Then a link may hand it packets at their exit
    /// times ahead of the global clock (see `sim/plan.rs`).
    pub answers_at_once: bool,
    /// The source side is moved by nothing but its own timers and the packets it receives,
    /// so it may handle them ahead of the global clock if its first link is its own.
    pub runs_ahead: bool,
}

/// The interface between the event loop and an endpoint (see the module doc).
pub trait Endpoint {
    /// The side each timer slot belongs to, by slot (at most [`crate::sched::MAX_TIMER_SLOTS`]).
    const TIMERS: &'static [Side];

    /// Opens the flow at `now`: its first packets.
    fn start(&mut self, now: Time, out: &mut Vec<Packet>) -> Notice;
    /// A packet of this flow reached the end of its route at `now`.
    fn on_packet(&mut self, now: Time, pkt: Packet, out: &mut Vec<Packet>) -> Notice;
    /// The event of timer `slot` fires at `now`; the endpoint acts if the timer is due.
    fn on_timer(&mut self, now: Time, slot: usize, out: &mut Vec<Packet>) -> Notice;
    /// When timer `slot` is next due, if it is set.
    fn deadline(&self, slot: usize) -> Option<Time>;
    fn facts(&self) -> Facts;
    /// The measured window, for the endpoint's own counters of it.
    fn set_window(&mut self, window: MeasuredWindow);
    /// Starts loading the state, beyond the endpoint's own record, that its next packet will
    /// touch (boxed parts): a hint for the CPU that changes nothing (see `sim/path.rs`).
    fn prefetch(&self) {}
    /// The state a tracer records (None: nothing to trace).
    fn trace_sample(&self) -> Option<TraceSample> {
        None
    }
}

/// The endpoints of one flow.
// Flows live inline in one Vec indexed per event; boxing the large TCP variant would add a
// pointer chase to every ACK, and UDP flows are few.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Endpoints {
    Tcp(TcpFlow),
    Udp(UdpSource),
}

/// Calls `$body` with `$e` bound to the endpoint inside whichever variant `$self` is: the
/// body is compiled once per kind of endpoint, so code generic over [`Endpoint`] (the timer
/// bookkeeping, see `sim/timers.rs`) runs with each kind's slots known at compile time.
macro_rules! dispatch {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            $crate::endpoint::Endpoints::Tcp($e) => $body,
            $crate::endpoint::Endpoints::Udp($e) => $body,
        }
    };
}
pub(crate) use dispatch;

impl Endpoints {
    /// The sides of its timer slots.
    #[inline]
    pub fn timers(&self) -> &'static [Side] {
        match self {
            Endpoints::Tcp(_) => TcpFlow::TIMERS,
            Endpoints::Udp(_) => UdpSource::TIMERS,
        }
    }

    #[inline]
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) -> Notice {
        dispatch!(self, e => e.start(now, out))
    }

    #[inline(always)]
    pub fn on_packet(&mut self, now: Time, pkt: Packet, out: &mut Vec<Packet>) -> Notice {
        dispatch!(self, e => e.on_packet(now, pkt, out))
    }

    #[inline]
    pub fn on_timer(&mut self, now: Time, slot: usize, out: &mut Vec<Packet>) -> Notice {
        dispatch!(self, e => e.on_timer(now, slot, out))
    }

    #[inline]
    pub fn deadline(&self, slot: usize) -> Option<Time> {
        dispatch!(self, e => e.deadline(slot))
    }

    pub fn facts(&self) -> Facts {
        dispatch!(self, e => e.facts())
    }

    pub fn set_window(&mut self, window: MeasuredWindow) {
        dispatch!(self, e => e.set_window(window))
    }

    #[inline]
    pub fn prefetch(&self) {
        dispatch!(self, e => e.prefetch())
    }

    #[inline]
    pub fn trace_sample(&self) -> Option<TraceSample> {
        dispatch!(self, e => e.trace_sample())
    }

    /// The TCP flow, if it is one (for results and tests that read a flow's TCP state).
    pub fn tcp(&self) -> Option<&TcpFlow> {
        match self {
            Endpoints::Tcp(t) => Some(t),
            Endpoints::Udp(_) => None,
        }
    }
}
