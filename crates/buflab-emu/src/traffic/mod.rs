//! The traffic generator on real sockets (`buflab-traffic`): every traffic kind of a scenario
//! (long-lived flows, closed-loop users, repeated downloads, open-loop arrivals, UDP Poisson
//! and constant-bit-rate sources), drawing its file sizes, think times and gaps with the
//! simulator's own models and streams (`buflab_core::traffic::by_flow`), so that the same
//! scenario and seed give the same draws on Linux as in the simulator.
//!
//! Read first: [`Plan`] (what a run asks of a host), then [`reactor`] (the loop). One process
//! and one epoll loop per host namespace, whatever the number of users: a user is a state
//! machine and a timer, a connection a file descriptor. Two roles:
//! - a sender machine (`buflab-traffic host`): long-lived senders ([`senders`]), the servers
//!   of every user's files ([`servers`]), UDP sources ([`udp`]);
//! - the receiver (`buflab-traffic receiver`): the long-lived flows' sink ([`sink`]), the
//!   users' clients ([`clients`]: they request, download, think), the UDP sink ([`udp`]).
//!
//! Every flow's sending end is at its flow address ([`crate::address`]): a long-lived sender
//! and a UDP source bind to it, a user's client connects to its server there, so the
//! datapath knows each frame's flow. A user's download is one connection: the client connects
//! (SYN, SYN-ACK, ACK: the handshake the simulator's `handshake = true` models), sends its
//! request (16 bytes: the connection's number and the file's size, both u64 little-endian),
//! the server writes the file and closes, and the client records when the last byte arrived
//! (the kernel's receive stamp), closes, thinks and connects again. Harpoon's users did the
//! same, with a file list where we send the size.

pub mod clients;
pub mod control;
pub mod net;
pub mod reactor;
pub mod senders;
pub mod servers;
pub mod sink;
pub mod trace;
pub mod udp;

use std::net::{Ipv4Addr, SocketAddrV4};

use buflab_base::units::Time;
use buflab_core::scenario::Scenario;
use serde_json::{json, Value};

use crate::tcp_info::{Reading, TcpInfo};

/// The port the long-lived flows' sink and every user's server listen on.
pub const TCP_PORT: u16 = 5001;
/// The port the UDP sink counts datagrams on.
pub const UDP_PORT: u16 = 5002;
/// A user's request: the connection's number and the file's size.
pub const REQUEST: usize = 16;

/// One flow of the scenario as the plan gives it: the simulator's flows table's identity.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedFlow {
    pub flow: u32,
    /// Its `[[traffic]]` entry.
    pub traffic: usize,
    /// The machine it sends from (0 without machines).
    pub machine: u32,
    /// When it starts, s from time 0 (a user: its first request).
    pub start_s: f64,
}

/// The TCP settings every connection takes.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSettings {
    pub cc: String,
    pub mss: i32,
    /// Linux's internal pacing, capped at this rate (bits/s), if the flows pace.
    pub pacing_bps: Option<u64>,
    /// The receivers' window clamp, bytes (`TCP_WINDOW_CLAMP`).
    pub window_clamp: i32,
    /// Acknowledge every segment at once (`TCP_QUICKACK` after every read).
    pub quickack: bool,
    /// The most a long-lived sender keeps written but unsent in its socket
    /// (`TCP_NOTSENT_LOWAT`), in a live run: a sender closed on command then stops within
    /// that much (Linux still sends what was written).
    pub notsent_lowat: Option<u32>,
}

/// What a run asks of the traffic generator: the plan file the front end writes (JSON).
pub struct Plan {
    /// The scenario, validated: the traffic entries' models and the seed.
    pub scenario: Scenario,
    pub duration: Time,
    pub warmup: Time,
    pub receiver: Ipv4Addr,
    pub tcp: TcpSettings,
    pub flows: Vec<PlannedFlow>,
    /// The open-loop entry, the first flow id its slots take and how many it may take.
    pub open_loop: Option<(usize, u32, u32)>,
    /// A live run's spare long-lived flow slots (see [`control`]): their entry, the first
    /// flow id they take and how many there are.
    pub spare: Option<(usize, u32, u32)>,
    /// Traced flows and the interval between samples.
    pub trace: Option<(Vec<u32>, Time)>,
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or(format!("plan: {key}: missing"))
}

fn float(v: &Value, key: &str) -> Result<f64, String> {
    field(v, key)?
        .as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or(format!("plan: {key}: expected seconds"))
}

fn whole(v: &Value, key: &str) -> Result<u64, String> {
    field(v, key)?.as_u64().ok_or(format!("plan: {key}: expected a whole number"))
}

fn seconds(s: f64) -> Time {
    Time((s * 1e12).round() as u64)
}

impl Plan {
    pub fn read(v: &Value) -> Result<Plan, String> {
        let scenario =
            Scenario::from_value(field(v, "scenario")?).map_err(|e| format!("plan: scenario: {e}"))?;
        let tcp = field(v, "tcp")?;
        let flows = field(v, "flows")?
            .as_array()
            .ok_or("plan: flows: expected an array")?
            .iter()
            .map(|f| {
                Ok(PlannedFlow {
                    flow: whole(f, "flow")? as u32,
                    traffic: whole(f, "traffic")? as usize,
                    machine: whole(f, "machine")? as u32,
                    start_s: float(f, "start_s")?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let entries = scenario.traffic.len();
        if let Some(bad) = flows.iter().find(|f| f.traffic >= entries) {
            return Err(format!("plan: flow {}: traffic {} of {entries} entries", bad.flow, bad.traffic));
        }
        let open_loop = match v.get("open_loop").filter(|o| !o.is_null()) {
            None => None,
            Some(o) => {
                Some((whole(o, "traffic")? as usize, whole(o, "first")? as u32, whole(o, "slots")? as u32))
            }
        };
        let spare = match v.get("spare").filter(|o| !o.is_null()) {
            None => None,
            Some(o) => {
                Some((whole(o, "traffic")? as usize, whole(o, "first")? as u32, whole(o, "slots")? as u32))
            }
        };
        if let Some((entry, ..)) = spare.filter(|s| s.0 >= entries) {
            return Err(format!("plan: spare: traffic {entry} of {entries} entries"));
        }
        let trace = match v.get("trace").filter(|o| !o.is_null()) {
            None => None,
            Some(t) => {
                let list = field(t, "flows")?.as_array().ok_or("plan: trace.flows: expected an array")?;
                let flows = list.iter().map(|x| x.as_u64().map(|f| f as u32)).collect::<Option<Vec<_>>>();
                Some((
                    flows.ok_or("plan: trace.flows: expected flow numbers")?,
                    seconds(float(t, "interval_s")?),
                ))
            }
        };
        let receiver = field(v, "receiver")?
            .as_str()
            .and_then(|r| r.parse().ok())
            .ok_or("plan: receiver: expected an IPv4 address")?;
        Ok(Plan {
            duration: seconds(float(v, "duration_s")?),
            warmup: seconds(float(v, "warmup_s")?),
            receiver,
            tcp: TcpSettings {
                cc: field(tcp, "cc")?.as_str().ok_or("plan: tcp.cc: expected a name")?.to_string(),
                mss: whole(tcp, "mss")? as i32,
                pacing_bps: tcp.get("pacing_bps").and_then(Value::as_u64),
                window_clamp: whole(tcp, "window_clamp")?.min(i32::MAX as u64) as i32,
                quickack: field(tcp, "quickack")?
                    .as_bool()
                    .ok_or("plan: tcp.quickack: expected true or false")?,
                notsent_lowat: tcp
                    .get("notsent_lowat")
                    .and_then(Value::as_u64)
                    .map(|b| b.min(u32::MAX as u64) as u32),
            },
            flows,
            open_loop,
            spare,
            trace,
            scenario,
        })
    }

    /// The sink's and the servers' address on the receiver.
    pub fn receiver_at(&self, port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(self.receiver, port)
    }
}

/// The cumulative counters of a connection that the flows table reports over the measured
/// window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub bytes_acked: u64,
    pub data_segs_out: u64,
    pub total_retrans: u64,
    pub total_rto: u64,
    pub delivered_ce: u64,
}

impl Counters {
    pub fn of(info: &TcpInfo) -> Counters {
        Counters {
            bytes_acked: info.bytes_acked,
            data_segs_out: u64::from(info.data_segs_out),
            total_retrans: u64::from(info.total_retrans),
            total_rto: u64::from(info.total_rto),
            delivered_ce: u64::from(info.delivered_ce),
        }
    }

    /// What was counted since `then`.
    pub fn since(&self, then: &Counters) -> Counters {
        Counters {
            bytes_acked: self.bytes_acked.saturating_sub(then.bytes_acked),
            data_segs_out: self.data_segs_out.saturating_sub(then.data_segs_out),
            total_retrans: self.total_retrans.saturating_sub(then.total_retrans),
            total_rto: self.total_rto.saturating_sub(then.total_rto),
            delivered_ce: self.delivered_ce.saturating_sub(then.delivered_ce),
        }
    }

    pub fn add(&mut self, o: &Counters) {
        self.bytes_acked += o.bytes_acked;
        self.data_segs_out += o.data_segs_out;
        self.total_retrans += o.total_retrans;
        self.total_rto += o.total_rto;
        self.delivered_ce += o.delivered_ce;
    }
}

/// What one flow's connections counted: over the measured window (each connection from the
/// window's start, or from its own if later, to its close or the end), over the whole run,
/// and the last `TCP_INFO` read (its window, its RTT).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowTotals {
    pub window: Counters,
    pub all: Counters,
    pub last: TcpInfo,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub connections: u64,
    /// Every reading had `total_rto` (Linux 6.7 on).
    pub rto_known: bool,
}

impl FlowTotals {
    /// Adds a connection's last reading, counted from `base` in the window (None: none of it
    /// fell in the window).
    pub fn add(&mut self, r: &Reading, base: Option<Counters>) {
        let now = Counters::of(&r.info);
        if let Some(b) = base {
            self.window.add(&now.since(&b));
        }
        self.all.add(&now);
        self.bytes_sent += r.info.bytes_sent;
        self.bytes_retrans += r.info.bytes_retrans;
        self.last = r.info;
        self.rto_known = (self.rto_known || self.connections == 0) && r.has_total_rto;
        self.connections += 1;
    }

    /// The flow's row of the report, as the front end's flows table reads it.
    pub fn row(&self, flow: u32, error: Option<&str>) -> Value {
        let x = &self.last;
        json!({
            "flow": flow, "error": error, "connections": self.connections,
            "bytes_acked": self.all.bytes_acked, "bytes_acked_window": self.window.bytes_acked,
            "data_segs_out_window": self.window.data_segs_out,
            "retransmits_window": self.window.total_retrans,
            "timeouts_window": self.window.total_rto,
            "delivered_ce_window": self.window.delivered_ce,
            "bytes_sent": self.bytes_sent, "bytes_retrans": self.bytes_retrans,
            "total_retrans": self.all.total_retrans,
            "cwnd_pkts": x.snd_cwnd, "ssthresh_pkts": x.snd_ssthresh,
            "srtt_s": f64::from(x.rtt) * 1e-6, "min_rtt_s": f64::from(x.min_rtt) * 1e-6,
            "snd_mss": x.snd_mss,
        })
    }
}

/// The measured window's edges on the monotonic clock, and whether it has begun.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub start: Time,
    pub end: Time,
    pub begun: bool,
}

impl Window {
    /// A connection's base for the window when it opens: zero once the window has begun
    /// (all of it falls in the window), none before (its base is read when the window
    /// begins).
    pub fn base_at_open(&self) -> Option<Counters> {
        self.begun.then(Counters::default)
    }

    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && t < self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_counts_in_the_window_from_its_base() {
        let mut totals = FlowTotals::default();
        let reading = |acked| Reading {
            info: TcpInfo { bytes_acked: acked, total_retrans: 3, ..TcpInfo::default() },
            has_total_rto: true,
        };
        // Open before the window: its base was read at the window's start (1000 acked).
        totals.add(
            &reading(5000),
            Some(Counters { bytes_acked: 1000, total_retrans: 1, ..Counters::default() }),
        );
        // Closed before the window: nothing in it.
        totals.add(&reading(700), None);
        assert_eq!((totals.window.bytes_acked, totals.window.total_retrans), (4000, 2));
        assert_eq!((totals.all.bytes_acked, totals.connections), (5700, 2));
        assert!(totals.rto_known);
    }
}
