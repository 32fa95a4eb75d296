//! Traced flows (`monitor.trace_flows`): each one's `TCP_INFO`, sampled every interval into a
//! CSV file with the simulator's traces table's columns.
//!
//! Read first: nothing. A socket's state is sampled, not followed change by change; a flow
//! with no open connection at a sample (a user thinking) has no row then.

use std::io::{self, Write};
use std::os::fd::RawFd;

use buflab_base::units::Time;

use crate::tcp_info;

pub struct Tracer {
    pub flows: Vec<u32>,
    pub interval: Time,
    out: io::BufWriter<std::fs::File>,
    /// Whether the flows pace: Linux computes a pacing rate either way, but applies it only
    /// then; the table says 0 for a flow that does not pace.
    paces: bool,
}

impl Tracer {
    const HEADER: &'static str = "time_s,flow,cwnd_pkts,ssthresh_pkts,srtt_s,pacing_rate_bps,acked_bytes\n";

    pub fn create(path: &str, flows: Vec<u32>, interval: Time, paces: bool) -> io::Result<Tracer> {
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        out.write_all(Self::HEADER.as_bytes())?;
        Ok(Tracer { flows, interval, out, paces })
    }

    /// One row per traced flow of `sockets` (flow, its open socket) at `time_s`.
    pub fn sample(&mut self, time_s: f64, sockets: impl Iterator<Item = (u32, RawFd)>) -> io::Result<()> {
        for (flow, fd) in sockets {
            if !self.flows.contains(&flow) {
                continue;
            }
            let Ok(r) = tcp_info::read(fd) else { continue };
            let x = r.info;
            // u64::MAX until the first RTT sample: no rate yet.
            let pacing_bps =
                if self.paces && x.pacing_rate != u64::MAX { x.pacing_rate.saturating_mul(8) } else { 0 };
            writeln!(
                self.out,
                "{time_s:.6},{flow},{},{},{:.6},{pacing_bps},{}",
                x.snd_cwnd,
                x.snd_ssthresh,
                f64::from(x.rtt) * 1e-6,
                x.bytes_acked
            )?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
