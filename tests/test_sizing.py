"""`buflab size`: the bisection for the smallest buffer meeting a target utilization."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from buflab.sizing import minimum_buffer
from conftest import TINY_SCENARIO


def fake_runs(monkeypatch: pytest.MonkeyPatch, utilization: Callable[[int], float]) -> list[int]:
    """Replace the simulator by `utilization(buffer packets)`; returns the probed buffers."""
    probed: list[int] = []

    def run_sweep(plan: Any, out: Any, jobs: Any = None) -> SimpleNamespace:
        buffer = int(str(plan.varies[0].values[0]).removesuffix("pkt"))
        probed.append(buffer)
        return SimpleNamespace(results=pd.DataFrame({"utilization": [utilization(buffer)]}))

    monkeypatch.setattr("buflab.sizing.run_sweep", run_sweep)
    return probed


def test_bisection_finds_the_smallest_passing_buffer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    probed = fake_runs(monkeypatch, lambda b: min(1.0, b / 50))
    sizing = minimum_buffer({}, 0.9, tmp_path, high=200)
    assert sizing.buffer_pkts == 45  # 45/50 = 0.9 meets the target, 44/50 does not
    assert probed[0] == 200
    assert len(probed) <= 1 + 8  # log2(200) probes after the first
    assert sizing.contradictions == []


def test_upper_bound_doubles_then_gives_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    probed = fake_runs(monkeypatch, lambda b: min(1.0, b / 350))
    assert minimum_buffer({}, 1.0, tmp_path, high=100).buffer_pkts == 350
    assert probed[:4] == [100, 200, 400, 300], "bisects between the last miss and the hit"
    assert len(probed) == len(set(probed)), "no buffer is probed twice"

    probed = fake_runs(monkeypatch, lambda b: 0.5)
    sizing = minimum_buffer({}, 0.9, tmp_path, high=10)
    assert sizing.buffer_pkts is None
    assert probed == [10, 20, 40, 80, 160]


def test_a_larger_buffer_doing_worse_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # 97 % from 40 to 79 packets but 93 % from 80 on: the first two probes, 100 and 50
    # packets, both meet 90 % and show utilization falling as the buffer grows.
    fake_runs(monkeypatch, lambda b: 0.5 if b < 40 else 0.97 if b < 80 else 0.93)
    sizing = minimum_buffer({}, 0.9, tmp_path, high=100)
    assert sizing.buffer_pkts == 40
    pairs = [(small.buffer_pkts, large.buffer_pkts) for small, large in sizing.contradictions]
    assert (50, 100) in pairs

    fake_runs(monkeypatch, lambda b: min(1.0, b / 50))
    assert minimum_buffer({}, 0.9, tmp_path, high=100).contradictions == []


def test_bad_target(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["size", "x.toml", "--target-utilization", "1.5"])
    assert result.exit_code == 2


@pytest.mark.engine
def test_size_command_on_a_small_scenario_and_resume(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY_SCENARIO)
    out = tmp_path / "out"
    command = ["size", str(scenario), "--target-utilization", "0.9", "--out", str(out)]
    first = CliRunner().invoke(cli, command)
    assert first.exit_code == 0, first.output
    assert "minimum buffer:" in first.stdout and "RTT·C/√N" in first.stdout
    runs = sorted(p.name for p in (out / "runs").glob("*.json"))
    # The same search again reads every probe from disk: no new run files.
    again = CliRunner().invoke(cli, command)
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in (out / "runs").glob("*.json")) == runs
    assert first.stdout.splitlines()[-1] == again.stdout.splitlines()[-1]
    # From Python, over the same probes on disk: the answer met the target and every probe
    # below it missed (bisection keeps failures below successes).
    sizing = buflab.size(str(scenario), 0.9, out)
    assert sizing.buffer_pkts is not None
    for probe in sizing.probes:
        assert probe.passed == (probe.buffer_pkts >= sizing.buffer_pkts)
