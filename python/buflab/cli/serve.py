"""`buflab serve [FILE]`: the live control panel, a page on this machine that drives a
running experiment (thesis ch. 4.3, Fig 4.15).

It reads the options, builds the catalogue the page may pick from (FILE, the shipped
examples and recipes) and starts the web layer's server (`buflab.web`); it opens no browser.
"""

from __future__ import annotations

from pathlib import Path

import click

from buflab.cli.common import BadInput
from buflab.engine import Error
from buflab.engine.emulation.testbed import require_privileges


@click.command(name="serve")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; beyond the loopback other machines get in (a warning says so).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on; 0 picks a free one.",
)
@click.option(
    "--emulate",
    is_flag=True,
    help="Drive `buflab emulate` (real Linux TCP, root) instead of the simulator: the buffer "
    "changes live; flows, access, pacing, cc and the auto-sizer do not.",
)
def serve(file: Path | None, host: str, port: int, emulate: bool) -> None:
    """Serve a page that runs a scenario live: charts of utilization, goodput, queue, drops,
    delay and windows as it runs, controls for the buffer, flows, access links, pacing, cc
    and the auto-sizer, and the session to download as a scenario file that replays it."""
    # The web layer pulls in aiohttp and the experiments: imported here, not at the top, to
    # keep the start-up time of every other command.
    from buflab.web.catalogue import catalogue
    from buflab.web.experiment import Experiment
    from buflab.web.server import serve as run_server

    try:
        entries = catalogue(file)
        if emulate:
            require_privileges()
        run_server(Experiment(entries, emulate=emulate), host, port, click.echo)
    except Error as error:
        raise BadInput(str(error)) from None
