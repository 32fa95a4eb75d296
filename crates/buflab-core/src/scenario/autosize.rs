//! The `autosize` section: the live auto-sizer's settings.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section) and
//! [`crate::autosize`], which owns the auto-sizer and its [`Config`]. Owns the reader of
//! `autosize.*` and the normalized echo of the values it computes; the default first buffer is
//! RTT·C of the summary link, [`LinkFacts::bdp_packets`]. Must not know how the auto-sizer
//! searches or runs.

use serde_json::Value;

use super::facts::LinkFacts;
use super::monitor::MAX_SERIES_ROWS;
use super::network::{Network, Topology};
use super::reader::{error, Asked, Result, Table};
use super::traffic::Entries;
use crate::autosize::Config;
use crate::units::{self, Time};
use buflab_queue::describe::Described;

/// Largest `autosize.start`, packets (a buffer far beyond any window the engine can run).
const MAX_AUTOSIZE_START: u64 = 1_000_000_000;

/// Reads the `autosize` table of a run measured for `measured` (duration − warmup) on
/// `network` with the traffic `entries`.
pub(super) fn read(
    root: &mut Table,
    network: &Network,
    entries: &Entries,
    measured: Time,
    asked: &mut Asked,
) -> Result<Option<Config>> {
    let bdp = || LinkFacts::of(network, &entries.traffic, &entries.placements, &entries.rtts).bdp_packets();
    let mut au = root.table("autosize", "autosize")?;
    if network.topology == Topology::Switch {
        if let Some(v) = au.raw("target_utilization") {
            let expected = "no auto-sizer on the switch topology (it sizes one link's buffer; \
                            size the switch's with a sweep over network.switch.voq_buffer or output_buffer)";
            return Err(error(&au.key_path("target_utilization"), v, expected));
        }
    }
    let queue = &network.bottleneck().queue;
    if queue.name == buflab_queue::optical_fifo::OpticalFifoKind::NAME {
        if let Some(v) = au.raw("target_utilization") {
            let expected = "no auto-sizer with queue = \"optical_fifo\" (its N − 1 packets are fiber, \
                            built to one size; compare sizes with a sweep over network.bottleneck.buffer)";
            return Err(error(&au.key_path("target_utilization"), v, expected));
        }
    }
    let autosize = read_autosize(&mut au, measured, bdp)?;
    au.finish(asked)?;
    Ok(autosize)
}

/// The auto-sizer's settings at their defaults (target 1, to be replaced), for one a timed
/// change starts without an `[autosize]` table; None when the default interval does not fit
/// in the measured time.
pub(super) fn defaults(network: &Network, entries: &Entries, measured: Time) -> Option<Config> {
    let bdp = || LinkFacts::of(network, &entries.traffic, &entries.placements, &entries.rtts).bdp_packets();
    let mut map = serde_json::Map::new();
    map.insert("target_utilization".into(), Value::from(1.0));
    let mut t = Table::entry("autosize".into(), "autosize", None, &map);
    read_autosize(&mut t, measured, bdp).ok().flatten()
}

/// The normalized echo of an `autosize` table whose defaults are filled in: `start` and
/// `settle` default to computed values, which it states.
pub(super) fn normalize(table: &mut Value, a: &Config) {
    table["start"] = Value::from(a.start);
    table["settle"] = Value::from(exact_time(a.settle));
}

/// A time as a unit string that reads back to exactly the same picoseconds.
pub(crate) fn exact_time(t: Time) -> String {
    let units = [("s", units::PS_PER_S), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)];
    match units.iter().find(|(_, ps)| t.0.is_multiple_of(*ps)) {
        Some((unit, ps)) => format!("{}{unit}", t.0 / ps),
        None => format!("{}ps", t.0),
    }
}

/// The `[autosize]` table: None without `target_utilization` (the auto-sizer is off, and its
/// other keys would do nothing, so they are an error).
fn read_autosize(t: &mut Table, measured: Time, bdp: impl FnOnce() -> u64) -> Result<Option<Config>> {
    if !t.present("target_utilization") {
        for key in ["interval", "settle", "start", "tolerance", "recheck"] {
            if let Some(v) = t.raw(key) {
                let expected = "no other `autosize` key without `autosize.target_utilization`, \
                                which turns the auto-sizer on";
                return Err(error(&t.key_path(key), v, expected));
            }
        }
        return Ok(None);
    }
    let target = t.positive_fraction("target_utilization")?;
    let tolerance = t.positive_fraction("tolerance")?;
    let interval = t.time("interval")?;
    if interval == Time::ZERO || interval > measured {
        let got = t.value("interval")?;
        let expected =
            format!("a positive time of at most duration − warmup ({measured}), so that one step fits");
        return Err(error(&t.key_path("interval"), &got, &expected));
    }
    // Each step is a row of the `autosize` table: as many as the time series may have.
    let steps = measured.ps() / interval.ps();
    if steps > MAX_SERIES_ROWS {
        let got = t.value("interval")?;
        let shortest = Time(measured.ps().div_ceil(MAX_SERIES_ROWS));
        let expected = format!(
            "an interval of at least {}: this one makes {steps} steps over the measured {measured}, \
             more than {MAX_SERIES_ROWS}",
            exact_time(shortest)
        );
        return Err(error(&t.key_path("interval"), &got, &expected));
    }
    // The default settling time is a third of the interval (1 s of the thesis's 3 s).
    let settle = if t.given("settle") { t.time("settle")? } else { Time(interval.0 / 3) };
    if settle >= interval {
        let got = t.value("settle")?;
        let expected = format!("a time shorter than autosize.interval ({interval})");
        return Err(error(&t.key_path("settle"), &got, &expected));
    }
    let start = if t.given("start") {
        t.uint("start", 1, MAX_AUTOSIZE_START)?
    } else {
        bdp().clamp(1, MAX_AUTOSIZE_START)
    };
    let recheck = t.uint("recheck", 0, 1_000_000)? as u32;
    Ok(Some(Config { target, tolerance, interval, settle, start, recheck }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scenario::tests::{base, err};
    use crate::scenario::Scenario;

    #[test]
    fn autosize_is_off_without_a_target_and_reads_its_defaults_with_one() {
        assert_eq!(Scenario::from_value(&base()).unwrap().autosize, None);
        let mut v = base();
        v["autosize"] = json!({});
        assert_eq!(Scenario::from_value(&v).unwrap().autosize, None, "an empty table is off");
        v["autosize"] = json!({ "target_utilization": 0.98 });
        let a = Scenario::from_value(&v).unwrap().autosize.unwrap();
        // RTT·C: 100 Mb/s × 100 ms (the mean of 75..125 ms) ÷ 8000 bits = 1250 packets.
        let expected = Config {
            target: 0.98,
            tolerance: 0.995,
            interval: Time::from_secs(3),
            settle: Time::from_secs(1),
            start: 1250,
            recheck: 0,
        };
        assert_eq!(a, expected);
        // The normalized tree states the computed start; without [autosize] it has an empty table.
        let n = Scenario::normalized(&v).unwrap();
        assert_eq!((&n["autosize"]["start"], &n["autosize"]["settle"]), (&json!(1250), &json!("1s")));
        // A settling time that is no whole number of nanoseconds still reads back exactly.
        v["autosize"]["interval"] = json!("5s");
        let n = Scenario::normalized(&v).unwrap();
        assert_eq!(n["autosize"]["settle"], json!("1666666666666ps"));
        assert_eq!(Scenario::from_value(&n).unwrap().autosize.unwrap().settle, Time(5 * units::PS_PER_S / 3));
        assert_eq!(Scenario::normalized(&base()).unwrap()["autosize"], json!({}));
    }

    #[test]
    fn autosize_start_default_uses_the_summary_hop_and_its_packets() {
        // Parking lot, summary hop 2 at 20 Mb/s, 576-B packets on the entry crossing it:
        // 20e6 × 0.1 / (8 × 576) = 434.03 → 435.
        let mut v = base();
        v["network"]["topology"] = json!("parking_lot");
        v["network"]["hops"] = json!(2);
        v["network"]["summary_hop"] = json!(2);
        v["network"]["hop"] = json!([{}, { "rate": "20Mbps" }]);
        v["traffic"] = json!([
            { "kind": "long_lived", "hops": 1 },
            { "kind": "long_lived", "hops": "1..2", "packet": "576B" },
        ]);
        v["autosize"] = json!({ "target_utilization": 0.9 });
        assert_eq!(Scenario::from_value(&v).unwrap().autosize.unwrap().start, 435);
    }

    #[test]
    fn bad_autosize_keys_name_key_value_and_expectation() {
        let with = |table: Value| {
            let mut v = base();
            v["autosize"] = table;
            err(v)
        };
        assert_eq!(
            with(json!({ "target_utilization": 1.5 })),
            "autosize.target_utilization: got 1.5; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "target_utilization": "99%" })),
            "autosize.target_utilization: got \"99%\"; expected a fraction above 0 and at most 1"
        );
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "tolerance": 0 })),
            "autosize.tolerance: got 0; expected a fraction above 0 and at most 1"
        );
        // base(): 10 s with 2 s of warm-up leaves 8 s.
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "interval": "9s" })),
            "autosize.interval: got \"9s\"; expected a positive time of at most duration − warmup (8s), so that one step fits"
        );
        assert!(with(json!({ "target_utilization": 0.9, "start": 0 }))
            .starts_with("autosize.start: got 0; expected a whole number from 1"));
        assert!(with(json!({ "target_utilization": 0.9, "recheck": -1 }))
            .starts_with("autosize.recheck: got -1; expected a whole number from 0"));
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "interval": "2s", "settle": "2s" })),
            "autosize.settle: got \"2s\"; expected a time shorter than autosize.interval (2s)"
        );
        // A step is a row of the autosize table: one a nanosecond would exhaust memory.
        assert_eq!(
            with(json!({ "target_utilization": 0.9, "interval": "1ns" })),
            "autosize.interval: got \"1ns\"; expected an interval of at least 800ns: this one makes 8000000000 steps over the measured 8s, more than 10000000"
        );
        assert_eq!(
            with(json!({ "interval": "5s" })),
            "autosize.interval: got \"5s\"; expected no other `autosize` key without `autosize.target_utilization`, which turns the auto-sizer on"
        );
        assert_eq!(
            with(json!({ "target_utilisation": 0.9 })),
            "autosize.target_utilisation: unknown key; did you mean `target_utilization`?"
        );
        assert_eq!(
            with(json!({ "target": 0.9 })),
            "autosize.target: unknown key; expected one of: target_utilization, interval, settle, start, tolerance, recheck"
        );
        assert!(with(json!(0.9)).starts_with("autosize: got 0.9; expected a table"));
    }
}
