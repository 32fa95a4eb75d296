"""buflab: a packet-level simulator for router buffer sizing.

    import buflab
    result = buflab.run("examples/dumbbell.toml", network__bottleneck__buffer="50pkt")
    result.summary["utilization"]      # dict of summary metrics
    result.flows, result.timeseries    # pandas DataFrames

The engine is Rust (`buflab._core`); this package loads scenarios, applies overrides, turns
results into DataFrames, runs sweeps, draws plots and holds the theory and the recipes.
See docs/scenario.md for every scenario key and result column.

The package is laid out in layers, bottom to top; a module imports only from the layers
below its own and from its own layer without forming a loop (tests/test_layers.py checks
it, and that only the engine's door imports `_core`):

    engine → analysis → plots → experiments → web → cli

- `buflab.engine`: the door to `_core`, units, scenarios and overrides, the event log,
  `Result` and the dtypes of its tables, `run` and `validate`, and the live session.
- `buflab.analysis`: the sizing rules (`theory`), statistics, transfers, the queue rebuilt
  from the event log.
- `buflab.plots`: the shared figure helpers, and the figures of analyses.
- `buflab.experiments`: sweeps, size searches, the live auto-sizer, load, recipes and the
  reports that compare them with published numbers.
- `buflab.web`: `buflab serve`, the live control panel's server and page.
- `buflab.cli`: the `buflab` command and its terminal output.

This module and `buflab.api` are the Python API, on top beside the command line: they only
point at where each name lives, and nothing in the package imports them (but
`__version__`, read here on first use).
"""

from __future__ import annotations

# typing is not imported: a tenth of the package's start, and annotations here are strings
# (`from __future__ import annotations`); type checkers read this name as typing's.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from buflab.analysis import theory
    from buflab.engine import Error, MissingFile, OutputError, ScenarioError, UnitError
    from buflab.engine.emulation.runner import emulate
    from buflab.engine.result import Result
    from buflab.engine.runner import load_run, load_scenario, run, validate
    from buflab.experiments import autosize, load
    from buflab.experiments import store as runs
    from buflab.experiments.size import size, size_curve, size_curves
    from buflab.experiments.sweep import sweep

__all__ = [
    "Error",
    "MissingFile",
    "OutputError",
    "Result",
    "ScenarioError",
    "UnitError",
    "__version__",
    "autosize",
    "emulate",
    "load",
    "load_run",
    "load_scenario",
    "run",
    "runs",
    "size",
    "size_curve",
    "size_curves",
    "sweep",
    "theory",
    "validate",
]

# The API is imported on first use: pandas and pyarrow take most of a second to import, and
# neither the command line's start (help, theory, a Ctrl-C) nor sweep workers need them.
_LAZY = {
    "Result": "buflab.engine.result",
    "emulate": "buflab.engine.emulation.runner",
    "load_scenario": "buflab.engine.runner",
    "load_run": "buflab.engine.runner",
    "run": "buflab.engine.runner",
    "validate": "buflab.engine.runner",
    "size": "buflab.experiments.size",
    "size_curve": "buflab.experiments.size",
    "size_curves": "buflab.experiments.size",
    "sweep": "buflab.experiments.sweep",
    "ScenarioError": "buflab.engine",
    "Error": "buflab.engine",
    "MissingFile": "buflab.engine",
    "OutputError": "buflab.engine",
    "UnitError": "buflab.engine",
}

# Modules that are attributes of the package, as `buflab.theory.bdp_packets(...)`.
_MODULES = {
    "theory": "buflab.analysis.theory",
    "load": "buflab.experiments.load",
    "autosize": "buflab.experiments.autosize",
    "runs": "buflab.experiments.store",
}


# The layers, attributes too, so that `buflab.analysis.queue.analyze(...)` works after
# `import buflab` (each loads its own submodules on first use).
_PACKAGES = ("engine", "analysis", "plots", "experiments")


def _version() -> str:
    """The installed distribution's version, read on first use: importlib.metadata takes a
    tenth of a second, and `import buflab` is the first thing the `buflab` command does (a
    Ctrl-C in its first moments must already find the command's handler)."""
    # start-up time: importlib.metadata on first use of the version
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("buflab")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    # start-up time: nothing imported before a name is asked for
    import importlib

    if name == "__version__":
        globals()["__version__"] = _version()
        return globals()["__version__"]
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in _PACKAGES:
        return importlib.import_module(f"buflab.{name}")
    raise AttributeError(f"module 'buflab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_MODULES, *_PACKAGES})
