"""`buflab optical`: the optical FIFO of fiber delay lines (thesis ch. 6) on its own, outside a
network: `check` prints recipe F8's tables (the construction against Theorems 6.1 and 6.2, and
request sequences through it and an electronic FIFO side by side), `show` steps through a few
slots for a student.

The tables and the walk are `buflab.experiments.optical`'s; this module reads options and
prints. In a network, the same buffer is a bottleneck's `queue = "optical_fifo"`.
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from buflab.cli.console import stdout


@click.group(name="optical")
def optical() -> None:
    """Optical FIFO buffers of fiber delay lines (thesis ch. 6): the construction's counts
    and exactness (`check`, recipe F8) and its slots step by step (`show`)."""


def _table(frame: Any, columns: dict[str, str], title: str) -> Table:
    """The `columns` (name -> heading) of `frame` as a terminal table."""
    table = Table(title=title, title_justify="left")
    for name in columns.values():
        table.add_column(name, justify="right")
    for row in frame.itertuples(index=False):
        cells = []
        for column in columns:
            value = getattr(row, column)
            if isinstance(value, bool):
                cells.append("yes" if value else "NO")
            elif isinstance(value, int | float) and not isinstance(value, bool):
                cells.append(f"{value:,}")
            else:
                cells.append(str(value))
        table.add_row(*cells)
    return table


@optical.command(name="check")
@click.option("--n-max", type=int, default=1024, show_default=True, help="Count N = 4 … this.")
@click.option(
    "--k",
    "ks",
    type=int,
    multiple=True,
    help="Thm 6.2's K for the request sequences (repeatable) [default: 1].",
)
@click.option(
    "--slots", type=int, default=200_000, show_default=True, help="Slots of each request sequence."
)
@click.option("--seed", type=int, default=1, show_default=True, help="The sequences' seed.")
def check(n_max: int, ks: tuple[int, ...], slots: int, seed: int) -> None:
    """Recipe F8: the optical FIFO's lines and fiber against Thm 6.1 and 6.2 for N = 4 …
    1,024 and several K, then request sequences (Bernoulli at loads 0.5 … 1.0, bursts, a
    sawtooth) through it and through an electronic FIFO of N − 1, slot by slot."""
    # start-up time: pandas only for this command
    from buflab.experiments.optical import counts_table, exactness_table

    counts = counts_table(n_max)
    sizes = tuple(n for n in (4, 16, 64, 256, 1024) if n <= n_max)
    exact = exactness_table(sizes, ks or (1,), slots, seed)
    stdout.print(
        _table(
            counts,
            {
                "N": "N",
                "K": "K",
                "buffer_pkts": "buffer (N − 1)",
                "lines": "lines",
                "theorem_lines": "Thm 6.2: 2(log N + K − log K) − 3",
                "fiber_slots": "fiber (pkt times)",
                "theorem_fiber_slots": "Thm 6.2: N − 1 + (N − 2K)/2K",
                "holds": "equal",
            },
            "Lines and fiber built vs Theorems 6.1 (K = 1) and 6.2",
        )
    )
    stdout.print(
        _table(
            exact,
            {
                "N": "N",
                "K": "K",
                "pattern": "requests",
                "arrivals": "arrivals",
                "drops": "drops",
                "departures": "departures",
                "mismatches": "slots unlike FIFO",
                "violations": "App. E breaches",
                "waiting_max": "max in W",
                "waiting_bound": "bound N/2K",
                "passes_max": "max passes",
            },
            f"Optical FIFO vs electronic FIFO of N − 1, {slots:,} slots each (seed {seed})",
        )
    )
    agree = int(counts["holds"].all())
    exact_all = int((exact["mismatches"] == 0).all() and (exact["violations"] == 0).all())
    stdout.print(
        f"Counts equal to the theorems: {'all' if agree else 'NOT all'} {len(counts)} rows. "
        f"Departures and drops identical to the FIFO in every slot, no property of Appendix "
        f"E broken: {'all' if exact_all else 'NOT all'} {len(exact)} sequences."
    )


@optical.command(name="show")
@click.option("--n", type=int, default=8, show_default=True, help="N: the buffer holds N − 1.")
@click.option("--k", type=int, default=1, show_default=True, help="Thm 6.2's K.")
@click.option(
    "--requests",
    help="One token per slot: a (arrival), d (departure), ad (both), - (neither), "
    "e.g. 'a a a a d d ad d d'. Without it, random ones (--slots, --load, --seed).",
)
@click.option("--slots", type=int, default=12, show_default=True, help="Random slots to show.")
@click.option(
    "--load",
    type=float,
    default=1.0,
    show_default=True,
    help="Random arrivals per departure request (departures in half the slots).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="The random requests' seed.")
def show(n: int, k: int, requests: str | None, slots: int, load: float, seed: int) -> None:
    """Step through the slots of an optical FIFO: each slot's lines with the packets in
    them, head to tail, what the slot's requests did, and the switches' states."""
    # start-up time: pandas only for this command
    from buflab.experiments.optical import parse_requests, random_requests, walk

    asked = parse_requests(requests) if requests is not None else random_requests(slots, load, seed)
    click.echo(walk(n, k, asked))
