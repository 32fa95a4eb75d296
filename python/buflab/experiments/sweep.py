"""Parameter sweeps: every combination of the varied values × R seeds, run in parallel.

Each finished run is written at once to `OUT/runs/<id>.json`, where the id is made from
the varied values and the seed. That file is the unit of resumption: a sweep skips every
run whose file exists and was made by this engine build, so Ctrl-C loses only the runs in
flight and re-running the same command finishes the rest (on this machine or a cluster
alike: workers send results back and this process writes them). A run file made by another
engine build is run again, so that no table mixes two engines. `results.csv` (one row per
run) and `summary.csv` (mean and 95 % Student-t interval per point) are rebuilt from the run
files at the end, or on Ctrl-C. Every finished run is also a row of the output directory's
run store (`buflab.experiments.store`).

Where the runs go is an `Executor` (`execution`, `backends`: the process pool or Dask), in
what order and in which batches is `schedule`'s. A run that fails is reported once, with its
scenario and error in OUT/failed/, after the others finish (`RunsFailed`).

It must not know what a sweep is for (searches, recipes and reports build on it) or how its
progress is shown (`on_progress`).
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.analysis.stats import mean_ci
from buflab.engine import Error, ScenarioError, core, scenario_json
from buflab.engine.files import write_atomically
from buflab.engine.memory import check_growth, check_memory
from buflab.engine.scenario import (
    Overrides,
    Scenario,
    ScenarioSource,
    apply_overrides,
    load_scenario,
    parse_value,
)
from buflab.engine.units import UnitError, parse_quantity
from buflab.experiments.backends import executor_for
from buflab.experiments.execution import Executor, Interrupted
from buflab.experiments.schedule import CostModel, Eta, RunCost, make_tasks
from buflab.experiments.store import SIMULATOR, RunStore, run_key, store_row

# The engine's default seed (docs/scenario.md); a test checks that they agree.
DEFAULT_SEED = 1


@dataclass(frozen=True)
class Vary:
    """One varied key and its values, in the order given.

    A *case* dimension (a recipe's `[sweep.cases.NAME]`) varies a name instead of a key: each
    value names a set of overrides, so one point can change several keys at once (a whole
    `network.access` table, or flows together with their window).
    """

    key: str
    values: tuple[Any, ...]
    cases: dict[str, dict[str, Any]] | None = None

    def overrides(self, value: Any) -> dict[str, Any]:
        """The scenario overrides that this dimension's `value` stands for."""
        if self.cases is None:
            return {self.key: value}
        return self.cases[value]

    @classmethod
    def parse(cls, text: str) -> Vary:
        """Read "network.bottleneck.buffer=10pkt,50pkt,100pkt"; each value as in --set."""
        key, sep, values = text.partition("=")
        key = key.strip()
        parts = [part.strip() for part in values.split(",")]
        if not sep or not key or not any(parts):
            raise ScenarioError(f"--vary {text!r}: expected KEY=V1,V2,..., e.g. seed=1,2,3")
        if "" in parts:
            raise ScenarioError(f"--vary {text!r}: empty value in the list")
        return cls(key, tuple(parse_value(part) for part in parts))


@dataclass(frozen=True)
class PlannedRun:
    """One simulation of the sweep: a point (the varied values), a seed and its scenario."""

    id: str
    point: dict[str, Any]
    seed: int
    scenario: Scenario


@dataclass
class Plan:
    """The runs of a sweep: base scenario × product of varied values × seeds."""

    base: Scenario
    varies: list[Vary]
    runs_per_point: int = 1
    runs: list[PlannedRun] = field(init=False)

    def __post_init__(self) -> None:
        keys = [vary.key for vary in self.varies]
        if len(set(keys)) != len(keys):
            raise ScenarioError(f"--vary: a key is varied twice in {', '.join(keys)}")
        if self.runs_per_point < 1:
            raise ScenarioError(f"runs = {self.runs_per_point}: expected at least 1")
        for vary in self.varies:
            seen = [str(v) for v in vary.values]
            twice = next((v for v in seen if seen.count(v) > 1), None)
            if twice is not None:
                # The same point twice would run once and be written as two identical rows.
                raise ScenarioError(f"--vary {vary.key}: the value {twice} is given twice")
        self.runs = []
        for values in itertools.product(*(vary.values for vary in self.varies)):
            point = dict(zip(keys, values, strict=True))
            scenario = self.base
            for vary, value in zip(self.varies, values, strict=True):
                scenario = apply_overrides(scenario, vary.overrides(value))
            base_seed = scenario.get("seed", DEFAULT_SEED)
            if not isinstance(base_seed, int) or isinstance(base_seed, bool):
                raise ScenarioError(f"seed = {base_seed!r}: expected an integer")
            last = base_seed + self.runs_per_point - 1
            if base_seed < 0 or last > MAX_SEED:
                raise ScenarioError(
                    f"seed = {base_seed}: with {self.runs_per_point} runs the seeds run to {last}; "
                    f"expected seeds from 0 to {MAX_SEED}"
                )
            for index in range(self.runs_per_point):
                # Seeds count up from the scenario's seed, so run i of every point shares a seed
                # and points differ only in the varied values (common random numbers).
                seed = base_seed + index
                scenario_with_seed = apply_overrides(scenario, {"seed": seed})
                self.runs.append(PlannedRun(run_id(point, seed), point, seed, scenario_with_seed))

    @property
    def keys(self) -> list[str]:
        return [vary.key for vary in self.varies]

    def seeds(self) -> list[int]:
        return sorted({run.seed for run in self.runs})


# Seeds are the engine's unsigned 64-bit integers.
MAX_SEED = 2**64 - 1


def run_id(point: dict[str, Any], seed: int) -> str:
    """A file-name-safe id that is the same for the same varied values and seed.

    Keys are sorted, so the order of --vary options does not matter. The readable part is
    for people listing the directory; the hash keeps ids unique when it is ambiguous
    (e.g. network.access.rate and network.bottleneck.rate both end in "rate").
    """
    items = sorted(point.items())
    canonical = json.dumps([items, seed], default=str, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:10]
    readable = "_".join(f"{key.rsplit('.', 1)[-1]}-{_text(value)}" for key, value in items)
    readable = re.sub(r"[^A-Za-z0-9._+-]+", "-", f"{readable}_seed-{seed}".lstrip("_"))[:80]
    return f"{readable}_{digest}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


@dataclass
class SweepOutcome:
    planned: int
    executed: int  # runs simulated by this call
    skipped: int  # runs whose files were already in OUT/runs
    out: Path
    results: pd.DataFrame  # as written to results.csv
    summary: pd.DataFrame  # as written to summary.csv


class SweepInterrupted(Interrupted):
    """Ctrl-C during a sweep; finished runs are kept on disk (in `where`, OUT/runs unless
    said otherwise)."""

    def __init__(self, kept: int, planned: int, out: Path, where: str | None = None) -> None:
        super().__init__(
            f"interrupted: {kept} of {planned} runs kept in {where or out / 'runs'}; "
            "run the same command again to finish the rest"
        )
        self.kept, self.planned, self.out = kept, planned, out


class SweepConflict(ScenarioError):
    """OUT holds a run file for the same id made from a different scenario."""


class RunsFailed(Error):
    """Runs that raised (or killed their worker every time they ran): each reported once,
    its scenario, error and traceback in OUT/failed/<id>.json; the runs that finished are
    kept and tabled."""


def run_sweep(
    plan: Plan,
    out: str | Path,
    jobs: int | None = None,
    on_progress: Callable[[int, int, float | None], None] | None = None,
    *,
    executor: Executor | str | None = None,
    store: RunStore | None = None,
    command: str = "sweep",
) -> SweepOutcome:
    """Run every planned run that has no file in OUT/runs yet (or one made by another engine
    build); then write the CSV tables.

    Runs go to `executor` (an `Executor`, a cluster spec such as "local", or None for a process
    pool of `jobs` for this call), longest first (`schedule`); each finished run is written to
    OUT/runs at once and added to `store` (default: OUT's own run store; `command` is named
    in its rows). `on_progress(done, total, seconds_left)` is called at the start (with runs
    found on disk) and after each finished run. Raises SweepInterrupted on Ctrl-C after
    saving what finished, and RunsFailed when runs failed (after the rest finished).
    """
    out = Path(out)
    store = store if store is not None else RunStore(out)  # a store too new: refused first
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    # A sweep killed mid-write (kill -9, a power cut) leaves the run it was writing as a
    # temporary file, never as a finished one: that run is simply run again.
    for stale in [*runs_dir.glob(".*.json.tmp"), *out.glob(".*.partial")]:
        stale.unlink(missing_ok=True)
    executed = 0
    failures: list[tuple[PlannedRun, dict[str, Any]]] = []

    with executor_for(executor, jobs) as runner:
        # What makes the runs: this engine build, or (the emulator) another engine's.
        engine, build = runner.engine or SIMULATOR, runner.build or core().engine_build()
        done = {
            run.id: record for run in plan.runs if (record := _done_record(run, runs_dir, build))
        }
        pending = [run for run in plan.runs if run.id not in done]
        normalized = _validate_points(plan.runs, pending)
        directory = store.directory_of(out)
        _store_what_it_lacks(store, plan, done, normalized, directory, command, engine)
        skipped = len(plan.runs) - len(pending)
        model = CostModel.fit(store.history())
        estimates = {
            run.id: runner.wall_s(normalized[run.id])
            or model.predict(RunCost.of(normalized[run.id]))
            for run in pending
        }
        eta = Eta(estimates, runner.workers)
        if on_progress:
            on_progress(skipped, len(plan.runs), eta.seconds_left())

        def finished(run: PlannedRun, record: dict[str, Any]) -> None:
            nonlocal executed
            if "summary" in record:
                record["finished_at"] = datetime.datetime.now(datetime.UTC)
                _write_run(runs_dir, run, record, run_key(normalized[run.id]))
                estimate_s = estimates[run.id]
                store.add(
                    _row(run, record, normalized[run.id], estimate_s, command, directory, engine)
                )
                executed += 1
                eta.finished(run.id, record["summary"].get("wall_s"))
            else:
                failures.append((run, record))
                eta.finished(run.id, None)
            if on_progress:
                on_progress(skipped + executed + len(failures), len(plan.runs), eta.seconds_left())

        tasks = make_tasks(pending, lambda run: estimates[run.id], runner.workers)
        try:
            runner.run(tasks, finished)
        except BaseException as error:
            store.flush()
            write_tables(plan, out)  # the tables cover whatever finished
            if isinstance(error, KeyboardInterrupt):
                # Counted on disk, as the tables are: a Ctrl-C between a run's file and the
                # count of it (the store's row) would say one run fewer than is kept.
                kept = sum((runs_dir / f"{run.id}.json").exists() for run in plan.runs)
                raise SweepInterrupted(kept, len(plan.runs), out) from None
            raise
    store.flush()
    results, summary = write_tables(plan, out)
    if failures:
        raise _failed(failures, len(plan.runs), out)
    return SweepOutcome(len(plan.runs), executed, skipped, out, results, summary)


@dataclass(frozen=True)
class WorkLeft:
    """What `run_sweep(plan, out)` would do now: the runs planned, those finished in OUT/runs
    by this engine build (reused), and each other run's estimated wall seconds."""

    planned: int
    finished: int
    estimates: tuple[float, ...]

    def seconds(self, workers: int) -> float:
        """Wall seconds on `workers` workers, as the sweep's own ETA counts them before any
        run finishes."""
        return Eta({str(i): e for i, e in enumerate(self.estimates)}, workers).seconds_left()


def work_left(plan: Plan, out: str | Path, model: CostModel | None = None) -> WorkLeft:
    """How much of `plan` is left to run in OUT, each run estimated by `model` (default: the
    engine's formula). Reads OUT, writes nothing; a point the engine refuses raises as
    `run_sweep` would."""
    runs_dir = Path(out) / "runs"
    build = core().engine_build()
    pending = [run for run in plan.runs if _done_record(run, runs_dir, build) is None]
    normalized = _validate_points(plan.runs, pending)
    model = model or CostModel()
    estimates = tuple(model.predict(RunCost.of(normalized[run.id])) for run in pending)
    return WorkLeft(len(plan.runs), len(plan.runs) - len(pending), estimates)


def _done_record(run: PlannedRun, runs_dir: Path, build: str) -> dict[str, Any] | None:
    """The run's record in OUT/runs when it is finished there by this engine build; None when
    it is to run (no file, a file half written or not a run record, or made by another engine
    build, which is run again so that no table mixes two engines' results)."""
    path = runs_dir / f"{run.id}.json"
    if not path.exists():
        return None
    try:
        stored = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # unreadable: run it again (files are written atomically, so rare)
    if not isinstance(stored, dict) or "summary" not in stored:
        return None  # not a run record (half of one, or something else): run it again
    if stored.get("scenario") != _as_json(run.scenario):
        raise SweepConflict(
            f"{path} was made from a different scenario than this sweep's run {run.id}; "
            "use another --out, or delete that directory to start over"
        )
    return stored if stored.get("engine_build") == build else None


def _as_json(scenario: Scenario) -> Any:
    return json.loads(scenario_json(scenario))


def _validate_points(
    runs: Sequence[PlannedRun], pending: Sequence[PlannedRun]
) -> dict[str, dict[str, Any]]:
    """Each run's validated scenario (run id -> the engine's normalized tree), checking each
    distinct point once before any run starts, so a bad --vary value fails at once with the
    engine's message instead of after the first batch of runs. A point with runs to do must
    also pass the front end's refusals (memory, growth): workers run the engine directly."""
    to_run = {run.id for run in pending}
    by_point: dict[str, dict[str, Any]] = {}
    checked: set[str] = set()
    normalized: dict[str, dict[str, Any]] = {}
    for run in runs:
        text = scenario_json({k: v for k, v in run.scenario.items() if k != "seed"})
        if text not in by_point:
            by_point[text] = core().validate(scenario_json(run.scenario))
        if run.id in to_run and text not in checked:
            checked.add(text)
            check_memory(by_point[text])
            check_growth(by_point[text])
        # The seed is the one key that differs between a point's runs; the engine echoes it.
        normalized[run.id] = {**by_point[text], "seed": run.seed}
    return normalized


def _write_run(runs_dir: Path, run: PlannedRun, record: dict[str, Any], key: str) -> None:
    document = {
        "id": run.id,
        "point": run.point,
        "seed": run.seed,
        "scenario": _as_json(run.scenario),
        "summary": record["summary"],
        "key": key,
        **{name: record[name] for name in MADE_BY if name in record},
    }
    # Write then rename: a Ctrl-C mid-write must not leave a half file that looks finished.
    temporary = runs_dir / f".{run.id}.json.tmp"
    temporary.write_text(json.dumps(document, indent=1, default=str) + "\n")
    os.replace(temporary, runs_dir / f"{run.id}.json")
    (runs_dir.parent / "failed" / f"{run.id}.json").unlink(missing_ok=True)


# What a run file says of what made it, beside the run itself.
MADE_BY = ("engine_build", "buflab_version", "host", "finished_at")


def _store_what_it_lacks(
    store: RunStore,
    plan: Plan,
    done: dict[str, dict[str, Any]],
    normalized: dict[str, dict[str, Any]],
    directory: str,
    command: str,
    engine: str,
) -> None:
    """Runs finished in OUT/runs whose rows never reached the store (the process was killed
    between two flushes, or the runs predate the store) are added from their run files."""
    if not done:
        return
    stored = store.stored()
    for run in plan.runs:
        record = done.get(run.id)
        key = run_key(normalized[run.id], engine)
        if record is None or (key, record["engine_build"]) in stored:
            continue
        estimate_s = CostModel().predict(RunCost.of(normalized[run.id]))
        store.add(_row(run, record, normalized[run.id], estimate_s, command, directory, engine))


def _row(
    run: PlannedRun,
    record: dict[str, Any],
    normalized: dict[str, Any],
    estimate_s: float,
    command: str,
    directory: str,
    engine: str,
) -> dict[str, Any]:
    """The run store's row of a finished run (`record`: a worker's, or its run file), made
    by `engine`."""
    cost = RunCost.of(normalized)
    return store_row(
        key=run_key(normalized, engine),
        run=run.id,
        point=run.point,
        normalized=normalized,
        summary=record["summary"],
        made_by=record,
        estimate_s=estimate_s,
        cost=(cost.packets, cost.flows),
        command=command,
        directory=directory,
        engine=engine,
    )


def _failed(
    failures: list[tuple[PlannedRun, dict[str, Any]]], planned: int, out: Path
) -> RunsFailed:
    """Each failed run's scenario, error and traceback in OUT/failed/<id>.json, and the one
    line that reports them."""
    folder = out / "failed"
    folder.mkdir(exist_ok=True)
    for run, record in failures:
        document = {
            "id": run.id,
            "point": run.point,
            "seed": run.seed,
            "scenario": _as_json(run.scenario),
            "error": record.get("error", ""),
            "traceback": record.get("traceback", ""),
            "host": record.get("host", ""),
        }
        write_atomically(
            folder / f"{run.id}.json",
            partial(_write_text, json.dumps(document, indent=1, default=str) + "\n"),
        )
    run, record = failures[0]
    first = f"run {run.id} ({_point_text(run)}): {record.get('error')}"
    if len(failures) == 1:
        return RunsFailed(
            f"1 of {planned} runs failed, {first}; its scenario and traceback are in "
            f"{folder / (run.id + '.json')} (the other runs are kept)"
        )
    return RunsFailed(
        f"{len(failures)} of {planned} runs failed, each once; the first: {first}; each one's "
        f"scenario and traceback are in {folder} (the other runs are kept)"
    )


def _point_text(run: PlannedRun) -> str:
    values = ", ".join(f"{key} = {_text(value)}" for key, value in run.point.items())
    return f"{values}, seed {run.seed}" if values else f"seed {run.seed}"


def _write_text(text: str, path: Path) -> None:
    path.write_text(text)


# --- tables --------------------------------------------------------------------------------


def load_results(plan: Plan, out: str | Path) -> pd.DataFrame:
    """One row per finished run of the plan: run id, varied keys, seed, summary metrics."""
    rows = []
    for run in plan.runs:
        path = Path(out) / "runs" / f"{run.id}.json"
        if not path.exists():
            continue
        summary = json.loads(path.read_text())["summary"]
        row: dict[str, Any] = {"run": run.id}
        row.update({key: _cell(value) for key, value in run.point.items()})
        row["seed"] = run.seed
        # A varied name that is also a metric's (a case dimension called "flows") keeps the
        # varied value: that column is what the rows are grouped by.
        row.update({k: v for k, v in summary.items() if k != "seed" and k not in run.point})
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else ["run", *plan.keys, "seed"])


def _cell(value: Any) -> Any:
    """Varied values as table cells: scalars as they are, tables and arrays as JSON text."""
    return json.dumps(value) if isinstance(value, dict | list) else value


def summarize(results: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per point: number of runs, then mean and 95 % CI half-width of each numeric metric."""
    metrics = [
        column
        for column in results.columns
        if column not in ("run", "seed", *keys) and pd.api.types.is_numeric_dtype(results[column])
    ]
    rows = []
    groups = results.groupby(list(keys), sort=False, dropna=False) if keys else [((), results)]
    for point, group in groups:
        point = point if isinstance(point, tuple) else (point,)
        row: dict[str, Any] = dict(zip(keys, point, strict=True))
        row["runs"] = len(group)
        for metric in metrics:
            mean, half_width = mean_ci(group[metric].dropna().astype(float).tolist())
            row[f"{metric}_mean"] = mean
            row[f"{metric}_ci95"] = half_width
        rows.append(row)
    return pd.DataFrame(rows)


# A varied quantity's number, beside its text, in the unit of its kind.
_QUANTITY_UNITS = {"packets": "pkt", "bytes": "B", "rate": "bit/s", "time": "s"}


def with_numbers(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """`frame` with, right after each varied key whose values are quantities written with
    units ("5pkt", "1Gbps", "100ms"), its values as numbers in a column `KEY [UNIT]`
    ("network.bottleneck.buffer [pkt]"), so that a notebook sorts and plots them as numbers
    ("unlimited" is NaN). Keys of other values are left as they are."""
    frame = frame.copy()
    for key in keys:
        if key not in frame.columns:
            continue
        texts = [v for v in frame[key] if isinstance(v, str) and v != "unlimited"]
        if not texts:
            continue
        try:
            kinds = {parse_quantity(v, tuple(_QUANTITY_UNITS)).kind for v in texts}
        except UnitError:
            continue
        if len(kinds) != 1:
            continue
        kind = kinds.pop()
        numbers = [
            parse_quantity(v, (kind,)).value
            if isinstance(v, str) and v != "unlimited"
            else float("nan")
            for v in frame[key]
        ]
        frame.insert(frame.columns.get_loc(key) + 1, f"{key} [{_QUANTITY_UNITS[kind]}]", numbers)
    return frame


def write_tables(plan: Plan, out: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write results.csv and summary.csv for the runs finished so far; return both tables
    (each varied quantity also as numbers: `with_numbers`)."""
    raw = load_results(plan, out)
    summary = with_numbers(summarize(raw, plan.keys), plan.keys) if len(raw) else pd.DataFrame()
    results = with_numbers(raw, plan.keys)
    # Written whole or not at all: a kill mid-write keeps the previous tables.
    write_atomically(Path(out) / "results.csv", partial(results.to_csv, index=False))
    write_atomically(Path(out) / "summary.csv", partial(summary.to_csv, index=False))
    return results, summary


def sweep(
    scenario: ScenarioSource,
    vary: dict[str, Sequence[Any]] | Sequence[str],
    *,
    runs: int = 1,
    out: str | Path | None = None,
    jobs: int | None = None,
    overrides: Overrides = None,
    cluster: Executor | str | None = None,
) -> pd.DataFrame:
    """A sweep from Python (`buflab sweep` without the command line): every combination of
    the `vary` values ({"network.bottleneck.buffer": ["10pkt", "50pkt"]}, or "KEY=V1,V2"
    strings as `--vary` takes them), `runs` seeds each, and the per-point table (summary.csv:
    the mean and 95 % interval of every metric), varied quantities also as numbers
    (`with_numbers`). With `out`, run files are kept there and a second call reuses them;
    without, they go to a temporary directory that is removed. `cluster` runs them on Dask
    ("local", "tcp://HOST:PORT", or an executor from `buflab.experiments.backends`)."""
    base = load_scenario(scenario, overrides)
    if isinstance(vary, Mapping):
        varies = [Vary(str(key), tuple(values)) for key, values in vary.items()]
    elif isinstance(vary, Sequence) and not isinstance(vary, str):
        varies = [Vary.parse(text) for text in vary]
    else:
        raise ScenarioError(
            f"vary: got {type(vary).__name__}; expected a dict of keys to values or "
            '"KEY=V1,V2" strings'
        )
    plan = Plan(base, varies, runs)
    if out is not None:
        return run_sweep(plan, out, jobs, executor=cluster).summary
    with tempfile.TemporaryDirectory(prefix="buflab-sweep-") as scratch:
        return run_sweep(plan, scratch, jobs, executor=cluster).summary
