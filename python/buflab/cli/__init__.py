"""The `buflab` command: run, sweep, theory, optical, size, autosize, load, reproduce, report,
analyze, runs, docs, serve.

The top of buflab's layers, with the Python API (`buflab`, `buflab.api`) beside it: it turns
options into calls of the layers below and their answers into tables on the terminal. One
module per command or family of commands: `runs` (run, analyze, traces), `sweeps` (sweep,
reproduce), `report` (every published result in one document), `sizing` (size, autosize),
`store` (`buflab runs`, the run store), `theory`, `optical` (check, show), `load`, `docs`,
`emulate` (emulate, compare) and `serve` (the live control panel); `common` holds what they
share and `console` the terminal's tables and progress bar. This module only makes the group.

Bad input never ends in a traceback: scenario errors (from the engine or from --set),
TOML syntax errors, missing files and bad unit strings print one line, `error: …`, and
exit with status 2. Ctrl-C during a sweep prints how many runs are kept and exits with 130.

`buflab --help` and `buflab theory` must start at once: the command modules import at their
top only what is cheap (click, rich, the engine's door, units, scenarios, theory), and
pandas, pyarrow and matplotlib inside the commands that use them.
"""

from __future__ import annotations

import click

from buflab import __version__
from buflab.cli import (
    docs,
    emulate,
    load,
    optical,
    report,
    runs,
    serve,
    sizing,
    store,
    sweeps,
    theory,
)
from buflab.cli.common import Group


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="buflab")
def cli() -> None:
    """buflab: packet-level simulation of router buffers."""


for _command in (
    runs.run,
    runs.analyze,
    runs.traces,
    sweeps.sweep,
    sweeps.reproduce,
    report.report,
    sizing.size,
    sizing.autosize,
    store.runs,
    theory.theory_command,
    optical.optical,
    load.load_command,
    docs.docs,
    emulate.emulate,
    emulate.compare,
    serve.serve,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="buflab")
