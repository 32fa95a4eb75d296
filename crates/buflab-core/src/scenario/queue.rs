//! The queue discipline of a bottleneck or hop table: the `queue` key and the disciplines'
//! own keys (`red_*`).
//!
//! Read first: [`super::reader`] (typed key access, errors) and [`crate::queue::kinds`] (the
//! disciplines, each describing its own parameters). Owns [`QueueSpec`] and `read_queue`,
//! the one function that reads a table's discipline, for every discipline alike, plus the two
//! things the rest of the scenario asks of a discipline once it is read: the typical packet
//! (`set_typical_packet`) and the normalized echo of a bottleneck table (`normalize`).
//! Must not know any one discipline, which table it reads (bottleneck or hop), the topology or
//! the traffic: what it inherits and the link's buffer are passed in.

use serde_json::Value;

use buflab_queue::describe::Described;

use super::reader::{error, Result, Table};
use crate::queue::{kinds, ParamKind, Values};
use crate::units::BufferLimit;

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
}

impl QueueSpec {
    /// Drop-tail, which has no parameters.
    pub fn drop_tail() -> QueueSpec {
        QueueSpec { name: crate::queue::drop_tail::DropTail::NAME, values: Values::new(), packet: 0 }
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
    (kind.check)(&values, buffer).map_err(|e| {
        let got = match e.got {
            buflab_queue::describe::Value::Number(x) => Value::from(x),
            buflab_queue::describe::Value::Bool(b) => Value::from(b),
        };
        error(&t.key_path(e.key), &got, &e.expected)
    })?;
    Ok(QueueSpec { name, values, packet: 0 })
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
        ParamKind::Bool => V::Bool(t.boolean(key)?),
    })
}

/// Gives a discipline the typical packet of the traffic (wire bytes).
pub(super) fn set_typical_packet(queue: &mut QueueSpec, packet: u32) {
    queue.packet = packet;
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
        assert!(with(json!({ "queue": "codel" }))
            .starts_with("network.bottleneck.queue: got \"codel\"; expected one of \"droptail\", \"red\""));
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
}
