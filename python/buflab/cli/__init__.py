"""The `buflab` command: run, sweep, theory, optical, size, autosize, load, reproduce, report,
analyze, runs, docs, serve.

The top of buflab's layers, with the Python API (`buflab`, `buflab.api`) beside it: it turns
options into calls of the layers below and their answers into tables on the terminal. One
module per command or family of commands: `runs` (run, analyze, traces), `sweeps` (sweep,
reproduce), `report` (every published result in one document), `sizing` (size, autosize),
`store` (`buflab runs`, the run store), `theory`, `optical` (check, show), `load`, `docs`,
`emulate` (emulate, compare) and `serve` (the live control panel); `common` holds what they
share, `console` the terminal's tables and progress bar, and `group` makes the group.

This module is the command's entry point and imports nothing else of buflab at its top: the
commands' modules take a few tenths of a second to import, and a Ctrl-C in that time must
already end in one line and status 130, not a traceback.

`buflab --help` and `buflab theory` must start at once: the command modules import at their
top only what is cheap (click, rich, the engine's door, units, scenarios, theory), and
pandas, pyarrow and matplotlib inside the commands that use them.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing not imported at the start (see `buflab`)
if TYPE_CHECKING:
    from typing import Any

# The exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def main() -> None:
    """`buflab`: the group of commands, with Ctrl-C handled from the first moment."""
    try:
        # start-up time: the commands' modules inside the Ctrl-C handler
        from buflab.cli.group import cli

        cli(prog_name="buflab")
    except KeyboardInterrupt:
        # Interrupted while starting (the commands catch it once they run).
        print("interrupted: stopped before anything was run", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)


def __getattr__(name: str) -> Any:
    # `from buflab.cli import cli` (the tests' and scripts' door to the group).
    if name == "cli":
        # start-up time: the group only when asked for
        from buflab.cli.group import cli

        return cli
    raise AttributeError(f"module 'buflab.cli' has no attribute {name!r}")
