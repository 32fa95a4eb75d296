"""The live auto-sizer beside the offline search (thesis ch. 4.3, recipe t12): how a recipe
asks for it, how each seed's two answers are read, and the verdict's rule. The full recipe
(`buflab reproduce t12`: 210 grid runs and 10 live runs, a few minutes) is in the slow suite's
report; here a tiny scenario runs the same path end to end in seconds."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from buflab.engine import ScenarioError
from buflab.engine.scenario import load_scenario
from buflab.experiments import live_sizing
from buflab.experiments.recipes import split_header
from buflab.experiments.report import SweepView
from buflab.experiments.reproduce import reproduce
from conftest import TINY_SCENARIO

GRID = """
[sweep]
runs = 3
[sweep.vary]
"network.bottleneck.buffer" = ["2pkt", "4pkt", "6pkt", "8pkt"]
[sweep.threshold]
metric = "utilization"
target = 0.9
"""


def header_of(text: str):
    return split_header(load_scenario(TINY_SCENARIO + text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GRID + "[sweep.autosize]\ninterval = '1s'\n", "expected a table with target_utilization"),
        (
            GRID + "[sweep.autosize]\ntarget_utilization = 0.8\n",
            r"sweep.autosize.target_utilization = 0.8: expected the threshold's target, 0.9",
        ),
        (
            GRID.replace('metric = "utilization"', 'metric = "drop_rate"')
            + "[sweep.autosize]\ntarget_utilization = 0.9\n",
            r"sweep.autosize: needs a \[sweep.threshold\] on utilization",
        ),
    ],
)
def test_a_bad_autosize_header_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        header_of(text)


def test_the_live_runs_are_the_unvaried_scenario_with_the_auto_sizer_on() -> None:
    """One run per seed of the sweep (the same seeds, so the same flows as the offline
    twin), the base scenario with `[autosize]` set and the live run's own duration."""
    base, header = header_of(
        GRID + "[sweep.autosize]\ntarget_utilization = 0.9\nduration = '30s'\ninterval = '2s'\n"
    )
    plan = live_sizing.live_plan(base, header, 3)
    assert [run.seed for run in plan.runs] == [base.get("seed", 1) + i for i in range(3)]
    scenario = plan.runs[0].scenario
    assert scenario["autosize"] == {"target_utilization": 0.9, "interval": "2s"}
    assert scenario["duration"] == "30s"


def _compare(offline_rows: list[tuple[int, str, float]], live: dict[int, float]):
    base, header = header_of(GRID + "[sweep.autosize]\ntarget_utilization = 0.9\n")
    view = SweepView(header.plan(base, [], 3), header, pd.DataFrame())
    offline = pd.DataFrame(
        offline_rows, columns=["seed", "network.bottleneck.buffer", "utilization"]
    )
    live_results = pd.DataFrame({"seed": list(live), "autosize_buffer_pkts": list(live.values())})
    return live_sizing.compare(view, offline, live_results, header)


def test_each_seeds_offline_answer_is_its_smallest_size_passing_the_tools_rule() -> None:
    """A size passes as a step of the tool does: at least 0.995 × the target (0.8955 for
    90 %), so 0.896 at 4 packets passes and 0.895 at 2 does not; a seed whose sizes never
    pass has no offline answer."""
    result = _compare(
        [
            (1, "2pkt", 0.895),
            (1, "4pkt", 0.896),
            (1, "6pkt", 0.95),
            (2, "2pkt", 0.80),
            (2, "4pkt", 0.85),
            (2, "6pkt", 0.91),
            (3, "2pkt", 0.5),
            (3, "4pkt", 0.6),
        ],
        {1: 4.0, 2: 7.0, 3: 5.0},
    )
    answers = result.table.set_index("seed")["offline_pkts"]
    assert answers[1] == 4 and answers[2] == 6 and math.isnan(answers[3])
    # The live median (5) lies in the offline range (4-6) widened by the grid's 2 packets.
    assert result.verdict == "agrees"
    assert "2 seeds" in result.paragraph() and "1 seeds never reached" in result.paragraph()


def test_a_live_answer_far_from_every_offline_one_disagrees() -> None:
    """Offline answers of 4 packets on a 2-packet grid: a live median of 7 is outside 2-6."""
    rows = [
        (seed, size, 0.5 if size == "2pkt" else 0.95)
        for seed in (1, 2, 3)
        for size in ("2pkt", "4pkt", "6pkt", "8pkt")
    ]
    assert _compare(rows, {1: 7.0, 2: 7.0, 3: 8.0}).verdict == "disagrees"
    assert _compare(rows, {1: 6.0, 2: 5.0, 3: 8.0}).verdict == "agrees"


@pytest.mark.engine
def test_reproduce_runs_the_grid_and_the_live_auto_sizer_and_reuses_both(tmp_path: Path) -> None:
    """The whole path on the tiny scenario: the grid, one live run per seed in OUT/live, the
    table and the figure; a second call runs nothing (both kept in their run stores)."""
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(
        TINY_SCENARIO
        + GRID.replace("runs = 3", "runs = 2")
        + "[sweep.autosize]\ntarget_utilization = 0.9\ninterval = '1s'\nduration = '12s'\n"
    )
    first = reproduce(str(recipe), tmp_path / "out", jobs=1)
    assert first.live is not None and len(first.live.table) == 2
    assert (tmp_path / "out" / "live_vs_offline.csv").exists()
    assert (tmp_path / "out" / "tiny_live.png").exists()
    assert len(list((tmp_path / "out" / "live" / "runs").glob("*.json"))) == 2
    again = reproduce(str(recipe), tmp_path / "out", jobs=1)
    assert again.report.outcome.executed == 0
    assert again.live is not None
    assert again.live.table.equals(first.live.table)
