//! First in, first out, deciding at arrivals by an [`Admission`]: any admission as a
//! [`Discipline`] that holds its packets.
//!
//! Read first: the crate doc (the two forms of discipline). A datapath that keeps its packets
//! itself (the emulator's) runs drop-tail or RED through this; the simulator, which keeps a
//! timetable instead, checks against it that its fast path decides and sends exactly the
//! same.

use std::collections::VecDeque;

use crate::{Admission, Arrival, Dequeue, Discipline, Queued, Time, Verdict};

/// Packets in arrival order and their bytes: the storage of every FIFO discipline.
#[derive(Clone, Debug)]
pub(crate) struct Packets<P> {
    queue: VecDeque<P>,
    bytes: u64,
}

impl<P: Queued> Packets<P> {
    pub fn new() -> Packets<P> {
        Packets { queue: VecDeque::new(), bytes: 0 }
    }

    pub fn push(&mut self, p: P) {
        self.bytes += p.size() as u64;
        self.queue.push_back(p);
    }

    /// The oldest packet, taken out.
    pub fn pop(&mut self) -> Option<P> {
        let p = self.queue.pop_front()?;
        self.bytes -= p.size() as u64;
        Some(p)
    }

    /// The oldest packet for the serializer, or `Idle`.
    pub fn dequeue(&mut self) -> Dequeue<P> {
        self.pop().map_or(Dequeue::Idle, Dequeue::Send)
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Packets and bytes held.
    pub fn backlog(&self) -> (u64, u64) {
        (self.queue.len() as u64, self.bytes)
    }

    /// Visits them oldest first (the order they leave).
    pub fn visit(&self, visit: &mut dyn FnMut(&P)) -> bool {
        self.queue.iter().for_each(visit);
        true
    }
}

/// A FIFO queue whose arrivals `A` decides.
#[derive(Clone, Debug)]
pub struct Fifo<A, P> {
    admission: A,
    packets: Packets<P>,
}

impl<A: Admission, P: Queued> Fifo<A, P> {
    pub fn new(admission: A) -> Fifo<A, P> {
        Fifo { admission, packets: Packets::new() }
    }

    /// The admission that decides.
    pub fn admission(&self) -> &A {
        &self.admission
    }
}

impl<A: Admission + 'static, P: Queued> Discipline<P> for Fifo<A, P> {
    fn enqueue(&mut self, a: &Arrival, mut pkt: P, _purged: &mut Vec<P>) -> Verdict {
        let verdict = self.admission.on_arrival(a);
        match verdict {
            Verdict::Drop => return verdict,
            Verdict::Mark => pkt.mark_ce(),
            Verdict::Admit => {}
        }
        self.packets.push(pkt);
        verdict
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::drop_tail::DropTail;
    use crate::Limit;

    /// A test packet: an id and a size; `ce` records a mark.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct P {
        pub id: u32,
        pub size: u32,
        pub ce: bool,
    }

    impl Queued for P {
        fn size(&self) -> u32 {
            self.size
        }
        fn ect(&self) -> bool {
            true
        }
        fn mark_ce(&mut self) {
            self.ce = true;
        }
    }

    /// Each test packet its own flow (its id).
    impl crate::Flowing for P {
        fn flow(&self) -> u32 {
            self.id
        }
        fn is_control(&self) -> bool {
            false
        }
    }

    #[test]
    fn sends_in_arrival_order_what_the_admission_admits() {
        let mut q: Fifo<DropTail, P> = Fifo::new(DropTail);
        let mut purged = Vec::new();
        let busy = Time(100);
        for id in 0..4 {
            let (w, b) = q.backlog();
            let a = Arrival::new(Time(id as u64), w, b, busy, Limit::Packets(2), 500, true);
            q.enqueue(&a, P { id, size: 500, ce: false }, &mut purged);
        }
        assert_eq!(q.backlog(), (2, 1000), "the limit of 2 refused two");
        assert!(purged.is_empty());
        let sent: Vec<u32> = std::iter::from_fn(|| match q.dequeue(busy, &mut purged) {
            Dequeue::Send(p) => Some(p.id),
            _ => None,
        })
        .collect();
        assert_eq!(sent, vec![0, 1]);
        assert_eq!(q.backlog(), (0, 0));
    }
}
