//! What a discipline tells the outside world about itself: its name in scenario files, one
//! sentence of documentation, its parameters, and how to build it from their values.
//!
//! Read first: the crate doc (the contract). This file owns the description types; each
//! discipline's own description sits in its file, beside its rules, so that adding a
//! discipline is one file here and one line in the simulator's list. It must not know how a
//! scenario is read or where a key lives in one (the caller reads the values, checking each
//! against its [`ParamKind`], and reports errors under its own key paths).

use buflab_base::rng::Rng;
use buflab_base::units::{self, Rate, Time, UnitError};

use crate::{Admission, Discipline, Flowing, Limit};

/// How a parameter's value is written and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A number of packets, at least 0 (fractional allowed: thresholds on an average).
    Packets,
    /// A fraction above 0, at most 1.
    PositiveFraction,
    /// A number above 0 (a gain in 1/s).
    Positive,
    /// A whole number, at least 1.
    Count,
    /// true or false.
    Bool,
    /// A duration above 0, written with its unit ("5ms", "100us").
    Time,
    /// A size in bytes above 0, written with its unit ("1514B", "32MB").
    Bytes,
    /// A queue length: packets ("20pkt", or a bare whole number) or bytes ("30KB").
    Backlog,
}

impl ParamKind {
    /// The value `text` writes (a command line's, or a scenario's string), or what was
    /// expected instead: one phrase completing "expected …".
    pub fn parse(self, text: &str) -> Result<Value, String> {
        let unit = |e: UnitError| e.0;
        match self {
            ParamKind::Bool => text.parse().map(Value::Bool).map_err(|_| "true or false".into()),
            ParamKind::Packets => number(text, |x| x >= 0.0, "a number of packets, at least 0"),
            ParamKind::PositiveFraction => {
                number(text, |x| x > 0.0 && x <= 1.0, "a fraction above 0 and at most 1")
            }
            ParamKind::Positive => number(text, |x| x > 0.0, "a number above 0"),
            ParamKind::Count => text
                .parse::<u64>()
                .ok()
                .filter(|&x| x >= 1 && x <= u32::MAX as u64)
                .map(|x| Value::Number(x as f64))
                .ok_or_else(|| format!("a whole number from 1 to {}", u32::MAX)),
            ParamKind::Time => match units::parse_time(text).map_err(unit)? {
                Time::ZERO => Err("a duration above 0, such as \"5ms\"".into()),
                t => Ok(Value::Time(t)),
            },
            ParamKind::Bytes => match units::parse_bytes(text).map_err(unit)? {
                0 => Err("a size above 0, such as \"1514B\"".into()),
                b => Ok(Value::Bytes(b)),
            },
            ParamKind::Backlog => parse_backlog(text).map(Value::Backlog),
        }
    }
}

/// A number of `text` that passes `ok`.
fn number(text: &str, ok: impl Fn(f64) -> bool, expected: &str) -> Result<Value, String> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && ok(*x))
        .map(Value::Number)
        .ok_or_else(|| expected.to_string())
}

/// A queue length: "20pkt" or a bare whole number of packets, or a byte size; above 0.
fn parse_backlog(text: &str) -> Result<Limit, String> {
    const EXPECTED: &str = "a queue length above 0 in packets (\"20pkt\") or bytes (\"30KB\")";
    let limit = match text.trim().parse::<u64>() {
        Ok(n) => Limit::Packets(n),
        Err(_) => units::parse_buffer(text).map_err(|_| EXPECTED.to_string())?,
    };
    match limit {
        Limit::Packets(0) | Limit::Bytes(0) | Limit::Unlimited => Err(EXPECTED.into()),
        l => Ok(l),
    }
}

/// One parameter of a discipline, as a scenario key beside `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// The key, prefixed by the discipline's name so that keys of different disciplines never
    /// collide (`red_min_th`).
    pub key: &'static str,
    pub kind: ParamKind,
    /// The type as the documentation shows it ("number (packets)").
    pub ty: &'static str,
    /// The default, as written in a scenario file ("5", "0.002", "true").
    pub default: &'static str,
    pub doc: &'static str,
}

impl Param {
    /// The documented default as a value. Defaults are written as in a scenario file: a
    /// quantity with a unit is a quoted string (`"\"5ms\""`).
    pub fn default_value(&self) -> Value {
        let text = self.default.trim_matches('"');
        self.kind.parse(text).unwrap_or_else(|e| panic!("default of {} is not {e}", self.key))
    }
}

/// A parameter's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Bool(bool),
    Time(Time),
    Bytes(u64),
    Backlog(Limit),
}

impl std::fmt::Display for Value {
    /// As a scenario file writes it (`5`, `true`, `5ms`, `1514B`, `20pkt`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Number(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Time(t) => write!(f, "{}", units::format_time(*t)),
            Value::Bytes(b) => write!(f, "{b}B"),
            Value::Backlog(l) => write!(f, "{l}"),
        }
    }
}

/// The values of a discipline's parameters, each with whether the user gave it (an error
/// should name the key the user wrote).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Values {
    entries: Vec<(&'static str, Value, bool)>,
}

impl Values {
    pub fn new() -> Values {
        Values::default()
    }

    /// Sets `key` to `value`; `given`: the user wrote it.
    pub fn set(&mut self, key: &'static str, value: Value, given: bool) {
        match self.entries.iter_mut().find(|e| e.0 == key) {
            Some(e) => *e = (key, value, given),
            None => self.entries.push((key, value, given)),
        }
    }

    fn get(&self, key: &str) -> Option<&(&'static str, Value, bool)> {
        self.entries.iter().find(|e| e.0 == key)
    }

    /// The number `key` holds. Panics if it holds none: a discipline asks only for its own
    /// parameters, which the caller has read.
    pub fn number(&self, key: &str) -> f64 {
        match self.get(key) {
            Some((_, Value::Number(x), _)) => *x,
            other => panic!("parameter {key} is not a number: {other:?}"),
        }
    }

    /// The boolean `key` holds (panics likewise).
    pub fn boolean(&self, key: &str) -> bool {
        match self.get(key) {
            Some((_, Value::Bool(b), _)) => *b,
            other => panic!("parameter {key} is not a boolean: {other:?}"),
        }
    }

    /// The duration `key` holds (panics likewise).
    pub fn time(&self, key: &str) -> Time {
        match self.get(key) {
            Some((_, Value::Time(t), _)) => *t,
            other => panic!("parameter {key} is not a duration: {other:?}"),
        }
    }

    /// The size in bytes `key` holds (panics likewise).
    pub fn bytes(&self, key: &str) -> u64 {
        match self.get(key) {
            Some((_, Value::Bytes(b), _)) => *b,
            other => panic!("parameter {key} is not a size: {other:?}"),
        }
    }

    /// The queue length `key` holds (panics likewise).
    pub fn backlog(&self, key: &str) -> Limit {
        match self.get(key) {
            Some((_, Value::Backlog(l), _)) => *l,
            other => panic!("parameter {key} is not a queue length: {other:?}"),
        }
    }

    /// Whether the user wrote `key`.
    pub fn given(&self, key: &str) -> bool {
        self.get(key).is_some_and(|e| e.2)
    }

    /// Whether `key` has a value.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The value of `key` (panics if it has none, as `number` does).
    pub fn value(&self, key: &str) -> Value {
        self.get(key).unwrap_or_else(|| panic!("parameter {key} has no value")).1
    }
}

/// A value that breaks a rule between parameters: the key to name, the value it has, and
/// what was expected (completing "expected ...").
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub key: &'static str,
    pub got: Value,
    pub expected: String,
}

/// What a discipline is built for: the link's rate, propagation delay and buffer limit, the
/// size of a typical packet of the scenario's traffic (the largest data packet of any entry;
/// on the wire, bytes), and the largest packet that crosses this link (`packet` when not
/// known).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    pub rate: Rate,
    /// One-way propagation delay after the serializer (BJP's time stamps count it).
    pub delay: Time,
    pub limit: Limit,
    pub packet: u32,
    pub largest: u32,
}

/// A traffic entry whose packets cross a link, as a discipline's traffic check sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketSource {
    /// The entry's index in the scenario's `traffic` array.
    pub entry: usize,
    /// Its data packets' size on the wire, bytes.
    pub size: u32,
    /// Whether every packet it sends through the link has that size: false for downloads,
    /// whose last segments are shorter and whose SYN-ACKs are 40 B.
    pub uniform: bool,
}

/// A discipline's description (see the module doc).
pub trait Described {
    /// Its name in scenario files (`queue = "red"`).
    const NAME: &'static str;
    /// How its parameters are called in prose ("RED"), for errors about them.
    const LABEL: &'static str;
    /// One or two sentences for the `queue` key's documentation.
    const DOC: &'static str;
    const PARAMS: &'static [Param] = &[];
    /// Whether it sends its packets in the order they arrived (those it drops left out): a
    /// reader of its event log may then match the k-th dequeue with the k-th enqueue. A flow
    /// queue does not.
    const KEEPS_ARRIVAL_ORDER: bool = true;

    /// Checks the parameters against each other and the link (each was checked alone by the
    /// caller, against its kind).
    fn check(_values: &Values, _limit: Limit) -> Result<(), ParamError> {
        Ok(())
    }

    /// Checks the parameters against the traffic that crosses the link (one entry per
    /// traffic entry, in scenario order), once the traffic is read.
    fn check_traffic(_values: &Values, _sources: &[PacketSource]) -> Result<(), ParamError> {
        Ok(())
    }
}

/// A discipline of the first form (an admission) that can be built from its parameters.
pub trait BuildAdmission: Described {
    fn build(values: &Values, link: LinkInfo, rng: Rng) -> Box<dyn Admission>;
}

/// A discipline of the second form (held) that can be built, for any packet type.
pub trait BuildHeld: Described {
    fn build<P: Flowing + 'static>(values: &Values, link: LinkInfo, rng: Rng) -> Box<dyn Discipline<P>>;
}

/// How a caller builds a discipline for packets of type `P`.
pub enum Build<P> {
    /// Drop-tail: the caller's own inline rule (see [`crate::drop_tail`]).
    Inline,
    Admission(fn(&Values, LinkInfo, Rng) -> Box<dyn Admission>),
    Held(fn(&Values, LinkInfo, Rng) -> Box<dyn Discipline<P>>),
}

/// One entry of the list of disciplines ([`crate::kinds`]): its description, and how to build
/// it for packets of type `P`.
pub struct Kind<P> {
    pub name: &'static str,
    pub label: &'static str,
    pub doc: &'static str,
    pub params: &'static [Param],
    pub check: fn(&Values, Limit) -> Result<(), ParamError>,
    pub check_traffic: fn(&Values, &[PacketSource]) -> Result<(), ParamError>,
    pub keeps_arrival_order: bool,
    pub build: Build<P>,
}

impl<P: Flowing + 'static> Kind<P> {
    fn described<D: Described>(build: Build<P>) -> Kind<P> {
        Kind {
            name: D::NAME,
            label: D::LABEL,
            doc: D::DOC,
            params: D::PARAMS,
            check: D::check,
            check_traffic: D::check_traffic,
            keeps_arrival_order: D::KEEPS_ARRIVAL_ORDER,
            build,
        }
    }

    /// Drop-tail, which callers run inline.
    pub fn inline<D: Described>() -> Kind<P> {
        Self::described::<D>(Build::Inline)
    }

    /// An admission.
    pub fn admission<D: BuildAdmission>() -> Kind<P> {
        Self::described::<D>(Build::Admission(D::build))
    }

    /// A discipline that holds its packets.
    pub fn held<D: BuildHeld>() -> Kind<P> {
        Self::described::<D>(Build::Held(D::build::<P>))
    }

    /// This discipline as one that holds its packets, whatever its form: drop-tail and the
    /// admissions in a [`crate::Fifo`]. For a caller that keeps no queue of its own (the
    /// emulator's datapath); the simulator runs drop-tail and admissions on its fast path.
    pub fn build_held(&self, values: &Values, link: LinkInfo, rng: Rng) -> Box<dyn Discipline<P>> {
        match self.build {
            Build::Inline => Box::new(crate::Fifo::<_, P>::new(crate::drop_tail::DropTail)),
            Build::Admission(make) => Box::new(crate::Fifo::<_, P>::new(make(values, link, rng))),
            Build::Held(make) => make(values, link, rng),
        }
    }

    /// Its parameters' values from `key=value` texts (a command line's), the others at their
    /// defaults, checked against each other for a buffer of `limit`; an error names the key.
    pub fn values_from_text(&self, given: &[(String, String)], limit: Limit) -> Result<Values, String> {
        let mut values = Values::new();
        for p in self.params {
            values.set(p.key, p.default_value(), false);
        }
        for (key, text) in given {
            let p = self
                .params
                .iter()
                .find(|p| p.key == key)
                .ok_or_else(|| format!("{key}: not a parameter of {}", self.name))?;
            let value = p.kind.parse(text).map_err(|e| format!("{key}: got {text:?}; expected {e}"))?;
            values.set(p.key, value, true);
        }
        (self.check)(&values, limit)
            .map_err(|e| format!("{}: got {}; expected {}", e.key, e.got, e.expected))?;
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fifo::tests::P;
    use crate::{Arrival, Time, Verdict};

    fn red() -> Kind<P> {
        crate::kinds::<P>().into_iter().find(|k| k.name == "red").expect("red is listed")
    }

    #[test]
    fn values_from_text_fill_defaults_and_name_the_bad_key() {
        let given =
            [("red_max_th".to_string(), "20".to_string()), ("red_ecn".to_string(), "true".to_string())];
        let v = red().values_from_text(&given, Limit::Packets(30)).expect("valid");
        assert_eq!((v.number("red_max_th"), v.boolean("red_ecn")), (20.0, true));
        assert!(v.given("red_max_th") && !v.given("red_min_th"), "the others are the defaults");
        assert_eq!(v.number("red_min_th"), 5.0);
        let bad = red().values_from_text(&[("red_max_p".into(), "2".into())], Limit::Packets(30));
        assert_eq!(bad.unwrap_err(), "red_max_p: got \"2\"; expected a fraction above 0 and at most 1");
        let unknown = red().values_from_text(&[("red_typo".into(), "1".into())], Limit::Packets(30));
        assert_eq!(unknown.unwrap_err(), "red_typo: not a parameter of red");
        // The discipline's own checks between parameters apply too (max_th above the buffer).
        let over = red().values_from_text(&[("red_max_th".into(), "40".into())], Limit::Packets(30));
        assert!(over.unwrap_err().starts_with("red_max_th: got 40; expected at most the buffer"));
    }

    /// Every listed discipline builds as one that holds its packets, and sends what it admits
    /// (31 packets: a size every discipline takes, the optical FIFO's N − 1 with N = 32).
    #[test]
    fn every_discipline_builds_as_a_held_one() {
        for kind in crate::kinds::<P>() {
            let limit = Limit::Packets(31);
            let values = kind.values_from_text(&[], limit).expect("the defaults are valid");
            let link = LinkInfo {
                rate: Rate::bps(1_000_000_000),
                delay: Time(0),
                limit,
                packet: 1500,
                largest: 1500,
            };
            let mut q = kind.build_held(&values, link, Rng::stream(1, buflab_base::rng::Stream::Queue, 0));
            let mut purged = Vec::new();
            let a = Arrival::new(Time(0), 0, 0, Time(0), limit, 1500, false);
            assert_eq!(
                q.enqueue(&a, P { id: 7, size: 1500, ce: false }, &mut purged),
                Verdict::Admit,
                "{}",
                kind.name
            );
            // Sent at once, or at the time the discipline names (BJP holds every packet D).
            let sent = match q.dequeue(Time(0), &mut purged) {
                crate::Dequeue::Wait(at) => q.dequeue(at, &mut purged),
                other => other,
            };
            assert!(matches!(sent, crate::Dequeue::Send(p) if p.id == 7), "{}", kind.name);
        }
    }
}
