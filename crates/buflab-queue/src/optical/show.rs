//! The slots of an optical buffer as text, for a student stepping through Algorithm A: each
//! slot's lines with the packets in them, head to tail, and what the slot's requests did.
//!
//! Read first: [`super::buffer`] (what a snapshot holds). Owns the text; must not change the
//! model.

use std::fmt::Write;

use super::buffer::{Arrived, OpticalBuffer, Snapshot};
use super::layout::Layout;
use super::requests::Requests;

/// A cell as text: `p3·1` is packet 3, order 1 (the next to leave); in W, `p4·2 w1` also has
/// one slot left to wait; `·` is an empty cell.
fn cell_text(cell: &Option<super::buffer::Cell>) -> String {
    match cell {
        None => "·".into(),
        Some(c) => match c.wait {
            Some(w) => format!("p{}·{} w{}", c.seq, c.order, w),
            None => format!("p{}·{}", c.seq, c.order),
        },
    }
}

/// A line's name: D1, D2, … for the delay lines, W1, W2, … for the waiting line's.
fn line_name(waiting: bool, number: usize) -> String {
    format!("{}{number}", if waiting { "W" } else { "D" })
}

/// The lines of `snap`, one per row, head on the left, each cell `width` characters wide.
pub fn lines_text(snap: &Snapshot, width: usize) -> String {
    let mut out = String::new();
    for line in &snap.lines {
        let cells: Vec<String> = line.cells.iter().map(|c| format!("{:<width$}", cell_text(c))).collect();
        let name = line_name(line.waiting, line.number);
        let _ = writeln!(out, "  {name:<4} len {:<4} head │ {} │ tail", line.length, cells.join(" "));
    }
    out
}

/// The switches' states in the slot just ended: `×` crossed (a packet switched into or out
/// of the line), `=` parallel (the loop closed: its head packet went round again).
fn switches_text(snap: &Snapshot) -> String {
    let states: Vec<String> = snap
        .lines
        .iter()
        .zip(&snap.crossed)
        .map(|(l, &x)| format!("{}{}", line_name(l.waiting, l.number), if x { '×' } else { '=' }))
        .collect();
    states.join(" ")
}

/// Where the arrival `seq` went, seen at the start of the next slot.
fn arrival_text(snap: &Snapshot, seq: u64) -> String {
    for l in &snap.lines {
        let Some(cell) = l.cells.iter().flatten().find(|c| c.seq == seq) else { continue };
        return match cell.wait {
            // Seen a slot after it entered W: one slot of its wait is behind it.
            Some(w) if l.waiting => {
                let wait = w + 1;
                let lines: Vec<String> =
                    (0..64).filter(|b| wait >> b & 1 == 1).map(|b| line_name(true, b + 1)).collect();
                format!("p{seq} waits {wait} slot(s) in W, through {} (Algorithm B)", lines.join(", "))
            }
            _ => format!("p{seq} goes straight to the tail of {}", line_name(false, l.number)),
        };
    }
    format!("p{seq} is nowhere (lost)")
}

/// `requests` through an empty buffer of `layout`, slot by slot: the packets at the start of
/// each slot, then what its requests did and the switches' states in it.
pub fn walk(layout: Layout, requests: &[Requests]) -> String {
    let mut b = OpticalBuffer::new(layout);
    let l = b.layout();
    let width = format!("p{}·{} w{}", requests.len(), l.capacity(), l.longest()).chars().count();
    let mut out = format!(
        "Optical FIFO of N − 1 = {} packets (K = {}): delay lines D of lengths {:?}, waiting \
         line W of lengths {:?}.\nA cell p3·1 holds packet 3 (arrival order) of departure order \
         1; in W, w2 means 2 more slots to wait. Switches: × crossed, = parallel (loop closed).\n",
        l.capacity(),
        l.k(),
        l.delay_lines(),
        l.waiting_lines()
    );
    for r in requests {
        let _ = write!(out, "\nslot {}:\n{}", b.slot(), lines_text(&b.snapshot(), width));
        let left = if r.departure { Some(b.depart()) } else { None };
        let arrived = r.arrival.then(|| b.arrive());
        b.end_slot();
        let after = b.snapshot();
        let mut said = Vec::new();
        match left {
            Some(Some(p)) => said.push(format!("departure: p{p} leaves")),
            Some(None) => said.push("departure: nothing to send".into()),
            None => {}
        }
        match arrived {
            Some(Arrived::Admitted(p)) => said.push(format!("arrival: {}", arrival_text(&after, p))),
            Some(Arrived::Dropped) => said.push("arrival: dropped (N − 1 held)".into()),
            None => {}
        }
        if said.is_empty() {
            said.push("no request".into());
        }
        let _ = writeln!(out, "  → {}\n  switches: {}", said.join("; "), switches_text(&after));
    }
    let _ = write!(out, "\nslot {}:\n{}", b.slot(), lines_text(&b.snapshot(), width));
    let v = b.violations();
    if v.total() > 0 {
        let _ = writeln!(out, "\nproperty violations: {v:?}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk shows the slots it was asked for, with the packets where the model put them:
    /// at N = 4, packet 0 at the head of D1 in slot 1, and packet 1 in D2; in slot 1 D2's
    /// switch is crossed (1 enters) and D1's parallel (0 goes round).
    #[test]
    fn a_walk_shows_each_slot_and_where_packets_went() {
        let a = Requests { departure: false, arrival: true };
        let text = walk(Layout::new(4, 1).unwrap(), &[a, a, Requests::default()]);
        assert!(text.contains("slot 0:") && text.contains("slot 3:"), "{text}");
        assert!(text.contains("arrival: p0 goes straight to the tail of D1"), "{text}");
        assert!(text.contains("arrival: p1 goes straight to the tail of D2"), "{text}");
        assert!(text.contains("D1   len 1    head │ p0·1    │ tail"), "{text}");
        assert!(text.contains("switches: D1= D2× W1="), "{text}");
        assert!(!text.contains("violations"), "{text}");
    }

    /// An arrival sent to W is shown with its wait and Algorithm B's lines: the third arrival
    /// of the test in `buffer` waits 1 slot, in W1.
    #[test]
    fn a_wait_in_w_is_shown_with_its_lines() {
        let (a, none) = (Requests { departure: false, arrival: true }, Requests::default());
        let text = walk(Layout::new(8, 1).unwrap(), &[a, a, none, a]);
        assert!(text.contains("arrival: p2 waits 1 slot(s) in W, through W1 (Algorithm B)"), "{text}");
    }
}
