"""Golden results: fingerprints of what the engine returns for a fixed set of scenarios, so that
a change meant to leave the model alone (a refactor, a speed-up) can prove that it did.

Each case is a scenario (every shipped example, and points of every shipped recipe, shortened)
run through `buflab.run`; its fingerprint is a SHA-256 over the summary and every table and
event log the result carries, value by value, bit for bit. Fields that measure the machine
rather than the model (`wall_s`, `peak_rss_mib`) are left out. `tests/golden/fast.json` and
`tests/golden/full.json` hold the fingerprints of the last deliberate change to the model.

    .venv/bin/python tests/golden.py check [--full] [-j N]   # compare with the recorded set
    .venv/bin/python tests/golden.py update [--full] [-j N]  # record anew (a model change)
    .venv/bin/python tests/golden.py update --new [--full]   # record only new cases

`test_golden.py` runs the fast set in the suite and the full set under `--slow`. A mismatch
names the cases that changed; if the change to the model was meant, `update` records it and
the commit says why.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
# Measurements of the machine, not of the model.
MACHINE_FIELDS = {"wall_s", "peak_rss_mib"}
SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class Case:
    """One run: a name for the report, and the scenario tree with its overrides applied."""

    name: str
    scenario: dict[str, Any]


def _shorten(tree: dict[str, Any], full: bool) -> dict[str, Any]:
    """A recipe point cut to a few simulated seconds: the switch recipes (thousands of flows
    through an 8×8 fabric, about a wall second per simulated second) to 2 s, the others to 20 s,
    each with a quarter as warm-up. The fast set cuts the testbed recipes to 8 s."""
    switch = tree.get("network", {}).get("topology") == "switch"
    seconds = 2 if switch else (20 if full else 8)
    return {**tree, "duration": f"{seconds}s", "warmup": f"{seconds / 4:g}s"}


def cases(full: bool) -> Iterator[Case]:
    """The fast set: every example at three seeds, each recipe's first, middle and last
    point, and the dumbbell with its event log and flow traces on. The full set: every point
    of every recipe as well."""
    from buflab.engine.scenario import apply_overrides, load_scenario
    from buflab.experiments.recipes import load, names

    for path in sorted((ROOT / "examples").glob("*.toml")):
        tree = load_scenario(path)
        for seed in SEEDS:
            yield Case(f"examples/{path.name} seed={seed}", apply_overrides(tree, {"seed": seed}))
    dumbbell = load_scenario(ROOT / "examples" / "dumbbell.toml")
    observed = apply_overrides(
        dumbbell,
        {
            "duration": "8s",
            "warmup": "2s",
            "monitor.events": True,
            "monitor.trace_flows": [0, 7, 99],
        },
    )
    yield Case("examples/dumbbell.toml events+traces", observed)
    for name in names():
        scenario, header = load(name)
        runs = header.plan(_shorten(scenario, full), [], 1).runs
        picked = range(len(runs)) if full else sorted({0, len(runs) // 2, len(runs) - 1})
        for index in picked:
            run = runs[index]
            yield Case(f"recipe {name} {run.id}", run.scenario)


def _update_array(digest: Any, name: str, values: Any) -> None:
    """Hashes one column bit for bit, in a form that does not depend on how the table was
    built: numbers as little-endian int64 or float64, everything else as text."""
    array = np.asarray(values)
    if array.dtype.kind in "biu":
        data = array.astype("<i8").tobytes()
    elif array.dtype.kind == "f":
        data = array.astype("<f8").tobytes()
    else:
        data = "\x1f".join(map(str, array.tolist())).encode()
    digest.update(f"{name}:{array.dtype.kind}:{len(array)}\n".encode())
    digest.update(data)


def _update_frame(digest: Any, title: str, frame: pd.DataFrame | None) -> None:
    if frame is None:
        digest.update(f"{title}:none\n".encode())
        return
    digest.update(f"{title}:{len(frame.columns)}\n".encode())
    for column in frame.columns:
        _update_array(digest, f"{title}.{column}", frame[column].to_numpy())


def fingerprint(result: Any) -> str:
    """SHA-256 over the summary (machine fields left out) and every table, in order."""
    digest = hashlib.sha256()
    summary = {k: v for k, v in result.summary.items() if k not in MACHINE_FIELDS}
    digest.update(json.dumps(summary, sort_keys=True).encode())
    for title in ("flows", "timeseries", "links", "ports", "transfers", "autosize", "traces"):
        _update_frame(digest, title, getattr(result, title))
    # Bumps, the optical tables and aqm only where a scenario has them, so that adding a table
    # left the others' prints.
    if len(result.bumps) > 0:
        _update_frame(digest, "bumps", result.bumps)
    if len(result.optical) > 0:
        _update_frame(digest, "optical", result.optical)
        _update_frame(digest, "optical_lines", result.optical_lines)
    if len(result.aqm) > 0:
        _update_frame(digest, "aqm", result.aqm)
    _update_frame(digest, "events", result.events)
    return digest.hexdigest()


def run_case(case: Case) -> tuple[str, str]:
    import buflab

    return case.name, fingerprint(buflab.run(case.scenario))


def compute(full: bool, jobs: int, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    todo = [case for case in cases(full) if case.name not in skip]
    with ProcessPoolExecutor(jobs) as pool:
        return dict(pool.map(run_case, todo, chunksize=1))


def path_of(full: bool) -> Path:
    return GOLDEN / ("full.json" if full else "fast.json")


def recorded(full: bool) -> dict[str, str]:
    return json.loads(path_of(full).read_text())


def differences(expected: dict[str, str], got: dict[str, str]) -> list[str]:
    """One line per case that is missing, new or changed."""
    lines = [f"changed: {name}" for name in expected if name in got and got[name] != expected[name]]
    lines += [f"missing: {name}" for name in expected if name not in got]
    lines += [f"new: {name}" for name in got if name not in expected]
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["check", "update"])
    parser.add_argument("--full", action="store_true", help="every point of every recipe")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument(
        "--new",
        action="store_true",
        help="update: record only the cases not yet recorded (a new example or recipe point), "
        "keeping the others' fingerprints as they are",
    )
    args = parser.parse_args(argv)
    if args.action == "update" and args.new:
        kept = recorded(args.full)
        got = {**kept, **compute(args.full, args.jobs, frozenset(kept))}
        path_of(args.full).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(got) - len(kept)} new fingerprints in {path_of(args.full)}")
        return 0
    got = compute(args.full, args.jobs)
    if args.action == "update":
        GOLDEN.mkdir(exist_ok=True)
        path_of(args.full).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(got)} fingerprints in {path_of(args.full)}")
        return 0
    diff = differences(recorded(args.full), got)
    for line in diff:
        print(line)
    print(f"{len(got) - len(diff)} of {len(got)} cases identical")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
