//! The queue discipline of a bottleneck or hop table: the `queue` key and the `red_*` keys.
//!
//! Read first: [`super::reader`] (typed key access, errors). Owns [`QueueSpec`] and
//! `read_queue`, the one function that reads a table's discipline, plus the two things the
//! rest of the scenario asks of a discipline once it is read: the typical packet RED's idle
//! rule needs (`set_typical_packet`) and the normalized echo of a bottleneck table
//! (`normalize`). Must not know which table it reads (bottleneck or hop), the topology, or
//! the traffic: what it inherits and the link's buffer are passed in. Kept self-contained so
//! that a registry of disciplines can replace it as one piece.

use serde_json::Value;

use super::reader::{error, Result, Table};
use crate::queue::red::RedConfig;
use crate::units::BufferLimit;

/// A bottleneck's queue discipline (`network.bottleneck.queue`); see [`crate::queue`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueSpec {
    DropTail,
    /// RED; its `packet` is the largest data packet of the traffic (filled in once the
    /// traffic is read).
    Red(RedConfig),
}

/// The RED keys of a bottleneck or hop table, in documentation order.
const RED_KEYS: [&str; 6] = ["red_min_th", "red_max_th", "red_max_p", "red_weight", "red_gentle", "red_ecn"];

/// The queue discipline of a bottleneck or hop table: `queue` and the `red_*` keys, checked
/// against the link's `buffer`. A hop takes each key it does not give from `inherit` (the
/// bottleneck's: whether it is RED, and its RED settings); the bottleneck takes the documented
/// defaults. Returns the discipline and the RED settings read (defaults if drop-tail).
pub(super) fn read_queue(
    t: &mut Table,
    inherit: Option<(bool, RedConfig)>,
    buffer: BufferLimit,
) -> Result<(QueueSpec, RedConfig)> {
    let is_red = match inherit {
        Some((red, _)) if !t.given("queue") => red,
        _ => t.choice("queue", &["droptail", "red"])? == "red",
    };
    if !is_red {
        for key in RED_KEYS {
            if let Some(v) = t.raw(key) {
                let expected = "no RED setting with queue = \"droptail\" (set queue = \"red\" to use it)";
                return Err(error(&t.key_path(key), v, expected));
            }
        }
    }
    let base = inherit.map(|(_, red)| red);
    // A hop's key it does not give is the bottleneck's; otherwise read (or the default).
    fn pick<'a, T>(
        t: &mut Table<'a>,
        key: &'static str,
        base: Option<T>,
        read: impl FnOnce(&mut Table<'a>, &'static str) -> Result<T>,
    ) -> Result<T> {
        match base {
            Some(b) if !t.given(key) => Ok(b),
            _ => read(t, key),
        }
    }
    fn packets(t: &mut Table, key: &'static str) -> Result<f64> {
        let v = t.value(key)?;
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| error(&t.key_path(key), &v, "a number of packets, at least 0"))
    }
    let red = RedConfig {
        min_th: pick(t, "red_min_th", base.map(|b| b.min_th), packets)?,
        max_th: pick(t, "red_max_th", base.map(|b| b.max_th), packets)?,
        max_p: pick(t, "red_max_p", base.map(|b| b.max_p), Table::positive_fraction)?,
        weight: pick(t, "red_weight", base.map(|b| b.weight), Table::positive_fraction)?,
        gentle: pick(t, "red_gentle", base.map(|b| b.gentle), Table::boolean)?,
        ecn: pick(t, "red_ecn", base.map(|b| b.ecn), Table::boolean)?,
        packet: 0,
    };
    if !is_red {
        return Ok((QueueSpec::DropTail, red));
    }
    // The error names the key the user gave (the upper threshold if both or neither).
    let (min, max) = (red.min_th, red.max_th);
    if min >= max {
        return Err(if t.present("red_max_th") || !t.present("red_min_th") {
            let expected = format!("a number of packets above red_min_th ({min})");
            error(&t.key_path("red_max_th"), &Value::from(max), &expected)
        } else {
            let expected = format!("a number of packets below red_max_th ({max})");
            error(&t.key_path("red_min_th"), &Value::from(min), &expected)
        });
    }
    if let BufferLimit::Packets(b) = buffer {
        if max > b as f64 {
            let expected = format!("at most the buffer ({b} packets), which stays the hard limit");
            return Err(error(&t.key_path("red_max_th"), &Value::from(max), &expected));
        }
    }
    Ok((QueueSpec::Red(red), red))
}

/// Gives a RED discipline the typical packet of the traffic (wire bytes): RED's idle rule
/// counts idle time in transmissions of it (see [`crate::queue::red`]).
pub(super) fn set_typical_packet(queue: &mut QueueSpec, packet: u32) {
    if let QueueSpec::Red(red) = queue {
        red.packet = packet;
    }
}

/// The normalized echo of a bottleneck table whose defaults are filled in: the RED keys do
/// nothing for a drop-tail queue, which refuses them, so they are left out.
pub(super) fn normalize(table: &mut Value) {
    if table["queue"] == "droptail" {
        if let Some(map) = table.as_object_mut() {
            for key in RED_KEYS {
                map.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
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
        let expected = RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            gentle: true,
            ecn: false,
            packet: 1500,
        };
        assert_eq!(s.network.hops[0].queue, QueueSpec::Red(expected));
        let Traffic::LongLived(l) = &s.traffic[0] else { panic!() };
        assert!(l.tcp.ecn);
        // Drop-tail stays the default, and its normalized tree has no RED keys (which it
        // would refuse); a RED one has them all.
        assert_eq!(Scenario::from_value(&base()).unwrap().network.hops[0].queue, QueueSpec::DropTail);
        let n = Scenario::normalized(&base()).unwrap();
        assert!(n["network"]["bottleneck"].get("red_min_th").is_none());
        let n = Scenario::normalized(&v).unwrap();
        assert_eq!(n["network"]["bottleneck"]["red_max_p"], json!(0.1));
        assert_eq!(Scenario::from_value(&n).unwrap().network.hops[0].queue, QueueSpec::Red(expected));
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
        let red = |q: QueueSpec| match q {
            QueueSpec::Red(c) => (c.min_th, c.max_th),
            QueueSpec::DropTail => panic!("drop-tail"),
        };
        assert_eq!(red(s.network.hops[0].queue), (10.0, 30.0));
        assert_eq!(s.network.hops[1].queue, QueueSpec::DropTail);
        assert_eq!(red(s.network.hops[2].queue), (5.0, 30.0));
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
