//! Optical FIFO buffers built from fiber delay lines (thesis ch. 6 and Appendix E): an
//! all-optical router cannot store a packet, only send it round a loop of fiber, and this
//! construction makes 2·log N − 1 loops with 2×2 switches behave exactly as an electronic
//! FIFO of N − 1 packets.
//!
//! Read first: thesis §6.2 (the assumptions: equal packets, slotted time, at most one arrival
//! and one departure request per slot, requests not known in advance), §6.3 (Algorithm A,
//! the waiting line's Algorithm B, Theorems 6.1 and 6.2) and Appendix E (the three properties
//! behind Thm 6.1). Then [`layout`] (the lines) and [`buffer`] (the slots).
//!
//! - [`layout`]: which delay lines exist and how long (Thm 6.1, and Thm 6.2's trade-off of
//!   lines for length, with its K), and the formulas they are checked against.
//! - [`buffer`]: the slotted model, sans-IO: requests in, departures and drops out, every
//!   packet's place inspectable, Appendix E's properties checked at every slot, and the
//!   counts an experiment reports (per-line occupancy, passes and recirculations per packet,
//!   switch changes per slot).
//! - [`check`]: a request sequence through the model and through an electronic FIFO of
//!   N − 1 side by side, slot by slot (Thm 6.1 as an experiment).
//! - [`requests`]: request sequences: Bernoulli arrivals and departures at a load, and
//!   adversarial ones (bursts that fill and drain the buffer, a sawtooth).
//! - [`show`]: a slot as text, for a student stepping through the construction.
//!
//! The queue discipline built on it, for any link of a scenario, is
//! [`crate::optical_fifo`].
//!
//! ## How the chapter is read where it leaves a choice
//!
//! - **Order of a slot's events.** Algorithm A lists the arrival before the departure. Read
//!   literally that breaks property (iii): with one packet held, an arrival would be placed
//!   by order 2 at the tail of D_2, then its predecessor would leave, and the next slot's
//!   packet of order one would be a slot away from any head. Here a slot serves its
//!   departure first, then its arrival, and places packets by their orders after the
//!   departure, as a link does (a service that starts at time t comes before an arrival at
//!   t): the FIFO emulated drops an arrival only when N − 1 packets are held after the slot's
//!   departure. (The thesis's own order would emulate the FIFO that drops first.)
//! - **The waiting time.** "waiting_time ← (h + 1) mod d" is read as the number of slots the
//!   arrival spends in W: 0 puts it straight into a delay line (at the tail in the next slot,
//!   when its predecessor, now at the tail, has moved one cell on); w > 0 keeps it in W for w
//!   slots. Algorithm B's lines D′ are then 1, 2, …, N/4 (see [`layout`]), enough for the
//!   longest wait, N/2 − 1 slots.
//! - **A waiting packet of order one.** Appendix E proves (iii) for packets in delay lines
//!   only. A packet's wait in W is at most its order (its predecessor is at most its own order
//!   from a head), so with a departure in every slot a waiting packet can reach order one, but
//!   only in the slot it is due out of W, at the head of W's last line: there it leaves for
//!   the output (W's lines are on the path to it, like the others). Without that the
//!   construction is not exact: the exhaustive test in [`buffer`] found the case at N = 8
//!   (four arrivals, then a departure in every slot and an arrival in the third), and with it
//!   finds no breach in any state reachable at N ≤ 32, for every K.
//! - **A line's length** L is the packets it holds back to back; a packet switched into it
//!   is at its head L − 1 slots later and is switched on in the slot after that, so going
//!   round once takes L slots (§6.2's "L + 1 slots to enter, traverse once, and leave"
//!   counts the slot in which it enters).
//! - **Where the lines meet.** As in the chapter, any head may be switched to any tail (or
//!   the output) within a slot; the path between the switches and its own contention are
//!   not modelled, only contention for a line (Appendix E (ii)).

pub mod buffer;
pub mod check;
pub mod layout;
pub mod requests;
pub mod show;

pub use buffer::{Arrived, Counts, OpticalBuffer, Snapshot, Violations};
pub use layout::{Layout, LayoutError, MAX_N};
pub use requests::{Pattern, RequestStream, Requests};
