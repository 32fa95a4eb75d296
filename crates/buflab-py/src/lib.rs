//! The Python binding of buflab's engine: scenario JSON in, plain dicts of columns out.
//! Deliberately thin (STYLE habit 12): no logic here that Python or the core should own.
//!
//! Read first: `python/buflab/engine/__init__.py` (the one door Python opens to this module) and
//! the core's [`buflab_core::result`] (what a run exports). Owns the conversion of JSON and columns
//! to Python objects and the streaming of the event log; must not hold a rule of the model, a
//! column name or a default.

use buflab_core::monitor::{EventLog, EventSink};
use buflab_core::queue::optical;
use buflab_core::result::table::Values;
use buflab_core::result::{descriptions, RunResult};
use buflab_core::scenario::{schema as core_schema, Scenario, ScenarioError as CoreError};
use buflab_core::units::{BufferLimit, Quantity};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyTuple, PyType};
use serde_json::Value;
use std::sync::{Arc, Mutex};

create_exception!(buflab._core, ScenarioError, PyValueError, "A scenario key has a bad value or is unknown.");

/// The class scenario errors are raised as: the package's own `buflab.ScenarioError` once it
/// has named it (`use_scenario_error`, at import), so that it sits in the package's exception
/// hierarchy; this module's `ScenarioError` before that (the module used on its own).
static SCENARIO_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn scenario_error_text(message: String) -> PyErr {
    Python::with_gil(|py| match SCENARIO_ERROR.get(py) {
        Some(class) => PyErr::from_type(class.bind(py).clone(), message),
        None => ScenarioError::new_err(message),
    })
}

fn scenario_error(e: CoreError) -> PyErr {
    scenario_error_text(e.to_string())
}

/// Raises scenario errors as `class` from now on (see `SCENARIO_ERROR`).
#[pyfunction]
fn use_scenario_error(py: Python<'_>, class: Bound<'_, PyType>) {
    let _ = SCENARIO_ERROR.set(py, class.unbind());
}

fn parse(scenario_json: &str) -> PyResult<Value> {
    serde_json::from_str(scenario_json)
        .map_err(|e| scenario_error_text(format!("scenario is not valid JSON: {e}")))
}

/// Converts a JSON value to the matching Python object.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let d = PyDict::new(py);
            for (k, item) in map {
                d.set_item(k, to_py(py, item)?)?;
            }
            d.into_any()
        }
    })
}

#[pyfunction]
fn version() -> &'static str {
    buflab_core::VERSION
}

/// The engine build: the version and a digest of the engine's source (`build.rs`), the same
/// for the same source on every machine. Runs record it; a run of another build is never
/// mixed in with this one's.
#[pyfunction]
fn engine_build() -> String {
    format!("{}+{}", buflab_core::VERSION, env!("BUFLAB_ENGINE_SOURCE"))
}

/// Every documented scenario key, in documentation order.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    core_schema::keys()
        .iter()
        .map(|k| {
            let d = PyDict::new(py);
            d.set_item("section", k.section)?;
            let key = match k.section {
                "" => k.key.to_string(),
                s if s.starts_with("traffic") => format!("traffic[].{}", k.key),
                // `[[network.hop]]` entries, one per hop.
                "network.hop" => format!("network.hop[].{}", k.key),
                // `[[change]]` entries, in time order.
                "change" => format!("change[].{}", k.key),
                // Distribution tables sit under traffic entries' file_size and think keys.
                "distribution" => format!("traffic[].{{file_size,think}}.{}", k.key),
                s => format!("{s}.{}", k.key),
            };
            d.set_item("key", key)?;
            d.set_item("type", k.ty)?;
            d.set_item("default", k.default)?;
            d.set_item("doc", k.doc)?;
            Ok(d)
        })
        .collect()
}

/// Validates a scenario and returns it with defaults filled in; with `link_facts`, the pair
/// of it and `link_facts(...)`'s answer, from one reading of the scenario.
#[pyfunction]
#[pyo3(signature = (scenario_json, link_facts = false))]
fn validate<'py>(py: Python<'py>, scenario_json: &str, link_facts: bool) -> PyResult<Bound<'py, PyAny>> {
    let v = parse(scenario_json)?;
    let (scenario, n) = Scenario::read_normalized(&v).map_err(scenario_error)?;
    if !link_facts {
        return to_py(py, &n);
    }
    let pair = (to_py(py, &n)?, to_py(py, &scenario.link_facts().to_json())?);
    Ok(PyTuple::new(py, [pair.0, pair.1])?.into_any())
}

/// A validated scenario.
fn read_scenario(scenario_json: &str) -> PyResult<Scenario> {
    Scenario::from_value(&parse(scenario_json)?).map_err(scenario_error)
}

/// What the scenario means for the link its run summary describes (see
/// `buflab_core::scenario::facts`): `buflab.theory.LinkFacts`'s fields.
#[pyfunction]
fn link_facts<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &read_scenario(scenario_json)?.link_facts().to_json())
}

/// What the scenario's traffic offers that link, entry by entry, as `buflab.load` reads it.
#[pyfunction]
fn traffic_facts<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &read_scenario(scenario_json)?.traffic_facts().to_json())
}

/// The RTTs and placements of flows `first..first + count` of traffic entry `entry`, drawn as
/// the simulator draws them for flows of those ids (`buflab_core::traffic::by_flow`): an
/// emulation's open-loop slots, which the simulator adds as arrivals come, need theirs before
/// the run. Columns `rtt_s`, `machine` and `class` (−1 without machines), as the flows table's.
#[pyfunction]
fn flow_slots<'py>(
    py: Python<'py>,
    scenario_json: &str,
    entry: usize,
    first: u64,
    count: u64,
) -> PyResult<Bound<'py, PyAny>> {
    use buflab_core::traffic::by_flow;
    let s = read_scenario(scenario_json)?;
    let rtt = s.rtts.get(entry).ok_or_else(|| PyValueError::new_err(format!("no traffic entry {entry}")))?;
    let net = &s.network;
    let ids = first..first + count;
    let rtts: Vec<f64> = ids.clone().map(|id| by_flow::rtt(s.seed, rtt, id).0.secs_f64()).collect();
    let placed: Vec<(i64, i64)> = ids
        .map(|id| match net.machines {
            0 => (-1, -1),
            m => {
                let (machine, class) = by_flow::placement(id, m, net.classes);
                (machine as i64, if s.cross[entry] { -1 } else { class as i64 })
            }
        })
        .collect();
    let table = serde_json::json!({
        "rtt_s": rtts,
        "machine": placed.iter().map(|p| p.0).collect::<Vec<_>>(),
        "class": placed.iter().map(|p| p.1).collect::<Vec<_>>(),
    });
    to_py(py, &table)
}

fn quantity(kind: &str) -> PyResult<Quantity> {
    Quantity::from_name(kind)
        .ok_or_else(|| PyValueError::new_err(format!("unknown kind of quantity {kind:?}")))
}

/// A unit string read as the engine reads it, in the base unit of `kind` ("rate": bits/s,
/// "time": seconds, "bytes", "packets"); ValueError with what was expected otherwise.
#[pyfunction]
fn parse_quantity(text: &str, kind: &str) -> PyResult<f64> {
    quantity(kind)?.parse(text).map_err(|e| PyValueError::new_err(e.0))
}

/// A range "lo..hi" (or one value) of `kind`, as `parse_quantity` reads each end.
#[pyfunction]
fn parse_range(text: &str, kind: &str) -> PyResult<(f64, f64)> {
    let r = quantity(kind)?.parse_range(text).map_err(|e| PyValueError::new_err(e.0))?;
    Ok((r.lo, r.hi))
}

/// Runs a scenario; the simulation itself runs without the GIL. With `event_sink`, a callable,
/// the event log (`monitor.events`) is streamed to it in batches (see `event_batch`) instead of
/// returned; the GIL is taken only to hand a batch over.
#[pyfunction]
#[pyo3(signature = (scenario_json, event_sink=None, progress=None))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    event_sink: Option<PyObject>,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let v = parse(scenario_json)?;
    let scenario = Scenario::from_value(&v).map_err(scenario_error)?;
    // The sink's Python exception, re-raised as it was once the run is over (a full disk
    // stays an OSError, Ctrl-C in the sink a KeyboardInterrupt).
    let failure = Arc::new(Mutex::new(None));
    // Ctrl-C: the run asks Python now and then whether a signal came; a KeyboardInterrupt
    // stops it and is raised as it was.
    // `progress`, if given, is called with the simulated seconds reached, at most four times
    // a second of wall time (an exception from it stops the run as Ctrl-C does).
    let signalled = failure.clone();
    let mut shown = std::time::Instant::now();
    let interrupt = Box::new(move |now: buflab_core::units::Time| {
        Python::with_gil(|py| {
            let mut outcome = py.check_signals();
            if let (Ok(()), Some(callback)) = (&outcome, &progress) {
                if shown.elapsed() >= std::time::Duration::from_millis(250) {
                    shown = std::time::Instant::now();
                    outcome = callback.call1(py, (now.secs_f64(),)).map(|_| ());
                }
            }
            match outcome {
                Ok(()) => false,
                Err(error) => {
                    if let Ok(mut slot) = signalled.lock() {
                        slot.get_or_insert(error);
                    }
                    true
                }
            }
        })
    });
    let r = py.allow_threads(|| {
        let sink = event_sink.map(|callback| {
            Box::new(PythonSink { callback, failure: failure.clone() }) as Box<dyn EventSink>
        });
        buflab_core::run_interruptible(&scenario, sink, interrupt)
    });
    if let Some(error) = failure.lock().map_or(None, |mut slot| slot.take()) {
        return Err(error);
    }
    let Some(r) = r else {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("the run was interrupted"));
    };
    result_to_py(py, &r)
}

/// An event sink that calls a Python function with each batch.
struct PythonSink {
    callback: PyObject,
    failure: Arc<Mutex<Option<PyErr>>>,
}

impl EventSink for PythonSink {
    fn write(&mut self, batch: &EventLog) -> Result<(), String> {
        Python::with_gil(|py| {
            let outcome =
                event_batch(py, batch).and_then(|columns| self.callback.call1(py, (columns,)).map(|_| ()));
            outcome.map_err(|error| {
                let text = error.to_string();
                if let Ok(mut slot) = self.failure.lock() {
                    slot.get_or_insert(error);
                }
                text
            })
        })
    }
}

/// A batch of events as raw little-endian columns (`bytes`), for numpy.frombuffer: time_ps
/// u64, event u8 (0 enqueue, 1 dequeue, 2 drop, 3 mark), flow, seq and size u32, queue_pkts and
/// queue_bytes u64. Lists of Python ints would cost more than the simulation.
fn event_batch<'py>(py: Python<'py>, log: &EventLog) -> PyResult<Bound<'py, PyDict>> {
    fn le<T: Copy, const N: usize>(values: &[T], bytes: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        let mut out = Vec::with_capacity(values.len() * N);
        for &v in values {
            out.extend_from_slice(&bytes(v));
        }
        out
    }
    let d = PyDict::new(py);
    d.set_item("time_ps", PyBytes::new(py, &le(&log.time, |t| t.0.to_le_bytes())))?;
    d.set_item("event", PyBytes::new(py, &log.event))?;
    d.set_item("flow", PyBytes::new(py, &le(&log.flow, u32::to_le_bytes)))?;
    d.set_item("seq", PyBytes::new(py, &le(&log.seq, u32::to_le_bytes)))?;
    d.set_item("size", PyBytes::new(py, &le(&log.size, u32::to_le_bytes)))?;
    d.set_item("queue_pkts", PyBytes::new(py, &le(&log.queue_pkts, u64::to_le_bytes)))?;
    d.set_item("queue_bytes", PyBytes::new(py, &le(&log.queue_bytes, u64::to_le_bytes)))?;
    Ok(d)
}

/// A described table as a dict of columns (lists, named and ordered as `_core.tables()`
/// describes it).
fn columns_to_py<'py>(
    py: Python<'py>,
    table: &dyn buflab_core::result::table::Export,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, values) in table.columns() {
        match values {
            Values::Int(v) => d.set_item(name, v)?,
            Values::OptionalInt(v) => d.set_item(name, v)?,
            Values::Float(v) => d.set_item(name, v)?,
            Values::Bool(v) => d.set_item(name, v)?,
            Values::Text(v) => d.set_item(name, PyList::new(py, v.iter().map(|s| s.as_ref()))?)?,
        }
    }
    Ok(d)
}

/// A run's result: the summary as a dict, every described table as a dict of columns (lists,
/// named and ordered as `_core.tables()` describes them), and the event log.
fn result_to_py<'py>(py: Python<'py>, r: &RunResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("summary", to_py(py, &Value::Object(r.summary.to_json()))?)?;
    for table in r.tables() {
        out.set_item(table.name(), columns_to_py(py, table)?)?;
    }
    match &r.events {
        None => out.set_item("events", py.None())?,
        Some(log) => out.set_item("events", event_batch(py, log)?)?,
    }
    let queue = PyDict::new(py);
    let q = &r.events_queue;
    queue.set_item("name", &q.name)?;
    // An unbounded bump's rate is u64::MAX bit/s: serialization still rounds up to 1 ps.
    queue.set_item("rate_bps", q.rate.bits_per_s())?;
    let (pkts, bytes) = match q.buffer {
        BufferLimit::Packets(n) => (Some(n), None),
        BufferLimit::Bytes(n) => (None, Some(n)),
        BufferLimit::Unlimited => (None, None),
    };
    queue.set_item("buffer_pkts", pkts)?;
    queue.set_item("buffer_bytes", bytes)?;
    queue.set_item("fifo", q.fifo)?;
    out.set_item("events_queue", queue)?;
    out.set_item("events_written", r.events_written)?;
    out.set_item("events_error", r.events_error.as_deref())?;
    Ok(out)
}

/// The result of an emulated run of `scenario_json` rebuilt from its datapath's raw event log
/// at `path` (rows of `buflab_queue::log::LogRow`): the summary's queue figures, the links row and
/// the time series, computed by the simulator's own monitor (`result::replayed`). Times in
/// the log are shifted back by `offset_ps` (the datapath starts before the traffic; rows
/// before that are placed at 0); the window and interval are on the shifted clock, and rows
/// after the window's end (the datapath outlives the traffic by a moment) are left out, as a
/// simulated run's log ends with it. `buffer` is the limit at the end of the run ("100pkt",
/// "unlimited").
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn replay_queue_log<'py>(
    py: Python<'py>,
    scenario_json: &str,
    path: &str,
    rate_bps: u64,
    buffer: &str,
    window_start_ps: u64,
    window_end_ps: u64,
    interval_ps: u64,
    offset_ps: u64,
) -> PyResult<Bound<'py, PyDict>> {
    use buflab_core::monitor::replay::LogRow;
    use buflab_core::monitor::MeasuredWindow;
    use buflab_core::result::replayed::{from_queue_log, LoggedQueue};
    use buflab_core::units::{parse_buffer, Rate, Time};
    use std::io::Read;

    let scenario = read_scenario(scenario_json)?;
    let limit =
        parse_buffer(buffer).map_err(|e| PyValueError::new_err(format!("buffer {buffer:?}: {}", e.0)))?;
    let queue = LoggedQueue {
        rate: Rate::bps(rate_bps),
        buffer: limit,
        window: MeasuredWindow { start: Time(window_start_ps), end: Time(window_end_ps) },
        interval: Time(interval_ps),
    };
    let file = std::fs::File::open(path)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{path}: {e}")))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut bytes = [0u8; LogRow::BYTES];
    let rows = std::iter::from_fn(move || {
        reader.read_exact(&mut bytes).ok()?;
        let r = LogRow::read_from(&bytes);
        Some(LogRow { time: Time(r.time.0.saturating_sub(offset_ps)), ..r })
    })
    .take_while(move |e| e.time.0 <= window_end_ps);
    let r = py
        .allow_threads(|| from_queue_log(&scenario, &queue, rows))
        .map_err(|e| PyValueError::new_err(format!("{path}: {e}")))?;
    result_to_py(py, &r)
}

/// TOML text as JSON text, for the front end: Python's own TOML reader takes seconds on a
/// file of 100,000 traffic entries, this a fraction of one. Dates and times become their
/// text, and floats JSON cannot hold (nan, inf) the strings "nan" and "inf", so that the
/// engine refuses them naming their key. A syntax error is a ValueError of one line, with
/// the line and column.
#[pyfunction]
fn toml_to_json(py: Python<'_>, text: &str) -> PyResult<String> {
    let parsed = py.allow_threads(|| text.parse::<toml::Table>());
    let table = parsed.map_err(|e| {
        let at = e.span().map(|span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!(" (at line {line}, column {column})")
        });
        // One line: the parser's message may run over several.
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        let message = if message.contains("recursion limit") {
            "tables or arrays nested too deep to read".to_string()
        } else {
            message
        };
        PyValueError::new_err(format!("{message}{}", at.unwrap_or_default()))
    })?;
    Ok(toml_json(toml::Value::Table(table)).to_string())
}

fn toml_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) if f.is_finite() => Value::from(f),
        toml::Value::Float(f) => Value::String(if f.is_nan() { "nan".into() } else { format!("{f}") }),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_json).collect()),
        toml::Value::Table(t) => Value::Object(t.into_iter().map(|(k, v)| (k, toml_json(v))).collect()),
    }
}

/// Every table a result carries, the summary first: name -> {"doc": what a row is,
/// "columns": [{"name", "dtype", "unit", "doc"}, ...] in column order}.
#[pyfunction]
fn tables(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for t in descriptions() {
        let columns = PyList::empty(py);
        for c in &t.columns {
            let d = PyDict::new(py);
            d.set_item("name", c.name)?;
            d.set_item("dtype", c.kind.dtype())?;
            d.set_item("unit", c.unit)?;
            d.set_item("doc", c.doc)?;
            columns.append(d)?;
        }
        let table = PyDict::new(py);
        table.set_item("doc", t.doc)?;
        table.set_item("columns", columns)?;
        out.set_item(t.name, table)?;
    }
    Ok(out)
}

/// A scenario run in steps and changed as it goes (`buflab_core::live`): the engine of
/// `buflab serve`. Each step runs without the GIL.
#[pyclass(module = "buflab._core")]
struct LiveSession {
    // A Python object may be reached from several threads; the session is used by one at a
    // time (each call holds the lock), and steps without the GIL.
    inner: Mutex<Option<buflab_core::live::Session>>,
}

impl LiveSession {
    /// Calls `f` with the session, unless it has finished.
    fn with<T>(&self, f: impl FnOnce(&mut buflab_core::live::Session) -> PyResult<T>) -> PyResult<T> {
        let mut guard = self.inner.lock().map_err(|_| PyValueError::new_err("the session failed"))?;
        let session = guard.as_mut().ok_or_else(|| PyValueError::new_err("the session has finished"))?;
        f(session)
    }
}

#[pymethods]
impl LiveSession {
    #[new]
    fn new(py: Python<'_>, scenario_json: &str) -> PyResult<LiveSession> {
        let scenario = read_scenario(scenario_json)?;
        let session = py.allow_threads(|| buflab_core::live::Session::new(&scenario));
        Ok(LiveSession { inner: Mutex::new(Some(session)) })
    }

    /// Runs every event before `t_ps` (at most the end of the run).
    fn run_until(&self, py: Python<'_>, t_ps: u64) -> PyResult<()> {
        py.allow_threads(|| {
            self.with(|s| {
                s.run_until(buflab_core::units::Time(t_ps));
                Ok(())
            })
        })
    }

    /// The time reached and the end of the run, picoseconds.
    fn reached_ps(&self) -> PyResult<u64> {
        self.with(|s| Ok(s.reached().0))
    }

    fn end_ps(&self) -> PyResult<u64> {
        self.with(|s| Ok(s.end().0))
    }

    /// Applies a change now (a `[[change]]` entry without `at`, as JSON); returns the entry
    /// as it replays, with its `at`. A bad change raises ScenarioError and changes nothing.
    fn apply<'py>(&self, py: Python<'py>, change_json: &str) -> PyResult<Bound<'py, PyAny>> {
        let v = parse(change_json)?;
        let Value::Object(map) = v else {
            return Err(scenario_error_text(format!("change: got {v}; expected a table")));
        };
        let entry = self.with(|s| s.apply(&map).map_err(scenario_error))?;
        to_py(py, &Value::Object(entry))
    }

    /// What changed since the previous reading (`buflab_core::live::Reading`), as a dict.
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.with(|s| Ok(s.read()))?;
        let d = PyDict::new(py);
        d.set_item("time_s", r.time.secs_f64())?;
        d.set_item("interval_s", r.interval.secs_f64())?;
        d.set_item("utilization", r.utilization)?;
        d.set_item("goodput_bps", r.goodput_bps)?;
        d.set_item("arrivals", r.arrivals)?;
        d.set_item("drops", r.drops)?;
        d.set_item("queue_pkts", r.queue_pkts)?;
        d.set_item("queue_bytes", r.queue_bytes)?;
        d.set_item("mean_queue_pkts", r.mean_queue_pkts)?;
        d.set_item("queue_delay_s", r.queue_delay_s)?;
        let (pkts, bytes) = match r.limit {
            BufferLimit::Packets(n) => (Some(n), None),
            BufferLimit::Bytes(n) => (None, Some(n)),
            BufferLimit::Unlimited => (None, None),
        };
        d.set_item("buffer_pkts", pkts)?;
        d.set_item("buffer_bytes", bytes)?;
        d.set_item("open_flows", r.open_flows)?;
        d.set_item("windows", r.windows)?;
        let steps = PyList::empty(py);
        for s in &r.steps {
            let row = PyDict::new(py);
            row.set_item("time_s", s.time.secs_f64())?;
            row.set_item("buffer_pkts", s.buffer_pkts)?;
            row.set_item("utilization", s.utilization)?;
            row.set_item("passed", s.passed)?;
            row.set_item("next_buffer_pkts", s.next_buffer_pkts)?;
            row.set_item("converged", s.converged)?;
            steps.append(row)?;
        }
        d.set_item("steps", steps)?;
        d.set_item("autosizing", r.autosizing)?;
        Ok(d)
    }

    /// Runs what is left and returns the run's result, as `run` does.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let taken = self.inner.lock().map_err(|_| PyValueError::new_err("the session failed"))?.take();
        let session = taken.ok_or_else(|| PyValueError::new_err("the session has finished"))?;
        let r = py.allow_threads(|| session.finish());
        result_to_py(py, &r)
    }
}

/// The live auto-sizer of a scenario's `[autosize]` (`buflab_core::autosize::AutoSizer`, its
/// first interval from the end of warm-up) driven from outside the simulator: the emulator
/// reads its datapath's counts when `next_at_ps` is due, passes them to `tick` and sets the
/// limit it returns. The same search, the same `autosize` table and the same answer as a
/// simulated run's.
#[pyclass(module = "buflab._core")]
struct AutoSizer {
    inner: Mutex<buflab_core::autosize::AutoSizer>,
}

impl AutoSizer {
    fn with<T>(&self, f: impl FnOnce(&mut buflab_core::autosize::AutoSizer) -> T) -> PyResult<T> {
        let mut guard = self.inner.lock().map_err(|_| PyValueError::new_err("the auto-sizer failed"))?;
        Ok(f(&mut guard))
    }
}

#[pymethods]
impl AutoSizer {
    /// ScenarioError for a bad scenario, or one without `autosize.target_utilization`.
    #[new]
    fn new(scenario_json: &str) -> PyResult<AutoSizer> {
        let s = read_scenario(scenario_json)?;
        let config = s.autosize.ok_or_else(|| {
            scenario_error_text(
                "autosize.target_utilization: missing; expected a target utilization, the \
                 auto-sizer's one required key"
                    .to_string(),
            )
        })?;
        // Link 0: the auto-sizer never sees links; the driver knows which limit it sets.
        Ok(AutoSizer { inner: Mutex::new(buflab_core::autosize::AutoSizer::new(0, &config, s.warmup)) })
    }

    /// When the next reading is due, ps from the run's time 0.
    #[getter]
    fn next_at_ps(&self) -> PyResult<u64> {
        self.with(|a| a.next_at().0)
    }

    /// A reading at `now_ps` (not before `next_at_ps`): the bottleneck's busy time, arrivals
    /// and drops since time 0. Returns the limit for the next interval (packets) at the end
    /// of an interval, None when the reading only took the interval's baseline.
    fn tick(&self, now_ps: u64, busy_ps: u64, arrivals: u64, drops: u64) -> PyResult<Option<u64>> {
        use buflab_core::monitor::Cumulative;
        use buflab_core::units::Time;
        let due = self.next_at_ps()?;
        if now_ps < due {
            return Err(PyValueError::new_err(format!(
                "a reading at {now_ps} ps, before it is due at {due} ps"
            )));
        }
        let totals = Cumulative { busy_ps, arrivals, drops, ..Default::default() };
        self.with(|a| a.tick(Time(now_ps), totals))
    }

    /// The steps so far, as the `autosize` table's columns.
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let steps = self.with(|a| a.steps.clone())?;
        columns_to_py(py, &steps)
    }

    /// The answer (the median of the sizes the search converged to), None before any.
    fn answer(&self) -> PyResult<Option<u64>> {
        self.with(|a| a.answer())
    }
}

/// An optical FIFO's construction for N − 1 packets with Thm 6.2's K (thesis ch. 6): its
/// lines' lengths and counts, beside the theorem's formulas. A bad N or K is a ValueError
/// saying what was expected.
#[pyfunction]
fn optical_layout(py: Python<'_>, n: u64, k: u64) -> PyResult<Bound<'_, PyAny>> {
    let l = optical::Layout::new(n, k).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let v = serde_json::json!({
        "n": l.n(), "k": l.k(),
        "delay_lines": l.delay_lines(), "waiting_lines": l.waiting_lines(),
        "lines": l.lines(), "length": l.length(), "longest": l.longest(),
        "theorem_lines": optical::layout::theorem_lines(n, k),
        "theorem_length": optical::layout::theorem_length(n, k),
    });
    to_py(py, &v)
}

/// The request pattern `pattern` ("bernoulli" at `load` with departures of probability
/// `depart`, "bursts" of up to `longest` slots, or "sawtooth") for `slots` slots, sequence
/// `seed`, through an optical FIFO and an electronic FIFO of N − 1 side by side
/// (`optical::check`): what both did, the mismatches and the model's counts.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn optical_check<'py>(
    py: Python<'py>,
    n: u64,
    k: u64,
    pattern: &str,
    load: f64,
    depart: f64,
    longest: u64,
    slots: u64,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let layout = optical::Layout::new(n, k).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let pattern = match pattern {
        "bernoulli" => optical::Pattern::Bernoulli { load, depart },
        "bursts" => optical::Pattern::Bursts { longest },
        "sawtooth" => optical::Pattern::Sawtooth,
        other => return Err(PyValueError::new_err(format!("no request pattern {other:?}"))),
    };
    let requests = optical::RequestStream::new(pattern, n, seed).take(slots as usize);
    let r = py.allow_threads(|| optical::check::against_fifo(layout, requests));
    let c = &r.counts;
    let v = serde_json::json!({
        "pattern": pattern.label(), "slots": r.slots, "arrivals": r.arrivals, "drops": r.drops,
        "departures": r.departures, "mismatches": r.mismatches, "first_mismatch": r.first_mismatch,
        "violations": r.violations.total(), "waiting_max": c.waiting_max,
        "passes_max": c.passes_max, "passes_sum": c.passes_sum,
        "recirculations_max": c.recirculations_max, "from_waiting": c.from_waiting,
        "reconfigurations_sum": c.reconfigurations_sum, "reconfigurations_max": c.reconfigurations_max,
    });
    to_py(py, &v)
}

/// The slots of `requests` (departure, arrival) through an empty optical FIFO, as text for a
/// student to step through (`optical::show::walk`).
#[pyfunction]
fn optical_walk(n: u64, k: u64, requests: Vec<(bool, bool)>) -> PyResult<String> {
    let layout = optical::Layout::new(n, k).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let requests: Vec<optical::Requests> =
        requests.into_iter().map(|(departure, arrival)| optical::Requests { departure, arrival }).collect();
    Ok(optical::show::walk(layout, &requests))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(engine_build, m)?)?;
    m.add_function(wrap_pyfunction!(use_scenario_error, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(tables, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(replay_queue_log, m)?)?;
    m.add_function(wrap_pyfunction!(link_facts, m)?)?;
    m.add_function(wrap_pyfunction!(traffic_facts, m)?)?;
    m.add_function(wrap_pyfunction!(flow_slots, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(parse_range, m)?)?;
    m.add_class::<LiveSession>()?;
    m.add_class::<AutoSizer>()?;
    m.add_function(wrap_pyfunction!(optical_layout, m)?)?;
    m.add_function(wrap_pyfunction!(optical_check, m)?)?;
    m.add_function(wrap_pyfunction!(optical_walk, m)?)?;
    Ok(())
}
