//! The SACK option (RFC 2018): the blocks a receiver reports, their size on the wire, and the
//! side channel that carries them from the receiver to the sender.
//!
//! Read first: RFC 2018 §3 (option format) and §4 (which blocks the receiver reports). The
//! sender's use of the blocks is RFC 6675, in [`super::scoreboard`] and [`super::recovery`];
//! this file must not know it: it only says which blocks the receiver holds and carries them.
//!
//! **Units.** Blocks are half-open ranges `[start, end)` of segment numbers, the model's
//! sequence space (see [`crate::tcp`]); RFC 2018's blocks are byte ranges with the same meaning.
//!
//! **Why a side channel.** A packet is a 32-byte `Copy` value, too small for up to three
//! blocks. An ACK that carries the option instead carries a serial number (`Packet::sack`,
//! never 0 on such an ACK), and the receiver's [`SackChannel`] holds (serial, blocks) in the
//! order the ACKs were sent. An ACK route is a fixed source route through FIFO links, so the
//! sender sees a flow's ACKs in serial order, some possibly missing: when the ACK with serial
//! s arrives, the entries before s belong to ACKs that were dropped on the way and are
//! discarded, and the entry s is exactly the option that ACK carried. Serials and entries run
//! on across a flow's connections. An ACK that finds no entry (one overtaken, which FIFO
//! routes rule out) would be read as an ACK without option, never with another ACK's
//! blocks.
//! ACKs without blocks carry serial 0 and never touch the channel, nor do flows without SACK.
//!
//! **Deliberate deviations.** No D-SACK (RFC 2883): a duplicate segment below the cumulative
//! ACK is not reported. The model has no timestamps, so a SACK ACK is 40 B plus the SACK
//! option alone; it still carries at most [`MAX_SACK_BLOCKS`] = 3 blocks, as Linux does when
//! the timestamp option takes 12 of the 40 option bytes.

use std::collections::VecDeque;

/// Most blocks in one SACK option: 3, as Linux sends alongside the timestamp option (40 option
/// bytes − 12 for timestamps leave room for 2 + 8·3 = 26).
pub const MAX_SACK_BLOCKS: usize = 3;

/// Blocks a receiver remembers for repeating: one more than it sends, as Linux (4), so that a
/// segment joining two reported runs into one still leaves three to report.
pub const SACK_HISTORY: usize = MAX_SACK_BLOCKS + 1;

/// Bytes the SACK option adds to an ACK carrying `n` blocks: kind and length (2 B) plus 8 B
/// per block (RFC 2018 §3), padded to a multiple of 4 as TCP options are (Linux pads with two
/// NOPs in front): n = 1 → 12, 2 → 20, 3 → 28; no block, no option.
pub const fn option_bytes(n: usize) -> u32 {
    if n == 0 {
        0
    } else {
        (2 + 8 * n as u32).div_ceil(4) * 4
    }
}

/// A SACK block: segments `start..end` were received (half-open, segment numbers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

impl SackBlock {
    pub const fn new(start: u32, end: u32) -> SackBlock {
        SackBlock { start, end }
    }

    fn intersects(&self, other: &SackBlock) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// The blocks of one SACK option, first block first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOption {
    n: u8,
    blocks: [SackBlock; MAX_SACK_BLOCKS],
}

impl SackOption {
    pub fn blocks(&self) -> &[SackBlock] {
        &self.blocks[..self.n as usize]
    }

    /// Bytes it adds to the ACK ([`option_bytes`]).
    pub fn bytes(&self) -> u32 {
        option_bytes(self.n as usize)
    }
}

/// The receiver's side of SACK: which blocks to report (RFC 2018 §4) and the channel that
/// carries them to the sender.
#[derive(Clone, Debug, Default)]
pub struct SackReporter {
    /// The blocks reported first in recent ACKs, most recent first, each still the maximal
    /// run of received segments it was (see `on_arrival`); `n_recent` are valid.
    recent: [SackBlock; SACK_HISTORY],
    n_recent: usize,
    pub channel: SackChannel,
}

impl SackReporter {
    /// An out-of-order segment arrived and `run` is the maximal run of received segments
    /// containing it. RFC 2018 §4: the next ACK's first block MUST be that run. Earlier blocks
    /// it overlaps are parts of it (runs only grow until the cumulative ACK takes them whole),
    /// so they are dropped rather than repeated ("not subsets of a SACK block already
    /// included"); the others follow, most recently reported first.
    pub fn on_arrival(&mut self, run: SackBlock) {
        let mut kept = [run; SACK_HISTORY];
        let mut n = 1;
        for b in &self.recent[..self.n_recent] {
            if n < SACK_HISTORY && !b.intersects(&run) {
                kept[n] = *b;
                n += 1;
            }
        }
        (self.recent, self.n_recent) = (kept, n);
    }

    /// The option for an ACK with cumulative acknowledgement `rcv_nxt`: the (at most 3) most
    /// recent blocks still above it. RFC 2018 §4: "the first SACK block ... MUST specify the contiguous block of
    /// data containing the segment which triggered this ACK, unless that segment advanced the
    /// Acknowledgment Number field" (then the most recent other blocks are repeated). A block is
    /// wholly above `rcv_nxt` or wholly below: the cumulative ACK only advances through whole
    /// runs.
    pub fn option(&mut self, rcv_nxt: u32) -> SackOption {
        let mut opt = SackOption::default();
        let mut n = 0;
        for i in 0..self.n_recent {
            let b = self.recent[i];
            if b.start >= rcv_nxt {
                self.recent[n] = b;
                n += 1;
            }
        }
        self.n_recent = n;
        let sent = n.min(MAX_SACK_BLOCKS);
        opt.blocks[..sent].copy_from_slice(&self.recent[..sent]);
        opt.n = sent as u8;
        opt
    }

    /// What an ACK with cumulative acknowledgement `rcv_nxt` carries: the bytes its option
    /// adds and the serial that finds the option in the channel; (0, 0) when there is no
    /// block to report (no option, and the channel is not touched).
    pub fn attach(&mut self, rcv_nxt: u32) -> (u32, u16) {
        if self.n_recent == 0 {
            // Nothing held out of order since the last cumulative advance: most ACKs.
            return (0, 0);
        }
        let opt = self.option(rcv_nxt);
        if opt.n == 0 {
            (0, 0)
        } else {
            (opt.bytes(), self.channel.post(opt))
        }
    }

    /// A new connection: nothing received yet, no block to repeat. The channel goes on: ACKs
    /// of the old connection still in flight take their own entries when they arrive. (Clearing
    /// it made their fate depend on whether the sender handled them ahead of time, before the
    /// new connection began, or on the global clock, after: computing ahead changed results.)
    pub fn reset(&mut self) {
        self.n_recent = 0;
    }
}

/// Options of ACKs in flight, by serial number (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct SackChannel {
    /// Serial of the last ACK posted (0: none yet; 0 is never used, it marks "no option").
    last: u16,
    queue: VecDeque<(u16, SackOption)>,
}

/// Entries kept at most: serials are compared modulo 2¹⁶, so entries must span less than half
/// of that. More would mean tens of thousands of ACKs lost in a row.
const CHANNEL_CAP: usize = 1 << 14;

impl SackChannel {
    /// Posts the option of an ACK about to be sent; returns the serial the ACK carries.
    pub fn post(&mut self, opt: SackOption) -> u16 {
        self.last = self.last.wrapping_add(1).max(1);
        if self.queue.len() == CHANNEL_CAP {
            self.queue.pop_front();
        }
        self.queue.push_back((self.last, opt));
        self.last
    }

    /// The option of the ACK with `serial`, which has just arrived; entries of earlier ACKs
    /// (dropped on the way) are discarded. None if it is not held (an ACK of an earlier
    /// connection).
    pub fn take(&mut self, serial: u16) -> Option<SackOption> {
        while let Some(&(s, opt)) = self.queue.front() {
            // Distance in serials, modulo 2¹⁶: > 0 means the entry is older than the ACK.
            let ahead = serial.wrapping_sub(s) as i16;
            if ahead < 0 {
                return None;
            }
            self.queue.pop_front();
            if ahead == 0 {
                return Some(opt);
            }
        }
        None
    }

    /// Entries held (ACKs posted and not yet taken or discarded).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(start: u32, end: u32) -> SackBlock {
        SackBlock::new(start, end)
    }

    #[test]
    fn option_size_is_two_plus_eight_per_block_padded_to_four() {
        let sizes: Vec<u32> = (0..=3).map(option_bytes).collect();
        assert_eq!(sizes, vec![0, 12, 20, 28]);
        // The most a SACK ACK grows: 3 blocks, 28 B (40 B of option space minus the 12 B of
        // timestamps that Linux sends with them).
        assert_eq!(option_bytes(MAX_SACK_BLOCKS), 28);
    }

    #[test]
    fn reporter_keeps_the_newest_run_first_and_at_most_three() {
        let mut r = SackReporter::default();
        r.on_arrival(b(2, 3));
        r.on_arrival(b(5, 6));
        r.on_arrival(b(8, 9));
        r.on_arrival(b(11, 12));
        assert_eq!(r.option(1).blocks(), &[b(11, 12), b(8, 9), b(5, 6)]);
        // 6 arrives: its run 5..7 goes first and replaces the block 5..6 it contains.
        r.on_arrival(b(5, 7));
        assert_eq!(r.option(1).blocks(), &[b(5, 7), b(11, 12), b(8, 9)]);
        // The cumulative ACK passes 5..7 (segments 1..5 arrived): it is no longer reported.
        assert_eq!(r.option(7).blocks(), &[b(11, 12), b(8, 9)]);
    }

    #[test]
    fn reporter_remembers_a_fourth_block_for_when_two_runs_join() {
        let mut r = SackReporter::default();
        for s in [2, 5, 8, 11] {
            r.on_arrival(b(s, s + 1));
        }
        r.on_arrival(b(8, 10)); // 9 arrives
        assert_eq!(r.option(1).blocks(), &[b(8, 10), b(11, 12), b(5, 6)]);
        // 10 joins 8..10 and 11..12: two remembered blocks become one, and 2..3, last reported
        // three ACKs ago, fills the third place again (RFC 2018 §4: repeat the most recently
        // reported blocks).
        r.on_arrival(b(8, 12));
        assert_eq!(r.option(1).blocks(), &[b(8, 12), b(5, 6), b(2, 3)]);
    }

    #[test]
    fn channel_skips_entries_of_dropped_acks() {
        let mut c = SackChannel::default();
        let opt = |s| {
            let mut r = SackReporter::default();
            r.on_arrival(b(s, s + 1));
            r.option(0)
        };
        let s1 = c.post(opt(1));
        let s2 = c.post(opt(2));
        let s3 = c.post(opt(3));
        assert_eq!((s1, s2, s3), (1, 2, 3));
        // The ACK with serial 2 was dropped: 3 finds its own blocks, and 2's entry is gone.
        assert_eq!(c.take(s1), Some(opt(1)));
        assert_eq!(c.take(s3), Some(opt(3)));
        assert!(c.is_empty());
        // An ACK older than everything held (one overtaken, which FIFO routes rule out) takes
        // nothing, and leaves the later entries.
        let s4 = c.post(opt(4));
        assert_eq!(c.take(s2), None);
        assert_eq!(c.len(), 1);
        assert_eq!(c.take(s4), Some(opt(4)));
    }

    #[test]
    fn channel_serials_wrap_without_zero() {
        let mut c = SackChannel { last: u16::MAX - 1, ..SackChannel::default() };
        let o = SackOption::default();
        let serials: Vec<u16> = (0..3).map(|_| c.post(o)).collect();
        assert_eq!(serials, vec![u16::MAX, 1, 2]);
        // Across the wrap, 1 is still later than 65535.
        assert_eq!(c.take(1), Some(o));
        assert_eq!(c.len(), 1);
    }
}
