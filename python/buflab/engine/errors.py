"""buflab's exceptions: one hierarchy, so that a caller catches what buflab raises on purpose
with `buflab.Error`, and a scenario's mistakes with `buflab.ScenarioError`. Anything else
that escapes buflab is a bug in it.

    Error                               every error buflab raises on purpose
    ├── ScenarioError  (ValueError)     a scenario, or its overrides, has a bad or unknown
    │   │                               key: one line naming the key, its value and what was
    │   │                               expected (the engine raises it too)
    │   └── MissingFile  (FileNotFoundError)  a scenario file, or a file it names, is not there
    ├── UnitError  (ValueError)         a quantity's text ("10Mbps") cannot be read
    ├── OutputError  (OSError)          a result cannot be written where it was asked to go
    ├── EventLogError  (OSError)        the event log's destination failed mid-run
    └── EngineMissing  (RuntimeError)   the compiled engine is not installed

The emulator adds `EmulationError` (the machine cannot run an emulation), sweeps
`SweepConflict` (a ScenarioError) and the optical FIFO's checks `OpticalInputError` (an N,
K or request it cannot take, a ValueError); all are Errors. Each also derives from the built-in
exception a caller would have caught before, so that such code keeps working.

Plain classes: this module must not import anything of buflab.
"""

from __future__ import annotations


class Error(Exception):
    """Every error buflab raises on purpose; its message is one line meant for the user."""


class ScenarioError(Error, ValueError):
    """A scenario key has a bad value or is unknown; the message names the key."""


class MissingFile(ScenarioError, FileNotFoundError):
    """A scenario file, or a file a scenario names, does not exist."""


class UnitError(Error, ValueError):
    """A unit string could not be read; the message says what was expected."""


class OutputError(Error, OSError):
    """A result cannot be written where it was asked to go (not a directory, read-only)."""


class EventLogError(Error, OSError):
    """The event log's sink failed (a full disk, say); the run itself finished."""


class EngineMissing(Error, RuntimeError):
    """buflab._core is not importable."""
