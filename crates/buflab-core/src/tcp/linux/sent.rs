//! The retransmission queue: what the Linux sender knows of each outstanding segment.
//!
//! Read first: [`super`]. Owns one record per segment from the cumulative ACK to the highest
//! sent ([`Seg`]: when it last left, and Linux's per-segment marks `TCPCB_SACKED_ACKED`,
//! `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`, `TCPCB_EVER_RETRANS`) and the counts Linux keeps of
//! them (`sacked_out`, `lost_out`, `retrans_out`), from which the segments in flight follow
//! (`tcp_packets_in_flight`). Must not know why a segment is marked: RACK, the timeout and the
//! SACK blocks decide that in the files that own them.
//!
//! The records are a ring from the cumulative ACK, grown as segments are sent and dropped from
//! the front as they are acknowledged: as long as the window, no longer.

use std::collections::VecDeque;

use crate::tcp::sack::option::SackBlock;
use crate::units::Time;

/// Reported delivered by a SACK block (`TCPCB_SACKED_ACKED`).
pub const SACKED: u8 = 1;
/// Deemed lost, by RACK or the timeout (`TCPCB_LOST`).
pub const LOST: u8 = 2;
/// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`): it counts in flight again.
pub const RETRANS: u8 = 4;
/// It has been sent more than once (`TCPCB_EVER_RETRANS`): an ACK of it is ambiguous.
pub const EVER_RETRANS: u8 = 8;
/// It is on the list of resent segments whose last transmission RACK still judges.
const LISTED: u8 = 16;

/// RACK's verdict on one segment (see [`SentQueue::judge_losses`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Lost now.
    Lost,
    /// Lost in this long unless delivered first.
    Wait(Time),
    /// Sent after the latest delivery: not judged.
    Later,
}

/// When a segment last left: the time (Linux `skb_mstamp`), then the sender's count of
/// transmissions, which orders the segments one instant sent (see [`sent_after`]).
pub type Stamp = (Time, u32);

/// One outstanding segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seg {
    /// When it last left.
    pub xmit: Time,
    /// Which transmission of the connection that was.
    pub order: u32,
    pub flags: u8,
}

impl Seg {
    pub fn is(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn stamp(&self) -> Stamp {
        (self.xmit, self.order)
    }
}

/// What the cumulative ACK's advance removed (see [`SentQueue::advance`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    /// Segments delivered by this ACK (not SACKed before).
    pub delivered: u32,
    /// The send times of the oldest and the newest of them never resent (Linux `first_ackt`,
    /// `last_ackt`: the RTT samples).
    pub first_clean: Option<Time>,
    pub last_clean: Option<Time>,
    /// Whether any segment it covered had been resent (Karn: then no sample from the others
    /// either, Linux `FLAG_RETRANS_DATA_ACKED`).
    pub any_resent: bool,
    /// The first segment the ACK covered: its last send time and whether it was ever resent.
    pub head: Option<Seg>,
    /// Of the delivered segments, the one sent last: when, which segment, ever resent (for
    /// RACK, which advances on the most recently sent delivered segment).
    pub latest: Option<(Stamp, u32, bool)>,
}

/// The records of `una..high`, and Linux's counts of them.
#[derive(Clone, Debug, Default)]
pub struct SentQueue {
    una: u32,
    segs: VecDeque<Seg>,
    /// Segments SACKed (`sacked_out`).
    pub sacked_out: u32,
    /// Segments marked lost and not SACKed (`lost_out`).
    pub lost_out: u32,
    /// Segments whose retransmission is in flight (`retrans_out`).
    pub retrans_out: u32,
    /// Segments ever marked lost, over the connection (Linux `tp->lost`).
    pub lost_total: u64,
    /// Transmissions so far (orders the [`Stamp`]s).
    sends: u32,
    /// Resent segments whose last transmission may still be judged by RACK (marked `LISTED`),
    /// in the order of those transmissions; entries that left the queue or were SACKed or
    /// marked lost are dropped as met.
    resent: Vec<u32>,
    /// Every segment below it is SACKed, marked lost or resent: RACK's scan of segments sent
    /// once starts there.
    clean_from: u32,
    /// No segment below it is marked lost without a resend in flight (`next_lost` starts
    /// there; Linux's `retransmit_skb_hint`).
    lost_hint: u32,
}

impl SentQueue {
    /// The first segment not acknowledged.
    pub fn una(&self) -> u32 {
        self.una
    }

    /// One past the highest segment sent.
    pub fn high(&self) -> u32 {
        self.una + self.segs.len() as u32
    }

    pub fn get(&self, seq: u32) -> Seg {
        self.segs[(seq - self.una) as usize]
    }

    /// Segments in flight (Linux `tcp_packets_in_flight`): outstanding, less those SACKed and
    /// those deemed lost, plus the retransmissions of lost ones in flight.
    pub fn in_flight(&self) -> u32 {
        (self.segs.len() as u32 + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// Segments outstanding (Linux `packets_out`).
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// Segment `seq` leaves at `now`: a new one at `high()`, or a resend. `counted`: a resend
    /// of a lost segment, which counts in flight again until it too is delivered or deemed lost
    /// (`tcp_retransmit_skb`); a tail loss probe's resend is not (`__tcp_retransmit_skb`).
    pub fn on_sent(&mut self, seq: u32, now: Time, resend: bool, counted: bool) {
        self.sends = self.sends.wrapping_add(1);
        let order = self.sends;
        if !resend {
            debug_assert_eq!(seq, self.high(), "new data is sent in order");
            self.segs.push_back(Seg { xmit: now, order, flags: 0 });
            return;
        }
        let s = &mut self.segs[(seq - self.una) as usize];
        (s.xmit, s.order) = (now, order);
        s.flags |= EVER_RETRANS;
        if counted && s.flags & RETRANS == 0 {
            s.flags |= RETRANS;
            self.retrans_out += 1;
        }
        if s.flags & LISTED == 0 {
            s.flags |= LISTED;
            self.resent.push(seq);
        }
    }

    /// The cumulative ACK moves to `ack`: the records below it go.
    pub fn advance(&mut self, ack: u32) -> Acked {
        let mut a = Acked::default();
        let n = ack.saturating_sub(self.una).min(self.segs.len() as u32);
        a.head = self.segs.front().copied().filter(|_| n > 0);
        // Popped one by one: a drain of the ring costs more than the few records an ACK
        // removes.
        for seq in self.una..self.una + n {
            let Some(s) = self.segs.pop_front() else { break };
            if s.flags == 0 {
                // Sent once, never SACKed, marked or resent: the common case, in sending order.
                a.delivered += 1;
                a.first_clean.get_or_insert(s.xmit);
                a.last_clean = Some(s.xmit);
                if a.latest.is_none_or(|(t, _, _)| sent_after(s.stamp(), t)) {
                    a.latest = Some((s.stamp(), seq, false));
                }
                continue;
            }
            if s.is(SACKED) {
                self.sacked_out -= 1;
            } else if s.is(LOST) {
                self.lost_out -= 1;
            }
            if s.is(RETRANS) {
                self.retrans_out -= 1;
            }
            if s.is(SACKED) {
                continue;
            }
            a.delivered += 1;
            let resent = s.is(EVER_RETRANS);
            a.any_resent |= resent;
            if !resent {
                a.first_clean.get_or_insert(s.xmit);
                a.last_clean = Some(s.xmit);
            }
            if a.latest.is_none_or(|(t, _, _)| sent_after(s.stamp(), t)) {
                a.latest = Some((s.stamp(), seq, resent));
            }
        }
        self.una = self.una.max(ack);
        if !self.resent.is_empty() {
            let una = self.una;
            self.resent.retain(|&s| s >= una);
        }
        a
    }

    /// Segment `seq` is SACKed for the first time: returns its record as it was.
    pub fn mark_sacked(&mut self, seq: u32) -> Seg {
        let i = (seq - self.una) as usize;
        let before = self.segs[i];
        debug_assert!(!before.is(SACKED));
        if before.is(LOST) {
            self.lost_out -= 1;
        }
        if before.is(RETRANS) {
            self.retrans_out -= 1;
        }
        self.segs[i].flags = (before.flags | SACKED) & !(LOST | RETRANS);
        self.sacked_out += 1;
        before
    }

    /// `tcp_mark_skb_lost`: segment `seq` is deemed lost. A SACKed one never is; one already
    /// marked whose retransmission is in flight has lost that too: the resend stops counting,
    /// so that it is sent again.
    pub fn mark_lost(&mut self, seq: u32) {
        let i = (seq - self.una) as usize;
        let s = &mut self.segs[i];
        if s.is(SACKED) {
            return;
        }
        if s.is(LOST) {
            if s.is(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
            }
        } else {
            s.flags |= LOST;
            self.lost_out += 1;
            self.lost_total += 1;
        }
        self.lost_hint = self.lost_hint.min(seq);
    }

    /// RFC 8985 §6.2 step 5's candidates, each put to `judge` (Linux walks its time-sorted
    /// list): every unSACKed segment not marked lost without a resend in flight, in two runs
    /// that each keep the order of transmission — those resent, and those sent once (in
    /// sequence order) — each up to the first that `judge` finds sent after the latest
    /// delivery (every later one in its run was too). `sacked`
    /// are the queue's SACKed ranges (the scoreboard's), skipped whole. Marks lost what
    /// `judge` finds lost; returns how many, and the longest wait of the others.
    pub fn judge_losses(
        &mut self,
        sacked: &[SackBlock],
        mut judge: impl FnMut(Seg) -> Judgement,
    ) -> (u32, Option<Time>) {
        let (mut marked, mut wait) = (0, None::<Time>);
        // The resent segments, in the order they were resent (each joins the list's end when
        // it leaves), up to the first resent after the latest delivery. Entries that can no
        // longer be judged leave the list; the others keep their order.
        let (mut kept, mut k) = (0, 0);
        while k < self.resent.len() {
            let seq = self.resent[k];
            let judged = seq >= self.una && {
                let s = self.get(seq);
                s.flags & SACKED == 0 && s.flags & (LOST | RETRANS) != LOST
            };
            let verdict = if judged { judge(self.get(seq)) } else { Judgement::Lost };
            if verdict == Judgement::Later {
                break;
            }
            k += 1;
            if let Judgement::Wait(t) = verdict {
                wait = Some(wait.map_or(t, |w| w.max(t)));
                self.resent[kept] = seq;
                kept += 1;
                continue;
            }
            if judged {
                self.mark_lost(seq);
                marked += 1;
            }
            // Off the list: gone, SACKed, or lost without a resend in flight.
            if seq >= self.una {
                self.segs[(seq - self.una) as usize].flags &= !LISTED;
            }
        }
        self.resent.drain(kept..k);
        let (mut seq, high) = (self.clean_from.max(self.una), self.high());
        let mut clean_from = seq;
        let first = sacked.partition_point(|r| r.end <= seq);
        let mut ranges = sacked[first..].iter().peekable();
        'scan: while seq < high {
            let stop = match ranges.peek() {
                Some(r) if r.start <= seq => {
                    if clean_from == seq {
                        clean_from = r.end;
                    }
                    seq = r.end;
                    ranges.next();
                    continue;
                }
                Some(r) => r.start.min(high),
                None => high,
            };
            while seq < stop {
                let s = self.get(seq);
                let at_mark = clean_from == seq;
                seq += 1;
                if s.flags & (LOST | EVER_RETRANS) != 0 {
                    if at_mark {
                        clean_from = seq;
                    }
                    continue;
                }
                match judge(s) {
                    Judgement::Later => break 'scan,
                    Judgement::Lost => {
                        self.mark_lost(seq - 1);
                        marked += 1;
                        if at_mark {
                            clean_from = seq;
                        }
                    }
                    Judgement::Wait(t) => wait = Some(wait.map_or(t, |w| w.max(t))),
                }
            }
        }
        self.clean_from = clean_from;
        (marked, wait)
    }

    /// The first segment at or after `from` marked lost whose retransmission is not in flight
    /// (`tcp_xmit_retransmit_queue`'s next candidate), if any.
    pub fn next_lost(&mut self, from: u32) -> Option<u32> {
        if self.retrans_out >= self.lost_out {
            // Every lost segment's resend is in flight already.
            return None;
        }
        let start = from.max(self.lost_hint).max(self.una);
        let skip = (start - self.una) as usize;
        let found = self.segs.iter().skip(skip).position(|s| s.flags & (LOST | RETRANS | SACKED) == LOST);
        let found = found.map(|i| start + i as u32);
        if from <= self.lost_hint {
            // Nothing to resend below `found` (or anywhere, if none).
            self.lost_hint = found.unwrap_or(self.high());
        }
        found
    }

    /// The unSACKed segments of `from..high()` in order, with their records.
    pub fn unsacked_from(&self, from: u32) -> impl Iterator<Item = (u32, Seg)> + '_ {
        let start = from.max(self.una);
        let skip = (start - self.una) as usize;
        self.segs
            .iter()
            .enumerate()
            .skip(skip)
            .filter(|(_, s)| !s.is(SACKED))
            .map(move |(i, s)| (self.una + i as u32, *s))
    }
}

/// RFC 8985 §6.2 `RACK_sent_after` (Linux `tcp_skb_sent_after`): whether a segment sent at
/// `a` left after one sent at `b`. Linux breaks a tie of timestamps by sequence number (the
/// segments of one burst); here many sends share an instant (every segment an ACK releases,
/// and ACKs of one instant), so the tie goes to the order of transmission, which that stands
/// for — a resend of an old segment after new data at the same instant is the later one.
pub fn sent_after(a: Stamp, b: Stamp) -> bool {
    a > b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(n: u32) -> SentQueue {
        let mut q = SentQueue::default();
        for s in 0..n {
            q.on_sent(s, Time::from_ms(s as u64), false, false);
        }
        q
    }

    #[test]
    fn in_flight_is_outstanding_less_sacked_and_lost_plus_resends() {
        let mut q = queue(10);
        assert_eq!(q.in_flight(), 10);
        q.mark_sacked(3);
        q.mark_sacked(4);
        q.mark_lost(0);
        q.mark_lost(1);
        assert_eq!((q.sacked_out, q.lost_out, q.retrans_out), (2, 2, 0));
        assert_eq!(q.in_flight(), 6);
        q.on_sent(0, Time::from_ms(20), true, true);
        assert_eq!(q.in_flight(), 7);
        // A SACKed segment is never marked lost; a lost one SACKed leaves both counts.
        q.mark_lost(3);
        q.mark_sacked(0);
        assert_eq!((q.sacked_out, q.lost_out, q.retrans_out), (3, 1, 0));
        assert_eq!(q.in_flight(), 6);
    }

    #[test]
    fn a_lost_retransmission_is_resent_again() {
        let mut q = queue(5);
        q.mark_lost(1);
        assert_eq!(q.next_lost(0), Some(1));
        q.on_sent(1, Time::from_ms(10), true, true);
        assert_eq!(q.next_lost(0), None, "its resend is in flight");
        q.mark_lost(1); // RACK: the resend is lost too
        assert_eq!((q.lost_out, q.retrans_out, q.lost_total), (1, 0, 1));
        assert_eq!(q.next_lost(0), Some(1));
    }

    #[test]
    fn the_cumulative_ack_reports_what_it_delivered() {
        let mut q = queue(6);
        q.mark_sacked(2);
        q.mark_lost(0);
        q.on_sent(0, Time::from_ms(9), true, true);
        let a = q.advance(4);
        // 0 (resent at 9 ms), 1 and 3 are delivered now; 2 was SACKed before.
        assert_eq!(a.delivered, 3);
        assert_eq!(
            (a.first_clean, a.last_clean, a.any_resent),
            (Some(Time::from_ms(1)), Some(Time::from_ms(3)), true)
        );
        let head = a.head.map(|s| (s.xmit, s.order, s.flags & !LISTED));
        assert_eq!(head, Some((Time::from_ms(9), 7, LOST | RETRANS | EVER_RETRANS)));
        assert_eq!(a.latest, Some(((Time::from_ms(9), 7), 0, true)));
        assert_eq!((q.una(), q.high(), q.sacked_out, q.lost_out, q.retrans_out), (4, 6, 0, 0, 0));
        assert_eq!(q.in_flight(), 2);
    }
    #[test]
    fn rack_is_asked_about_resent_segments_in_resend_order_and_once_sent_ones_in_sequence() {
        // 0..8 sent at 0..7 ms; 1 and 2 lost and resent at 10 and 11 ms, 3 SACKed. The judge
        // says "later" for anything sent at or after 11 ms: the resent 1 is judged, the resent
        // 2 stops the first run; 0, 4, 5 ... are judged in order up to 7 (sent at 7 ms, before).
        let mut q = queue(8);
        q.mark_lost(1);
        q.mark_lost(2);
        q.on_sent(1, Time::from_ms(10), true, true);
        q.on_sent(2, Time::from_ms(11), true, true);
        q.mark_sacked(3);
        let mut asked = Vec::new();
        let sacked = [SackBlock::new(3, 4)];
        let (marked, wait) = q.judge_losses(&sacked, |s| {
            asked.push(s.xmit);
            if s.xmit >= Time::from_ms(11) {
                Judgement::Later
            } else if s.xmit < Time::from_ms(5) {
                Judgement::Lost
            } else {
                Judgement::Wait(Time::from_ms(1))
            }
        });
        let ms: Vec<u64> = asked.iter().map(|t| t.0 / 1_000_000_000).collect();
        assert_eq!(ms, vec![10, 11, 0, 4, 5, 6, 7]);
        // 0 and 4 are lost (sent before 5 ms); the resend of 1 (10 ms) and 5..7 wait.
        assert_eq!((marked, wait), (2, Some(Time::from_ms(1))));
        assert!(q.get(0).is(LOST) && q.get(4).is(LOST) && !q.get(5).is(LOST));
        // The scan of once-sent segments now starts past 0..4, all lost, resent or SACKed.
        assert_eq!(q.clean_from, 5);
    }
}
