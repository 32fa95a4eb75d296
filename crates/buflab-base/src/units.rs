//! Physical units: time in integer picoseconds, rates in bits/s, sizes in bytes.
//!
//! Read first: nothing (a leaf). Owns the quantities and their parsing; must not know scenarios,
//! keys or error messages about keys (the scenario reader wraps a parse error with the key's name).
//!
//! Everything in the event loop is an integer so that runs are bit-for-bit reproducible.
//! Human spellings are parsed here and nowhere else:
//!
//! | quantity | accepted units | example |
//! |---|---|---|
//! | time | `ps` `ns` `us` `µs` `ms` `s` `min` `h` | `"100ms"`, `"12us"` |
//! | rate | `bps` `Kbps` `Mbps` `Gbps` `Tbps` (also `b/s` spellings), powers of 1000 | `"62.5Mbps"` |
//! | size | `B`; decimal `KB` `MB` `GB` (1000ⁿ); binary `KiB` `MiB` `GiB` (1024ⁿ) | `"80KB"` = 80,000 B |
//! | buffer | a size, or packets: `pkt` / `pkts` / `packets`, or a bare integer (packets) | `"125pkt"` |
//! | range | `lo..hi` of any of the above | `"75ms..125ms"` |
//!
//! `KB` means 1000 bytes (as in the seeds, where 64 KB windows and 100 ms give ~490 flows per
//! 2.5 Gb/s); write `KiB` for 1024.

use std::fmt;

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A point in simulated time or a duration, in integer picoseconds.
///
/// u64 picoseconds reach about 213 days of simulated time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * 1_000_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * PS_PER_S)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reports.
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
}

impl std::ops::Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}
impl std::ops::AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 += rhs.0;
    }
}
impl std::ops::Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.secs_f64())
    }
}

/// A duration as a scenario file writes it, in the largest unit that keeps it whole
/// (`"5ms"`, `"100us"`, `"1500ns"`, `"0s"`): what `parse_time` reads back to the picosecond.
pub fn format_time(t: Time) -> String {
    const UNITS: [(u64, &str); 5] =
        [(PS_PER_S, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns"), (1, "ps")];
    let (scale, unit) =
        UNITS.into_iter().find(|(scale, _)| t.0.is_multiple_of(*scale)).expect("ps divides all");
    format!("{}{unit}", t.0 / scale)
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(bits_per_s: u64) -> Rate {
        Rate(bits_per_s)
    }
    pub const fn mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    /// A rate so high that serialization takes at most a picosecond: links that only delay.
    pub const UNBOUNDED: Rate = Rate(u64::MAX);
    pub fn bits_per_s(self) -> u64 {
        self.0
    }

    /// Time to serialize `bytes` at this rate, rounded up to a whole picosecond.
    ///
    /// Exact for every rate that divides 8·10¹² (all the round rates of the seeds:
    /// 1 Gb/s is 8,000 ps per byte, 62.5 Mb/s 128,000 ps per byte).
    pub fn serialization(self, bytes: u64) -> Time {
        let bits_ps = bytes as u128 * 8 * PS_PER_S as u128;
        let r = self.0 as u128;
        Time(bits_ps.div_ceil(r) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        if b >= 1e9 {
            write!(f, "{}Gbps", b / 1e9)
        } else if b >= 1e6 {
            write!(f, "{}Mbps", b / 1e6)
        } else if b >= 1e3 {
            write!(f, "{}Kbps", b / 1e3)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

/// A buffer limit: packets waiting, bytes waiting, or no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferLimit {
    Packets(u64),
    Bytes(u64),
    Unlimited,
}

impl fmt::Display for BufferLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferLimit::Packets(n) => write!(f, "{n}pkt"),
            BufferLimit::Bytes(b) => write!(f, "{b}B"),
            BufferLimit::Unlimited => write!(f, "unlimited"),
        }
    }
}

/// Why a unit string did not parse: a phrase that completes "expected …".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError(pub String);

/// Splits "62.5Mbps" into (62.5, "Mbps"). Numbers are plain decimals (no exponents).
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && (c == '-' || c == '+'))))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let v: f64 = s[..end].parse().ok()?;
    v.is_finite().then_some((v, s[end..].trim()))
}

/// Parses a duration such as `"100ms"`, `"12us"` or `"1.5s"`.
pub fn parse_time(s: &str) -> Result<Time, UnitError> {
    const EXPECT: &str = "a non-negative duration such as \"100ms\", \"12us\" or \"60s\"";
    let (v, unit) = split_number(s).ok_or_else(|| UnitError(EXPECT.into()))?;
    let scale: f64 = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" | "sec" => 1e12,
        "min" => 60e12,
        "h" => 3600e12,
        _ => return Err(UnitError(EXPECT.into())),
    };
    if v < 0.0 {
        return Err(UnitError(EXPECT.into()));
    }
    let ps = (v * scale).round();
    if ps > u64::MAX as f64 / 2.0 {
        return Err(UnitError("a duration shorter than 100 days".into()));
    }
    Ok(Time(ps as u64))
}

/// Parses a rate such as `"10Gbps"` or `"62.5Mbps"` (decimal prefixes).
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    const EXPECT: &str = "a positive rate such as \"100Mbps\", \"62.5Mbps\" or \"10Gbps\"";
    let (v, unit) = split_number(s).ok_or_else(|| UnitError(EXPECT.into()))?;
    let scale: f64 = match unit.to_ascii_lowercase().replace("/s", "ps").as_str() {
        "bps" => 1.0,
        "kbps" => 1e3,
        "mbps" => 1e6,
        "gbps" => 1e9,
        "tbps" => 1e12,
        _ => return Err(UnitError(EXPECT.into())),
    };
    let bits = (v * scale).round();
    if bits < 1.0 {
        return Err(UnitError(EXPECT.into()));
    }
    // Far beyond any link, and far below where whole bits per second stop being exact in
    // the arithmetic that multiplies rates by times (u128 tokens, f64 in the Python layer).
    if bits > MAX_RATE_BPS as f64 {
        return Err(UnitError("a rate of at most 1000Tbps".into()));
    }
    Ok(Rate(bits as u64))
}

/// Parses a byte size such as `"1000B"`, `"80KB"` (80,000) or `"64KiB"` (65,536).
pub fn parse_bytes(s: &str) -> Result<u64, UnitError> {
    const EXPECT: &str = "a size such as \"1000B\", \"80KB\" (1000-byte K) or \"64KiB\" (1024-byte Ki)";
    let (v, unit) = split_number(s).ok_or_else(|| UnitError(EXPECT.into()))?;
    let scale: f64 = match unit {
        "B" | "bytes" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(UnitError(EXPECT.into())),
    };
    if v < 0.0 {
        return Err(UnitError(EXPECT.into()));
    }
    let b = (v * scale).round();
    if (b - v * scale).abs() > 1e-6 * b.max(1.0) {
        return Err(UnitError("a whole number of bytes".into()));
    }
    if b > MAX_BYTES as f64 {
        return Err(UnitError("a size of at most 1000000GB".into()));
    }
    Ok(b as u64)
}

/// The largest rate, size and packet count a scenario may give: beyond any real link or
/// buffer, and small enough that every count and product stays exact and signed-safe (a
/// buffer of 2⁶³ packets once showed as negative).
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;
pub const MAX_BYTES: u64 = 1_000_000_000_000_000;
pub const MAX_PACKETS: u64 = 1_000_000_000_000;

/// The units of a packet count.
const PACKET_UNITS: &[&str] = &["pkt", "pkts", "packet", "packets", "p"];

/// Parses a packet count such as `"125pkt"`.
pub fn parse_packets(s: &str) -> Result<u64, UnitError> {
    const EXPECT: &str = "a packet count such as \"125pkt\"";
    let (v, unit) = split_number(s).ok_or_else(|| UnitError(EXPECT.into()))?;
    if !PACKET_UNITS.contains(&unit) {
        return Err(UnitError(EXPECT.into()));
    }
    if v < 0.0 || v.fract() != 0.0 {
        return Err(UnitError("a whole, non-negative number of packets".into()));
    }
    if v > MAX_PACKETS as f64 {
        return Err(UnitError("at most 1,000,000,000,000 packets (or \"unlimited\")".into()));
    }
    Ok(v as u64)
}

/// Parses a buffer limit: `"125pkt"`, a byte size, or `"unlimited"`.
pub fn parse_buffer(s: &str) -> Result<BufferLimit, UnitError> {
    const EXPECT: &str =
        "a buffer such as \"125pkt\", \"80KB\" or \"unlimited\" (packets count those waiting, not the one being sent)";
    let t = s.trim();
    if t == "unlimited" || t == "inf" {
        return Ok(BufferLimit::Unlimited);
    }
    if split_number(t).is_some_and(|(_, unit)| PACKET_UNITS.contains(&unit)) {
        return parse_packets(t).map(BufferLimit::Packets);
    }
    parse_bytes(t).map(BufferLimit::Bytes).map_err(|_| UnitError(EXPECT.into()))
}

/// What a quantity measures, for front ends that read a unit string as a number (the
/// Python package's options, plot axes and the numbers its formulas take).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    Rate,
    Time,
    Bytes,
    Packets,
}

impl Quantity {
    /// The quantity a front end names: "rate", "time", "bytes" or "packets".
    pub fn from_name(name: &str) -> Option<Quantity> {
        match name {
            "rate" => Some(Quantity::Rate),
            "time" => Some(Quantity::Time),
            "bytes" => Some(Quantity::Bytes),
            "packets" => Some(Quantity::Packets),
            _ => None,
        }
    }

    /// `s` read as the engine reads it, as a float in the base unit: bits/s, seconds, bytes
    /// or packets.
    pub fn parse(self, s: &str) -> Result<f64, UnitError> {
        Ok(match self {
            Quantity::Rate => parse_rate(s)?.bits_per_s() as f64,
            Quantity::Time => parse_time(s)?.secs_f64(),
            Quantity::Bytes => parse_bytes(s)? as f64,
            Quantity::Packets => parse_packets(s)? as f64,
        })
    }

    /// A range `lo..hi` (or a single value) of this quantity, as [`Quantity::parse`] reads
    /// each end.
    pub fn parse_range(self, s: &str) -> Result<Range<f64>, UnitError> {
        parse_range(s, |end| self.parse(end))
    }
}

/// An inclusive range `lo..hi` of values; a single value is the range `v..v`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range<T> {
    pub lo: T,
    pub hi: T,
}

/// Parses `"75ms..125ms"` (or a single value) with `parse` for each end.
pub fn parse_range<T: PartialOrd + Copy>(
    s: &str,
    parse: impl Fn(&str) -> Result<T, UnitError>,
) -> Result<Range<T>, UnitError> {
    match s.split_once("..") {
        Some((a, b)) => {
            let (lo, hi) = (parse(a)?, parse(b)?);
            if lo > hi {
                return Err(UnitError("a range whose lower end is not above its upper end".into()));
            }
            Ok(Range { lo, hi })
        }
        None => {
            let v = parse(s)?;
            Ok(Range { lo: v, hi: v })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_time_writes_the_largest_whole_unit_and_reads_back() {
        for (t, text) in [
            (Time::from_ms(5), "5ms"),
            (Time::from_us(100), "100us"),
            (Time(1_500_000), "1500ns"),
            (Time::from_secs(2), "2s"),
            (Time::ZERO, "0s"),
            (Time(7), "7ps"),
        ] {
            assert_eq!(format_time(t), text);
            assert_eq!(parse_time(text), Ok(t));
        }
    }

    #[test]
    fn parses_the_spellings_the_issue_lists() {
        assert_eq!(parse_rate("10Gbps").unwrap(), Rate(10_000_000_000));
        assert_eq!(parse_rate("62.5Mbps").unwrap(), Rate(62_500_000));
        assert_eq!(parse_rate("100 Mb/s").unwrap(), Rate(100_000_000));
        assert_eq!(parse_time("100ms").unwrap(), Time::from_ms(100));
        assert_eq!(parse_time("12us").unwrap(), Time::from_us(12));
        assert_eq!(parse_time("1.5s").unwrap(), Time::from_ms(1500));
        assert_eq!(parse_bytes("80KB").unwrap(), 80_000);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65_536);
        assert_eq!(parse_bytes("20MB").unwrap(), 20_000_000);
        assert_eq!(parse_bytes("1000B").unwrap(), 1000);
        assert_eq!(parse_buffer("125pkt").unwrap(), BufferLimit::Packets(125));
        assert_eq!(parse_buffer("80KB").unwrap(), BufferLimit::Bytes(80_000));
        assert_eq!(parse_buffer("unlimited").unwrap(), BufferLimit::Unlimited);
        let r = parse_range("75ms..125ms", parse_time).unwrap();
        assert_eq!((r.lo, r.hi), (Time::from_ms(75), Time::from_ms(125)));
    }

    #[test]
    fn rejects_bad_spellings() {
        assert!(parse_rate("-5Mbps").is_err());
        assert!(parse_rate("0bps").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_time("-1s").is_err());
        assert!(parse_time("10").is_err());
        assert!(parse_buffer("ten").is_err());
        assert!(parse_buffer("1.5pkt").is_err());
        assert!(parse_range("125ms..75ms", parse_time).is_err());
    }

    #[test]
    fn a_quantity_is_its_base_unit_as_a_float() {
        assert_eq!(Quantity::from_name("rate").unwrap().parse("100 Mb/s"), Ok(1e8));
        assert_eq!(Quantity::Time.parse("75ms"), Ok(0.075));
        assert_eq!(Quantity::Bytes.parse("64KiB"), Ok(65_536.0));
        assert_eq!(Quantity::Packets.parse("125pkt"), Ok(125.0));
        assert_eq!(Quantity::from_name("furlongs"), None);
        let expected = |q: Quantity, s: &str| q.parse(s).unwrap_err().0;
        assert_eq!(expected(Quantity::Packets, "80KB"), "a packet count such as \"125pkt\"");
        assert_eq!(expected(Quantity::Packets, "1.5pkt"), "a whole, non-negative number of packets");
        assert_eq!(expected(Quantity::Bytes, "1.5B"), "a whole number of bytes");
        assert!(expected(Quantity::Rate, "10Gbs").starts_with("a positive rate such as"));
        assert!(expected(Quantity::Time, "10").starts_with("a non-negative duration"));
        assert_eq!(Quantity::Time.parse_range("75ms..125ms"), Ok(Range { lo: 0.075, hi: 0.125 }));
        assert_eq!(Quantity::Time.parse_range("1s"), Ok(Range { lo: 1.0, hi: 1.0 }));
        assert!(Quantity::Time.parse_range("2s..1s").is_err());
    }

    #[test]
    fn serialization_time_is_exact_for_round_rates() {
        assert_eq!(Rate::gbps(1).serialization(1500), Time::from_us(12));
        assert_eq!(Rate::mbps(100).serialization(1000), Time::from_us(80));
        assert_eq!(Rate(62_500_000).serialization(1000), Time::from_us(128));
        // 3 Mb/s does not divide 8e12: rounded up to the next picosecond.
        assert_eq!(Rate::mbps(3).serialization(1), Time(2_666_667));
    }

    #[test]
    fn quantities_beyond_any_link_or_buffer_are_refused_not_wrapped() {
        // The hardening issue's finding: 2^63 - 1 packets read as a negative count, larger
        // buffers as unlimited, rates beyond 2^64 capped silently.
        assert!(parse_buffer("9223372036854775807pkt").unwrap_err().0.contains("at most"));
        assert!(parse_buffer("1e30B").is_err());
        assert!(parse_rate("100000Tbps").unwrap_err().0.contains("at most 1000Tbps"));
        assert_eq!(parse_rate("1000Tbps"), Ok(Rate(MAX_RATE_BPS)));
        assert_eq!(parse_packets("1000000000000pkt"), Ok(MAX_PACKETS));
        assert!(parse_bytes("2000000GB").unwrap_err().0.contains("at most 1000000GB"));
    }
}
