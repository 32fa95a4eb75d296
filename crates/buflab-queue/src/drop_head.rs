//! Drop-head (drop from front): when an arrival finds the buffer full, the packet that has
//! waited longest is dropped to make room, and the arrival is admitted.
//!
//! Read first: the crate doc (the contract; this is a discipline of the second form, since
//! it drops a packet it holds). Lakshman, Neidhardt and Ott, "The drop from front strategy in
//! TCP and in TCP over ATM" (INFOCOM 1996), compared it with drop-tail: the loss a full
//! buffer causes reaches the sender a whole queueing delay earlier (the dropped packet was
//! about to leave, so the gap behind it shows at the receiver at once), and the packets
//! already queued are not the ones saved; they found shorter congestion episodes and fewer
//! timeouts for TCP. The RED and AQM literature uses it as the other baseline beside
//! drop-tail.
//!
//! Rules, in the contract's terms: an arrival that fits (the serializer idle, or room under
//! the limit) is admitted; otherwise the oldest waiting packets are purged, oldest first,
//! until it fits (one packet under a packet limit; under a byte limit as many as its size
//! needs), then it is admitted. Only an arrival larger than a byte limit on its own is
//! dropped. The queue is FIFO: the survivors leave in arrival order.

use buflab_base::rng::Rng;

use crate::describe::{BuildHeld, Described, LinkInfo, Values};
use crate::fifo::Packets;
use crate::{fits, Arrival, Dequeue, Discipline, Queued, Time, Verdict};

/// A drop-head queue of packets `P`.
#[derive(Clone, Debug)]
pub struct DropHead<P> {
    packets: Packets<P>,
}

impl<P: Queued> Default for DropHead<P> {
    fn default() -> Self {
        DropHead { packets: Packets::new() }
    }
}

impl<P: Queued> Discipline<P> for DropHead<P> {
    fn enqueue(&mut self, a: &Arrival, pkt: P, purged: &mut Vec<P>) -> Verdict {
        let busy = a.busy_until > a.now;
        loop {
            let (waiting, bytes) = self.packets.backlog();
            if !busy || fits(a.limit, waiting, bytes, pkt.size()) {
                break;
            }
            let Some(old) = self.packets.pop() else {
                return Verdict::Drop; // larger than the byte limit on its own
            };
            purged.push(old);
        }
        self.packets.push(pkt);
        Verdict::Admit
    }

    fn dequeue(&mut self, _now: Time, _purged: &mut Vec<P>) -> Dequeue<P> {
        self.packets.dequeue()
    }

    fn backlog(&self) -> (u64, u64) {
        self.packets.backlog()
    }

    fn in_send_order(&self, visit: &mut dyn FnMut(&P)) -> bool {
        self.packets.visit(visit)
    }
}

/// The description of drop-head for scenario files (`queue = "drop_head"`).
pub struct DropHeadKind;

impl Described for DropHeadKind {
    const NAME: &'static str = "drop_head";
    const LABEL: &'static str = "drop-head";
    const DOC: &'static str = "drop from front (Lakshman, Neidhardt & Ott 1996): an arrival that finds the buffer full is admitted, and the packet that has waited longest is dropped to make room.";
}

impl BuildHeld for DropHeadKind {
    fn build<P: Queued + 'static>(_values: &Values, _link: LinkInfo, _rng: Rng) -> Box<dyn Discipline<P>> {
        Box::new(DropHead::<P>::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limit;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct P(u32, u32); // (id, size)

    impl Queued for P {
        fn size(&self) -> u32 {
            self.1
        }
        fn ect(&self) -> bool {
            false
        }
        fn mark_ce(&mut self) {}
    }

    /// Offers `pkts` at time 0 to a queue behind a busy serializer; returns the purged ids.
    fn offer(q: &mut DropHead<P>, limit: Limit, pkts: &[P]) -> Vec<u32> {
        let mut purged = Vec::new();
        for &p in pkts {
            let (w, b) = q.backlog();
            let a = Arrival::new(Time(0), w, b, Time(100), limit, p.1, false);
            assert_eq!(q.enqueue(&a, p, &mut purged), Verdict::Admit);
        }
        purged.iter().map(|p| p.0).collect()
    }

    fn sent(q: &mut DropHead<P>) -> Vec<u32> {
        std::iter::from_fn(|| match q.dequeue(Time(100), &mut Vec::new()) {
            Dequeue::Send(p) => Some(p.0),
            _ => None,
        })
        .collect()
    }

    #[test]
    fn a_full_queue_loses_its_oldest_packet_not_the_arrival() {
        let mut q = DropHead::default();
        let purged = offer(&mut q, Limit::Packets(3), &(0..6).map(|i| P(i, 1000)).collect::<Vec<_>>());
        assert_eq!(purged, vec![0, 1, 2]);
        assert_eq!(sent(&mut q), vec![3, 4, 5], "the newest three, in arrival order");
    }

    #[test]
    fn under_a_byte_limit_as_many_leave_as_the_arrival_needs() {
        let mut q = DropHead::default();
        let purged = offer(&mut q, Limit::Bytes(3000), &[P(0, 1000), P(1, 1000), P(2, 1000), P(3, 2500)]);
        assert_eq!(purged, vec![0, 1, 2], "2500 B fit only in an empty queue");
        assert_eq!(q.backlog(), (1, 2500));
        // Too large for the limit even alone: the arrival itself is dropped.
        let mut purged = Vec::new();
        let a = Arrival::new(Time(0), 1, 2500, Time(100), Limit::Bytes(3000), 4000, false);
        assert_eq!(q.enqueue(&a, P(4, 4000), &mut purged), Verdict::Drop);
        assert_eq!(purged.len(), 1);
    }

    #[test]
    fn an_idle_serializer_takes_the_arrival_whatever_the_limit() {
        let mut q = DropHead::default();
        let a = Arrival::new(Time(5), 0, 0, Time(0), Limit::Packets(0), 1000, false);
        assert_eq!(q.enqueue(&a, P(0, 1000), &mut Vec::new()), Verdict::Admit);
        assert_eq!(sent(&mut q), vec![0]);
    }
}
