//! The queue event log's vocabulary: what can happen at a queue, and one row of its log with
//! the row's byte format on disk — what the NetFPGA router's monitor reported (thesis app.
//! A), enough to rebuild occupancy, loss and utilization exactly.
//!
//! Read first: nothing. The simulator keeps its log in columns (`buflab-core`'s
//! `monitor::events`), the emulator's datapath writes rows in this format, and the simulator's
//! monitor replays them (`buflab-core`'s `monitor::replay`); the event numbers are the ones
//! the Parquet log stores (`buflab.engine.events`). Must not know who writes or reads a log.

use buflab_base::units::Time;

/// What happened at the queue. The numbers are the values stored in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum QueueEvent {
    /// A packet was admitted (written to the buffer).
    Enqueue = 0,
    /// A packet's serialization started (it was read from the buffer).
    Dequeue = 1,
    /// A packet was refused.
    Drop = 2,
    /// The packet just enqueued was marked CE by the queue discipline (RFC 3168): it follows
    /// that packet's enqueue at the same time and occupancy, and is not an arrival of its own.
    Mark = 3,
    /// A discipline that holds its packets dropped one it held (a head drop; an AQM that
    /// drops at dequeue): a drop that is not an arrival, leaving the occupancy after it.
    Purge = 4,
}

impl QueueEvent {
    /// The event stored as `code`, if it is one.
    pub fn from_code(code: u8) -> Option<QueueEvent> {
        use QueueEvent::*;
        [Enqueue, Dequeue, Drop, Mark, Purge].into_iter().find(|e| *e as u8 == code)
    }
}

/// One row of a queue's event log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogRow {
    pub time: Time,
    /// A [`QueueEvent`] as its number.
    pub event: u8,
    pub flow: u32,
    pub seq: u32,
    /// Packet size on the wire, bytes.
    pub size: u32,
    /// Packets and bytes waiting after the event (the one in service not counted).
    pub queue_pkts: u64,
    pub queue_bytes: u64,
}

impl LogRow {
    /// Bytes of a row on disk: little-endian, packed, in field order.
    pub const BYTES: usize = 8 + 1 + 4 + 4 + 4 + 8 + 8;

    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.time.ps().to_le_bytes());
        out.push(self.event);
        out.extend_from_slice(&self.flow.to_le_bytes());
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&self.queue_pkts.to_le_bytes());
        out.extend_from_slice(&self.queue_bytes.to_le_bytes());
    }

    /// The row `write_to` wrote at the start of `bytes` (at least [`LogRow::BYTES`] long).
    pub fn read_from(bytes: &[u8]) -> LogRow {
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        LogRow {
            time: Time(u64_at(0)),
            event: bytes[8],
            flow: u32_at(9),
            seq: u32_at(13),
            size: u32_at(17),
            queue_pkts: u64_at(21),
            queue_bytes: u64_at(29),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_row_reads_back_as_written() {
        let row = LogRow {
            time: Time(u64::MAX - 7),
            event: QueueEvent::Purge as u8,
            flow: 0x0102_0304,
            seq: u32::MAX,
            size: 1500,
            queue_pkts: 1 << 40,
            queue_bytes: 3,
        };
        let mut bytes = Vec::new();
        row.write_to(&mut bytes);
        assert_eq!(bytes.len(), LogRow::BYTES);
        assert_eq!(LogRow::read_from(&bytes), row);
    }

    #[test]
    fn every_event_reads_back_from_its_code() {
        for code in 0..=4u8 {
            assert_eq!(QueueEvent::from_code(code).map(|e| e as u8), Some(code));
        }
        assert_eq!(QueueEvent::from_code(5), None);
    }
}
