//! The `[[change]]` entries: timed changes to the running experiment, the control panel of
//! thesis ch. 4.3 (Fig 4.15) written down, so that a live session of `buflab serve` is a
//! scenario plus a list that replays exactly.
//!
//! Read first: [`super`] (how `Scenario::read` calls one reader per section) and
//! [`crate::live`] (who applies a change, and when: between two steps of the loop, at its
//! `at`). Owns reading and checking each entry against the scenario and the changes before it:
//! [`Context`] is what those changes have set, and a live session keeps one too, so that a
//! change from the page is checked by this same reader ([`read_one`]). Must not know how a
//! change is applied.
//!
//! An entry sets one or more things at `at`, applied in this order: the auto-sizer's target,
//! the settings of flows added from then on (`access_rate`, `pacing`, `cc`), the number of
//! long-lived flows, the buffer, and the auto-sizer started or stopped.

use buflab_queue::describe::Described;
use serde_json::{Map, Value};

use super::network::Topology;
use super::reader::{error, Asked, Result, Table};
use super::traffic::{Entries, Traffic};
use super::Network;
use crate::autosize::Config;
use crate::tcp::cc::CcKind;
use crate::tcp::pacer::Pacing;
use crate::tcp::TcpConfig;
use crate::units::{BufferLimit, Rate, Time};

/// Most flows the changes of one run may add in all (each has its own links, routes and TCP
/// state, kept to the end of the run for its row in the flows table).
pub const MAX_ADDED_FLOWS: u64 = 100_000;

/// Most changes one run may have (each is a row of the session's log).
pub const MAX_CHANGES: usize = 100_000;

/// One timed change, as read (see the module doc for the order its parts apply in).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub at: Time,
    /// The traffic entry `flows`, `access_rate`, `pacing` and `cc` are about.
    pub entry: usize,
    pub target: Option<f64>,
    pub access_rate: Option<Rate>,
    pub pacing: Option<Pacing>,
    pub cc: Option<CcKind>,
    pub flows: Option<u64>,
    /// It leaves fewer of its entry's long-lived flows open than before: the senders it closes
    /// must not have run ahead to its time (see `sim/plan.rs`).
    pub closes: bool,
    pub buffer: Option<BufferLimit>,
    /// Start (true) or stop (false) the live auto-sizer, with the settings to start it with.
    pub autosize: Option<(bool, Option<Config>)>,
}

/// What the scenario and the changes so far have set: what the next change is checked against.
#[derive(Clone, Debug)]
pub struct Context {
    /// The time of the last change (the next may not come earlier).
    pub at: Time,
    pub duration: Time,
    /// Per traffic entry: the settings its flows added from now on are made with (None: not a
    /// long-lived entry, whose flows do not change).
    pub tcp: Vec<Option<TcpConfig>>,
    /// Per traffic entry: its long-lived flows still open.
    pub open: Vec<u64>,
    /// Flows added by the changes so far.
    pub added: u64,
    /// The auto-sizer's target in force, if any (`autosize.target_utilization` or a change's).
    pub target: Option<f64>,
    /// The auto-sizer's settings (`[autosize]`, or its defaults) but for the target; None when
    /// they do not fit the run (an interval longer than the measured time).
    pub autosize: Option<Config>,
    /// Why flows cannot be added or closed on this network, if they cannot.
    pub flows_refused: Option<String>,
    /// Per traffic entry: why its flows cannot be added or closed, if they cannot.
    pub entry_refused: Vec<Option<String>>,
    /// Whether the network has access links of its own per flow (`access_rate` applies).
    pub own_access: bool,
    /// Whether the topology takes changes at all (not the switch).
    pub refused: Option<&'static str>,
    /// Why the summary link's buffer cannot change (by hand or by the auto-sizer), if so.
    pub buffer_refused: Option<&'static str>,
}

impl Context {
    /// The context of a run before any change.
    pub(super) fn new(
        network: &Network,
        entries: &Entries,
        duration: Time,
        autosize: Option<&Config>,
        defaults: Option<Config>,
    ) -> Context {
        let traffic = &entries.traffic;
        let tcp = traffic
            .iter()
            .map(|t| match t {
                Traffic::LongLived(l) if l.per_output.is_none() => Some(l.tcp),
                _ => None,
            })
            .collect();
        let open =
            traffic.iter().map(|t| if let Traffic::LongLived(l) = t { l.flows as u64 } else { 0 }).collect();
        Context {
            at: Time::ZERO,
            duration,
            tcp,
            open,
            added: 0,
            target: autosize.map(|a| a.target),
            autosize: autosize.copied().or(defaults),
            flows_refused: flows_refused(network, entries),
            entry_refused: entries_refused(entries),
            own_access: network.machines == 0,
            refused: (network.topology == Topology::Switch)
                .then_some("no change on the switch topology (its flows' ports are placed before the run)"),
            buffer_refused: (network.topology != Topology::Switch
                && network.bottleneck().queue.name == buflab_queue::optical_fifo::OpticalFifoKind::NAME)
                .then_some(
                    "no change of the buffer with queue = \"optical_fifo\" (its N − 1 packets are fiber, \
                     built to one size; compare sizes with a sweep over network.bottleneck.buffer)",
                ),
        }
    }
}

/// Why long-lived flows cannot be added or closed during the run on this network, if so.
/// Flows join the shared links the topology built before them; the simulator may have
/// planned to feed some of those links ahead of time from one flow's link alone (see
/// `sim/plan.rs`: a link that holds its packets, or an express one, entered first by one
/// flow and nothing else), which a newcomer would break. A newcomer takes a route a flow of
/// its entry took before it (flow k takes route k of its entry), so no link gains a feeder it
/// did not have but the one it enters first.
fn flows_refused(network: &Network, entries: &Entries) -> Option<String> {
    if network.machines > 0 {
        return Some(
            "no change of flows with network.access.machines > 0 (their flows share class queues)".into(),
        );
    }
    if !network.bumps.is_empty() {
        return Some(
            "no change of flows with bumps in the wire (their classes and pacers are set up before the run)"
                .into(),
        );
    }
    use buflab_queue::describe::Build;
    let kinds = crate::queue::kinds();
    let build = |spec: &super::LinkSpec| kinds.iter().find(|k| k.name == spec.queue.name).map(|k| &k.build);
    let links = &network.graph.links;
    // Per graph link: the flows whose route enters the network on it.
    let mut first = vec![0u64; links.len()];
    for (t, p) in entries.traffic.iter().zip(&entries.placements) {
        for (r, route) in p.routes.iter().enumerate() {
            if let Some(&l) = route.links.first() {
                first[l as usize] += p.flows_on(r, t.flows() as u64);
            }
        }
    }
    let fed_ahead = links.iter().zip(&first).find(|(g, &n)| {
        let held = matches!(build(&g.spec), Some(Build::Held(_)));
        let express = g.spec.buffer == BufferLimit::Unlimited
            && !g.monitored
            && matches!(build(&g.spec), Some(Build::Inline));
        n == 1 && g.loss == 0.0 && (held || express)
    });
    fed_ahead.map(|(g, _)| {
        format!(
            "no change of flows on a run of one flow into link {:?}, whose discipline holds its packets \
             (or that cannot queue): the simulator feeds it ahead of time from the one flow's link; start \
             with 2 flows or more there",
            g.name
        )
    })
}

/// Per traffic entry: why its flows cannot change, if its long-lived flows are fewer than its
/// routes (a newcomer would take a route no flow took before the run, whose links the
/// simulator planned without it).
fn entries_refused(entries: &Entries) -> Vec<Option<String>> {
    entries
        .traffic
        .iter()
        .zip(&entries.placements)
        .map(|(t, p)| {
            let (flows, routes) = (t.flows() as usize, p.routes.len());
            (flows < routes).then(|| {
                format!(
                    "no change of flows on an entry of {flows} flows over {routes} routes (a new flow would take a \
                     route no flow took before the run); give it {routes} flows or more"
                )
            })
        })
        .collect()
}

/// The `[[change]]` entries, read in order (the key is absent: no change).
pub(super) fn read(root: &mut Table, context: &mut Context, asked: &mut Asked) -> Result<Vec<Change>> {
    let path = root.key_path("change");
    let items = match root.raw("change") {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(error(&path, other, "an array of tables ([[change]] entries)")),
    };
    if items.len() > MAX_CHANGES {
        return Err(error(&path, &Value::from(items.len()), &format!("at most {MAX_CHANGES} changes")));
    }
    let mut changes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let entry_path = format!("{path}.{i}");
        let Value::Object(map) = item else {
            return Err(error(&entry_path, item, "a table such as { at = \"10s\", buffer = \"20pkt\" }"));
        };
        changes.push(read_entry(entry_path, map, context, asked)?);
    }
    Ok(changes)
}

/// One change (a `[[change]]` entry's table, or a live session's), checked against and
/// recorded in `context`; `path` names it in errors.
pub fn read_one(path: &str, map: &Map<String, Value>, context: &mut Context) -> Result<Change> {
    read_entry(path.to_string(), map, context, &mut Asked::new())
}

const SETTINGS: [&str; 8] =
    ["target_utilization", "access_rate", "pacing", "cc", "flows", "buffer", "autosize", "traffic"];

fn read_entry(
    path: String,
    map: &Map<String, Value>,
    context: &mut Context,
    asked: &mut Asked,
) -> Result<Change> {
    let mut t = Table::entry(path.clone(), "change", None, map);
    if let Some(reason) = context.refused {
        let got = Value::Object(map.clone());
        return Err(error(t.path(), &got, reason));
    }
    let at = t.time("at")?;
    if at < context.at || at >= context.duration {
        let got = t.value("at")?;
        let expected = format!(
            "a time from the previous change's ({}) to before the end of the run ({})",
            context.at, context.duration
        );
        return Err(error(&t.key_path("at"), &got, &expected));
    }
    let per_entry = ["access_rate", "pacing", "cc", "flows"];
    let entry = if per_entry.iter().any(|k| t.present(k)) || t.present("traffic") {
        read_traffic(&mut t, context)?
    } else {
        0
    };
    let target =
        if t.given("target_utilization") { Some(t.positive_fraction("target_utilization")?) } else { None };
    let access_rate = if t.given("access_rate") {
        if !context.own_access {
            let got = t.value("access_rate")?;
            let expected = "no access_rate with network.access.machines > 0 (flows share class queues)";
            return Err(error(&t.key_path("access_rate"), &got, expected));
        }
        Some(t.rate("access_rate")?)
    } else {
        None
    };
    let mut tcp = context.tcp.get(entry).copied().flatten();
    let pacing = if t.given("pacing") {
        let p = match t.choice("pacing", &["off", "window", "linux"])? {
            "window" => Pacing::Window,
            "linux" => Pacing::Linux,
            _ => Pacing::Off,
        };
        Some(p)
    } else {
        None
    };
    let cc: Option<CcKind> = if t.given("cc") { Some(t.named("cc")?) } else { None };
    if let Some(tcp) = tcp.as_mut() {
        tcp.pacing = pacing.unwrap_or(tcp.pacing);
        tcp.cc = cc.unwrap_or(tcp.cc);
        if tcp.cc == CcKind::Bbr && tcp.pacing != Pacing::Off {
            let key = if pacing.is_some() { "pacing" } else { "cc" };
            let got = t.value(key)?;
            let expected = "pacing \"off\" with cc = \"bbr\" for the flows added from then on (BBR paces at its own rate)";
            return Err(error(&t.key_path(key), &got, expected));
        }
        if tcp.cc == CcKind::Dctcp && !tcp.ecn {
            let got = t.value("cc")?;
            let expected =
                "a cc other than \"dctcp\" for an entry without ecn = true (DCTCP reads ECN marks)";
            return Err(error(&t.key_path("cc"), &got, expected));
        }
        if tcp.cc == CcKind::Bbr && tcp.ecn {
            let got = t.value("cc")?;
            let expected =
                "a cc other than \"bbr\" for an entry with ecn = true (BBR v1 does not respond to ECN marks)";
            return Err(error(&t.key_path("cc"), &got, expected));
        }
    }
    let mut closes = false;
    let flows = if t.given("flows") {
        if let Some(reason) = context.flows_refused.as_ref().or(context.entry_refused[entry].as_ref()) {
            let got = t.value("flows")?;
            return Err(error(&t.key_path("flows"), &got, reason));
        }
        let room = MAX_ADDED_FLOWS - context.added;
        let most = context.open[entry] + room;
        let n = t.uint("flows", 0, most)?;
        context.added += n.saturating_sub(context.open[entry]);
        closes = n < context.open[entry];
        context.open[entry] = n;
        Some(n)
    } else {
        None
    };
    for key in ["buffer", "autosize"] {
        if let (true, Some(reason)) = (t.given(key), context.buffer_refused) {
            let got = t.value(key)?;
            return Err(error(&t.key_path(key), &got, reason));
        }
    }
    let buffer = if t.given("buffer") { Some(t.buffer("buffer")?) } else { None };
    if let Some(BufferLimit::Packets(0) | BufferLimit::Bytes(0)) = buffer {
        let got = t.value("buffer")?;
        return Err(error(&t.key_path("buffer"), &got, "a buffer of at least one packet or byte"));
    }
    let autosize = if t.given("autosize") {
        let on = t.boolean("autosize")?;
        let target = target.or(context.target);
        let config = match (on, target, context.autosize) {
            (false, _, _) => None,
            (true, None, _) => {
                let got = t.value("autosize")?;
                let expected = "a target first: `target_utilization` in this change or an earlier one, or \
                                autosize.target_utilization";
                return Err(error(&t.key_path("autosize"), &got, expected));
            }
            (true, Some(_), None) => {
                let got = t.value("autosize")?;
                let expected = "an auto-sizer whose autosize.interval fits in duration − warmup";
                return Err(error(&t.key_path("autosize"), &got, expected));
            }
            (true, Some(target), Some(c)) => Some(Config { target, ..c }),
        };
        if on && buffer.is_some() {
            let got = t.value("buffer")?;
            return Err(error(
                &t.key_path("buffer"),
                &got,
                "no buffer in a change that starts the auto-sizer (it sets the buffer)",
            ));
        }
        Some((on, config))
    } else {
        None
    };
    t.finish(asked)?;
    if !SETTINGS.iter().any(|k| map.contains_key(*k)) {
        let got = Value::Object(map.clone());
        let expected = "at least one of target_utilization, access_rate, pacing, cc, flows, buffer, autosize";
        return Err(error(&path, &got, expected));
    }
    if let (Some(slot), Some(tcp)) = (context.tcp.get_mut(entry), tcp) {
        *slot = Some(tcp);
    }
    context.target = target.or(context.target);
    context.at = at;
    Ok(Change { at, entry, target, access_rate, pacing, cc, flows, closes, buffer, autosize })
}

/// The traffic entry a change's per-entry keys are about: `traffic`, or the only long-lived
/// entry.
fn read_traffic(t: &mut Table, context: &Context) -> Result<usize> {
    let long_lived: Vec<usize> = (0..context.tcp.len()).filter(|&i| context.tcp[i].is_some()).collect();
    if t.given("traffic") {
        let i = t.uint("traffic", 0, context.tcp.len().saturating_sub(1) as u64)? as usize;
        if context.tcp[i].is_none() {
            let got = t.value("traffic")?;
            let expected = format!("the index of a long_lived traffic entry (from 0): {long_lived:?}");
            return Err(error(&t.key_path("traffic"), &got, &expected));
        }
        return Ok(i);
    }
    match long_lived[..] {
        [i] => Ok(i),
        _ => {
            let key = ["flows", "access_rate", "pacing", "cc"]
                .into_iter()
                .find(|k| t.present(k))
                .unwrap_or("flows");
            let got = t.value(key)?;
            let expected = if long_lived.is_empty() {
                "a scenario with a long_lived traffic entry (only long-lived flows are added and closed)"
                    .to_string()
            } else {
                format!(
                    "`traffic` naming the entry it is about, one of the long_lived entries {long_lived:?}"
                )
            };
            Err(error(&t.key_path(key), &got, &expected))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scenario::tests::{base, err};
    use crate::scenario::Scenario;

    fn with(changes: Value) -> String {
        let mut v = base();
        v["change"] = changes;
        err(v)
    }

    #[test]
    fn changes_read_in_order_with_their_parts() {
        let mut v = base();
        v["change"] = json!([
            { "at": "3s", "buffer": "20pkt" },
            { "at": "4s", "flows": 30, "access_rate": "10Mbps", "pacing": "window", "cc": "cubic" },
            { "at": "4s", "target_utilization": 0.9, "autosize": true },
            { "at": "6s", "autosize": false },
        ]);
        let s = Scenario::from_value(&v).unwrap();
        assert_eq!(s.changes.len(), 4);
        assert_eq!(
            (s.changes[0].at, s.changes[0].buffer),
            (Time::from_secs(3), Some(BufferLimit::Packets(20)))
        );
        let c = &s.changes[1];
        assert_eq!((c.entry, c.flows, c.access_rate), (0, Some(30), Some(Rate::mbps(10))));
        assert_eq!((c.pacing, c.cc), (Some(Pacing::Window), Some(CcKind::Cubic)));
        // The auto-sizer starts with the defaults of `[autosize]` (RTT·C: 1250 packets) and the
        // target of the change.
        let (on, config) = s.changes[2].autosize.unwrap();
        assert!(on);
        assert_eq!((config.unwrap().target, config.unwrap().start), (0.9, 1250));
        assert_eq!(s.changes[3].autosize, Some((false, None)));
        assert_eq!(s.change_context.open, vec![30]);
        assert_eq!(s.change_context.added, 20);
    }

    #[test]
    fn bad_changes_name_key_value_and_expectation() {
        assert_eq!(
            with(json!([{ "at": "5s", "buffer": "9pkt" }, { "at": "4s", "buffer": "5pkt" }])),
            "change.1.at: got \"4s\"; expected a time from the previous change's (5s) to before the end of the run (10s)"
        );
        assert_eq!(
            with(json!([{ "at": "10s", "buffer": "9pkt" }])),
            "change.0.at: got \"10s\"; expected a time from the previous change's (0s) to before the end of the run (10s)"
        );
        assert_eq!(
            with(json!([{ "at": "1s" }])),
            "change.0: got a table; expected at least one of target_utilization, access_rate, pacing, cc, flows, buffer, autosize"
        );
        assert_eq!(
            with(json!([{ "at": "1s", "autosize": true }])),
            "change.0.autosize: got true; expected a target first: `target_utilization` in this change or an earlier one, or autosize.target_utilization"
        );
        assert_eq!(
            with(json!([{ "at": "1s", "cc": "bbr", "pacing": "window" }])),
            "change.0.pacing: got \"window\"; expected pacing \"off\" with cc = \"bbr\" for the flows added from then on (BBR paces at its own rate)"
        );
        assert_eq!(
            with(json!([{ "at": "1s", "flows": 100011 }])),
            "change.0.flows: got 100011; expected a whole number from 0 to 100010"
        );
        assert_eq!(
            with(json!([{ "at": "1s", "traffic": 1, "flows": 3 }])),
            "change.0.traffic: got 1; expected a whole number from 0 to 0"
        );
        assert_eq!(
            with(json!([{ "at": "1s", "buffer": "3pkt", "target_utilization": 0.9, "autosize": true }])),
            "change.0.buffer: got \"3pkt\"; expected no buffer in a change that starts the auto-sizer (it sets the buffer)"
        );
        assert_eq!(
            with(json!([{ "at": "1s", "bufer": "3pkt" }])),
            "change.0.bufer: unknown key; did you mean `buffer`?"
        );
        assert_eq!(
            with(json!({ "at": "1s" })),
            "change: got a table; expected an array of tables ([[change]] entries)"
        );
    }

    #[test]
    fn flows_change_only_where_newcomers_keep_the_plan() {
        let mut v = base();
        v["network"]["access"] = json!({ "machines": 2 });
        v["change"] = json!([{ "at": "1s", "flows": 3 }]);
        assert!(err(v).starts_with(
            "change.0.flows: got 3; expected no change of flows with network.access.machines > 0"
        ));
        let mut v = base();
        v["traffic"][0]["flows"] = json!(1);
        v["network"]["bottleneck"]["queue"] = json!("drop_head");
        v["change"] = json!([{ "at": "1s", "flows": 3 }]);
        assert!(err(v).starts_with(
            "change.0.flows: got 3; expected no change of flows on a run of one flow into link \"bottleneck\""
        ));
        // A tree's entry spreads its flows over the leaves' routes: with fewer flows than
        // routes a newcomer would take a route planned without any flow.
        let mut v = base();
        v["network"] = json!({ "topology": "tree", "tree": { "depth": 3, "fanout": 2 },
                               "bottleneck": { "rate": "10Mbps", "buffer": "10pkt" }, "rtt": "10ms" });
        v["traffic"][0]["flows"] = json!(2);
        v["change"] = json!([{ "at": "1s", "flows": 3 }]);
        assert!(err(v.clone()).starts_with(
            "change.0.flows: got 3; expected no change of flows on an entry of 2 flows over 4 routes"
        ));
        v["traffic"][0]["flows"] = json!(8);
        Scenario::from_value(&v).expect("8 flows over 4 routes may change");
        // An optical FIFO's size is its construction.
        let mut v = base();
        v["network"]["bottleneck"]["queue"] = json!("optical_fifo");
        v["network"]["bottleneck"]["buffer"] = json!("15pkt");
        v["change"] = json!([{ "at": "1s", "buffer": "7pkt" }]);
        assert!(
            err(v).starts_with("change.0.buffer: got \"7pkt\"; expected no change of the buffer with queue")
        );
        let mut v = base();
        v["network"]["topology"] = json!("switch");
        v["network"]["switch"] = json!({ "rate": "1Gbps" });
        v["network"].as_object_mut().unwrap().remove("bottleneck");
        v["change"] = json!([{ "at": "1s", "buffer": "3pkt" }]);
        assert!(err(v).starts_with("change.0: got"), "the switch takes no change");
    }
}
