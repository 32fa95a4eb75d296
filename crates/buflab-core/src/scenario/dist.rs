//! The `distribution` tables: file sizes and think times of finite transfers.
//!
//! Read first: [`super::reader`] (typed key access, errors) and [`crate::traffic::dist`] (what
//! a [`Dist`] draws). Owns the reader of one distribution table under a traffic entry's key,
//! with its empirical CDF. Must not know which traffic kind or key it serves: the caller
//! passes the value parser and the unit of plain numbers.

use serde_json::Value;

use super::reader::{error, Asked, Result, Table};
use crate::traffic::dist::Dist;
use crate::units;

/// Reads the distribution under `key` (a table, or the key's documented default), with
/// values parsed by `parse` (sizes in bytes or times in picoseconds).
pub(super) fn read_dist_key(
    t: &mut Table,
    key: &'static str,
    parse: fn(&str) -> std::result::Result<f64, units::UnitError>,
    number_unit: f64,
    asked: &mut Asked,
) -> Result<Dist> {
    let path = t.key_path(key);
    let v = t.value(key)?;
    let Value::Object(map) = &v else {
        return Err(error(&path, &v, "a table such as { dist = \"exponential\", mean = \"1s\" }"));
    };
    let mut d = Table::entry(path, "distribution", None, map);
    let dist = match d.choice("dist", Dist::NAMES)? {
        "empirical" => read_cdf(&mut d, parse, number_unit)?,
        "pareto" => {
            Dist::Pareto { mean: d.unit("mean", parse)?, shape: d.number_between("shape", 1.0, 100.0)? }
        }
        "exponential" => Dist::Exponential { mean: d.unit("mean", parse)? },
        "choice" => read_choice(&mut d, parse, number_unit)?,
        "lognormal" => {
            Dist::Lognormal { mean: d.unit("mean", parse)?, sigma: d.number_between("sigma", 0.0, 100.0)? }
        }
        "uniform" => {
            let r = d.unit("range", |s| units::parse_range(s, parse))?;
            Dist::Uniform { lo: r.lo, hi: r.hi }
        }
        _ => Dist::Constant(d.unit("value", parse)?),
    };
    // Keys that belong to another kind of distribution are an error, not silently ignored.
    for other in ["mean", "shape", "sigma", "range", "value", "cdf", "file", "values", "weights"] {
        if d.present(other) && !d.asked().any(|(_, k)| k == other) {
            let got = map[other].clone();
            return Err(error(&d.key_path(other), &got, "no such parameter for this `dist`"));
        }
    }
    d.finish(asked)?;
    Ok(dist)
}

/// A choice's `values` (unit strings or plain numbers in `number_unit`s) and `weights`
/// (numbers; equal if left out).
fn read_choice(
    d: &mut Table,
    parse: fn(&str) -> std::result::Result<f64, units::UnitError>,
    number_unit: f64,
) -> Result<Dist> {
    let v = d.value("values")?;
    let path = d.key_path("values");
    let items = v
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| error(&path, &v, "a non-empty array of values"))?;
    let mut values = Vec::with_capacity(items.len());
    for item in items {
        values.push(match item {
            Value::String(s) => parse(s).map_err(|e| error(&path, item, &e.0))?,
            n => n
                .as_f64()
                .map(|x| x * number_unit)
                .ok_or_else(|| error(&path, item, "a value with a unit or a number"))?,
        });
    }
    let wpath = d.key_path("weights");
    let weights = match d.raw("weights") {
        None => vec![1.0; values.len()],
        Some(w) => {
            let expected = format!("{} non-negative numbers, one per value", values.len());
            w.as_array()
                .filter(|a| a.len() == values.len())
                .and_then(|a| a.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>())
                .ok_or_else(|| error(&wpath, w, &expected))?
        }
    };
    Dist::choice(values, weights).map_err(|why| error(&path, &v, &why))
}

/// The `cdf` of an empirical distribution: `[value, probability]` pairs, values as unit
/// strings or plain numbers in `number_unit`s. A `file` must have been read by the front end.
fn read_cdf(
    d: &mut Table,
    parse: fn(&str) -> std::result::Result<f64, units::UnitError>,
    number_unit: f64,
) -> Result<Dist> {
    if d.present("file") && !d.present("cdf") {
        let got = d.value("file")?;
        let expected = "a file the `buflab` command or Python package reads into `cdf` (the engine alone reads no files)";
        return Err(error(&d.key_path("file"), &got, expected));
    }
    if let Some(file) = d.raw("file") {
        return Err(error(&d.key_path("file"), file, "either `cdf` or `file`, not both"));
    }
    let v = d.value("cdf")?;
    let path = d.key_path("cdf");
    let bad = |got: &Value, why: &str| error(&path, got, why);
    let items = v.as_array().ok_or_else(|| bad(&v, "an array of [value, probability] pairs"))?;
    let mut points = Vec::with_capacity(items.len());
    for item in items {
        let pair = item
            .as_array()
            .filter(|p| p.len() == 2)
            .ok_or_else(|| bad(item, "a [value, probability] pair"))?;
        let value = match &pair[0] {
            Value::String(s) => parse(s).map_err(|e| bad(item, &e.0))?,
            n => n
                .as_f64()
                .map(|x| x * number_unit)
                .ok_or_else(|| bad(item, "a value with a unit or a number"))?,
        };
        let p = pair[1].as_f64().ok_or_else(|| bad(item, "a probability between 0 and 1"))?;
        points.push((value, p));
    }
    Dist::empirical(points).map_err(|why| bad(&v, &why))
}
