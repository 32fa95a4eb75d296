"""`buflab runs DIR`: the run store of an output directory, listed, filtered and exported.

It reads options and prints; the store and the filter are the experiments layer's
(`buflab.experiments.store`, `buflab.experiments.where`). It must not know how runs are
stored.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from buflab.cli.common import BadInput
from buflab.cli.console import stdout
from buflab.engine.files import write_atomically

# Columns every listing shows when the store has them, after the run and the varied keys.
_SHOWN_METRICS = ("seed", "utilization", "drop_rate", "wall_s")
# The store's own columns: never taken for varied scenario keys.
_BOOKKEEPING = {
    "key", "run", "directory", "command", "point", "finished_at", "engine_build",
    "buflab_version", "host", "estimated_wall_s", "cost_packets", "cost_flows", "scenario",
    "engine_current", "name",
}  # fmt: skip
# The most varied scenario keys a listing shows (--columns shows any).
_MOST_VARIED = 6


@click.command("runs")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--where",
    "wheres",
    multiple=True,
    metavar="EXPR",
    help='Only runs matching EXPR, e.g. "network.bottleneck.buffer < 100 and utilization > '
    '0.9" (repeatable: all must hold). Quantities compare as quantities: 1Gbps, 50ms, 64KB.',
)
@click.option(
    "--columns",
    metavar="A,B,...",
    help="The columns to list [default: run, the scenario keys that vary, seed, utilization, "
    "drop rate, wall time].",
)
@click.option(
    "--csv", "csv_path", type=click.Path(path_type=Path), help="Write the runs to a CSV file."
)
@click.option(
    "--parquet",
    "parquet_path",
    type=click.Path(path_type=Path),
    help="Write the runs to a Parquet file.",
)
@click.option(
    "--all-engines",
    is_flag=True,
    help="Include runs made by other engine builds (column engine_current says which).",
)
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True,
              help="Rows listed on the terminal (files get every row).")  # fmt: skip
def runs(
    directory: Path,
    wheres: tuple[str, ...],
    columns: str | None,
    csv_path: Path | None,
    parquet_path: Path | None,
    all_engines: bool,
    limit: int,
) -> None:
    """The runs stored in DIRECTORY (the --out of a sweep, size search or reproduction), read
    from its run store DIR/store without opening a run file: listed, filtered with --where
    and written whole with --csv or --parquet. Runs made by another engine build are left
    out unless --all-engines is given."""
    # start-up time: the store reads Parquet with pandas and pyarrow
    from buflab.experiments import store
    from buflab.experiments.where import select

    frame = store.open(directory, all_engines=all_engines)
    stored = len(frame)
    for text in wheres:
        frame = frame[select(frame, text)] if len(frame) else frame
    chosen = _chosen_columns(frame, columns)
    for path, write in ((csv_path, "to_csv"), (parquet_path, "to_parquet")):
        if path is not None:
            _write(frame, path, write)
    if len(frame):
        stdout.print(_table(frame, chosen, limit))
    shown = min(len(frame), limit)
    note = f"{len(frame)} of {stored} runs"
    if shown < len(frame):
        note += f" ({shown} listed; --limit, --csv or --parquet for the rest)"
    other = frame.attrs.get("other_engines", 0)
    if other and not all_engines:
        note += (
            f"; {other} made by another engine build are left out (--all-engines lists "
            "them; sweeps run them again)"
        )
    written = [str(path) for path in (csv_path, parquet_path) if path is not None]
    if written:
        note += f"; wrote {', '.join(written)}"
    stdout.print(note)


def _chosen_columns(frame: Any, columns: str | None) -> list[str]:
    if columns:
        names = [name.strip() for name in columns.split(",") if name.strip()]
        missing = [name for name in names if name not in frame.columns]
        if missing:
            raise BadInput(f"--columns {', '.join(missing)}: no such column in the run store")
        return names
    varied = [
        column
        for column in frame.columns
        if column not in _BOOKKEEPING
        and column not in _SHOWN_METRICS
        and "." in column  # scenario keys are dotted, metrics are not
        and frame[column].astype(str).nunique() > 1
    ]
    shown = ["run"]
    if frame["directory"].nunique() > 1:
        shown.append("directory")
    shown += varied[:_MOST_VARIED]
    if "engine_current" in frame.columns:
        shown.append("engine_current")
    return shown + [name for name in _SHOWN_METRICS if name in frame.columns]


def _table(frame: Any, columns: list[str], limit: int) -> Table:
    table = Table()
    for name in columns:
        table.add_column(name, justify="left" if name in ("run", "directory") else "right")
    for _, row in frame.head(limit).iterrows():
        table.add_row(*(_cell(row[name]) for name in columns))
    return table


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _write(frame: Any, path: Path, method: str) -> None:
    if path.parent and not path.parent.exists():
        raise BadInput(f"{path}: no directory {path.parent}")
    write_atomically(path, partial(getattr(frame, method), index=False))
