//! The `[[network.bump]]` entries: bumps in the wire (NetBump seed ch. 3, 5 and 7) and where
//! they sit.
//!
//! Read first: [`super::network`] (which calls this once the links are read) and the
//! `buflab-queue` crate's `bump` module (what a bump does). Owns [`BumpEntry`], [`BumpAt`] and
//! reading and checking the entries' keys; must not know how a topology places a bump on its
//! routes (`topology/bumps.rs` does).

use serde_json::{Map, Value};

use super::reader::{cut, error, Asked, Result, Table};
use super::Topology;
use crate::units::{parse_rate, BufferLimit, Rate, Time};
use buflab_queue::bump::{BumpSpec, Classify, Paced, RateSource};
use buflab_queue::pacer::{PacerKind, PacerSpec};
use buflab_queue::qcn::{CpSpec, RpSpec, Sampling};
use buflab_queue::vqueue::{Action, VqSpec};

/// Where a bump sits: the link whose traffic it sees, just before the packets go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BumpAt {
    /// At the end of every sender's own access link: one bump per flow, between the host and
    /// the network (the seed's placement, between servers and their top-of-rack switch).
    Access,
    /// In front of the dumbbell's bottleneck: one bump for every flow crossing it.
    Bottleneck,
    /// In front of parking-lot hop k (from 0).
    Hop(usize),
}

impl BumpAt {
    /// The value a scenario writes.
    pub fn name(self) -> String {
        match self {
            BumpAt::Access => "access".into(),
            BumpAt::Bottleneck => "bottleneck".into(),
            BumpAt::Hop(k) => format!("hop{}", k + 1),
        }
    }
}

/// One `[[network.bump]]` entry, its defaults resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct BumpEntry {
    pub name: String,
    pub at: BumpAt,
    /// Its output port's rate.
    pub rate: Rate,
    /// Its own buffer's hard limit.
    pub buffer: BufferLimit,
    /// Its forwarding latency: a packet leaves this long after its serialization ends.
    pub delay: Time,
    pub spec: BumpSpec,
    /// A QCN congestion point on its queue.
    pub congestion_point: Option<CpSpec>,
}

/// The default tick of the pacers that have one (seed §5.3.4: ten empty polls, about 4.5 µs;
/// §7.6: the token thread's 2.71 µs; Fig 5.3: a host's bursts about 40 µs apart).
fn default_tick(kind: PacerKind) -> Time {
    match kind {
        PacerKind::TokenThread => Time::from_ns(2710),
        PacerKind::Batch => Time::from_us(40),
        _ => Time::from_ns(4500),
    }
}

/// Reads `network.bump`: `access_rate` is the default rate of a bump at `access`, `hops` the
/// number of parking-lot hops, `machines` the dumbbell's server machines (a bump at `access`
/// needs a private access link per flow).
pub(super) fn read_bumps(
    net: &mut Table,
    topology: Topology,
    hops: usize,
    access_rate: Rate,
    machines: u32,
    asked: &mut Asked,
) -> Result<Vec<BumpEntry>> {
    let path = net.key_path("bump");
    let items = match net.raw("bump") {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(error(&path, other, "an array of tables ([[network.bump]] entries)")),
    };
    let mut entries: Vec<BumpEntry> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let entry_path = format!("{path}.{i}");
        let Value::Object(map) = item else {
            return Err(error(&entry_path, item, "a table such as { at = \"access\", pacer = \"delay\" }"));
        };
        let mut b = Table::entry(entry_path, "network.bump", None, map);
        let entry = read_entry(&mut b, i, topology, hops, access_rate, machines, asked)?;
        if entries.iter().any(|e| e.name == entry.name) {
            let got = b.value("name")?;
            return Err(error(&b.key_path("name"), &got, "a name no other bump has"));
        }
        b.finish(asked)?;
        entries.push(entry);
    }
    Ok(entries)
}

fn read_entry(
    b: &mut Table,
    i: usize,
    topology: Topology,
    hops: usize,
    access_rate: Rate,
    machines: u32,
    asked: &mut Asked,
) -> Result<BumpEntry> {
    let name = if b.given("name") { b.string("name")? } else { format!("bump{}", i + 1) };
    if name.is_empty() || name == "summary" {
        let got = b.value("name")?;
        return Err(error(&b.key_path("name"), &got, "a non-empty name other than \"summary\""));
    }
    let at = read_at(b, topology, hops, machines)?;
    let rate = if b.raw("rate").and_then(Value::as_str) == Some("unbounded") {
        // What the normalized echo of a bump without a rate says: it reads back as itself.
        Rate::UNBOUNDED
    } else if b.given("rate") {
        b.rate("rate")?
    } else if at == BumpAt::Access {
        access_rate
    } else {
        Rate::UNBOUNDED
    };
    let buffer = b.buffer("buffer")?;
    let delay = b.time("delay")?;
    let classify: Classify = b.named("classify")?;
    let vqueue = read_vqueue(b, asked)?;
    let congestion_point = read_congestion_point(b, vqueue.is_some(), classify, asked)?;
    let kind: PacerKind = b.named("pacer")?;
    let (pacer, paced) = if kind == PacerKind::None {
        for key in ["pace_rate", "window", "depth", "tick", "cap", "paced", "hold", "reaction_point"] {
            if b.present(key) {
                let got = b.raw(key).cloned().unwrap_or(Value::Null);
                return Err(error(
                    &b.key_path(key),
                    &got,
                    "no such key without a pacer (set `pacer`, e.g. \"delay\")",
                ));
            }
        }
        (None, Paced::All)
    } else {
        let source = if kind == PacerKind::Batch {
            for key in ["pace_rate", "window"] {
                if b.present(key) {
                    let got = b.raw(key).cloned().unwrap_or(Value::Null);
                    return Err(error(
                        &b.key_path(key),
                        &got,
                        "no such key with pacer = \"batch\" (it takes no rate)",
                    ));
                }
            }
            RateSource::Unused
        } else {
            read_pace_rate(b, vqueue.is_some(), at, rate, asked)?
        };
        let spec = read_pacer(b, kind)?;
        (Some((spec, source)), read_paced(b, at)?)
    };
    let spec = BumpSpec { classify, pacer, paced, vqueue };
    Ok(BumpEntry { name, at, rate, buffer, delay, spec, congestion_point })
}

/// `at`: "access", "bottleneck" (the dumbbell) or "hopK" (the parking lot).
fn read_at(b: &mut Table, topology: Topology, hops: usize, machines: u32) -> Result<BumpAt> {
    let got = b.value("at")?;
    let key = b.key_path("at");
    let expected = match topology {
        Topology::Dumbbell => "\"access\" or \"bottleneck\"".to_string(),
        Topology::ParkingLot => format!("\"access\" or a hop, \"hop1\" to \"hop{hops}\""),
        Topology::Switch => "\"access\" (on the switch, bumps sit on the access links)".to_string(),
        Topology::Network | Topology::Tree | Topology::Layered => {
            "\"access\" (on a network, bumps sit on the access links)".to_string()
        }
    };
    let at = match (got.as_str(), topology) {
        (Some("access"), _) => BumpAt::Access,
        (Some("bottleneck"), Topology::Dumbbell) => BumpAt::Bottleneck,
        (Some(s), Topology::ParkingLot) => {
            match s.strip_prefix("hop").and_then(|k| k.parse::<usize>().ok()) {
                Some(k) if (1..=hops).contains(&k) => BumpAt::Hop(k - 1),
                _ => return Err(error(&key, &got, &expected)),
            }
        }
        _ => return Err(error(&key, &got, &expected)),
    };
    if at == BumpAt::Access && machines > 0 {
        return Err(error(
            &key,
            &got,
            "a bump at \"access\" needs a private access link per flow (network.access.machines = 0)",
        ));
    }
    Ok(at)
}

/// `pace_rate`: a rate, "measured" (with `window`), "vqueue" or "qcn" (with `reaction_point`,
/// at `access`, starting at the bump's `rate`).
fn read_pace_rate(
    b: &mut Table,
    has_vqueue: bool,
    at: BumpAt,
    line: Rate,
    asked: &mut Asked,
) -> Result<RateSource> {
    let got = b.value("pace_rate")?;
    let key = b.key_path("pace_rate");
    let expected = "a rate such as \"1Gbps\", \"measured\", \"vqueue\" or \"qcn\"";
    if got.as_str() == Some("qcn") {
        if at != BumpAt::Access {
            return Err(error(
                &key,
                &got,
                "a rate, \"measured\" or \"vqueue\": a QCN reaction point sits at \"access\"",
            ));
        }
        if line == Rate::UNBOUNDED {
            return Err(error(&key, &got, "a rate: \"qcn\" starts at the bump's `rate`, which is unbounded"));
        }
        return Ok(RateSource::Qcn { rp: read_reaction_point(b, asked)?, line });
    }
    if b.present("reaction_point") {
        let r = b.raw("reaction_point").cloned().unwrap_or(Value::Null);
        return Err(error(&b.key_path("reaction_point"), &r, "no such key unless pace_rate = \"qcn\""));
    }
    let source = match got.as_str() {
        Some("measured") => RateSource::Measured { window: b.uint("window", 2, 1_000_000_000)? as u32 },
        Some("vqueue") if has_vqueue => RateSource::VirtualPort,
        Some("vqueue") => {
            return Err(error(
                &key,
                &got,
                "\"vqueue\" paces at the virtual queue's rate: give the bump a `vqueue`",
            ))
        }
        Some(s) => RateSource::Fixed(parse_rate(s).map_err(|_| error(&key, &got, expected))?),
        None => return Err(error(&key, &got, expected)),
    };
    if !matches!(source, RateSource::Measured { .. }) && b.present("window") {
        let w = b.raw("window").cloned().unwrap_or(Value::Null);
        return Err(error(&b.key_path("window"), &w, "no such key unless pace_rate = \"measured\""));
    }
    Ok(source)
}

/// The pacer's own keys: `depth` for the token pacers, `tick` for the modified token bucket
/// and the token thread, `cap` for the modified token bucket.
fn read_pacer(b: &mut Table, kind: PacerKind) -> Result<PacerSpec> {
    let uses = |key: &str| match key {
        "depth" => !matches!(kind, PacerKind::Delay | PacerKind::Batch),
        "tick" => matches!(kind, PacerKind::ModifiedTokenBucket | PacerKind::TokenThread | PacerKind::Batch),
        "cap" => kind == PacerKind::ModifiedTokenBucket,
        _ => true,
    };
    for key in ["depth", "tick", "cap"] {
        if !uses(key) && b.present(key) {
            let got = b.raw(key).cloned().unwrap_or(Value::Null);
            return Err(error(
                &b.key_path(key),
                &got,
                &format!("no such key with pacer = \"{}\"", kind.name()),
            ));
        }
    }
    let positive_time = |b: &mut Table, key: &'static str, default: Time| -> Result<Time> {
        let t = if b.given(key) { b.time(key)? } else { default };
        if t == Time::ZERO {
            let got = b.value(key)?;
            return Err(error(&b.key_path(key), &got, "a positive time such as \"4.5us\""));
        }
        Ok(t)
    };
    let depth = |b: &mut Table| -> Result<u64> {
        let d = b.bytes("depth")?;
        if d == 0 {
            let got = b.value("depth")?;
            return Err(error(&b.key_path("depth"), &got, "a positive size such as \"4500B\""));
        }
        Ok(d)
    };
    Ok(match kind {
        PacerKind::None => unreachable!("read only with a pacer"),
        PacerKind::Delay => PacerSpec::Delay,
        PacerKind::TokenBucket => PacerSpec::TokenBucket { depth: depth(b)? },
        PacerKind::ModifiedTokenBucket => PacerSpec::ModifiedTokenBucket {
            depth: depth(b)?,
            tick: positive_time(b, "tick", default_tick(kind))?,
            cap: positive_time(b, "cap", Time::from_us(5))?,
        },
        PacerKind::TokenThread => {
            PacerSpec::TokenThread { depth: depth(b)?, tick: positive_time(b, "tick", default_tick(kind))? }
        }
        PacerKind::Batch => PacerSpec::Batch { tick: positive_time(b, "tick", default_tick(kind))? },
    })
}

/// `paced` and `hold`: every class, or a class while its ACKs carry ECN-Echo.
fn read_paced(b: &mut Table, at: BumpAt) -> Result<Paced> {
    let which = b.choice("paced", &["all", "ecn_echo"])?;
    if which == "all" {
        if b.present("hold") {
            let got = b.raw("hold").cloned().unwrap_or(Value::Null);
            return Err(error(&b.key_path("hold"), &got, "no such key unless paced = \"ecn_echo\""));
        }
        return Ok(Paced::All);
    }
    if at != BumpAt::Access {
        let got = b.value("paced")?;
        return Err(error(
            &b.key_path("paced"),
            &got,
            "\"all\": pacing on ECN-Echo needs the bump at \"access\", where the flow's ACKs pass it",
        ));
    }
    let hold = b.time("hold")?;
    if hold == Time::ZERO {
        let got = b.value("hold")?;
        return Err(error(&b.key_path("hold"), &got, "a positive time such as \"10ms\""));
    }
    Ok(Paced::OnEcnEcho { hold })
}

/// `congestion_point`: a QCN congestion point, if given.
fn read_congestion_point(
    b: &mut Table,
    has_vqueue: bool,
    classify: Classify,
    asked: &mut Asked,
) -> Result<Option<CpSpec>> {
    if !b.present("congestion_point") {
        b.consume("congestion_point");
        return Ok(None);
    }
    let mut c = b.table("congestion_point", "network.bump.congestion_point")?;
    if has_vqueue && classify != Classify::All {
        let got = b.value("classify")?;
        return Err(error(
            &b.key_path("classify"),
            &got,
            "\"all\": a congestion point on a virtual queue measures the one queue of a port",
        ));
    }
    let q_eq = c.bytes("q_eq")?;
    if q_eq == 0 {
        let got = c.value("q_eq")?;
        return Err(error(&c.key_path("q_eq"), &got, "a positive size such as \"15KB\""));
    }
    let w = c.uint("w", 0, 64)? as u32;
    let got = c.value("sample")?;
    let sampling = match (got.as_str(), got.as_f64()) {
        (Some("standard"), _) => Sampling::Standard,
        (None, Some(p)) if p > 0.0 && p <= 1.0 => Sampling::Fixed(p),
        _ => {
            return Err(error(
                &c.key_path("sample"),
                &got,
                "\"standard\" or a probability above 0 and at most 1 (the seed: 0.05)",
            ))
        }
    };
    c.finish(asked)?;
    Ok(Some(CpSpec { q_eq, w, sampling }))
}

/// `reaction_point`: a QCN reaction point's settings, the standard's by default.
fn read_reaction_point(b: &mut Table, asked: &mut Asked) -> Result<RpSpec> {
    let mut r = b.table("reaction_point", "network.bump.reaction_point")?;
    let positive_rate = |r: &mut Table, key: &'static str| -> Result<Rate> {
        let rate = r.rate(key)?;
        if rate.bits_per_s() == 0 || rate == Rate::UNBOUNDED {
            let got = r.value(key)?;
            return Err(error(&r.key_path(key), &got, "a positive rate such as \"5Mbps\""));
        }
        Ok(rate)
    };
    let quantization = r.uint("quantization", 1, 1 << 20)? as u32;
    let byte_counter = r.bytes("byte_counter")?;
    if byte_counter < 2 {
        let got = r.value("byte_counter")?;
        return Err(error(&r.key_path("byte_counter"), &got, "a size of at least 2 B such as \"150KB\""));
    }
    let timer = r.time("timer")?;
    if timer < Time(2) {
        let got = r.value("timer")?;
        return Err(error(&r.key_path("timer"), &got, "a positive time such as \"15ms\""));
    }
    let fast_recovery = r.uint("fast_recovery", 0, 1000)? as u32;
    let (r_ai, r_hai, min_rate) =
        (positive_rate(&mut r, "r_ai")?, positive_rate(&mut r, "r_hai")?, positive_rate(&mut r, "min_rate")?);
    r.finish(asked)?;
    Ok(RpSpec { quantization, byte_counter, timer, fast_recovery, r_ai, r_hai, min_rate })
}

/// `vqueue`: the virtual queue, if given.
fn read_vqueue(b: &mut Table, asked: &mut Asked) -> Result<Option<VqSpec>> {
    let path = b.key_path("vqueue");
    let map: &Map<String, Value> = match b.raw("vqueue") {
        None => return Ok(None),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(error(&path, other, "a table such as { rate = \"1Gbps\", size = \"30KB\" }"))
        }
    };
    let mut v = Table::entry(path, "network.bump.vqueue", None, map);
    let rate = v.rate("rate")?;
    let size = v.bytes("size")?;
    if size == 0 {
        let got = v.value("size")?;
        return Err(error(&v.key_path("size"), &got, "a positive size such as \"30KB\""));
    }
    let threshold = if v.given("threshold") { v.bytes("threshold")? } else { size };
    if threshold > size {
        let got = v.value("threshold")?;
        return Err(error(
            &v.key_path("threshold"),
            &got,
            &format!("at most the virtual queue's size ({size} B)"),
        ));
    }
    let action: Action = v.named("action")?;
    v.finish(asked)?;
    Ok(Some(VqSpec { rate, size, threshold, action }))
}

/// The normalized `[[network.bump]]` entries: every key that applies, with its resolved value.
pub(super) fn normalize(items: &mut Value, entries: &[BumpEntry]) {
    let Some(items) = items.as_array_mut() else { return };
    for (item, e) in items.iter_mut().zip(entries) {
        let Some(map) = item.as_object_mut() else { continue };
        let mut put = |k: &str, v: Value| {
            map.entry(k.to_string()).or_insert(v);
        };
        put("name", e.name.clone().into());
        put("at", e.at.name().into());
        let rate = if e.rate == Rate::UNBOUNDED { "unbounded".to_string() } else { e.rate.to_string() };
        put("rate", rate.into());
        put("buffer", e.buffer.to_string().into());
        put("delay", format!("{}", e.delay).into());
        put("classify", e.spec.classify.name().into());
        put("pacer", e.spec.pacer.map_or(PacerKind::None, |p| p.0.kind()).name().into());
        if let Some((spec, source)) = e.spec.pacer {
            match source {
                RateSource::Fixed(r) => put("pace_rate", r.to_string().into()),
                RateSource::Measured { window } => {
                    put("pace_rate", "measured".into());
                    put("window", window.into());
                }
                RateSource::VirtualPort => put("pace_rate", "vqueue".into()),
                RateSource::Qcn { .. } => put("pace_rate", "qcn".into()),
                RateSource::Unused => {}
            }
            match spec {
                PacerSpec::Delay => {}
                PacerSpec::TokenBucket { depth } => put("depth", format!("{depth}B").into()),
                PacerSpec::ModifiedTokenBucket { depth, tick, cap } => {
                    put("depth", format!("{depth}B").into());
                    put("tick", format!("{tick}").into());
                    put("cap", format!("{cap}").into());
                }
                PacerSpec::TokenThread { depth, tick } => {
                    put("depth", format!("{depth}B").into());
                    put("tick", format!("{tick}").into());
                }
                PacerSpec::Batch { tick } => put("tick", format!("{tick}").into()),
            }
            match e.spec.paced {
                Paced::All => put("paced", "all".into()),
                Paced::OnEcnEcho { hold } => {
                    put("paced", "ecn_echo".into());
                    put("hold", format!("{hold}").into());
                }
            }
        }
        if let Some((_, RateSource::Qcn { rp, .. })) = e.spec.pacer {
            let r = map.entry("reaction_point").or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(r) = r else { unreachable!("the reader accepts only a table") };
            let mut put = |k: &str, v: Value| {
                r.entry(k.to_string()).or_insert(v);
            };
            put("quantization", rp.quantization.into());
            put("byte_counter", format!("{}B", rp.byte_counter).into());
            put("timer", format!("{}", rp.timer).into());
            put("fast_recovery", rp.fast_recovery.into());
            put("r_ai", rp.r_ai.to_string().into());
            put("r_hai", rp.r_hai.to_string().into());
            put("min_rate", rp.min_rate.to_string().into());
        }
        if let (Some(cp), Some(Value::Object(c))) = (e.congestion_point, map.get_mut("congestion_point")) {
            c.entry("w").or_insert_with(|| cp.w.into());
            let sample = match cp.sampling {
                Sampling::Standard => Value::from("standard"),
                Sampling::Fixed(p) => Value::from(p),
            };
            c.entry("sample").or_insert(sample);
        }
        if let (Some(vq), Some(Value::Object(v))) = (e.spec.vqueue, map.get_mut("vqueue")) {
            v.entry("threshold").or_insert_with(|| format!("{}B", vq.threshold).into());
            v.entry("action").or_insert_with(|| vq.action.name().into());
        }
    }
}

/// The bump a `monitor.events_at` names, checked against the entries.
pub(super) fn find<'e>(entries: &'e [BumpEntry], key: &str, got: &Value) -> Result<&'e BumpEntry> {
    let name = got.as_str().unwrap_or_default();
    entries.iter().find(|e| e.name == name).ok_or_else(|| {
        // The names, each cut as values are, and the first ten only.
        let mut names: Vec<String> =
            entries.iter().take(10).map(|e| cut(format!("\"{}\"", e.name))).collect();
        if entries.len() > 10 {
            names.push(format!("and {} more", entries.len() - 10));
        }
        let expected = if names.is_empty() {
            "\"summary\" (the scenario has no [[network.bump]])".to_string()
        } else {
            format!("\"summary\" or a bump's name: {}", names.join(", "))
        };
        error(key, got, &expected)
    })
}
