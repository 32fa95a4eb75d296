"""`buflab.size`, `size_curve` and `size_curves`: the smallest buffer meeting a target
utilization, with the rules of thumb beside it and the figures drawn.

The search itself is `sizing` (bisection over sweep runs); the figures are `sizing_plot`.
This module joins them for the Python API and the `size` command: it loads the scenario,
searches, adds `rule_sizes` and writes the figures. It must not know how the answer is
printed.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.engine import ScenarioError
from buflab.engine.files import write_atomically
from buflab.engine.runner import load_scenario
from buflab.engine.scenario import Overrides, ScenarioSource
from buflab.experiments.backends import executor_for
from buflab.experiments.execution import Executor, in_parallel
from buflab.experiments.sizing import (
    DEFAULT_KEY,
    DEFAULT_PRECISION,
    InOrder,
    Probe,
    SizeCurve,
    SizePoint,
    Sizing,
    VarySpec,
    curve_vary,
    minimum_buffer,
    rule_sizes,
    value_directory,
    value_scenarios,
)
from buflab.experiments.sizing import size_curve as sizing_size_curve
from buflab.experiments.store import RunStore


def size(
    scenario: ScenarioSource,
    target_utilization: float,
    out: str | Path,
    *,
    overrides: Overrides = None,
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    precision: float = DEFAULT_PRECISION,
    on_probe: Callable[[Probe], None] | None = None,
    cluster: Executor | str | None = None,
) -> Sizing:
    """The smallest buffer meeting a target mean utilization, by bisection
    (`buflab.experiments.sizing.minimum_buffer`), with the rules of thumb beside it
    (`Sizing.rules`) and OUT/size.png/svg. Probes are sweep runs kept in OUT/runs, so a
    repeated search reuses them; `cluster` runs them on Dask ("local", "tcp://HOST:PORT" or
    an executor of `buflab.experiments.backends`)."""
    # start-up time: matplotlib is imported only when there is a figure to draw
    from buflab.experiments import sizing_plot

    tree = load_scenario(scenario, overrides=overrides)
    sizing = minimum_buffer(
        tree,
        target_utilization,
        out,
        key=key,
        runs=runs,
        jobs=jobs,
        high=high,
        precision=precision,
        on_probe=on_probe,
        executor=cluster,
    )
    sizing.rules = rule_sizes(tree, target_utilization)
    sizing.figures = sizing_plot.write_search_figure(sizing, tree, runs, Path(out))
    return sizing


def size_curve(
    scenario: ScenarioSource,
    target_utilization: float,
    out: str | Path,
    vary: VarySpec,
    *,
    overrides: Overrides = None,
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    precision: float = DEFAULT_PRECISION,
    on_value: Callable[[str, Any], None] | None = None,
    on_probe: Callable[[Probe], None] | None = None,
    on_point: Callable[[SizePoint], None] | None = None,
    cluster: Executor | str | None = None,
    store: RunStore | None = None,
) -> SizeCurve:
    """`size` for each value of another key: `vary=("traffic.0.flows", [1, 10, 100])` (or
    "traffic.0.flows=1,10,100"), the searches at once (on `cluster`, as `size` takes it).
    Each value's search is kept in OUT/KEY-VALUE with its own size.png; OUT/sizes.csv holds
    `SizeCurve.frame()` and OUT/size_curve.png/svg plots the minimum buffer against the value
    beside RTT·C/√N, RTT·C and eq. 2.1. Every probe is a row of OUT's run store (`store`
    when given)."""
    # start-up time: matplotlib is imported only when there is a figure to draw
    from buflab.experiments import sizing_plot

    tree = load_scenario(scenario, overrides=overrides)
    resolved = curve_vary(tree, vary, key)

    def finished(point: SizePoint) -> None:
        label = f"{resolved.key} = {point.value}"
        point.sizing.figures = sizing_plot.write_search_figure(
            point.sizing, point.scenario, runs, point.out, label
        )
        if on_point:
            on_point(point)

    curve = sizing_size_curve(
        tree,
        target_utilization,
        out,
        resolved,
        key=key,
        runs=runs,
        jobs=jobs,
        high=high,
        precision=precision,
        on_value=on_value,
        on_probe=on_probe,
        on_point=finished,
        executor=cluster,
        store=store,
    )
    curve.figures = sizing_plot.write_curve_figure(curve, tree, runs, Path(out))
    return curve


def size_curves(
    scenario: ScenarioSource,
    target_utilization: float,
    out: str | Path,
    vary: VarySpec,
    series: VarySpec,
    *,
    overrides: Overrides = None,
    on_series: Callable[[SizeCurve], None] | None = None,
    cluster: Executor | str | None = None,
    **kw: Any,
) -> list[SizeCurve]:
    """`size_curve` once per value of a second key, the curves overlaid: e.g. the minimum
    buffer against `traffic.0.flows` for `series=("traffic.0.pacing", ["off", "window"])`.
    Every search of every curve runs at once, sharing `cluster` (as `size` takes it) and
    OUT's run store. Each curve lives in OUT/SERIES_KEY-VALUE as `size_curve` leaves it;
    OUT/sizes.csv has every row with the series key's column, OUT/size_curve.png/svg one line
    per value. `on_series(curve)` is called as each curve is done, in the order of the values;
    other keywords go to `size_curve`."""
    # start-up time: matplotlib is imported only when there is a figure to draw
    from buflab.experiments import sizing_plot

    tree = load_scenario(scenario, overrides=overrides)
    resolved = curve_vary(tree, series, kw.get("key", DEFAULT_KEY))
    x_key = curve_vary(tree, vary, kw.get("key", DEFAULT_KEY)).key
    if resolved.key == x_key:
        raise ScenarioError(f"--vary {x_key} is given twice: vary two different keys")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out)
    curves: list[SizeCurve] = []
    lock = threading.RLock()

    def report(curve: SizeCurve) -> None:
        curves.append(curve)
        table = pd.concat([c.frame() for c in curves])
        write_atomically(out / "sizes.csv", partial(table.to_csv, index=False))
        if on_series:
            on_series(curve)

    in_order = InOrder(report, lock)
    # Every value is checked by the engine before the first search starts.
    at_values = value_scenarios(tree, resolved)
    with executor_for(cluster, kw.pop("jobs", None)) as runner:

        def one_curve(index: int, value: Any, at_value: Any) -> None:
            directory = value_directory(out, resolved.key, value)
            series = f"{resolved.key} = {value}"
            callbacks = {
                name: partial(_in_series, kw[name], series)
                for name in ("on_probe", "on_point")
                if kw.get(name)
            }
            curve = size_curve(
                at_value,
                target_utilization,
                directory,
                vary,
                cluster=runner,
                store=store,
                **{**kw, **callbacks},
            )
            curve.series = (resolved.key, value)
            in_order.done(index, curve)

        in_parallel(
            [
                partial(one_curve, index, value, at_value)
                for index, (value, at_value) in enumerate(
                    zip(resolved.values, at_values, strict=True)
                )
            ],
            runner,
        )
    sizing_plot.write_curve_figure(curves, tree, kw.get("runs", 1), out)
    return curves


def _in_series(callback: Callable[[Any], None], series: str, item: Any) -> None:
    """A probe's or answer's callback with its label naming the curve too ("SERIES, X")."""
    callback(dataclasses.replace(item, label=f"{series}, {item.label}" if item.label else series))
