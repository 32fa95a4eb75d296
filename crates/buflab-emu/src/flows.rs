//! The datapath's view of the scenario's flows (its `--flows` file): each flow's RTT, the
//! machine and class it sends from, whether it is cross traffic, and the links in front of the
//! bottleneck those need, built as the simulator's dumbbell builds them.
//!
//! Read first: [`crate::pipeline`] (the links) and [`crate::address`] (how a frame's flow is
//! known). The file is JSON, written by the front end from the simulator's own draws:
//!
//! ```json
//! { "rtt_s": [0.1, 0.12], "machine": [0, 1], "class": [0, 0], "cross": [false, false],
//!   "access": { "rate": "100Mbps", "buffer": "5000pkt", "machines": 2, "classes": 1,
//!               "nic": "1Gbps" },
//!   "cross_link": { "rate": "1Gbps", "buffer": "1000pkt" }, "traffic": [0, 0] }
//! ```
//!
//! (`traffic`, each flow's traffic entry, is optional: bumps classifying by port read it.)
//!
//! With `machines = 0` every flow has an access link of its own at the access rate behind the
//! access buffer (the simulator's per-flow access links). With machines, flow i sends from
//! machine `machine[i]` through the class queue `class[i]` of that machine (the PSPacer role:
//! a queue at the access rate behind the access buffer, shared by the class's flows) and then
//! the machine's NIC link at the NIC rate; cross traffic skips the class queues (it is not
//! paced: IMC §3.1.2), shares only the NIC link with the machine's main traffic, and leaves
//! by the cross link instead of the bottleneck. Frames of no flow (none is expected: the hosts'
//! neighbours are static) skip all of it.

use buflab_base::units::{parse_buffer, parse_rate, BufferLimit, Rate, Time};
use buflab_queue::drop_tail::DropTail;
use buflab_queue::Fifo;
use serde_json::Value;

use crate::bottleneck::Bottleneck;
use crate::pipeline::Pipeline;
use crate::pool::Frame;

#[derive(Debug)]
pub struct Flows {
    pub rtts: Vec<Time>,
    /// The machine each flow sends from: which of the senders' interfaces its frames come
    /// from and its returning frames go back to.
    pub machine: Vec<u32>,
    pub machines: usize,
    /// Each flow's route through the links in front of the bottleneck.
    pub route: Vec<u32>,
    /// Per route: it ends at the bottleneck (else at the cross link, and goes straight on to
    /// its delay line).
    pub through_bottleneck: Vec<bool>,
    /// Each flow's traffic entry (`traffic`, optional: 0 for all): the destination port a
    /// bump classifying by port sees, as the simulator's flows have one server per entry.
    pub traffic: Vec<u32>,
    /// Flows send from machines (class queues and NIC links), not from links of their own.
    pub machines_given: bool,
}

fn numbers<T>(
    v: &Value,
    key: &str,
    n: Option<usize>,
    read: impl Fn(&Value) -> Option<T>,
) -> Result<Vec<T>, String> {
    let list = v.get(key).and_then(Value::as_array).ok_or(format!("--flows: {key}: expected an array"))?;
    if n.is_some_and(|n| n != list.len()) {
        return Err(format!("--flows: {key}: expected {} entries, one per flow", n.unwrap_or(0)));
    }
    list.iter().map(&read).collect::<Option<Vec<T>>>().ok_or(format!("--flows: {key}: expected numbers"))
}

fn text<'a>(v: &'a Value, table: &str, key: &str) -> Result<&'a str, String> {
    v.get(table)
        .and_then(|t| t.get(key))
        .and_then(Value::as_str)
        .ok_or(format!("--flows: {table}.{key}: expected a string"))
}

fn rate(v: &Value, table: &str, key: &str) -> Result<Rate, String> {
    let t = text(v, table, key)?;
    parse_rate(t).map_err(|e| format!("--flows: {table}.{key}: got {t:?}; {}", e.0))
}

fn buffer(v: &Value, table: &str, key: &str) -> Result<BufferLimit, String> {
    let t = text(v, table, key)?;
    parse_buffer(t).map_err(|e| format!("--flows: {table}.{key}: got {t:?}; {}", e.0))
}

/// A FIFO link at `rate` behind `limit`.
fn fifo(rate: Rate, limit: BufferLimit) -> Bottleneck {
    Bottleneck::new(rate, limit, Box::new(Fifo::<DropTail, Frame>::new(DropTail)))
}

impl Flows {
    /// Reads the flows file's JSON and builds the links in front of the bottleneck in
    /// `pipeline`.
    pub fn read(v: &Value, pipeline: &mut Pipeline) -> Result<Flows, String> {
        let rtts: Vec<Time> = numbers(v, "rtt_s", None, |x| {
            x.as_f64().filter(|s| s.is_finite() && *s >= 0.0).map(|s| Time((s * 1e12).round() as u64))
        })?;
        let n = Some(rtts.len());
        let count = |x: &Value| x.as_u64().map(|m| m as u32);
        let machine = numbers(v, "machine", n, count)?;
        let class = numbers(v, "class", n, count)?;
        let cross = numbers(v, "cross", n, Value::as_bool)?;
        let access_rate = rate(v, "access", "rate")?;
        let access_buffer = buffer(v, "access", "buffer")?;
        let count_of = |key: &str| {
            v.get("access")
                .and_then(|a| a.get(key))
                .and_then(Value::as_u64)
                .ok_or(format!("--flows: access.{key}: expected a whole number"))
        };
        let (machines, classes) = (count_of("machines")? as usize, count_of("classes")?.max(1) as usize);
        let mut through_bottleneck = Vec::new();
        let route = if machines == 0 {
            if cross.iter().any(|&c| c) {
                return Err("--flows: cross traffic needs access.machines > 0".into());
            }
            // A link of its own per flow, as the simulator's forward access link.
            (0..rtts.len())
                .map(|_| {
                    let l = pipeline.link(fifo(access_rate, access_buffer));
                    through_bottleneck.push(true);
                    pipeline.route(vec![l])
                })
                .collect()
        } else {
            let placed = |i: usize| (machine[i] as usize) < machines && (class[i] as usize) < classes;
            if let Some(bad) = (0..rtts.len()).find(|&i| !placed(i)) {
                return Err(format!(
                    "--flows: flow {bad}: machine or class beyond access.machines, access.classes"
                ));
            }
            let nic = rate(v, "access", "nic")?;
            let class_links: Vec<Vec<u32>> = (0..machines)
                .map(|_| (0..classes).map(|_| pipeline.link(fifo(access_rate, access_buffer))).collect())
                .collect();
            let nics: Vec<u32> =
                (0..machines).map(|_| pipeline.link(fifo(nic, BufferLimit::Unlimited))).collect();
            let cross_link = if cross.iter().any(|&c| c) {
                Some(pipeline.link(fifo(rate(v, "cross_link", "rate")?, buffer(v, "cross_link", "buffer")?)))
            } else {
                None
            };
            // One route per (machine, class) of main traffic, then one per machine of cross.
            let main: Vec<Vec<u32>> = (0..machines)
                .map(|m| {
                    (0..classes)
                        .map(|c| {
                            through_bottleneck.push(true);
                            pipeline.route(vec![class_links[m][c], nics[m]])
                        })
                        .collect()
                })
                .collect();
            let crossing: Vec<u32> = match cross_link {
                None => Vec::new(),
                Some(out) => (0..machines)
                    .map(|m| {
                        through_bottleneck.push(false);
                        pipeline.route(vec![nics[m], out])
                    })
                    .collect(),
            };
            (0..rtts.len())
                .map(|i| {
                    let (m, c) = (machine[i] as usize, class[i] as usize);
                    if cross[i] {
                        crossing[m]
                    } else {
                        main[m][c]
                    }
                })
                .collect()
        };
        let machine = if machines == 0 { vec![0; rtts.len()] } else { machine };
        let traffic = match v.get("traffic") {
            None => vec![0; rtts.len()],
            Some(_) => numbers(v, "traffic", n, count)?,
        };
        Ok(Flows {
            rtts,
            machine,
            machines: machines.max(1),
            route,
            through_bottleneck,
            traffic,
            machines_given: machines > 0,
        })
    }

    pub fn len(&self) -> usize {
        self.rtts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rtts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn machines_and_classes_give_each_flow_its_class_queue_and_nic() {
        // Two machines of two classes: flows 0..4 take machines in turn, then classes; flow 4
        // is cross traffic on machine 0 and leaves by the cross link.
        let v = json!({
            "rtt_s": [0.1, 0.1, 0.1, 0.1, 0.1], "machine": [0, 1, 0, 1, 0], "class": [0, 0, 1, 1, 0],
            "cross": [false, false, false, false, true],
            "access": { "rate": "10Mbps", "buffer": "5000pkt", "machines": 2, "classes": 2, "nic": "20Mbps" },
            "cross_link": { "rate": "10Mbps", "buffer": "100pkt" },
        });
        let mut p = Pipeline::default();
        let flows = Flows::read(&v, &mut p).unwrap();
        assert_eq!(flows.route, vec![0, 2, 1, 3, 4]);
        assert_eq!(flows.through_bottleneck, vec![true, true, true, true, false, false]);
        // Flows 0 and 4 share machine 0's NIC (20 Mb/s: 1250 B in 0.5 ms) after flow 0's class
        // queue (10 Mb/s: 1 ms); flow 4 goes straight to it, then through the cross link.
        let (mut done, mut dropped) = (Vec::new(), Vec::new());
        let frame = Frame { len: 1250, ..Frame::default() };
        p.enter(Time::ZERO, Frame { slot: 0, ..frame }, flows.route[0], &mut done, &mut dropped);
        p.enter(Time::ZERO, Frame { slot: 4, ..frame }, flows.route[4], &mut done, &mut dropped);
        p.run(Time::from_ms(10), &mut done, &mut dropped);
        let out: Vec<(u64, u32, u32)> =
            done.iter().map(|(t, f)| (t.ps() / 1_000_000, f.slot, f.route)).collect();
        // Both leave at 1.5 ms; the one whose last service began first comes out first.
        assert_eq!(out, vec![(1500, 4, 4), (1500, 0, 0)]);
    }

    #[test]
    fn without_machines_each_flow_has_its_own_access_link() {
        let v = json!({
            "rtt_s": [0.1, 0.2], "machine": [0, 0], "class": [0, 0], "cross": [false, false],
            "access": { "rate": "10Mbps", "buffer": "unlimited", "machines": 0, "classes": 1, "nic": "1Gbps" },
        });
        let mut p = Pipeline::default();
        let flows = Flows::read(&v, &mut p).unwrap();
        assert_eq!((flows.route.clone(), flows.machines), (vec![0, 1], 1));
        let bad = json!({ "rtt_s": [0.1], "machine": [0, 1], "class": [0], "cross": [false], "access": {} });
        assert!(Flows::read(&bad, &mut Pipeline::default())
            .unwrap_err()
            .contains("machine: expected 1 entries"));
    }
}
