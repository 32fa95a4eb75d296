//! The `network.switch` table of the switch topology (thesis ch. 3, Fig 3.1), and eq. 3.1's
//! flow count for `flows_per_output = "eq3.1"`.
//!
//! Read first: [`super::network`], which calls [`read_switch`] for the switch topology, and
//! [`super::reader`] (typed key access, errors). Owns [`SwitchSpec`], [`Load`], [`Scheduler`]
//! (the names of `scheduler`, and which keys each leaves unused), a traffic entry's
//! `flows_per_output` and the normalized echo of `network.switch`. Must not know the other
//! topologies, nor how the router is built and run ([`crate::switch`], [`crate::fabric`]).

use serde_json::Value;

use super::reader::{error, Result, Table};
use super::traffic::TrafficKind;
use crate::fabric::speedup::Speedup;
use crate::fabric::SchedulerKind;
use crate::switch::Fabric;
use crate::units::{BufferLimit, Range, Rate, Time};

/// Largest switch: the thesis goes to 32 ports (§3.3.2).
pub const MAX_PORTS: u64 = 64;

/// Which output each flow goes to, by input (§3.1 item 2, §3.3.1).
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    /// Every output alike.
    Uniform,
    /// At input i, 2/3 of the flows to output i + 1 and 1/3 to i + 2 (mod N).
    Diagonal,
    /// Row-major N×N weights: row i the shares of input i's flows per output.
    Matrix(Vec<f64>),
}

impl Load {
    /// The weights of input `i`'s row, for an N-port switch.
    pub fn row(&self, i: usize, n: usize) -> Vec<f64> {
        match self {
            Load::Uniform => vec![1.0; n],
            Load::Diagonal => {
                let mut w = vec![0.0; n];
                w[(i + 1) % n] += 2.0;
                w[(i + 2) % n] += 1.0;
                w
            }
            Load::Matrix(m) => m[i * n..(i + 1) * n].to_vec(),
        }
    }
}

/// The switch topology's router and its surroundings.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchSpec {
    pub ports: usize,
    /// Line rate of every port (the core rate).
    pub rate: Rate,
    pub fabric: Fabric,
    /// Packets per VOQ (None: unlimited).
    pub voq_buffer: Option<u32>,
    /// Packets waiting per output (None: unlimited).
    pub output_buffer: Option<u32>,
    pub load: Load,
    /// Fabric cell, bytes.
    pub cell: u32,
    /// Buffer of each input's multiplexing router.
    pub mux_buffer: BufferLimit,
    /// The output the summary's distributions, time series and event log describe (from 0).
    pub summary_port: usize,
}

/// What `network.switch.scheduler` names: the scheduler of a fabric, or no fabric at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    Mwm,
    Islip,
    Pim,
    OqEmulation,
    OutputQueued,
}

crate::names::names!(Scheduler {
    Mwm = "mwm",
    Islip = "islip",
    Pim = "pim",
    OqEmulation = "oq_emulation",
    OutputQueued = "output_queued",
});

impl Scheduler {
    /// The keys that do nothing with this scheduler: the reader refuses them, and the
    /// normalized echo leaves them out.
    fn unused_keys(self) -> &'static [&'static str] {
        match self {
            Scheduler::OutputQueued => &["speedup", "voq_buffer", "iterations"],
            Scheduler::OqEmulation => &["voq_buffer", "iterations"],
            Scheduler::Islip | Scheduler::Pim => &[],
            Scheduler::Mwm => &["iterations"],
        }
    }

    /// The fabric's scheduler, making `iterations` request-grant-accept rounds if it iterates.
    fn fabric_scheduler(self, iterations: u32) -> SchedulerKind {
        match self {
            Scheduler::Mwm => SchedulerKind::Mwm,
            Scheduler::Islip => SchedulerKind::Islip { iterations },
            Scheduler::Pim => SchedulerKind::Pim { iterations },
            Scheduler::OqEmulation => SchedulerKind::OqEmulation,
            Scheduler::OutputQueued => unreachable!("an output-queued switch has no fabric"),
        }
    }
}

/// Reads `network.switch`. The cell's default depends on the traffic, read later: it comes
/// back as None unless the user gave it.
pub fn read_switch(t: &mut Table) -> Result<(SwitchSpec, Option<u32>)> {
    let ports = t.uint("ports", 1, MAX_PORTS)? as usize;
    let rate = t.rate("rate")?;
    let scheduler: Scheduler = t.named("scheduler")?;
    // Keys that do nothing for this scheduler are errors, not silently ignored: true when
    // `key` is one of them (and absent), false when it is to be read.
    let unused = |t: &mut Table, key: &'static str, why: &str| -> Result<bool> {
        if !scheduler.unused_keys().contains(&key) {
            return Ok(false);
        }
        match t.raw(key) {
            Some(v) => {
                let expected = format!("no `{key}` with scheduler = \"{}\" ({why})", scheduler.name());
                Err(error(&t.key_path(key), v, &expected))
            }
            None => Ok(true),
        }
    };
    let iterations = if unused(t, "iterations", "only islip and pim iterate")? {
        1
    } else {
        t.uint("iterations", 1, MAX_PORTS)? as u32
    };
    let fabric =
        if unused(t, "speedup", "it has no fabric to speed up: packets go straight to their outputs")? {
            Fabric::OutputQueued
        } else {
            let v = t.value("speedup")?;
            let speedup = v.as_f64().and_then(Speedup::from_f64).ok_or_else(|| {
                error(
                    &t.key_path("speedup"),
                    &v,
                    "a number from 1 to 4000000 (the fabric's rate ÷ the line rate)",
                )
            })?;
            Fabric::Cioq { scheduler: scheduler.fabric_scheduler(iterations), speedup }
        };
    let voq_why = match scheduler {
        Scheduler::OutputQueued => "an output-queued switch has no VOQs",
        _ => "its VOQs are unlimited; its drops are the shadow OQ switch's",
    };
    let voq_buffer = if unused(t, "voq_buffer", voq_why)? { None } else { packets(t, "voq_buffer", 1)? };
    let output_buffer = packets(t, "output_buffer", 0)?;
    let load = read_load(t, ports)?;
    let cell = if t.given("cell") { Some(cell_size(t)?) } else { None };
    let mux_buffer = t.buffer("mux_buffer")?;
    let summary_port = t.uint("summary_port", 1, ports as u64)? as usize - 1;
    let spec = SwitchSpec {
        ports,
        rate,
        fabric,
        voq_buffer,
        output_buffer,
        load,
        cell: 1000,
        mux_buffer,
        summary_port,
    };
    Ok((spec, cell))
}

/// The normalized echo of a `network.switch` table whose defaults are filled in: it states the
/// cell, whose default is computed, and leaves out the keys that do nothing for the scheduler
/// (they would be refused; the user cannot have written them, since validation refuses them).
pub(super) fn normalize(sw: &mut Value, spec: &SwitchSpec) {
    sw["cell"] = Value::from(format!("{}B", spec.cell));
    let Some(map) = sw.as_object_mut() else { unreachable!("a validated switch table") };
    let scheduler = map["scheduler"].as_str().and_then(Scheduler::from_name);
    for key in scheduler.expect("a validated scheduler").unused_keys() {
        map.remove(*key);
    }
}

fn cell_size(t: &mut Table) -> Result<u32> {
    let cell = t.bytes("cell")?;
    if !(1..=65_535).contains(&cell) {
        let got = t.value("cell")?;
        return Err(error(&t.key_path("cell"), &got, "a cell size from 1 B to 65535 B"));
    }
    Ok(cell as u32)
}

/// A buffer in packets (at least `min`) or unlimited (None); buffers in bytes are refused,
/// since the switch counts packets as the thesis does.
fn packets(t: &mut Table, key: &'static str, min: u64) -> Result<Option<u32>> {
    let expected =
        || format!("a buffer in packets (\"{min}pkt\" or more, or a bare number) or \"unlimited\"");
    match t.buffer(key) {
        Ok(BufferLimit::Packets(n)) if n >= min && n <= u32::MAX as u64 => Ok(Some(n as u32)),
        Ok(BufferLimit::Unlimited) => Ok(None),
        _ => Err(error(&t.key_path(key), &t.value(key)?, &expected())),
    }
}

fn read_load(t: &mut Table, n: usize) -> Result<Load> {
    let v = t.value("load")?;
    let path = t.key_path("load");
    let expected = format!(
        "\"uniform\", \"diagonal\", or {n} rows of {n} non-negative weights, each row with a positive sum"
    );
    match &v {
        Value::String(s) if s == "uniform" => Ok(Load::Uniform),
        Value::String(s) if s == "diagonal" => Ok(Load::Diagonal),
        Value::Array(rows) if rows.len() == n => {
            let mut m = Vec::with_capacity(n * n);
            for (i, row) in rows.iter().enumerate() {
                let weights = row.as_array().filter(|r| r.len() == n);
                let weights: Option<Vec<f64>> = weights.and_then(|r| {
                    r.iter().map(|w| w.as_f64().filter(|x| x.is_finite() && *x >= 0.0)).collect()
                });
                match weights {
                    Some(w) if w.iter().sum::<f64>() > 0.0 => m.extend(w),
                    _ => {
                        return Err(error(
                            &format!("{path}.{i}"),
                            row,
                            &format!("{n} non-negative weights, not all 0"),
                        ))
                    }
                }
            }
            Ok(Load::Matrix(m))
        }
        _ => Err(error(&path, &v, &expected)),
    }
}

/// How many flows a long-lived entry puts on each output (`flows_per_output`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerOutput {
    Count(u32),
    /// Thesis eq. 3.1: as many as fill the output at their maximum window.
    Eq31,
}

/// Reads a traffic entry's `flows_per_output`, if given.
pub fn read_per_output(t: &mut Table, kind: TrafficKind, max: u64) -> Result<Option<PerOutput>> {
    let Some(v) = t.raw("flows_per_output") else { return Ok(None) };
    let path = t.key_path("flows_per_output");
    if kind != TrafficKind::LongLived {
        return Err(error(&path, v, "no `flows_per_output` on this kind: only long_lived entries take it"));
    }
    if t.present("flows") {
        let expected = "either `flows` (in all) or `flows_per_output`, not both";
        return Err(error(&path, v, expected));
    }
    match v {
        Value::String(s) if s == "eq3.1" => Ok(Some(PerOutput::Eq31)),
        _ => match v.as_u64().filter(|&x| (1..=max).contains(&x)) {
            Some(x) => Ok(Some(PerOutput::Count(x as u32))),
            None => Err(error(&path, v, &format!("a whole number from 1 to {max}, or \"eq3.1\""))),
        },
    }
}

/// The most a flow sends per `rtt`, bytes on the wire: its window, or what its access link
/// carries in one RTT if that is less (a source's maximum rate is W_max/RTT only while its
/// access link is faster; thesis §2.1.3; [`super::LinkFacts`]'s W_max too). The thesis
/// baseline, 64 × 1000 B per 100 ms on 25 Mb/s, is window-limited.
pub fn max_per_rtt(window_bytes: u64, access: Rate, rtt: Time) -> u64 {
    let carried = access.bits_per_s() as u128 * rtt.0 as u128 / (8 * crate::units::PS_PER_S as u128);
    window_bytes.min(carried.min(u64::MAX as u128) as u64)
}

/// The mean of uniform RTTs, as eq. 3.1 takes it.
pub fn mean_rtt(rtt: Range<Time>) -> Time {
    Time((rtt.lo.0 + rtt.hi.0) / 2)
}

/// Thesis eq. 3.1, N·W_max/RTT = C: the flows that fill a link of rate `rate` when each
/// sends its whole window of `window_bytes` (on the wire) every `rtt`, rounded up so that the
/// offered load is at least 100 %. 2.5 Gb/s, 100 ms and 64 × 1000 B give 489 ("about 490").
pub fn eq31_flows(rate: Rate, rtt: Time, window_bytes: u64) -> u64 {
    let bits = rate.bits_per_s() as u128 * rtt.0 as u128;
    let per_flow = 8 * window_bytes.max(1) as u128 * crate::units::PS_PER_S as u128;
    bits.div_ceil(per_flow).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq31_gives_the_thesis_490_flows() {
        assert_eq!(eq31_flows(Rate::bps(2_500_000_000), Time::from_ms(100), 64 * 1000), 489);
        // Exact division is not rounded up.
        assert_eq!(eq31_flows(Rate::mbps(8), Time::from_ms(100), 1000), 100);
        // The thesis's 25 Mb/s access carries 312,500 B per 100 ms: the window binds. Scaled to
        // 2.5 Mb/s (M = 100 at 250 Mb/s) the access link binds: 31,250 B, 100 flows.
        let rtt = Time::from_ms(100);
        assert_eq!(max_per_rtt(64_000, Rate::mbps(25), rtt), 64_000);
        assert_eq!(max_per_rtt(64_000, Rate::bps(2_500_000), rtt), 31_250);
        assert_eq!(eq31_flows(Rate::mbps(250), rtt, 31_250), 100);
    }

    #[test]
    fn diagonal_rows_send_two_thirds_to_the_next_output() {
        assert_eq!(Load::Diagonal.row(3, 4), vec![2.0, 1.0, 0.0, 0.0]);
        assert_eq!(Load::Diagonal.row(0, 2), vec![1.0, 2.0]);
        assert_eq!(Load::Diagonal.row(0, 1), vec![3.0]);
    }
}
