"""The Python API: `run`, `validate`, `load_scenario`, the `Result` of a run, and `size` and
`size_curve` for the smallest buffer meeting a target utilization.

    >>> import buflab
    >>> result = buflab.run("examples/dumbbell.toml", network__bottleneck__buffer="50pkt", seed=2)
    >>> result.summary["utilization"], result.flows.head()

Closed-loop traffic adds `result.transfers`, one row per file transfer;
`buflab.analysis.transfers` summarises it by file size. `result.links` has one row per
monitored link: the dumbbell's bottleneck, every hop of a parking lot (whose summary describes
`network.summary_hop`), every link of a network, a tree or a layered network (whose summary
describes `network.summary_link`), or every output line of a switch. A switch run adds
`result.ports`, one row per port: its input's VOQs beside its output line (the summary's
utilization is then the mean over the outputs). A scenario with `[autosize]` adds
`result.autosize`, one row per step of the live auto-sizer (`buflab.autosize` runs one and
plots it). `monitor.trace_flows` adds `result.traces`: the traced TCP senders' congestion
window, ssthresh, smoothed RTT, pacing rate and bytes acknowledged over time
(`buflab.plots.traces` draws them).

Keyword overrides use `__` for the dots of a key (`traffic__0__flows=10`); `overrides` takes
a mapping of dotted keys or a list of "KEY=VALUE" strings, as `--set` does on the command line.
Keyword overrides are applied after `overrides`.

With `monitor.events = true` the bottleneck's event log is recorded: `run(..., events_to=PATH)`
streams it to a Parquet file as the run goes (memory stays bounded; `result.events_file`),
without a path it is kept in memory as `result.events`. `buflab.analysis.queue.analyze`
rebuilds the queue from it.

`buflab.emulate(...)` runs a scenario on real Linux TCP (root; see `buflab emulate --help`)
and returns its summary, its flows (from each socket's TCP_INFO) and the datapath's report.

This module only re-exports; each name lives in its layer: `run`, `validate` and
`load_scenario` in `buflab.engine.runner`, `Result` and the tables' dtypes in
`buflab.engine.result`, `size`, `size_curve` and `size_curves` in `buflab.experiments.size`.
Nothing inside buflab imports it.
"""

from __future__ import annotations

from buflab.engine import Error, MissingFile, OutputError, ScenarioError, UnitError
from buflab.engine.emulation.runner import emulate
from buflab.engine.result import Result, table_dtypes, typed_frame
from buflab.engine.runner import load_run, load_scenario, run, validate
from buflab.experiments.size import size, size_curve, size_curves
from buflab.experiments.sweep import sweep

__all__ = [
    "Error",
    "MissingFile",
    "OutputError",
    "Result",
    "ScenarioError",
    "UnitError",
    "emulate",
    "load_run",
    "load_scenario",
    "run",
    "size",
    "size_curve",
    "size_curves",
    "sweep",
    "table_dtypes",
    "typed_frame",
    "validate",
]
