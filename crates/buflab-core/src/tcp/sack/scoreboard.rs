//! The SACK scoreboard of RFC 6675 (§3 Update, §4 IsLost, SetPipe and NextSeg), in segments.
//!
//! Read first: RFC 6675 §2–4. The sender that drives it (§5, entering and leaving recovery,
//! the timeout) is [`super::recovery`]; the blocks come from the receiver through
//! [`super::option`]. The scoreboard must not know the sender: it is handed the cumulative ACK
//! and the highest segment sent, and the sender moves HighRxt, RescueRxt and the timeout's
//! bound itself.
//!
//! **Units.** Everything counts segments, the model's sequence space (see [`crate::tcp`]): SMSS is
//! one segment, and a block is a half-open range `[start, end)` of segment numbers. RFC 6675's
//! variables translate as HighACK + 1 = `una` (the first unacknowledged segment) and
//! HighData + 1 = `high` (one past the highest segment sent); HighRxt and RescueRxt are kept
//! one past the segment they name ([`Scoreboard::high_rxt_end`], [`Scoreboard::rescue_end`]),
//! so that "nothing retransmitted yet" is `una` rather than −1.
//!
//! **IsLost in segments.** RFC 6675 §4: a sequence number is lost when "DupThresh
//! discontiguous SACKed sequences" have arrived above it, or more than (DupThresh − 1)·SMSS
//! bytes above it have been SACKed. With whole segments (the last of a finite transfer may be
//! short, but is still one segment) both read: at least 3 SACKed segments above it. Counting
//! SACKed segments above `s` only falls as `s` rises, so IsLost holds exactly below one bound,
//! the third-highest SACKed segment ([`Scoreboard::lost_bound`]); SetPipe and NextSeg use that
//! bound instead of asking each segment.
//!
//! **After a timeout** (the sender's choice, see [`super::recovery`]): every unSACKed segment
//! below [`Scoreboard::lost_end`] also counts as lost, and NextSeg rule (1) then resends such
//! segments even above the highest SACKed one (rule (1.b) does not apply to them).
//!
//! Storage: the SACKed segments above the cumulative ACK as sorted, disjoint, non-adjacent
//! ranges, reused without allocation once grown. Queries are O(log n) or O(ranges touched),
//! and a window rarely has more than a few holes.

use super::option::SackBlock;

/// RFC 6675 §2 DupThresh (and RFC 5681's three duplicate ACKs).
pub const DUP_THRESH: u32 = 3;

/// Which NextSeg rule (RFC 6675 §4) chose a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// (1): the first unSACKed segment above HighRxt that IsLost.
    Lost = 1,
    /// (2): new data, at HighData + 1.
    New = 2,
    /// (3): the first unSACKed segment above HighRxt below the highest SACKed one, lost or not.
    Unsacked = 3,
    /// (4): the rescue retransmission of the highest unSACKed segment, once per recovery.
    Rescue = 4,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed segments at or above the cumulative ACK: sorted, disjoint, non-adjacent.
    sacked: Vec<SackBlock>,
    /// Segments in `sacked`.
    count: u32,
    /// RFC 6675 HighRxt + 1: segments below it count as retransmitted in this recovery.
    pub high_rxt_end: u32,
    /// RFC 6675 RescueRxt + 1; None while RescueRxt is undefined.
    pub rescue_end: Option<u32>,
    /// After a timeout: unSACKed segments below it are lost whatever IsLost says.
    pub lost_end: u32,
}

impl Scoreboard {
    /// No SACKed segment held.
    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    /// SACKed segments held (all at or above the last cumulative ACK).
    pub fn sacked(&self) -> u32 {
        self.count
    }

    /// The SACKed ranges, lowest first.
    pub fn ranges(&self) -> &[SackBlock] {
        &self.sacked
    }

    /// The cumulative ACK moved to `una`: forget everything below it.
    pub fn advance(&mut self, una: u32) {
        let below = self.sacked.partition_point(|r| r.end <= una);
        for r in self.sacked.drain(..below) {
            self.count -= r.end - r.start;
        }
        if let Some(first) = self.sacked.first_mut() {
            if first.start < una {
                self.count -= una - first.start;
                first.start = una;
            }
        }
    }

    /// RFC 6675 §3 Update(): marks the blocks of an arriving ACK, clipped to the outstanding
    /// segments `una..high`. Returns how many segments were SACKed for the first time: an ACK
    /// with any is a duplicate acknowledgment in RFC 6675's sense (§2).
    pub fn update(&mut self, blocks: &[SackBlock], una: u32, high: u32) -> u32 {
        let mut new = 0;
        for b in blocks {
            let (start, end) = (b.start.max(una), b.end.min(high));
            if start < end {
                new += self.insert(start, end);
            }
        }
        new
    }

    /// [`Scoreboard::update`], calling `newly` on each segment SACKed for the first time, in
    /// order within each block (the Linux sender marks them one by one).
    pub fn update_each(
        &mut self,
        blocks: &[SackBlock],
        una: u32,
        high: u32,
        mut newly: impl FnMut(u32),
    ) -> u32 {
        let mut new = 0;
        for b in blocks {
            let (start, end) = (b.start.max(una), b.end.min(high));
            if start < end {
                let mut s = start;
                while let Some(hole) = self.first_unsacked(s, end) {
                    let stop = self.next_sacked_start(hole).min(end);
                    (hole..stop).for_each(&mut newly);
                    s = stop;
                }
                new += self.insert(start, end);
            }
        }
        new
    }

    /// The start of the first SACKed range above `s`, or u32::MAX.
    fn next_sacked_start(&self, s: u32) -> u32 {
        let i = self.sacked.partition_point(|r| r.end <= s);
        self.sacked.get(i).map_or(u32::MAX, |r| r.start.max(s))
    }

    fn insert(&mut self, start: u32, end: u32) -> u32 {
        // Ranges i..j overlap or touch [start, end): they merge into one.
        let i = self.sacked.partition_point(|r| r.end < start);
        let j = self.sacked.partition_point(|r| r.start <= end);
        let mut merged = SackBlock::new(start, end);
        let mut covered = 0;
        for r in &self.sacked[i..j] {
            covered += r.end.min(end).saturating_sub(r.start.max(start));
            merged = SackBlock::new(merged.start.min(r.start), merged.end.max(r.end));
        }
        let new = (end - start) - covered;
        self.count += new;
        if i == j {
            self.sacked.insert(i, merged);
        } else {
            self.sacked[i] = merged;
            self.sacked.drain(i + 1..j);
        }
        new
    }

    /// SACKed segments in `a..b`.
    fn sacked_in(&self, a: u32, b: u32) -> u32 {
        let i = self.sacked.partition_point(|r| r.end <= a);
        self.sacked[i..].iter().take_while(|r| r.start < b).map(|r| r.end.min(b) - r.start.max(a)).sum()
    }

    /// UnSACKed segments in `a..b`.
    fn unsacked_in(&self, a: u32, b: u32) -> u32 {
        if a >= b {
            0
        } else {
            (b - a) - self.sacked_in(a, b)
        }
    }

    /// One past the highest SACKed segment (RFC 6675 rule (1.b)'s "highest octet covered by
    /// any received SACK"), if any.
    pub fn highest_sacked_end(&self) -> Option<u32> {
        self.sacked.last().map(|r| r.end)
    }

    /// IsLost(s) ⇔ s < this bound (module doc): the third-highest SACKed segment, or after a
    /// timeout `lost_end` if higher; `una` when nothing is lost.
    pub fn lost_bound(&self, una: u32) -> u32 {
        let mut need = DUP_THRESH;
        let mut third = una;
        for r in self.sacked.iter().rev() {
            let len = r.end - r.start;
            if len >= need {
                third = r.end - need;
                break;
            }
            need -= len;
        }
        third.max(self.lost_end).max(una)
    }

    /// RFC 6675 §4 IsLost(s) (for `s` at or above `una`).
    pub fn is_lost(&self, s: u32, una: u32) -> bool {
        s < self.lost_bound(una)
    }

    /// RFC 6675 §4 SetPipe(): over the unSACKed segments of `una..high`, (a) one for each not
    /// lost (still in the network) plus (b) one for each at or below HighRxt (its
    /// retransmission is in the network). Segments.
    pub fn pipe(&self, una: u32, high: u32) -> u32 {
        let lost = self.lost_bound(una).min(high);
        self.unsacked_in(lost, high) + self.unsacked_in(una, self.high_rxt_end.min(high))
    }

    /// The first unSACKed segment in `from..high`.
    fn first_unsacked(&self, from: u32, high: u32) -> Option<u32> {
        let i = self.sacked.partition_point(|r| r.end <= from);
        let s = match self.sacked.get(i) {
            // Ranges never touch, so the segment after this one is unSACKed.
            Some(r) if r.start <= from => r.end,
            _ => from,
        };
        (s < high).then_some(s)
    }

    /// The highest unSACKed segment in `una..high`.
    fn highest_unsacked(&self, una: u32, high: u32) -> Option<u32> {
        let top = match self.sacked.last() {
            Some(r) if r.end == high => r.start.checked_sub(1)?,
            _ => high.checked_sub(1)?,
        };
        (top >= una).then_some(top)
    }

    /// RFC 6675 §4 NextSeg(): the segment to send next, and the rule that chose it. `una..high`
    /// is outstanding; `new_data`: rule (2) may send segment `high` (the application has it and
    /// the receiver's window allows). Rules (3) and (4), the "last resort", only in loss
    /// recovery (`recovery`); after a timeout the sender uses (1) and (2) alone. The caller
    /// moves HighRxt (C.2) or RescueRxt (rule 4) for what it sends.
    pub fn next_seg(&self, una: u32, high: u32, new_data: bool, recovery: bool) -> Option<(u32, Rule)> {
        let from = self.high_rxt_end.max(una);
        let first = self.first_unsacked(from, high);
        // (1) (1.a) above HighRxt, (1.c) lost — which for a SACK-marked loss implies (1.b),
        // below the highest SACKed segment. IsLost holds below a bound and nowhere above it,
        // so if the first candidate is not lost, none is.
        if let Some(s) = first.filter(|&s| s < self.lost_bound(una)) {
            return Some((s, Rule::Lost));
        }
        // (2)
        if new_data {
            return Some((high, Rule::New));
        }
        if !recovery {
            return None;
        }
        // (3): (1.a) and (1.b), lost or not.
        if let (Some(s), Some(h)) = (first, self.highest_sacked_end()) {
            if s < h {
                return Some((s, Rule::Unsacked));
            }
        }
        // (4): once per recovery, when HighACK > RescueRxt (in segments: una − 1 > RescueRxt).
        if self.rescue_end.is_none_or(|r| una > r) {
            return self.highest_unsacked(una, high).map(|s| (s, Rule::Rescue));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    //! Hand-worked scoreboards. Most use one window: segments 0..20 outstanding (una = 0,
    //! high = 20), with 1, 2, 3, 6 and 7 SACKed — holes at 0, 4–5 and 8–19.
    use super::*;

    fn b(start: u32, end: u32) -> SackBlock {
        SackBlock::new(start, end)
    }

    fn window() -> Scoreboard {
        let mut sb = Scoreboard::default();
        assert_eq!(sb.update(&[b(1, 4), b(6, 8)], 0, 20), 5);
        sb
    }

    #[test]
    fn update_each_names_exactly_the_newly_sacked_segments() {
        let mut sb = window();
        let mut got = Vec::new();
        // 0..5 adds 0 and 4 (1..4 known); 18..25 is clipped to 18, 19; overlapping blocks
        // name nothing twice.
        let n = sb.update_each(&[b(0, 5), b(18, 25), b(17, 20)], 0, 20, |s| got.push(s));
        assert_eq!(got, vec![0, 4, 18, 19, 17]);
        assert_eq!(n, 5);
        assert_eq!(sb.ranges(), &[b(0, 5), b(6, 8), b(17, 20)]);
    }

    #[test]
    fn update_merges_blocks_and_counts_only_new_segments() {
        let mut sb = window();
        // Already known: nothing new, so not a duplicate ACK in RFC 6675's sense.
        assert_eq!(sb.update(&[b(6, 8), b(1, 3)], 0, 20), 0);
        // 4..6 fills the gap between the two ranges: 2 new, and they merge.
        assert_eq!(sb.update(&[b(2, 6)], 0, 20), 2);
        assert_eq!(sb.ranges(), &[b(1, 8)]);
        assert_eq!(sb.sacked(), 7);
        // Blocks are clipped to what is outstanding.
        assert_eq!(sb.update(&[b(18, 25)], 0, 20), 2);
        assert_eq!(sb.ranges(), &[b(1, 8), b(18, 20)]);
        // The cumulative ACK passes 0..5: those are forgotten, the range trimmed.
        sb.advance(5);
        assert_eq!((sb.ranges(), sb.sacked()), (&[b(5, 8), b(18, 20)][..], 5));
        sb.advance(19);
        assert_eq!((sb.ranges(), sb.sacked()), (&[b(19, 20)][..], 1));
    }

    #[test]
    fn is_lost_needs_three_sacked_segments_above() {
        let sb = window();
        // Above 0: 1, 2, 3, 6, 7. Above 4 and 5: only 6 and 7. The third-highest SACKed
        // segment, 3, is the bound.
        assert_eq!(sb.lost_bound(0), 3);
        assert!(sb.is_lost(0, 0));
        assert!(!sb.is_lost(4, 0) && !sb.is_lost(5, 0));
        // Two SACKed segments lose nothing; a third above makes everything below it lost. One
        // block of three counts as three (the "(DupThresh − 1)·SMSS bytes" clause).
        let mut sb = Scoreboard::default();
        sb.update(&[b(5, 6), b(9, 10)], 0, 20);
        assert!(!sb.is_lost(0, 0));
        sb.update(&[b(12, 13)], 0, 20);
        assert_eq!(sb.lost_bound(0), 5);
        let mut sb = Scoreboard::default();
        sb.update(&[b(7, 10)], 0, 20);
        assert!(sb.is_lost(6, 0) && !sb.is_lost(7, 0));
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmissions() {
        let mut sb = window();
        // Not lost and unSACKed: 4, 5 and 8..19, 14 segments; 0 is lost.
        sb.high_rxt_end = 0;
        assert_eq!(sb.pipe(0, 20), 14);
        // 0 retransmitted (HighRxt = 0): its retransmission is in the network.
        sb.high_rxt_end = 1;
        assert_eq!(sb.pipe(0, 20), 15);
        // Segments retransmitted without being lost count twice (RFC 6675 §4 note): 4 resent
        // by rule (3) is both "not lost" and "at or below HighRxt".
        sb.high_rxt_end = 5;
        assert_eq!(sb.pipe(0, 20), 16);
        // After a timeout everything unSACKed is lost: only retransmissions count.
        sb.lost_end = 20;
        assert_eq!(sb.pipe(0, 20), 2);
    }

    #[test]
    fn next_seg_rule_1_resends_the_first_lost_segment_above_high_rxt() {
        let mut sb = window();
        assert_eq!(sb.next_seg(0, 20, true, true), Some((0, Rule::Lost)));
        // 0 resent: 4 is the next hole but only two SACKed segments lie above it: not lost,
        // so rule (2) sends new data.
        sb.high_rxt_end = 1;
        assert_eq!(sb.next_seg(0, 20, true, true), Some((20, Rule::New)));
        // 9, 10 and 11 SACKed: 4, 5 and 8 are lost now, and go in order.
        sb.update(&[b(9, 12)], 0, 21);
        assert_eq!(sb.next_seg(0, 21, true, true), Some((4, Rule::Lost)));
        sb.high_rxt_end = 5;
        assert_eq!(sb.next_seg(0, 21, true, true), Some((5, Rule::Lost)));
        sb.high_rxt_end = 6;
        assert_eq!(sb.next_seg(0, 21, true, true), Some((8, Rule::Lost)));
    }

    #[test]
    fn next_seg_rule_3_resends_unsacked_segments_below_the_highest_sack_when_nothing_is_new() {
        let mut sb = window();
        sb.high_rxt_end = 1;
        sb.rescue_end = Some(1);
        // No new data (the window or the application stops rule (2)): 4 and 5, below the
        // highest SACKed segment 7, go although they are not known lost.
        assert_eq!(sb.next_seg(0, 20, false, true), Some((4, Rule::Unsacked)));
        sb.high_rxt_end = 5;
        assert_eq!(sb.next_seg(0, 20, false, true), Some((5, Rule::Unsacked)));
        // Above 7 rule (3) stops; the rescue waits until HighACK passes RescueRxt (0).
        sb.high_rxt_end = 6;
        assert_eq!(sb.next_seg(0, 20, false, true), None);
        // Outside recovery neither rule (3) nor (4) applies.
        sb.high_rxt_end = 1;
        assert_eq!(sb.next_seg(0, 20, false, false), None);
    }

    #[test]
    fn next_seg_rule_4_rescues_the_highest_unsacked_segment_once() {
        let mut sb = window();
        (sb.high_rxt_end, sb.rescue_end) = (6, Some(1));
        // 0..3 cumulatively acknowledged (HighACK = 3 > RescueRxt = 0): the rescue resends
        // the highest unSACKed segment, 19.
        sb.advance(4);
        assert_eq!(sb.next_seg(4, 20, false, true), Some((19, Rule::Rescue)));
        // The sender then sets RescueRxt = RecoveryPoint (19): no second rescue.
        sb.rescue_end = Some(20);
        assert_eq!(sb.next_seg(4, 20, false, true), None);
        // When the highest segments are SACKed, the rescue is the highest one below them
        // (here already resent once: segments up to 17 are at or below HighRxt).
        let mut sb = Scoreboard::default();
        sb.update(&[b(18, 20)], 4, 20);
        (sb.high_rxt_end, sb.rescue_end) = (18, Some(1));
        assert_eq!(sb.next_seg(4, 20, false, true), Some((17, Rule::Rescue)));
    }

    #[test]
    fn after_a_timeout_every_unsacked_segment_is_lost_even_above_the_highest_sack() {
        let mut sb = window();
        (sb.lost_end, sb.high_rxt_end) = (20, 0);
        let mut sent = Vec::new();
        while let Some((s, rule)) = sb.next_seg(0, 20, false, false) {
            assert_eq!(rule, Rule::Lost);
            sent.push(s);
            sb.high_rxt_end = s + 1;
        }
        // The holes, SACKed segments skipped, up to the highest segment sent.
        assert_eq!(sent, [vec![0, 4, 5], (8..20).collect()].concat());
    }
}
