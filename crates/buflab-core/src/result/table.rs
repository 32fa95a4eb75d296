//! How a result table is described: its name and meaning, and for each column its name, kind
//! (and so its pandas dtype), unit and meaning beside the getter that reads it from a row.
//!
//! Read first: [`super`] (which tables a run exports). This file owns the description types,
//! the `table!` macro that declares a table's columns in one list, and the two ways out of a
//! table: column by column ([`columns`], and [`Export`] for the binding, which reads every
//! table in one loop) and one row as a JSON object ([`row_json`], for the summary). It knows
//! no particular table and nothing of the simulation: a row type and the getters written for
//! it are all it sees.
//!
//! A column's kind is not written by hand: [`kind_of`] derives it from the type its getter
//! returns ([`CellType`]), so a description cannot disagree with what its column holds.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    /// An integer that may be absent (null in JSON, None in Python, <NA> in pandas).
    OptionalInt,
    Float,
    Bool,
    Text,
}

impl Kind {
    /// The pandas dtype of such a column ("str": what pandas 3 gives a column of Python
    /// strings, and what `astype("str")` keeps).
    pub const fn dtype(self) -> &'static str {
        match self {
            Kind::Int => "int64",
            Kind::OptionalInt => "Int64",
            Kind::Float => "float64",
            Kind::Bool => "bool",
            Kind::Text => "str",
        }
    }
}

/// One value of a row, as a getter reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(i64),
    UInt(u64),
    Float(f64),
    Bool(bool),
    Text(Cow<'static, str>),
    /// No value (`first_drop_s` of a run without a drop): null in JSON, NaN in a column.
    Null,
}

/// A Rust type a getter may return: the kind of its column, its value as a cell, and a
/// column of such values. Text getters return a `&'static str` or an owned `String` (not a
/// borrow of the row).
pub trait CellType: Sized {
    const KIND: Kind;
    fn cell(self) -> Cell;
    /// The column of `values`, in order.
    fn column(values: impl Iterator<Item = Self>) -> Values;
}

/// Implements [`CellType`] for `type => Kind, |v| its cell, |v| its value in a column;`.
macro_rules! cell_type {
    ($($t:ty => $kind:ident, |$v:ident| $cell:expr, |$w:ident| $value:expr;)*) => {
        $(impl CellType for $t {
            const KIND: Kind = Kind::$kind;
            fn cell(self) -> Cell {
                let $v = self;
                $cell
            }
            fn column(values: impl Iterator<Item = Self>) -> Values {
                Values::$kind(values.map(|$w| $value).collect())
            }
        })*
    };
}

cell_type! {
    i64 => Int, |v| Cell::Int(v), |v| v;
    // Counts stay far below 2⁶³; a column of int64 could not hold more.
    u64 => Int, |v| Cell::UInt(v), |v| i64::try_from(v).unwrap_or(i64::MAX);
    u32 => Int, |v| Cell::Int(v.into()), |v| i64::from(v);
    f64 => Float, |v| Cell::Float(v), |v| v;
    Option<f64> => Float, |v| v.map_or(Cell::Null, Cell::Float), |v| v.unwrap_or(f64::NAN);
    Option<i64> => OptionalInt, |v| v.map_or(Cell::Null, Cell::Int), |v| v;
    bool => Bool, |v| Cell::Bool(v), |v| v;
    &'static str => Text, |v| Cell::Text(Cow::Borrowed(v)), |v| Cow::Borrowed(v);
    String => Text, |v| Cell::Text(Cow::Owned(v)), |v| Cow::Owned(v);
}

/// The kind of the column whose getter is `get`, from the getter's return type.
pub const fn kind_of<R, T: CellType>(_get: fn(&R) -> T) -> Kind {
    T::KIND
}

/// One column of a table of `R` rows.
pub struct Column<R: 'static> {
    pub name: &'static str,
    /// Derived from `get` by [`kind_of`].
    pub kind: Kind,
    /// "s", "bit/s", "pkt", "B", "MiB"; empty for counts of other things, ratios and labels.
    pub unit: &'static str,
    pub doc: &'static str,
    /// One row's value.
    pub get: fn(&R) -> Cell,
    /// The whole column of some rows: the getter applied to each, in a loop of its own (a
    /// run's tables can have hundreds of thousands of rows).
    pub column: fn(&[R]) -> Values,
}

/// A row type of an exported table, with the table's description.
pub trait Table: Sized + 'static {
    /// The table's name: its key in the binding's result and its file name.
    const NAME: &'static str;
    /// What a row is and when the table has rows.
    const DOC: &'static str;
    const COLUMNS: &'static [Column<Self>];
}

/// Declares the columns of a table of `$row`s in one list, each as
/// `name: "unit", "meaning", |row| getter-expression;`, and implements [`Table`] for it. The
/// getter is written once; the macro derives from it the column's kind (from its type), its
/// cell getter and its column getter.
macro_rules! table {
    ($row:ty, $name:literal, $doc:expr, {
        $($column:ident: $unit:literal, $meaning:literal, |$r:ident| $get:expr;)*
    }) => {
        impl $crate::result::table::Table for $row {
            const NAME: &'static str = $name;
            const DOC: &'static str = $doc;
            const COLUMNS: &'static [$crate::result::table::Column<Self>] = &[$(
                $crate::result::table::Column {
                    name: stringify!($column),
                    kind: $crate::result::table::kind_of(|$r: &$row| $get),
                    unit: $unit,
                    doc: $meaning,
                    get: |$r: &$row| $crate::result::table::CellType::cell($get),
                    column: |rows: &[$row]| {
                        $crate::result::table::CellType::column(rows.iter().map(|$r: &$row| $get))
                    },
                },
            )*];
        }
    };
}
pub(crate) use table;

/// The values of one column, in row order.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Int(Vec<i64>),
    OptionalInt(Vec<Option<i64>>),
    /// Null cells are NaN.
    Float(Vec<f64>),
    Bool(Vec<bool>),
    Text(Vec<Cow<'static, str>>),
}

/// `rows` column by column, in the table's column order, each column made when it is asked
/// for (a run's tables can be large: a reader that takes one column at a time holds one).
pub fn columns<R: Table>(rows: &[R]) -> impl Iterator<Item = (&'static str, Values)> + '_ {
    R::COLUMNS.iter().map(move |c| (c.name, (c.column)(rows)))
}

/// The rows of a described table with their type erased: how the binding reads every table
/// of a run in one loop.
pub trait Export {
    /// The table's name ([`Table::NAME`]).
    fn name(&self) -> &'static str;
    /// Its columns, as [`columns`] gives them.
    fn columns(&self) -> Box<dyn Iterator<Item = (&'static str, Values)> + '_>;
}

impl<R: Table> Export for Vec<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn columns(&self) -> Box<dyn Iterator<Item = (&'static str, Values)> + '_> {
        Box::new(columns(self))
    }
}

/// One row as a JSON object, keys in column order (a non-finite number is null, as
/// `serde_json` writes it).
pub fn row_json<R: Table>(row: &R) -> Map<String, Value> {
    R::COLUMNS
        .iter()
        .map(|c| {
            let value = match (c.get)(row) {
                Cell::Int(v) => Value::from(v),
                Cell::UInt(v) => Value::from(v),
                Cell::Float(v) => Value::from(v),
                Cell::Bool(v) => Value::from(v),
                Cell::Text(v) => Value::from(v.into_owned()),
                Cell::Null => Value::Null,
            };
            (c.name.to_string(), value)
        })
        .collect()
}

/// A column's description without its getter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnInfo {
    pub name: &'static str,
    pub kind: Kind,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// A table's description without its row type, for documentation and the binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: Vec<ColumnInfo>,
}

/// The description of the table of `R` rows.
pub fn describe<R: Table>() -> Description {
    let columns = R::COLUMNS
        .iter()
        .map(|c| ColumnInfo { name: c.name, kind: c.kind, unit: c.unit, doc: c.doc })
        .collect();
    Description { name: R::NAME, doc: R::DOC, columns }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        n: u64,
        x: Option<f64>,
        label: &'static str,
    }

    table!(Row, "rows", "A test table.", {
        n: "pkt", "A count.", |r| r.n;
        x: "s", "A time, if any.", |r| r.x;
        label: "", "A label.", |r| r.label;
        owned: "", "A label built from the row.", |r| format!("{}{}", r.label, r.n);
        flag: "", "Whether n is even.", |r| r.n.is_multiple_of(2);
    });

    fn rows() -> Vec<Row> {
        vec![Row { n: 1, x: Some(0.5), label: "a" }, Row { n: 2, x: None, label: "b" }]
    }

    #[test]
    fn kinds_come_from_the_getters_types() {
        let kinds: Vec<&str> = Row::COLUMNS.iter().map(|c| c.kind.dtype()).collect();
        assert_eq!(kinds, ["int64", "float64", "str", "str", "bool"]);
    }

    #[test]
    fn columns_are_typed_vectors_in_order_and_null_is_nan() {
        let rows = rows();
        let cols: Vec<(&str, Values)> = columns(&rows).collect();
        let names: Vec<&str> = cols.iter().map(|c| c.0).collect();
        assert_eq!(names, ["n", "x", "label", "owned", "flag"]);
        assert_eq!(cols[0].1, Values::Int(vec![1, 2]));
        match &cols[1].1 {
            Values::Float(v) => assert!(v[0] == 0.5 && v[1].is_nan()),
            other => panic!("{other:?}"),
        }
        assert_eq!(cols[3].1, Values::Text(vec!["a1".into(), "b2".into()]));
        assert_eq!(cols[4].1, Values::Bool(vec![false, true]));
        assert_eq!(columns::<Row>(&[]).next(), Some(("n", Values::Int(vec![]))));
        let erased: &dyn Export = &rows;
        assert_eq!((erased.name(), erased.columns().count()), ("rows", 5));
    }

    #[test]
    fn a_row_as_json_keeps_the_column_order_and_writes_none_as_null() {
        let json = Value::Object(row_json(&rows()[1]));
        assert_eq!(json.to_string(), r#"{"n":2,"x":null,"label":"b","owned":"b2","flag":true}"#);
    }
}
