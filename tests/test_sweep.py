"""Sweeps: plan, resume after lost runs, tables, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from buflab.cli import cli
from buflab.engine.scenario import load_scenario
from buflab.experiments.sweep import Plan, SweepConflict, Vary, run_id, run_sweep
from conftest import TINY_SCENARIO


def tiny_plan(runs: int = 1, **base_overrides: object) -> Plan:
    base = load_scenario(TINY_SCENARIO, base_overrides)
    return Plan(base, [Vary.parse("network.bottleneck.buffer=5pkt,50pkt")], runs)


def test_plan_is_the_product_of_values_and_seeds() -> None:
    base = load_scenario(TINY_SCENARIO, {"seed": 10})
    plan = Plan(
        base,
        [Vary.parse("network.bottleneck.buffer=5pkt,50pkt"), Vary.parse("traffic.0.flows=2,4,8")],
        runs_per_point=2,
    )
    assert len(plan.runs) == 2 * 3 * 2
    assert plan.seeds() == [10, 11]  # seed, seed + 1
    assert len({run.id for run in plan.runs}) == len(plan.runs)
    first = plan.runs[0]
    assert first.scenario["traffic"][0]["flows"] == 2
    assert first.scenario["network"]["bottleneck"]["buffer"] == "5pkt"
    assert base["traffic"][0]["flows"] == 4, "the base scenario is not modified"


def test_run_ids_ignore_the_order_of_vary_options() -> None:
    assert run_id({"a.x": 1, "b.y": "2pkt"}, 3) == run_id({"b.y": "2pkt", "a.x": 1}, 3)
    assert run_id({"a.x": 1}, 3) != run_id({"a.x": 1}, 4)
    assert run_id({"network.access.rate": "1Gbps"}, 1) != run_id(
        {"network.bottleneck.rate": "1Gbps"}, 1
    )


@pytest.mark.parametrize("text", ["buffer", "buffer=", "=1,2", "buffer=1,,2"])
def test_bad_vary_options(text: str) -> None:
    from buflab.engine import ScenarioError

    with pytest.raises(ScenarioError, match="--vary"):
        Vary.parse(text)


@pytest.mark.engine
def test_resume_runs_only_what_is_missing(tmp_path: Path) -> None:
    plan = tiny_plan()
    first = run_sweep(plan, tmp_path, jobs=2)
    assert (first.executed, first.skipped) == (2, 0)
    files = sorted((tmp_path / "runs").glob("*.json"))
    assert len(files) == 2
    kept, lost = files
    kept_mtime = kept.stat().st_mtime_ns
    lost.unlink()

    second = run_sweep(plan, tmp_path, jobs=2)
    assert (second.executed, second.skipped) == (1, 1)
    assert lost.exists()
    assert kept.stat().st_mtime_ns == kept_mtime, "a finished run is never redone"

    results = pd.read_csv(tmp_path / "results.csv")
    assert len(results) == 2
    assert {"run", "network.bottleneck.buffer", "seed", "utilization", "drop_rate"} <= set(
        results.columns
    )
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert summary["network.bottleneck.buffer"].tolist() == ["5pkt", "50pkt"]
    assert summary["runs"].tolist() == [1, 1]
    record = json.loads(lost.read_text())
    assert record["id"] == lost.stem
    assert set(record) == {"id", "point", "seed", "scenario", "summary"}


@pytest.mark.engine
def test_a_changed_scenario_does_not_reuse_old_runs(tmp_path: Path) -> None:
    run_sweep(tiny_plan(), tmp_path, jobs=1)
    with pytest.raises(SweepConflict, match="different scenario"):
        run_sweep(tiny_plan(duration="4s"), tmp_path, jobs=1)


@pytest.mark.engine
def test_sweep_command(tmp_path: Path, tiny_file: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "sweep", str(tiny_file), "--vary", "network.bottleneck.buffer=2pkt,20pkt",
            "--vary", "traffic.0.flows=1,4", "--runs", "2", "--jobs", "2", "--out", str(tmp_path),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "8 runs simulated, 0 found" in result.stdout
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert len(summary) == 4
    assert summary["runs"].tolist() == [2, 2, 2, 2]
    assert summary["utilization_ci95"].notna().all()
    for name in ("sweep.png", "sweep.svg", "results.csv"):
        assert (tmp_path / name).stat().st_size > 0
    again = CliRunner().invoke(
        cli,
        [
            "sweep", str(tiny_file), "--vary", "traffic.0.flows=1,4",
            "--vary", "network.bottleneck.buffer=2pkt,20pkt", "--runs", "2", "--out", str(tmp_path),
        ],
    )  # fmt: skip
    assert "0 runs simulated, 8 found" in again.stdout, "--vary order does not change run ids"
