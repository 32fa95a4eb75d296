//! The bottleneck's packet capture (`monitor.pcap`): every frame that reaches the bottleneck's
//! queue, admitted or dropped, with the time it arrived, as the event log lists it.
//!
//! Read first: [`crate::bottleneck`] (the arrivals the log records). This file owns the raw
//! capture's format: per frame, its arrival time on the monotonic clock (u64 ps), its length
//! (u32), the number of its first bytes kept (u32), then those bytes; little-endian, packed.
//! The front end turns it into a pcap file with times from the run's time 0, cut where the
//! event log is cut (`buflab.engine.pcap.write_emulated`), so that both list the same frames.

use std::io::{self, Write};

use buflab_base::units::Time;

/// The most bytes of a frame kept: its Ethernet, IP and TCP headers with any options.
pub const SNAPLEN: usize = 256;

/// Bytes before a frame's own in each record.
pub const RECORD_HEAD: usize = 8 + 4 + 4;

/// A raw capture: records gathered in memory as frames arrive (the busy loop does no I/O per
/// frame), written out with the event log's rows.
#[derive(Default)]
pub struct Capture {
    pending: Vec<u8>,
    /// Frames recorded.
    pub frames: u64,
}

impl Capture {
    /// Frame `bytes` (`len` long on the wire, a super-packet perhaps longer than the bytes
    /// held) arrived at `t`.
    pub fn record(&mut self, t: Time, len: u32, bytes: &[u8]) {
        let kept = &bytes[..bytes.len().min(SNAPLEN)];
        self.pending.extend_from_slice(&t.ps().to_le_bytes());
        self.pending.extend_from_slice(&len.to_le_bytes());
        self.pending.extend_from_slice(&(kept.len() as u32).to_le_bytes());
        self.pending.extend_from_slice(kept);
        self.frames += 1;
    }

    /// Writes the records gathered since the last call to `out`.
    pub fn write_out(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.pending)?;
        self.pending.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_its_time_length_kept_bytes_and_the_bytes() {
        let mut c = Capture::default();
        c.record(Time::from_us(3), 1500, &[7u8; 1500]);
        c.record(Time(5), 60, &[1, 2, 3]);
        let mut out = Vec::new();
        c.write_out(&mut out).unwrap();
        assert_eq!(c.frames, 2);
        assert_eq!(out.len(), RECORD_HEAD + SNAPLEN + RECORD_HEAD + 3);
        assert_eq!(u64::from_le_bytes(out[..8].try_into().unwrap()), 3_000_000);
        assert_eq!(u32::from_le_bytes(out[8..12].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(out[12..16].try_into().unwrap()), SNAPLEN as u32);
        let second = RECORD_HEAD + SNAPLEN;
        assert_eq!(&out[second + RECORD_HEAD..], &[1, 2, 3]);
    }
}
