//! Reads one table of a scenario tree with typed getters that know their key path, take their
//! defaults from the schema, and report errors as "key path: got X; expected Y".
//!
//! Read first: [`super::schema`] (where every default and suggestion comes from). Owns
//! [`Table`], [`ScenarioError`] and the wording of the generic errors (wrong type, out of
//! range, unknown key, missing key). Must not know any particular section or key: the
//! section readers (`network.rs`, `traffic.rs`, …) say which keys to read and check what
//! depends on more than one key.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use super::schema::{self, REQUIRED};
use crate::names::Named;
use crate::units::{self, BufferLimit, Range, Rate, Time, UnitError};

/// A problem with one key of a scenario. Displays on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Dotted path of the key, e.g. `network.bottleneck.rate` or `traffic.0.flows`.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

pub type Result<T> = std::result::Result<T, ScenarioError>;

/// A key as a segment of a dotted path in a message: as written when it is a plain name
/// (letters, digits, `_`), else quoted as a string, so that an empty key, or one with a
/// space or a dot in it, is still seen (`network.access.""`, `network."rate "`); a key
/// longer than 60 characters is cut, with its length given.
pub fn path_segment(key: &str) -> String {
    if !key.is_empty()
        && key.len() <= SHOWN_CHARS
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return key.to_string();
    }
    cut(serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}")))
}

/// Every (section, key) a reader asked for, for the schema completeness test.
pub type Asked = Vec<(&'static str, &'static str)>;

/// Shows a value as the user wrote it (strings quoted, as in TOML).
pub fn show(v: &Value) -> String {
    let shown = match v {
        Value::String(s) => format!("{s:?}"),
        Value::Object(_) => "a table".into(),
        Value::Array(_) => "an array".into(),
        other => other.to_string(),
    };
    cut(shown)
}

/// The most characters of a value an error line echoes: its start says which value it was; a
/// megabyte-long string echoed in full made error lines of megabytes.
const SHOWN_CHARS: usize = 60;

pub(super) fn cut(shown: String) -> String {
    match shown.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}… ({} characters)", &shown[..at], shown.chars().count()),
        None => shown,
    }
}

pub fn error(key: &str, got: &Value, expected: &str) -> ScenarioError {
    ScenarioError { key: key.to_string(), message: format!("got {}; expected {expected}", show(got)) }
}

/// A table being read. Every key it is asked for is recorded (to check the schema is
/// complete); every key present but never asked for is an error at `finish`.
pub struct Table<'a> {
    /// Path of this table in the tree (`network.bottleneck`, `traffic.0`).
    path: String,
    /// Schema section whose defaults and suggestions apply.
    section: &'static str,
    /// A second section whose keys this table also takes (the TCP keys of traffic entries).
    shared: Option<&'static str>,
    map: Option<&'a Map<String, Value>>,
    used: BTreeSet<&'static str>,
    /// (section, key) of every key asked for.
    asked: Vec<(&'static str, &'static str)>,
}

impl<'a> Table<'a> {
    pub fn root(v: &'a Value) -> Result<Table<'a>> {
        match v {
            Value::Object(m) => Ok(Table::new(String::new(), "", None, Some(m))),
            other => Err(error("", other, "a table of scenario keys")),
        }
    }

    pub fn key_path(&self, key: &str) -> String {
        let key = path_segment(key);
        if self.path.is_empty() {
            key
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn new(
        path: String,
        section: &'static str,
        shared: Option<&'static str>,
        map: Option<&'a Map<String, Value>>,
    ) -> Self {
        Table { path, section, shared, map, used: BTreeSet::new(), asked: Vec::new() }
    }

    /// The documentation of `key` in this table's section or its shared one.
    fn doc(&self, key: &str) -> &'static schema::KeyDoc {
        match (schema::find(self.section, key), self.shared) {
            (Some(d), _) => d,
            (None, Some(shared)) => schema::lookup(shared, key),
            (None, None) => schema::lookup(self.section, key),
        }
    }

    /// The raw value of `key`, or None when absent.
    pub fn raw(&mut self, key: &'static str) -> Option<&'a Value> {
        let doc = self.doc(key);
        self.asked.push((doc.section, key));
        self.used.insert(key);
        self.map.and_then(|m| m.get(key))
    }

    /// Whether the user wrote `key` (without reading it).
    pub fn present(&self, key: &str) -> bool {
        self.map.is_some_and(|m| m.contains_key(key))
    }

    /// Whether the user wrote `key`, counting it as read: for keys whose default is another
    /// key's value, which the caller supplies when this is false.
    pub fn given(&mut self, key: &'static str) -> bool {
        self.raw(key).is_some()
    }

    /// The value of `key`, or its documented default parsed as if the user had written it.
    pub fn value(&mut self, key: &'static str) -> Result<Value> {
        if let Some(v) = self.raw(key) {
            return Ok(v.clone());
        }
        let doc = self.doc(key);
        if doc.default == REQUIRED {
            return Err(self.missing(key, &format!("{} ({})", doc.ty, doc.doc)));
        }
        Ok(serde_json::from_str(doc.default)
            .unwrap_or_else(|_| panic!("schema default of {key} is not a valid value")))
    }

    pub fn unit<T>(
        &mut self,
        key: &'static str,
        parse: impl Fn(&str) -> std::result::Result<T, UnitError>,
    ) -> Result<T> {
        let v = self.value(key)?;
        match &v {
            Value::String(s) => parse(s).map_err(|e| error(&self.key_path(key), &v, &e.0)),
            _ => {
                // Reuse the parser's wording of what is expected.
                let expected = parse("").err().map(|e| e.0).unwrap_or_else(|| "a string".into());
                Err(error(&self.key_path(key), &v, &expected))
            }
        }
    }

    pub fn time(&mut self, key: &'static str) -> Result<Time> {
        self.unit(key, units::parse_time)
    }

    pub fn rate(&mut self, key: &'static str) -> Result<Rate> {
        self.unit(key, units::parse_rate)
    }

    pub fn bytes(&mut self, key: &'static str) -> Result<u64> {
        self.unit(key, units::parse_bytes)
    }

    pub fn time_range(&mut self, key: &'static str) -> Result<Range<Time>> {
        self.unit(key, |s| units::parse_range(s, units::parse_time))
    }

    /// A buffer: a unit string, or a bare non-negative integer meaning packets.
    pub fn buffer(&mut self, key: &'static str) -> Result<BufferLimit> {
        let v = self.value(key)?;
        if let Some(n) = v.as_u64() {
            return Ok(BufferLimit::Packets(n));
        }
        let parse = units::parse_buffer;
        match &v {
            Value::String(s) => parse(s).map_err(|e| error(&self.key_path(key), &v, &e.0)),
            _ => Err(error(&self.key_path(key), &v, &parse("").unwrap_err().0)),
        }
    }

    pub fn uint(&mut self, key: &'static str, min: u64, max: u64) -> Result<u64> {
        let v = self.value(key)?;
        match v.as_u64() {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(error(&self.key_path(key), &v, &format!("a whole number from {min} to {max}"))),
        }
    }

    /// A number in `(lo, hi)`, exclusive at both ends.
    pub fn number_between(&mut self, key: &'static str, lo: f64, hi: f64) -> Result<f64> {
        let v = self.value(key)?;
        match v.as_f64() {
            Some(x) if x > lo && x < hi => Ok(x),
            _ => Err(error(&self.key_path(key), &v, &format!("a number above {lo} and below {hi}"))),
        }
    }

    /// A fraction in (0, 1]: a utilization or a share of one.
    pub fn positive_fraction(&mut self, key: &'static str) -> Result<f64> {
        let v = self.value(key)?;
        match v.as_f64() {
            Some(x) if x > 0.0 && x <= 1.0 => Ok(x),
            _ => Err(error(&self.key_path(key), &v, "a fraction above 0 and at most 1")),
        }
    }

    pub fn fraction(&mut self, key: &'static str) -> Result<f64> {
        let v = self.value(key)?;
        match v.as_f64() {
            Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
            _ => Err(error(&self.key_path(key), &v, "a probability between 0 and 1")),
        }
    }

    pub fn boolean(&mut self, key: &'static str) -> Result<bool> {
        let v = self.value(key)?;
        v.as_bool().ok_or_else(|| error(&self.key_path(key), &v, "true or false"))
    }

    pub fn string(&mut self, key: &'static str) -> Result<String> {
        let v = self.value(key)?;
        v.as_str().map(str::to_string).ok_or_else(|| error(&self.key_path(key), &v, "a string"))
    }

    /// One of a fixed set of names.
    pub fn choice(&mut self, key: &'static str, choices: &[&'static str]) -> Result<&'static str> {
        let v = self.value(key)?;
        let found = v.as_str().and_then(|s| choices.iter().find(|c| **c == s));
        found.copied().ok_or_else(|| {
            let list: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
            error(&self.key_path(key), &v, &format!("one of {}", list.join(", ")))
        })
    }

    /// One of the names of a [`Named`] enum, as its variant.
    pub fn named<T: Named>(&mut self, key: &'static str) -> Result<T> {
        let name = self.choice(key, T::NAMES)?;
        Ok(T::from_name(name).expect("a choice among the enum's names"))
    }

    /// A sub-table (an absent one reads as empty, so its keys take their defaults).
    pub fn table(&mut self, key: &'static str, section: &'static str) -> Result<Table<'a>> {
        let path = self.key_path(key);
        match self.raw(key) {
            None => Ok(Table::new(path, section, None, None)),
            Some(Value::Object(m)) => Ok(Table::new(path, section, None, Some(m))),
            Some(other) => Err(error(&path, other, "a table such as { rate = \"100Mbps\" }")),
        }
    }

    /// The entries of an array of tables, each read under `section_of(entry)`.
    pub fn array(&mut self, key: &'static str) -> Result<Vec<(String, &'a Map<String, Value>)>> {
        let path = self.key_path(key);
        let Some(v) = self.raw(key) else {
            return Err(self.missing(key, schema::lookup(self.section, key).doc));
        };
        let items =
            v.as_array().ok_or_else(|| error(&path, v, "an array of tables ([[traffic]] entries)"))?;
        if items.is_empty() {
            return Err(error(&path, v, "at least one entry"));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(m) => Ok((format!("{path}.{i}"), m)),
                other => Err(error(&format!("{path}.{i}"), other, "a table")),
            })
            .collect()
    }

    /// A table that is an array entry, read under `section`.
    pub fn entry(
        path: String,
        section: &'static str,
        shared: Option<&'static str>,
        map: &'a Map<String, Value>,
    ) -> Table<'a> {
        Table::new(path, section, shared, Some(map))
    }

    /// Marks `key` as read under another section (a traffic entry's `kind`).
    pub fn consume(&mut self, key: &'static str) {
        self.used.insert(key);
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The schema section whose keys this table takes.
    pub fn section(&self) -> &'static str {
        self.section
    }

    /// Keys asked for, for the schema completeness test.
    pub fn asked(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        self.asked.iter().copied()
    }

    /// Rejects keys present in the table that nothing read (unknown or not valid here).
    pub fn finish(self, asked: &mut Asked) -> Result<()> {
        asked.extend(self.asked());
        let Some(map) = self.map else { return Ok(()) };
        match map.keys().find(|key| !self.used.contains(key.as_str())) {
            Some(key) => Err(self.unknown(key)),
            None => Ok(()),
        }
    }

    /// Required `key` is absent: the error names it, unless the table has a key its sections
    /// do not know, which is named first (a misspelt key is what the user wrote, and the
    /// missing one is likely that key).
    pub fn missing(&self, key: &str, expected: &str) -> ScenarioError {
        self.first_unknown().unwrap_or_else(|| ScenarioError {
            key: self.key_path(key),
            message: format!("missing; expected {expected}"),
        })
    }

    /// The error for the first key of the table that its sections do not know, if any.
    fn first_unknown(&self) -> Option<ScenarioError> {
        let sections = [Some(self.section), self.shared];
        let map = self.map?;
        let known = |k: &str| {
            self.used.contains(k) || sections.iter().flatten().any(|s| schema::find(s, k).is_some())
        };
        let key = map.keys().find(|k| !known(k))?;
        Some(self.unknown(key))
    }

    /// `key` of this table is unknown: say so, with the nearest known key if there is one.
    fn unknown(&self, key: &str) -> ScenarioError {
        let path = self.key_path(key);
        let sections = [Some(self.section), self.shared];
        let suggestion = sections.iter().flatten().find_map(|s| schema::suggest(s, key));
        let message = match suggestion {
            Some(s) => format!("unknown key; did you mean `{s}`?"),
            None => {
                let known: Vec<&str> =
                    sections.iter().flatten().flat_map(|s| schema::section(s)).map(|k| k.key).collect();
                format!("unknown key; expected one of: {}", known.join(", "))
            }
        };
        ScenarioError { key: path, message }
    }
}
