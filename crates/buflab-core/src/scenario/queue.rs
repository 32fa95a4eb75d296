//! The queue discipline of a bottleneck or hop table: the `queue` key and the disciplines'
//! own keys (`red_*`, `optical_*`).
//!
//! Read first: [`super::reader`] (typed key access, errors) and [`crate::queue::kinds`] (the
//! disciplines, each describing its own parameters). Owns [`QueueSpec`] and `read_queue`,
//! the one function that reads a table's discipline, for every discipline alike, plus the
//! things the rest of the scenario asks of a discipline once it is read: the typical packet
//! (`set_typical_packet`), the check against the traffic that crosses its link
//! (`check_traffic`) and the normalized echo of a bottleneck table (`normalize`).
//! Must not know any one discipline, which table it reads (bottleneck or hop), the topology or
//! the traffic: what it inherits and the link's buffer are passed in.

use serde_json::Value;

use buflab_queue::describe::Described;

use super::reader::{error, Result, ScenarioError, Table};
use crate::queue::{kinds, ParamKind, Values};
use crate::units::BufferLimit;
use buflab_queue::describe::{PacketSource, ParamError};

/// A link's queue discipline as the scenario gives it (`network.bottleneck.queue`).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSpec {
    /// The discipline's name, one of [`crate::queue::kinds`].
    pub name: &'static str,
    /// The values of its parameters.
    pub values: Values,
    /// The largest data packet of the traffic, bytes on the wire (filled in once the traffic
    /// is read): RED's idle rule counts idle time in transmissions of it.
    pub packet: u32,
    /// The largest data packet that crosses this link (filled in likewise; `packet` if none
    /// does): an optical FIFO's slot holds it.
    pub largest: u32,
    /// The table it was read from (`network.bottleneck`, `network.hop.1`), for errors found
    /// once the traffic is read.
    pub path: String,
}

impl QueueSpec {
    /// Drop-tail, which has no parameters.
    pub fn drop_tail() -> QueueSpec {
        QueueSpec {
            name: crate::queue::drop_tail::DropTail::NAME,
            values: Values::new(),
            packet: 0,
            largest: 0,
            path: String::new(),
        }
    }
}

/// The queue discipline of a bottleneck or hop table: `queue` and the chosen discipline's own
/// keys, checked against the link's `buffer`. A hop takes each key it does not give from
/// `inherit` (the bottleneck's discipline and values); the bottleneck takes the documented
/// defaults. Another discipline's keys are an error: they would do nothing.
pub(super) fn read_queue(
    t: &mut Table,
    inherit: Option<&QueueSpec>,
    buffer: BufferLimit,
) -> Result<QueueSpec> {
    let kinds = kinds();
    let name = match inherit {
        Some(base) if !t.given("queue") => base.name,
        _ => {
            let names: Vec<&'static str> = kinds.iter().map(|k| k.name).collect();
            t.choice("queue", &names)?
        }
    };
    let kind = kinds.iter().find(|k| k.name == name).expect("a listed discipline");
    for other in kinds.iter().filter(|k| k.name != name) {
        for p in other.params {
            if let Some(v) = t.raw(p.key) {
                let expected = format!(
                    "no {} setting with queue = \"{name}\" (set queue = \"{}\" to use it)",
                    other.label, other.name
                );
                return Err(error(&t.key_path(p.key), v, &expected));
            }
        }
    }
    let mut values = Values::new();
    for p in kind.params {
        let given = t.given(p.key);
        let value = match inherit {
            _ if given => read_param(t, p.key, p.kind)?,
            Some(base) if base.values.has(p.key) => base.values.value(p.key),
            _ => p.default_value(),
        };
        values.set(p.key, value, given);
    }
    (kind.check)(&values, buffer).map_err(|e| param_error(t, kind, e))?;
    Ok(QueueSpec { name, values, packet: 0, largest: 0, path: t.path().to_string() })
}

/// A discipline's check's error as the scenario's: under the table's path, with the value
/// as the user wrote it when the key is not one of the discipline's own (the `buffer`), and
/// whole numbers written whole for a count.
fn param_error(
    t: &mut Table,
    kind: &crate::queue::Kind<crate::link::Waiting>,
    e: ParamError,
) -> ScenarioError {
    use buflab_queue::describe::Value as V;
    let param = kind.params.iter().find(|p| p.key == e.key);
    let got = match (param, e.got) {
        (None, _) if t.present(e.key) => t.raw(e.key).cloned().unwrap_or(Value::Null),
        (Some(p), V::Number(x)) if p.kind == ParamKind::Count => Value::from(x as u64),
        (_, V::Number(x)) if x.is_infinite() => Value::from("unlimited"),
        (_, V::Number(x)) => Value::from(x),
        (_, V::Bool(b)) => Value::from(b),
        // A quantity with a unit: as the user wrote it, or as a scenario writes the default.
        (_, got) => t.raw(e.key).cloned().unwrap_or_else(|| Value::from(got.to_string())),
    };
    error(&t.key_path(e.key), &got, &e.expected)
}

/// One parameter's value, checked against its kind.
fn read_param(t: &mut Table, key: &'static str, kind: ParamKind) -> Result<buflab_queue::describe::Value> {
    use buflab_queue::describe::Value as V;
    Ok(match kind {
        ParamKind::Packets => {
            let v = t.value(key)?;
            let x = v
                .as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| error(&t.key_path(key), &v, "a number of packets, at least 0"))?;
            V::Number(x)
        }
        ParamKind::PositiveFraction => V::Number(t.positive_fraction(key)?),
        ParamKind::Count => V::Number(t.uint(key, 1, u32::MAX as u64)? as f64),
        ParamKind::Bool => V::Bool(t.boolean(key)?),
        ParamKind::Positive => {
            let v = t.value(key)?;
            let x = v
                .as_f64()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| error(&t.key_path(key), &v, "a number above 0"))?;
            V::Number(x)
        }
        // Quantities with a unit, written as strings; a queue length may be a bare number of
        // packets, as `buffer` may.
        ParamKind::Time | ParamKind::Bytes | ParamKind::Backlog => {
            let v = t.value(key)?;
            let text = match &v {
                Value::String(s) => s.clone(),
                Value::Number(n) if kind == ParamKind::Backlog && n.is_u64() => n.to_string(),
                _ => String::new(),
            };
            kind.parse(&text).map_err(|e| error(&t.key_path(key), &v, &e))?
        }
    })
}

/// Gives a discipline the typical packet of the traffic (wire bytes).
pub(super) fn set_typical_packet(queue: &mut QueueSpec, packet: u32) {
    queue.packet = packet;
}

/// Checks a link's discipline against `sources`, the traffic entries whose packets cross the
/// link, and gives it the largest of their packets.
pub(super) fn check_traffic(queue: &mut QueueSpec, sources: &[PacketSource]) -> Result<()> {
    queue.largest = sources.iter().map(|s| s.size).max().unwrap_or(queue.packet);
    let kinds = kinds();
    let kind = kinds.iter().find(|k| k.name == queue.name).expect("a listed discipline");
    (kind.check_traffic)(&queue.values, sources).map_err(|e| {
        let got = match e.got {
            buflab_queue::describe::Value::Number(x) => Value::from(x),
            buflab_queue::describe::Value::Bool(b) => Value::from(b),
            other => Value::from(other.to_string()),
        };
        let key = if queue.path.is_empty() { e.key.to_string() } else { format!("{}.{}", queue.path, e.key) };
        error(&key, &got, &e.expected)
    })
}

/// The normalized echo of a bottleneck table whose defaults are filled in: the keys of the
/// disciplines not chosen do nothing, and would be refused, so they are left out.
pub(super) fn normalize(table: &mut Value) {
    let chosen = table["queue"].as_str().unwrap_or_default().to_string();
    if let Some(map) = table.as_object_mut() {
        for kind in kinds().iter().filter(|k| k.name != chosen) {
            for p in kind.params {
                map.remove(p.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::queue::red::RedConfig;
    use crate::scenario::tests::{base, err};
    use crate::scenario::{Scenario, Traffic};
    use crate::units::Time;

    #[test]
    fn red_reads_ns2_defaults_and_the_typical_packet() {
        let mut v = base();
        v["network"]["bottleneck"]["queue"] = json!("red");
        v["traffic"] = json!([
            { "kind": "long_lived", "ecn": true },
            { "kind": "long_lived", "packet": "1500B" },
        ]);
        let s = Scenario::from_value(&v).unwrap();
        let red = |q: &QueueSpec| {
            assert_eq!(q.name, "red");
            RedConfig::from_values(&q.values, q.packet)
        };
        let expected = RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            gentle: true,
            ecn: false,
            packet: 1500,
        };
        assert_eq!(red(&s.network.hops[0].queue), expected);
        let Traffic::LongLived(l) = &s.traffic[0] else { panic!() };
        assert!(l.tcp.ecn);
        // Drop-tail stays the default, and its normalized tree has no RED keys (which it
        // would refuse); a RED one has them all.
        assert_eq!(Scenario::from_value(&base()).unwrap().network.hops[0].queue.name, "droptail");
        let n = Scenario::normalized(&base()).unwrap();
        assert!(n["network"]["bottleneck"].get("red_min_th").is_none());
        let n = Scenario::normalized(&v).unwrap();
        assert_eq!(n["network"]["bottleneck"]["red_max_p"], json!(0.1));
        assert_eq!(red(&Scenario::from_value(&n).unwrap().network.hops[0].queue), expected);
    }

    #[test]
    fn bad_red_keys_name_key_value_and_expectation() {
        let with = |pairs: Value| {
            let mut v = base();
            for (k, x) in pairs.as_object().unwrap() {
                v["network"]["bottleneck"][k] = x.clone();
            }
            err(v)
        };
        assert_eq!(
            with(json!({ "red_min_th": 3 })),
            "network.bottleneck.red_min_th: got 3; expected no RED setting with queue = \"droptail\" (set queue = \"red\" to use it)"
        );
        assert!(with(json!({ "queue": "sfq" }))
            .starts_with("network.bottleneck.queue: got \"sfq\"; expected one of \"droptail\", \"red\""));
        assert_eq!(
            with(json!({ "queue": "red", "red_min_th": 20, "red_max_th": 10 })),
            "network.bottleneck.red_max_th: got 10.0; expected a number of packets above red_min_th (20)"
        );
        // Only min_th given, above the default max_th: the error names the key given.
        assert_eq!(
            with(json!({ "queue": "red", "red_min_th": 15 })),
            "network.bottleneck.red_min_th: got 15.0; expected a number of packets below red_max_th (15)"
        );
        assert_eq!(
            with(json!({ "queue": "red", "buffer": "10pkt" })),
            "network.bottleneck.red_max_th: got 15.0; expected at most the buffer (10 packets), which stays the hard limit"
        );
        assert_eq!(
            with(json!({ "queue": "red", "red_max_p": 0 })),
            "network.bottleneck.red_max_p: got 0; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "queue": "red", "red_max_p": 1.5 })),
            "network.bottleneck.red_max_p: got 1.5; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "queue": "red", "red_weight": -0.1 })),
            "network.bottleneck.red_weight: got -0.1; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "queue": "red", "red_min_th": "5pkt" })),
            "network.bottleneck.red_min_th: got \"5pkt\"; expected a number of packets, at least 0"
        );
        assert_eq!(
            with(json!({ "queue": "red", "red_maxth": 5 })),
            "network.bottleneck.red_maxth: unknown key; did you mean `red_max_th`?"
        );
    }

    #[test]
    fn parking_lot_hops_take_the_bottleneck_queue_unless_they_set_their_own() {
        let mut v = base();
        v["network"]["topology"] = json!("parking_lot");
        v["network"]["hops"] = json!(3);
        v["network"]["bottleneck"]["queue"] = json!("red");
        v["network"]["bottleneck"]["red_max_th"] = json!(30);
        v["network"]["hop"] = json!([
            { "red_min_th": 10 },
            { "queue": "droptail" },
        ]);
        let s = Scenario::from_value(&v).unwrap();
        let red = |q: &QueueSpec| {
            assert_eq!(q.name, "red");
            (q.values.number("red_min_th"), q.values.number("red_max_th"))
        };
        assert_eq!(red(&s.network.hops[0].queue), (10.0, 30.0));
        assert_eq!(s.network.hops[1].queue.name, "droptail");
        assert_eq!(red(&s.network.hops[2].queue), (5.0, 30.0));
        // A hop's RED key on a drop-tail hop, and a threshold above the hop's own buffer.
        v["network"]["hop"] = json!([{}, { "queue": "droptail", "red_ecn": true }]);
        assert!(err(v.clone()).starts_with("network.hop.1.red_ecn: got true; expected no RED setting"));
        v["network"]["hop"] = json!([{ "buffer": "20pkt" }]);
        assert_eq!(
            err(v),
            "network.hop.0.red_max_th: got 30.0; expected at most the buffer (20 packets), which stays the hard limit"
        );
    }

    /// The AQMs' keys with units (times, sizes, queue lengths) read as scenario strings, their
    /// defaults echoed as a user writes them, and each bad value one line naming the key, the
    /// value as written and what was expected: a target not below the interval, a quantum
    /// smaller than a packet, a step threshold not below the buffer (the three).
    #[test]
    fn aqm_keys_read_their_units_echo_their_defaults_and_refuse_bad_values() {
        let with = |pairs: Value| {
            let mut v = base();
            for (k, x) in pairs.as_object().unwrap() {
                v["network"]["bottleneck"][k] = x.clone();
            }
            v
        };
        let s = Scenario::from_value(&with(json!({ "queue": "codel", "codel_target": "2ms" }))).unwrap();
        let q = &s.network.hops[0].queue;
        assert_eq!(
            (q.values.time("codel_target"), q.values.time("codel_interval")),
            (Time::from_ms(2), Time::from_ms(100))
        );
        let n = Scenario::normalized(&with(json!({ "queue": "fq_codel" }))).unwrap();
        let b = &n["network"]["bottleneck"];
        assert_eq!(
            (&b["fq_codel_quantum"], &b["fq_codel_target"], &b["fq_codel_flows"]),
            (&json!("1514B"), &json!("5ms"), &json!(1024))
        );
        assert!(
            b.get("codel_target").is_none() && b.get("red_min_th").is_none(),
            "other disciplines' keys left out"
        );
        assert_eq!(
            Scenario::from_value(&n).unwrap().network.hops[0].queue.values.bytes("fq_codel_memory_limit"),
            32_000_000
        );
        let step = Scenario::from_value(&with(json!({ "queue": "step", "mark_threshold": 20 }))).unwrap();
        assert_eq!(step.network.hops[0].queue.values.backlog("mark_threshold"), BufferLimit::Packets(20));
        let err = |pairs: Value| err(with(pairs));
        assert_eq!(
            err(json!({ "queue": "codel", "codel_target": "100ms" })),
            "network.bottleneck.codel_target: got \"100ms\"; expected a target below codel_interval (100ms); RFC 8289 §4.3 suggests 5–10 % of it"
        );
        assert_eq!(
            err(json!({ "queue": "fq_codel", "fq_codel_interval": "4ms" })),
            "network.bottleneck.fq_codel_interval: got \"4ms\"; expected an interval above fq_codel_target (5ms); RFC 8289 §4.3 suggests 10–20 times it"
        );
        assert_eq!(
            err(json!({ "queue": "fq_codel", "fq_codel_quantum": "500B" })),
            "network.bottleneck.fq_codel_quantum: got \"500B\"; expected at least the largest packet that crosses this link (traffic.0 sends 1000-B packets)"
        );
        assert_eq!(
            err(json!({ "queue": "step", "mark_threshold": "125pkt" })),
            "network.bottleneck.mark_threshold: got \"125pkt\"; expected a threshold below the buffer (125 packets), which stays the hard limit: a queue that never reaches K never marks"
        );
        assert_eq!(
            err(json!({ "queue": "codel", "codel_target": 5 })),
            "network.bottleneck.codel_target: got 5; expected a non-negative duration such as \"100ms\", \"12us\" or \"60s\""
        );
        assert_eq!(
            err(json!({ "queue": "pie", "pie_target": "0ms" })),
            "network.bottleneck.pie_target: got \"0ms\"; expected a duration above 0, such as \"5ms\""
        );
        assert_eq!(
            err(json!({ "queue": "pie", "pie_beta": -1 })),
            "network.bottleneck.pie_beta: got -1; expected a number above 0"
        );
        assert_eq!(
            err(json!({ "queue": "step", "mark_threshold": "lots" })),
            "network.bottleneck.mark_threshold: got \"lots\"; expected a queue length above 0 in packets (\"20pkt\") or bytes (\"30KB\")"
        );
        assert_eq!(
            err(json!({ "pie_ecn": true })),
            "network.bottleneck.pie_ecn: got true; expected no PIE setting with queue = \"droptail\" (set queue = \"pie\" to use it)"
        );
    }

    /// The optical FIFO's keys (thesis ch. 6): its size is the buffer, N − 1 packets with N a
    /// power of two; K a power of two up to N/2; packets of one size through its link unless
    /// padded. Each bad value is one line naming the key, the value and what was expected.
    #[test]
    fn optical_fifo_keys_are_checked_against_the_buffer_and_the_traffic() {
        let with = |pairs: Value, traffic: Value| {
            let mut v = base();
            v["network"]["bottleneck"]["queue"] = json!("optical_fifo");
            for (k, x) in pairs.as_object().unwrap() {
                v["network"]["bottleneck"][k] = x.clone();
            }
            v["traffic"] = traffic;
            v
        };
        let long = json!([{ "kind": "long_lived", "flows": 10 }]);
        let ok =
            Scenario::from_value(&with(json!({ "buffer": "63pkt", "optical_k": 4 }), long.clone())).unwrap();
        let q = &ok.network.hops[0].queue;
        assert_eq!((q.name, q.values.number("optical_k"), q.largest), ("optical_fifo", 4.0, 1000));
        assert_eq!(
            err(with(json!({ "buffer": "20pkt" }), long.clone())),
            "network.bottleneck.buffer: got \"20pkt\"; expected N − 1 packets with N a power of two for queue = \"optical_fifo\" (thesis §6.3): 15pkt or 31pkt, the nearest"
        );
        assert_eq!(
            err(with(json!({ "buffer": "15000B" }), long.clone())),
            "network.bottleneck.buffer: got \"15000B\"; expected a buffer in packets for queue = \"optical_fifo\": N − 1 with N a power of two (15pkt, 31pkt, 63pkt, …)"
        );
        assert_eq!(
            err(with(json!({ "buffer": "15pkt", "optical_k": 3 }), long.clone())),
            "network.bottleneck.optical_k: got 3; expected a power of two from 1 to N/2 = 8 (thesis Thm 6.2; buffer = N − 1 = 15pkt)"
        );
        assert_eq!(
            err(with(json!({ "buffer": "15pkt", "optical_k": 16 }), long.clone())),
            "network.bottleneck.optical_k: got 16; expected a power of two from 1 to N/2 = 8 (thesis Thm 6.2; buffer = N − 1 = 15pkt)"
        );
        assert!(err(with(json!({ "buffer": "15pkt", "optical_k": 0 }), long.clone()))
            .starts_with("network.bottleneck.optical_k: got 0; expected a whole number from 1"));
        let mut other = with(json!({ "buffer": "15pkt", "optical_pad": true }), long.clone());
        other["network"]["bottleneck"]["queue"] = json!("droptail");
        assert_eq!(
            err(other),
            "network.bottleneck.optical_pad: got true; expected no optical FIFO setting with queue = \"droptail\" (set queue = \"optical_fifo\" to use it)"
        );
        let two = json!([{ "kind": "long_lived", "flows": 5 }, { "kind": "long_lived", "flows": 5, "packet": "1500B" }]);
        assert_eq!(
            err(with(json!({ "buffer": "15pkt" }), two.clone())),
            "network.bottleneck.optical_pad: got false; expected true, or traffic of one packet size: traffic.0 sends 1000-B packets through this link and traffic.1 1500-B ones, and an optical FIFO's slots hold packets of one size (thesis §6.2)"
        );
        let padded =
            Scenario::from_value(&with(json!({ "buffer": "15pkt", "optical_pad": true }), two)).unwrap();
        assert_eq!(padded.network.hops[0].queue.largest, 1500, "the slot holds the largest");
        let downloads = json!([{ "kind": "closed_loop", "users": 10 }]);
        assert!(err(with(json!({ "buffer": "15pkt" }), downloads))
            .starts_with("network.bottleneck.optical_pad: got false; expected true, or traffic of one packet size: traffic.0's downloads end in shorter segments"));
        // Cross traffic leaves by its own link: another size there is no concern of this one.
        let mut cross = with(
            json!({ "buffer": "15pkt" }),
            json!([
                { "kind": "long_lived", "flows": 5 },
                { "kind": "long_lived", "flows": 5, "packet": "1500B", "path": "cross" },
            ]),
        );
        cross["network"]["access"] = json!({ "machines": 2 });
        assert_eq!(Scenario::from_value(&cross).unwrap().network.hops[0].queue.largest, 1000);
        // The auto-sizer searches a limit; an optical FIFO's size is fiber.
        let mut auto = with(json!({ "buffer": "15pkt" }), long);
        auto["autosize"] = json!({ "target_utilization": 0.9 });
        assert!(err(auto).starts_with(
            "autosize.target_utilization: got 0.9; expected no auto-sizer with queue = \"optical_fifo\""
        ));
    }
}
