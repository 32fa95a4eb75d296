//! The slotted model of the optical FIFO: Algorithm A's scheduler over the delay lines, with
//! the waiting line built by Algorithm B (thesis §6.3), slot by slot, every packet's place
//! inspectable.
//!
//! Read first: [`super`] (how the chapter is read, in particular the order of a slot's
//! events) and [`super::layout`] (the lines). Owns the state of the fiber and the scheduler:
//! where each packet is, the requests of the current slot, the moves at its end, the checks of
//! Appendix E's properties and the counts an experiment reports. It knows nothing of links,
//! time in picoseconds or packets' contents: packets are numbered in arrival order (`seq`), and
//! the caller keeps what they carry.
//!
//! A slot, in order:
//! 1. a departure request, if any: the packet of order 1 leaves from the head of its line;
//! 2. an arrival request, if any: dropped if N − 1 packets are held; otherwise Algorithm A,
//!    step 1, decides from where its predecessor p_k is: behind p_k in W if p_k waits there;
//!    else waiting_time = (h + 1) mod d (h: p_k's distance from the head of its line of
//!    length d), straight into a delay line if 0, else into W for that many slots;
//! 3. the moves (`end_slot`): every head-of-line packet of a D line goes to the tail of the
//!    line its order asks for (step 3; staying in its own line is a recirculation), every
//!    packet at the head of a W line goes on to the line of the next non-zero bit of its
//!    remaining wait or, at the end of its wait, to its D line (Algorithm B), and the arrival
//!    is switched into its first line. Then the next slot begins.
//!
//! Lines are rings: a packet in line ℓ of length L sits at a fixed index x of ℓ's ring while
//! the fiber turns, and is at distance (x − slot) mod L from the head. The head of ℓ in slot s
//! is index s mod L, and the tail of any line in slot s + 1 is index s mod L too, so moving
//! a head packet to a tail is writing the same index of the other ring, and a recirculation
//! writes nothing. Contention (Appendix E (ii)) is two packets written to one index in a slot.

use super::layout::Layout;

/// What happened to an arrival request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrived {
    /// Admitted as packet `seq` (arrival order among admitted packets, from 0).
    Admitted(u64),
    /// The buffer held N − 1 packets.
    Dropped,
}

/// Where a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// In line `line` (the D lines first, then W's) at index `index` of its ring.
    Line { line: u32, index: u32 },
    /// Arrived this slot: switched into its first line at the end of the slot.
    Entering,
    /// Lost to contention: never happens (Appendix E (ii)); kept so that a broken model shows
    /// as lost packets and counted violations instead of a crash.
    Lost,
}

/// How an arrival enters: straight into a D line, or into W until slot `exit` (the slot in
/// which it is switched out of W, to be at the tail of its D line in the next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Direct,
    Wait { exit: u64 },
}

/// Breaches of the properties Appendix E proves, each counted at every slot; all stay zero
/// (the tests check it for every N up to 1,024).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Violations {
    /// (i) W held as many packets as the longest line, M = N/(2K), at the end of a slot.
    pub waiting_full: u64,
    /// (ii) Two packets switched into one line in one slot (the later one is lost).
    pub contention: u64,
    /// (iii) The packet of order one could not leave when a slot began: not at the head of a
    /// delay line (nor at the head of W's line in the slot it leaves W).
    pub order_one_not_at_head: u64,
    /// A waiting packet sent back into a W line it had already been through (§6.3.2: "never
    /// recirculates in the same delay line"), or a wait longer than W can hold.
    pub waiting_recirculation: u64,
}

impl Violations {
    pub fn total(&self) -> u64 {
        self.waiting_full + self.contention + self.order_one_not_at_head + self.waiting_recirculation
    }
}

/// What a run of slots did, counted while counting is on ([`OpticalBuffer::set_counting`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub slots: u64,
    pub arrivals: u64,
    pub drops: u64,
    pub departures: u64,
    /// Per line (D then W): packets in it summed over the slots, and the most at once.
    pub occupancy_sum: Vec<u64>,
    pub occupancy_max: Vec<u64>,
    /// Per line: packets switched into it from elsewhere (arrivals, W, other lines).
    pub entries: Vec<u64>,
    /// Per line: head-of-line packets it sent round again.
    pub recirculations: Vec<u64>,
    /// Over departed packets: line traversals (passes through a delay line, each one more
    /// pass through a 2×2 switch: the attenuation the chapter counts) and, of them,
    /// recirculations in the line they were already in; sums and maxima.
    pub passes_sum: u64,
    pub passes_max: u64,
    pub recirculations_sum: u64,
    pub recirculations_max: u64,
    /// Departures that left from W's last line in the slot they were due to leave W (their
    /// order reached one while they waited).
    pub from_waiting: u64,
    /// Switches that changed state (crossed ↔ parallel) in a slot: summed, and the most in
    /// one slot.
    pub reconfigurations_sum: u64,
    pub reconfigurations_max: u64,
    /// The most packets W held at the end of a slot.
    pub waiting_max: u64,
}

/// Which of a line's events happened in the current slot (bit flags).
const HEAD_OUT: u8 = 1;
const ENTER: u8 = 2;
const RECIRCULATE: u8 = 4;

/// What the model keeps of a packet it holds (one record, read and written together).
#[derive(Clone, Copy, Debug)]
struct Held {
    place: Place,
    /// A waiting packet's exit slot.
    exit: u64,
    passes: u32,
    recirculations: u32,
}

/// A line: its ring within the model's cells, and its state, kept together because a slot
/// reads and writes them together.
#[derive(Clone, Copy, Debug)]
struct Line {
    offset: u32,
    /// Length − 1 (lengths are powers of two).
    mask: u64,
    /// Packets in it.
    occupancy: u64,
    /// The switch's state: true crossed (the line exchanges a packet with the path), false
    /// parallel (the loop closed). A switch whose line does nothing in a slot keeps its
    /// state: only changes that a slot needs are counted.
    crossed: bool,
    /// The slot's events (bit flags).
    events: u8,
    /// For the occupancy summed over slots without a loop over the lines each slot: the slot
    /// from which its occupancy has been `level`, not yet added to the sum.
    since: u64,
    level: u64,
    /// Its counts ([`Counts`]' per-line vectors, kept here while counting).
    occupancy_sum: u64,
    occupancy_max: u64,
    entries: u64,
    recirculations: u64,
}

/// The optical FIFO's state (see the module doc).
#[derive(Clone, Debug)]
pub struct OpticalBuffer {
    layout: Layout,
    rings: Vec<Line>,
    /// D lines are rings 0 … delay − 1; W's lines follow.
    delay: usize,
    /// Every ring's cells: 0 empty, else the packet's slot in the per-packet arrays + 1.
    cells: Vec<u32>,
    /// Per packet, indexed by seq mod their length (a power of two ≥ N).
    ring_mask: u64,
    packets: Vec<Held>,
    /// Packets held are seqs head … next − 1.
    head: u64,
    next: u64,
    slot: u64,
    departed: bool,
    arrived: bool,
    entering: Option<(u64, Entry)>,
    /// Packets in W's lines.
    waiting: u64,
    /// The lines with events this slot (so that a slot's work is its events', not the
    /// lines').
    touched: Vec<usize>,
    /// Which lines have a packet at their head in each slot, a bit per line, for slots modulo
    /// the longest line's length M (a packet switched into a line of length L in slot s is at
    /// its head in slot s + L ≤ s + M): a slot visits only those lines, not all of them.
    wheel: Vec<u64>,
    words: usize,
    movers: Vec<(u64, usize)>,
    lost: Vec<u64>,
    counting: bool,
    counts: Counts,
    violations: Violations,
}

impl OpticalBuffer {
    /// An empty buffer with the lines of `layout`, in slot 0, counting.
    pub fn new(layout: Layout) -> OpticalBuffer {
        let mut rings = Vec::new();
        let mut offset = 0u32;
        for &len in layout.delay_lines().iter().chain(layout.waiting_lines()) {
            rings.push(Line {
                offset,
                mask: len - 1,
                occupancy: 0,
                crossed: false,
                events: 0,
                since: 0,
                level: 0,
                occupancy_sum: 0,
                occupancy_max: 0,
                entries: 0,
                recirculations: 0,
            });
            offset += len as u32;
        }
        let lines = rings.len();
        let per_packet = layout.n() as usize;
        let words = lines.div_ceil(64);
        let wheel = vec![0; layout.longest() as usize * words];
        OpticalBuffer {
            delay: layout.delay_lines().len(),
            layout,
            rings,
            cells: vec![0; offset as usize],
            ring_mask: per_packet as u64 - 1,
            packets: vec![Held { place: Place::Lost, exit: 0, passes: 0, recirculations: 0 }; per_packet],
            head: 0,
            next: 0,
            slot: 0,
            departed: false,
            arrived: false,
            entering: None,
            waiting: 0,
            touched: Vec::with_capacity(lines),
            wheel,
            words,
            movers: Vec::with_capacity(lines + 1),
            lost: Vec::new(),
            counting: true,
            counts: Counts::default(),
            violations: Violations::default(),
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Packets held.
    pub fn len(&self) -> u64 {
        self.next - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.head == self.next
    }

    /// N − 1 packets held: an arrival now is dropped.
    pub fn is_full(&self) -> bool {
        self.len() == self.layout.capacity()
    }

    /// The current slot.
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// The oldest packet held (order 1), if any.
    pub fn oldest(&self) -> Option<u64> {
        (!self.is_empty()).then_some(self.head)
    }

    /// Whether the counts grow from now on (a run's measured window).
    pub fn set_counting(&mut self, on: bool) {
        if on != self.counting {
            for l in self.rings.iter_mut() {
                if self.counting {
                    l.occupancy_sum += l.level * (self.slot - l.since);
                } else {
                    l.occupancy_max = l.occupancy_max.max(l.level);
                }
                l.since = self.slot;
            }
        }
        self.counting = on;
    }

    /// What it counted, up to the last slot ended.
    pub fn counts(&self) -> Counts {
        let mut c = self.counts.clone();
        let open = |l: &Line| if self.counting { l.level * (self.slot - l.since) } else { 0 };
        c.occupancy_sum = self.rings.iter().map(|l| l.occupancy_sum + open(l)).collect();
        c.occupancy_max = self.rings.iter().map(|l| l.occupancy_max).collect();
        c.entries = self.rings.iter().map(|l| l.entries).collect();
        c.recirculations = self.rings.iter().map(|l| l.recirculations).collect();
        c
    }

    #[inline]
    fn mark(&mut self, line: usize, event: u8) {
        let l = &mut self.rings[line];
        if l.events == 0 {
            self.touched.push(line);
        }
        l.events |= event;
    }

    pub fn violations(&self) -> Violations {
        self.violations
    }

    /// Packets lost to contention since the last call (never, by Appendix E (ii)).
    pub fn take_lost(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.lost)
    }

    #[inline]
    fn at(&self, seq: u64) -> usize {
        (seq & self.ring_mask) as usize
    }

    /// The seq held at per-packet index `i`.
    #[inline]
    fn seq_at(&self, i: usize) -> u64 {
        self.head + ((i as u64).wrapping_sub(self.head) & self.ring_mask)
    }

    #[inline]
    fn head_index(&self, line: usize) -> u32 {
        (self.slot & self.rings[line].mask) as u32
    }

    /// Step 2 of Algorithm A, the departure request of this slot (before its arrival, if
    /// any): the packet of order one leaves. None if the buffer is empty, or if that packet
    /// is not at the head of a delay line (a violation of (iii), counted when the slot
    /// began: it cannot reach the output).
    pub fn depart(&mut self) -> Option<u64> {
        debug_assert!(!self.departed && !self.arrived, "one departure per slot, before the arrival");
        self.departed = true;
        while self.head < self.next && self.packets[self.at(self.head)].place == Place::Lost {
            self.head += 1; // a broken model's lost packet cannot leave
        }
        if self.is_empty() {
            return None;
        }
        let i = self.at(self.head);
        let line = self.at_a_head(i)?;
        let index = self.head_index(line);
        self.cells[self.rings[line].offset as usize + index as usize] = 0;
        self.rings[line].occupancy -= 1;
        if line >= self.delay {
            self.waiting -= 1;
            if self.counting {
                self.counts.from_waiting += 1;
            }
        }
        self.mark(line, HEAD_OUT);
        self.packets[i].place = Place::Lost;
        self.head += 1;
        if self.counting {
            let c = &mut self.counts;
            c.departures += 1;
            let (p, r) = (self.packets[i].passes as u64, self.packets[i].recirculations as u64);
            c.passes_sum += p;
            c.passes_max = c.passes_max.max(p);
            c.recirculations_sum += r;
            c.recirculations_max = c.recirculations_max.max(r);
        }
        Some(self.head - 1)
    }

    /// Step 1 of Algorithm A, the arrival request of this slot (after its departure, if any).
    pub fn arrive(&mut self) -> Arrived {
        debug_assert!(!self.arrived, "one arrival per slot");
        self.arrived = true;
        if self.counting {
            self.counts.arrivals += 1;
        }
        let k = self.len();
        if k == self.layout.capacity() {
            if self.counting {
                self.counts.drops += 1;
            }
            return Arrived::Dropped;
        }
        let entry = if k == 0 {
            Entry::Direct
        } else {
            let pred = self.at(self.next - 1);
            match self.packets[pred].place {
                // p_k waits: p_{k+1} leaves W the slot after it.
                Place::Line { line, .. } if line as usize >= self.delay => {
                    Entry::Wait { exit: self.packets[pred].exit + 1 }
                }
                Place::Line { line, index } => {
                    let d = self.rings[line as usize].mask + 1;
                    let h = (index as u64).wrapping_sub(self.slot) & (d - 1);
                    match (h + 1) & (d - 1) {
                        0 => Entry::Direct,
                        wait => Entry::Wait { exit: self.slot + wait },
                    }
                }
                // Not reachable: one arrival per slot, and a lost predecessor already
                // counted its violation; enter behind nothing.
                Place::Entering | Place::Lost => Entry::Direct,
            }
        };
        let seq = self.next;
        self.next += 1;
        let i = self.at(seq);
        let exit = match entry {
            Entry::Wait { exit } => exit,
            Entry::Direct => 0,
        };
        self.packets[i] = Held { place: Place::Entering, exit, passes: 0, recirculations: 0 };
        self.entering = Some((seq, entry));
        Arrived::Admitted(seq)
    }

    /// Step 3 of Algorithm A and Algorithm B: every head-of-line packet and the arrival go to
    /// their next lines; the slot's counts and checks; the next slot begins.
    pub fn end_slot(&mut self) {
        let s = self.slot;
        self.movers.clear();
        let base = (s & (self.layout.longest() - 1)) as usize * self.words;
        for w in 0..self.words {
            let mut bits = std::mem::take(&mut self.wheel[base + w]);
            while bits != 0 {
                let line = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let r = self.rings[line];
                let x = r.offset as usize + (s & r.mask) as usize;
                let c = self.cells[x];
                // Empty if its packet left for the output this slot.
                if c == 0 {
                    continue;
                }
                let i = c as usize - 1;
                // A delay line's head packet that stays (the common case: packets go round
                // their line while they wait) keeps its cell: only its counts change.
                if line < self.delay {
                    let order = self.seq_at(i) - self.head + 1;
                    if self.layout.line_for(order) == line {
                        self.recirculate(i, line);
                        continue;
                    }
                }
                self.cells[x] = 0;
                self.rings[line].occupancy -= 1;
                self.waiting -= u64::from(line >= self.delay);
                self.movers.push((i as u64, line));
            }
        }
        let entering = self.entering.take();
        if let Some((seq, _)) = entering {
            self.movers.push((seq & self.ring_mask, usize::MAX));
        }
        for m in 0..self.movers.len() {
            let (i, from) = self.movers[m];
            let i = i as usize;
            let seq = self.seq_at(i);
            let order = seq - self.head + 1;
            let to = if from == usize::MAX {
                match entering.map(|e| e.1) {
                    Some(Entry::Wait { exit }) => self.waiting_line(exit - s, None),
                    _ => Some(self.layout.line_for(order)),
                }
            } else if from < self.delay || self.packets[i].exit == s {
                Some(self.layout.line_for(order))
            } else if self.packets[i].exit < s {
                self.violations.waiting_recirculation += 1; // it missed its exit
                None
            } else {
                self.waiting_line(self.packets[i].exit - s, Some(from))
            };
            let Some(to) = to else {
                if from != usize::MAX {
                    self.mark(from, HEAD_OUT);
                }
                self.lose(i, seq);
                continue;
            };
            if from == to {
                self.mark(to, RECIRCULATE);
            } else {
                if from != usize::MAX {
                    self.mark(from, HEAD_OUT);
                }
                self.mark(to, ENTER);
            }
            let r = self.rings[to];
            let index = (s & r.mask) as u32;
            let y = r.offset as usize + index as usize;
            if self.cells[y] != 0 {
                self.violations.contention += 1;
                self.lose(i, seq);
                continue;
            }
            self.cells[y] = i as u32 + 1;
            let due = ((s + r.mask + 1) & (self.layout.longest() - 1)) as usize * self.words + to / 64;
            self.wheel[due] |= 1 << (to % 64);
            let held = &mut self.packets[i];
            held.place = Place::Line { line: to as u32, index };
            held.passes += 1;
            if from == to {
                held.recirculations += 1;
            }
            let line = &mut self.rings[to];
            line.occupancy += 1;
            if self.counting {
                if from == to {
                    line.recirculations += 1;
                } else {
                    line.entries += 1;
                }
            }
            if to >= self.delay {
                self.waiting += 1;
            }
        }
        if self.waiting >= self.layout.longest() {
            self.violations.waiting_full += 1;
        }
        // Only the lines with events can change their switch or their occupancy.
        let mut changed = 0;
        for &line in &self.touched {
            let l = &mut self.rings[line];
            let e = std::mem::take(&mut l.events);
            // Crossed to let a packet in or out; parallel to send the head round again.
            let want = e & (HEAD_OUT | ENTER) != 0;
            if l.crossed != want {
                l.crossed = want;
                changed += 1;
            }
            let o = l.occupancy;
            if self.counting && o != l.level {
                l.occupancy_sum += l.level * (s - l.since);
                l.occupancy_max = l.occupancy_max.max(o);
                l.since = s;
            }
            l.level = o;
        }
        self.touched.clear();
        if self.counting {
            let c = &mut self.counts;
            c.slots += 1;
            c.reconfigurations_sum += changed;
            c.reconfigurations_max = c.reconfigurations_max.max(changed);
            c.waiting_max = c.waiting_max.max(self.waiting);
        }
        self.slot += 1;
        self.departed = false;
        self.arrived = false;
        self.check_order_one();
    }

    /// Head packet `i` of delay line `line` goes round it again this slot (its cell, index and
    /// occupancy unchanged), at its head again a length later.
    #[inline]
    fn recirculate(&mut self, i: usize, line: usize) {
        let held = &mut self.packets[i];
        held.passes += 1;
        held.recirculations += 1;
        let r = &mut self.rings[line];
        if self.counting {
            r.recirculations += 1;
        }
        let due = ((self.slot + r.mask + 1) & (self.layout.longest() - 1)) as usize * self.words + line / 64;
        self.wheel[due] |= 1 << (line % 64);
        self.mark(line, RECIRCULATE);
    }

    /// The W line a packet with `remaining` slots to wait goes to: the lowest non-zero bit's
    /// (Algorithm B), which must lie beyond the line it comes `from`; None (a violation) if W
    /// has no such line.
    fn waiting_line(&mut self, remaining: u64, from: Option<usize>) -> Option<usize> {
        let to = self.delay + remaining.trailing_zeros() as usize;
        if to >= self.rings.len() || from.is_some_and(|f| to <= f) {
            self.violations.waiting_recirculation += 1;
            return None;
        }
        Some(to)
    }

    fn lose(&mut self, i: usize, seq: u64) {
        self.packets[i].place = Place::Lost;
        self.lost.push(seq);
    }

    /// The line whose head packet `i` is, if it can leave for the output now: the head of a
    /// delay line, or of W's line in the slot it was due to leave W (module doc of
    /// [`super`]: a waiting packet reaches order one only then).
    fn at_a_head(&self, i: usize) -> Option<usize> {
        let Place::Line { line, index } = self.packets[i].place else { return None };
        let line = line as usize;
        let due = line < self.delay || self.packets[i].exit == self.slot;
        (index == self.head_index(line) && due).then_some(line)
    }

    /// Appendix E (iii) at the start of a slot.
    fn check_order_one(&mut self) {
        if !self.is_empty() && self.at_a_head(self.at(self.head)).is_none() {
            self.violations.order_one_not_at_head += 1;
        }
    }

    /// One whole slot: the departure request, then the arrival request, then the moves.
    pub fn step(&mut self, departure: bool, arrival: bool) -> (Option<u64>, Option<Arrived>) {
        let departed = if departure { self.depart() } else { None };
        let arrived = arrival.then(|| self.arrive());
        self.end_slot();
        (departed, arrived)
    }

    /// Where every line's packets are now, head to tail (see [`Snapshot`]).
    pub fn snapshot(&self) -> Snapshot {
        let mut lines = Vec::with_capacity(self.rings.len());
        for (line, r) in self.rings.iter().enumerate() {
            let len = r.mask + 1;
            let cells = (0..len)
                .map(|c| {
                    let x = r.offset as usize + ((self.slot + c) & r.mask) as usize;
                    let v = self.cells[x];
                    (v != 0).then(|| {
                        let i = v as usize - 1;
                        let seq = self.seq_at(i);
                        let wait =
                            (line >= self.delay).then(|| self.packets[i].exit.saturating_sub(self.slot));
                        Cell { seq, order: seq - self.head + 1, wait }
                    })
                })
                .collect();
            let waiting = line >= self.delay;
            let number = if waiting { line - self.delay + 1 } else { line + 1 };
            lines.push(LineView { waiting, number, length: len, cells });
        }
        Snapshot { slot: self.slot, lines, crossed: self.rings.iter().map(|l| l.crossed).collect() }
    }
}

/// The state at the start of a slot, for tests and for showing a student the slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub slot: u64,
    /// The D lines, then W's.
    pub lines: Vec<LineView>,
    /// Each switch's state, D lines then W's: true crossed, false parallel.
    pub crossed: Vec<bool>,
}

/// One line: which packet is in each of its cells, from the head (distance 0) to the tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineView {
    /// A line of W (D′) rather than a delay line D.
    pub waiting: bool,
    /// Its number among its kind, from 1 (D_1, D′_1).
    pub number: usize,
    pub length: u64,
    pub cells: Vec<Option<Cell>>,
}

/// A packet in a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Arrival number among the admitted packets, from 0.
    pub seq: u64,
    /// Departure order: 1 for the next to leave.
    pub order: u64,
    /// In W: slots until it is switched out to a delay line.
    pub wait: Option<u64>,
}

#[cfg(test)]
mod tests {
    use std::collections::{HashSet, VecDeque};

    use super::*;

    fn buffer(n: u64, k: u64) -> OpticalBuffer {
        OpticalBuffer::new(Layout::new(n, k).unwrap())
    }

    /// Where packet `seq` is: (W line?, line number, distance from the head).
    fn whereis(b: &OpticalBuffer, seq: u64) -> Option<(bool, usize, u64)> {
        let snap = b.snapshot();
        snap.lines.iter().find_map(|l| {
            l.cells
                .iter()
                .position(|c| c.is_some_and(|c| c.seq == seq))
                .map(|d| (l.waiting, l.number, d as u64))
        })
    }

    /// Algorithm A by hand at N = 8 (D = 1, 2, 4; W = 1, 2). Packet 0 arrives into an empty
    /// buffer and goes straight to D_1 (order 1); packet 1 arrives next slot, its predecessor
    /// at the tail of D_1 (waiting time (0 + 1) mod 1 = 0), and goes straight to D_2 (order
    /// 2). Packet 2 arrives when 1 is at the head of D_2 (h = 0, d = 2): it waits
    /// (0 + 1) mod 2 = 1 slot in W (D′_1), then enters D_2 right behind 1, which went round
    /// D_2 again (order 2): consecutive packets back to back (Appendix E (‡)).
    #[test]
    fn algorithm_a_by_hand() {
        let mut b = buffer(8, 1);
        assert_eq!(b.step(false, true), (None, Some(Arrived::Admitted(0))));
        assert_eq!(whereis(&b, 0), Some((false, 1, 0)), "slot 1: 0 at the head of D_1");
        b.step(false, true);
        assert_eq!(whereis(&b, 1), Some((false, 2, 1)), "slot 2: 1 at the tail of D_2");
        b.step(false, false);
        assert_eq!(whereis(&b, 1), Some((false, 2, 0)), "slot 3: 1 at the head of D_2");
        b.step(false, true);
        assert_eq!(whereis(&b, 2), Some((true, 1, 0)), "slot 4: 2 waits in D′_1");
        assert_eq!(b.snapshot().lines[3].cells[0].unwrap().wait, Some(0), "switched out this slot");
        assert_eq!(whereis(&b, 1), Some((false, 2, 1)), "1 went round D_2");
        b.step(false, false);
        assert_eq!(whereis(&b, 1), Some((false, 2, 0)), "slot 5: 1 at the head of D_2");
        assert_eq!(whereis(&b, 2), Some((false, 2, 1)), "and 2 right behind it");
        assert_eq!(b.violations(), Violations::default());
        // Departures leave in order, each from a head.
        let out: Vec<u64> = (0..6).filter_map(|_| b.step(true, false).0).collect();
        assert_eq!(out, vec![0, 1, 2]);
        assert!(b.is_empty());
        assert_eq!(b.violations(), Violations::default());
    }

    /// Algorithm B: a packet waiting w slots traverses the W lines of w's non-zero bits,
    /// shortest first, each once. At N = 16 (D = 1, 2, 4, 8; W = 1, 2, 4), eight arrivals in a
    /// row from empty put packet 7 (order 8) at the tail of D_4; a slot later it is at
    /// distance 6, and the next arrival waits (6 + 1) mod 8 = 7 = 1 + 2 + 4 slots: D′_1,
    /// D′_2, D′_3.
    #[test]
    fn algorithm_b_follows_the_bits_of_the_wait() {
        let mut b = buffer(16, 1);
        for _ in 0..8 {
            b.step(false, true);
        }
        assert_eq!(whereis(&b, 7), Some((false, 4, 7)));
        b.step(false, false);
        assert_eq!(whereis(&b, 7), Some((false, 4, 6)));
        b.step(false, true);
        let mut path = Vec::new();
        for _ in 0..8 {
            if let Some((true, line, _)) = whereis(&b, 8) {
                if path.last() != Some(&line) {
                    path.push(line);
                }
            }
            b.step(false, false);
        }
        assert_eq!(path, vec![1, 2, 3], "wait 7 = 1 + 2 + 4");
        // It left W for the tail of D_4 (order 9), one behind packet 7.
        let d7 = whereis(&b, 7).unwrap();
        let d8 = whereis(&b, 8).unwrap();
        assert_eq!((d8.1, (d8.2 + 8 - d7.2) % 8), (4, 1));
        assert_eq!(b.violations(), Violations::default());
    }

    /// The slot order (departure, then arrival): when the only packet leaves in the slot its
    /// successor arrives, the successor is the new packet of order one and must be at a head
    /// next slot: it goes straight to D_1. (Read literally, Algorithm A admits first, places
    /// the arrival by order 2 at D_2's tail and then lets its predecessor leave: the next
    /// slot's order-one packet would be a slot from any head.)
    #[test]
    fn an_arrival_in_the_slot_its_predecessor_leaves_is_at_a_head_next_slot() {
        let mut b = buffer(8, 1);
        b.step(false, true);
        assert_eq!(b.step(true, true), (Some(0), Some(Arrived::Admitted(1))));
        assert_eq!(whereis(&b, 1), Some((false, 1, 0)));
        assert_eq!(b.step(true, false).0, Some(1));
        assert_eq!(b.violations(), Violations::default());
    }

    /// The case Appendix E's proof of (iii) leaves out, found by the exhaustive test below: a
    /// packet whose wait in W is as long as its order, with a departure in every slot, reaches
    /// order one in the slot it leaves W, at the head of W's last line, and leaves from there
    /// (a delay line D would have it a slot later). At N = 8: four arrivals (0 → D_1, 1 and 2
    /// → D_2, 3 → D_3), then departures in every slot; the arrival in slot 6, its predecessor
    /// 3 at distance 1 of D_3, waits (1 + 1) mod 4 = 2 slots while 3 leaves in slot 7.
    #[test]
    fn a_waiting_packet_of_order_one_leaves_from_w_when_it_is_due_out() {
        let mut b = buffer(8, 1);
        for _ in 0..4 {
            b.step(false, true);
        }
        assert_eq!(b.step(true, false).0, Some(0));
        assert_eq!(b.step(true, false).0, Some(1));
        assert_eq!(b.step(true, true), (Some(2), Some(Arrived::Admitted(4))));
        assert_eq!(whereis(&b, 4), Some((true, 2, 1)), "slot 7: 4 in D′_2, due out in slot 8");
        assert_eq!(b.step(true, false).0, Some(3));
        assert_eq!(whereis(&b, 4), Some((true, 2, 0)), "slot 8: at the head of D′_2, order 1");
        assert_eq!(b.step(true, false).0, Some(4));
        assert_eq!(b.counts().from_waiting, 1);
        assert_eq!(b.violations(), Violations::default());
    }

    /// A full buffer drops the arrival, unless a departure in the same slot made room.
    #[test]
    fn full_drops_unless_a_departure_came_first() {
        let mut b = buffer(4, 1);
        for _ in 0..3 {
            b.step(false, true);
        }
        assert!(b.is_full());
        assert_eq!(b.step(false, true).1, Some(Arrived::Dropped));
        assert_eq!(b.step(true, true), (Some(0), Some(Arrived::Admitted(3))));
        assert_eq!(b.counts().drops, 1);
        assert_eq!(b.violations(), Violations::default());
    }

    /// Counts by hand at N = 4 (D = 1, 2; W = 1): two packets in, out in slots 4 and 5.
    /// Packet 0 enters D_1 in slot 0 and goes round it in slots 1, 2, 3 (order 1): 4 passes,
    /// 3 recirculations; it leaves in slot 4. Packet 1 enters D_2 in slot 1, goes round
    /// once in slot 3 (order 2) and, order 1 from slot 4, leaves from D_2's head in slot 5:
    /// 2 passes, 1 recirculation. D_1's switch is crossed in slot 0 (0 in), parallel in 1
    /// (0 round), crossed in 4 (0 out): 3 changes; D_2's crossed in 1 (1 in), parallel in 3,
    /// crossed in 5: 3 more; W's never used.
    #[test]
    fn passes_recirculations_and_switch_changes_by_hand() {
        let mut b = buffer(4, 1);
        b.step(false, true);
        b.step(false, true);
        b.step(false, false);
        b.step(false, false);
        assert_eq!(b.step(true, false).0, Some(0));
        assert_eq!(b.step(true, false).0, Some(1));
        let c = b.counts();
        assert_eq!((c.passes_sum, c.passes_max), (6, 4));
        assert_eq!((c.recirculations_sum, c.recirculations_max), (4, 3));
        assert_eq!((c.slots, c.departures, c.arrivals), (6, 2, 2));
        assert_eq!((c.reconfigurations_sum, c.reconfigurations_max), (6, 2));
        assert_eq!(c.entries, vec![1, 1, 0]);
        assert_eq!(c.recirculations, vec![3, 1, 0]);
        // Packets in each line at the end of each slot: D_1 holds 0 after slots 0–3, D_2
        // holds 1 after slots 1–4.
        assert_eq!(c.occupancy_sum, vec![4, 4, 0]);
        assert_eq!(c.occupancy_max, vec![1, 1, 0]);
    }

    /// The per-line occupancy, summed lazily (only when a line changes), adds up over the
    /// lines to the packets held at the end of each slot, summed slot by slot; and counting
    /// switched on midway counts from there. Exact: both are integer sums of the same
    /// quantity.
    #[test]
    fn lazy_occupancy_sums_are_the_packets_held_slot_by_slot() {
        use crate::optical::requests::{Pattern, RequestStream};
        let mut b = buffer(64, 2);
        b.set_counting(false);
        let mut held = 0u64;
        let requests = RequestStream::new(Pattern::Bursts { longest: 100 }, 64, 9).take(20_000);
        for (slot, r) in requests.enumerate() {
            if slot == 5_000 {
                b.set_counting(true);
            }
            b.step(r.departure, r.arrival);
            if slot >= 5_000 {
                held += b.len();
            }
        }
        let c = b.counts();
        assert_eq!(c.occupancy_sum.iter().sum::<u64>(), held);
        assert_eq!(c.slots, 15_000);
        let lines = b.layout().delay_lines().iter().chain(b.layout().waiting_lines());
        for (max, &len) in c.occupancy_max.iter().zip(lines) {
            assert!(*max <= len, "a line holds at most its length");
        }
        assert_eq!(c.occupancy_max[..b.layout().delay_lines().len()].iter().sum::<u64>(), 63);
    }

    /// The canonical state: every line's cells by order (and a waiting packet's wait), as
    /// seen from the current slot; two models in the same canonical state behave alike.
    fn canonical(b: &OpticalBuffer) -> Vec<u64> {
        let snap = b.snapshot();
        let mut key = Vec::new();
        for l in &snap.lines {
            for c in &l.cells {
                key.push(c.map_or(0, |c| c.order));
                if l.waiting {
                    key.push(c.and_then(|c| c.wait).unwrap_or(0));
                }
            }
        }
        key
    }

    /// Every state reachable from the empty buffer under any requests, for every N up to 32
    /// and every K (97,217 states at N = 32, K = 1; 2,565 at N = 16): in each, the four requests (nothing, departure, arrival, both) give
    /// exactly what a FIFO of N − 1 gives (the departing packet is the oldest, the arrival
    /// dropped exactly when N − 1 are held), and no property of Appendix E breaks. A proof
    /// by exhaustion for these sizes: the state space is finite, and all of it is visited.
    #[test]
    fn exhaustively_exact_for_small_n() {
        for log_n in 1..=5 {
            let n = 1u64 << log_n;
            let mut k = 1;
            while k <= n / 2 {
                let start = buffer(n, k);
                let mut seen = HashSet::new();
                seen.insert(canonical(&start));
                let mut todo = VecDeque::from([start]);
                while let Some(b) = todo.pop_front() {
                    for (departure, arrival) in [(false, false), (true, false), (false, true), (true, true)] {
                        let mut c = b.clone();
                        let (held, oldest) = (c.len(), c.oldest());
                        let (out, arrived) = c.step(departure, arrival);
                        assert_eq!(out, if departure { oldest } else { None }, "N = {n}, K = {k}");
                        let after = held - u64::from(out.is_some());
                        if arrival {
                            let expected =
                                if after == n - 1 { Arrived::Dropped } else { Arrived::Admitted(b.next) };
                            assert_eq!(arrived, Some(expected), "N = {n}, K = {k}");
                        }
                        assert_eq!(c.violations(), Violations::default(), "N = {n}, K = {k}");
                        if seen.insert(canonical(&c)) {
                            todo.push_back(c);
                        }
                    }
                }
                assert!(seen.len() as u64 >= n, "N = {n}, K = {k}: {} states", seen.len());
                k *= 2;
            }
        }
    }
}
