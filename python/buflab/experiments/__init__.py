"""The experiments layer: many runs organised to answer one question.

- `sweep` (with `_worker`, what its workers run): every combination of varied values × seeds,
  in parallel and resumable. Where the runs go: `execution` (the contract), `pool` (this
  machine's process pool, the default), `cluster` (Dask: a LocalCluster, a scheduler's address,
  Slurm) and `backends` (choosing one); in what order: `schedule`. Every finished run is also a
  row of the output directory's run store (`store`), which `where` filters.
- `sizing` (the bisection), `sizing_plot` (its figures) and `size` (`buflab.size`,
  `size_curve`, `size_curves`: the search with its rules and figures): the smallest buffer
  that meets a target utilization.
- `autosize`: one run with the engine's live auto-sizer, and its figure.
- `load`: offered and potential load, and the users for a target load.
- `recipes` (with the shipped recipe files), `report` (a sweep as a table and a figure),
  `threshold` (a sweep read as a threshold) and `reproduce` (a recipe run and compared with
  the published numbers).

It stands on the engine, analysis and plots layers and draws its own figures with
`buflab.plots`; it must not know the command line: what it has to say goes back as values and
callbacks (`on_probe`, `progress`), and the command line prints them.
"""

from __future__ import annotations

from typing import Any

from buflab.engine.lazy import listing, submodule


def __getattr__(name: str) -> Any:
    # Submodules load on first use (`buflab.experiments.sweep` right after `import buflab`).
    return submodule(__name__, name)


def __dir__() -> list[str]:
    return listing(__name__, globals())
