"""The `buflab` group: every command, each from its module (see the package's docstring).

Bad input never ends in a traceback: scenario errors (from the engine or from --set),
TOML syntax errors, missing files and bad unit strings print one line, `error: …`, and
exit with status 2 (`common.Group`). Ctrl-C during a sweep prints how many runs are kept and
exits with 130; anywhere else, one line and 130 too.
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
