"""Recipes: case dimensions, published numbers beside buflab's, and every shipped recipe's
points accepted by the engine."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from buflab.cli import cli
from buflab.engine import ScenarioError, core, scenario_json
from buflab.engine.scenario import load_scenario
from buflab.experiments import recipes
from buflab.experiments.recipes import SweepHeader, split_header
from buflab.experiments.report import SweepView, compare_published
from buflab.experiments.sweep import Vary, run_id
from buflab.experiments.threshold import threshold_frame, threshold_table, write_thresholds
from conftest import TINY_SCENARIO

CASES = """
[sweep]
runs = 2
[sweep.vary]
"network.bottleneck.buffer" = ["5pkt", "50pkt"]
access = ["fast", "slow"]
[sweep.cases.access.fast]
"network.access" = { rate = "100Mbps" }
[sweep.cases.access.slow]
"network.access" = { rate = "2Mbps" }
"traffic.0.flows" = 2
"""


def header_of(text: str) -> tuple[dict, SweepHeader]:
    return split_header(load_scenario(TINY_SCENARIO + text))


def test_a_case_sets_several_keys_at_once() -> None:
    base, header = header_of(CASES)
    plan = header.plan(base, [], None)
    assert len(plan.runs) == 2 * 2 * 2
    slow = [run for run in plan.runs if run.point["access"] == "slow"]
    assert all(run.scenario["network"]["access"] == {"rate": "2Mbps"} for run in slow)
    assert all(run.scenario["traffic"][0]["flows"] == 2 for run in slow)
    # The run id names the case, so a directory listing reads as the sweep does.
    assert slow[0].id.startswith("access-slow_buffer-5pkt_seed-1")
    assert header.label("access", "slow") == "slow"
    assert base["network"]["access"] == {"rate": "100Mbps"}, "the base scenario is not modified"


def test_vary_option_picks_among_the_cases() -> None:
    base, header = header_of(CASES)
    plan = header.plan(base, [Vary.parse("access=slow")], 1)
    assert {run.point["access"] for run in plan.runs} == {"slow"}
    assert plan.runs[0].scenario["network"]["access"]["rate"] == "2Mbps"
    with pytest.raises(ScenarioError, match="case 'medium' is not defined"):
        header.plan(base, [Vary.parse("access=medium")], 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (CASES.replace('access = ["fast", "slow"]', 'access = ["fast", "rapid"]'), "'rapid'"),
        (CASES.replace('access = ["fast", "slow"]\n', ""), "sweep.cases.access: not varied"),
        (CASES + "[[sweep.published]]\nmetric = 'utilization'\nvalue = 1\n", "missing point"),
        (
            CASES + "[[sweep.published]]\npoint = { access = 'rapid' }\nmetric = 'x'\nvalue = 1\n",
            "access = 'rapid': not among the swept values fast, slow",
        ),
        (
            CASES + "[[sweep.published]]\npoint = { acess = 'fast' }\nmetric = 'x'\nvalue = 1\n",
            "'acess' is not varied",
        ),
        (
            CASES + "[[sweep.published]]\npoint = {}\nmetric = 'x'\nvalue = 1\nband = -1\n",
            "band = -1: expected a number ≥ 0",
        ),
        (
            CASES + "[[sweep.published]]\npoint = {}\nmetric = 'x'\nvalue = 0\nrelation = '=='\n",
            "relation = '==': expected one of",
        ),
        (CASES + "[[sweep.published]]\npoint = {}\nmetric = 'x'\nvalue = 0\nsorce = ''\n", "sorce"),
        (
            CASES.replace("runs = 2\n", "runs = 2\nplot = ['utilization']\n"),
            r"sweep.plot = \['utilization'\]: expected two metric names",
        ),
        (CASES + "[sweep.threshold]\nmetric = 'utilization'\n", "sweep.threshold: missing target"),
        # Telling a quantity from a name reads it with the engine's unit parser.
        pytest.param(
            CASES + "[sweep.threshold]\nmetric = 'utilization'\ntarget = 0.8\ntimes = 'access'\n",
            "sweep.threshold.times = 'access': expected a varied key with numeric values",
            marks=pytest.mark.engine,
        ),
        (
            CASES + "[sweep.threshold]\nmetric = 'utilization'\ntarget = 0.8\nsqrt_n = 1\n",
            "sweep.threshold.sqrt_n = 1: expected true or false",
        ),
        # RTT·C/√N is a number of packets: beside buffers in bytes it would be misread.
        pytest.param(
            CASES.replace('["5pkt", "50pkt"]', '["5kB", "50kB"]')
            + "[sweep.threshold]\nmetric = 'utilization'\ntarget = 0.8\nsqrt_n = true\n",
            "sqrt_n = true: RTT·C/√N is in packets, so the x axis must be buffers in packets",
            marks=pytest.mark.engine,
        ),
        pytest.param(
            CASES.replace('["5pkt", "50pkt"]', '["small", "large"]')
            + "[sweep.threshold]\nmetric = 'utilization'\ntarget = 0.8\n",
            "the x axis .* must be numbers or quantities",
            marks=pytest.mark.engine,
        ),
    ],
)
def test_bad_headers_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        header_of(text)


def test_published_numbers_are_compared_at_their_points() -> None:
    published = """
[[sweep.published]]
point = { access = "slow", "network.bottleneck.buffer" = "5pkt" }
metric = "utilization"
value = 0.86
band = 0.03
[[sweep.published]]
point = { access = "fast", "network.bottleneck.buffer" = "5pkt" }
metric = "utilization"
value = 0.50
band = 0.03
[[sweep.published]]
point = { access = "slow", "network.bottleneck.buffer" = "50pkt" }
relative_to = { access = "slow", "network.bottleneck.buffer" = "5pkt" }
metric = "utilization"
value = 0
relation = ">"
[[sweep.published]]
point = { access = "fast", "network.bottleneck.buffer" = "50pkt" }
metric = "utilization"
value = 0.9
[[sweep.published]]
point = { access = "fast", "network.bottleneck.buffer" = "5pkt" }
metric = "utilization"
value = 0.595
relation = ">"
"""
    base, header = header_of(CASES + published)
    plan = header.plan(base, [], None)
    summary = pd.DataFrame(
        {
            "network.bottleneck.buffer": ["5pkt", "5pkt", "50pkt"],
            "access": ["slow", "fast", "slow"],
            "utilization_mean": [0.85, 0.60, 0.97],
            "utilization_ci95": [0.01, 0.01, math.nan],
        }
    )
    comparisons = compare_published(SweepView(plan, header, summary))
    # 0.60 ± 0.01 is not clearly above 0.595: the claim is within the noise.
    verdicts = [c.verdict for c in comparisons]
    assert verdicts == ["agrees", "above", "agrees", "not run", "within noise"]
    difference = comparisons[2]
    assert difference.measured == pytest.approx(0.12)
    assert math.isnan(difference.ci95)  # one side has no interval


def _threshold_view(buffers: tuple[object, ...] = ("2pkt", "4pkt", "8pkt")) -> SweepView:
    text = (
        TINY_SCENARIO
        + f"""
[sweep.vary]
"network.bottleneck.buffer" = {json.dumps(list(buffers))}
"traffic.0.flows" = [1, 4]
[sweep.threshold]
metric = "utilization"
target = 0.8
times = "traffic.0.flows"
"""
    )
    base, header = split_header(load_scenario(text))
    plan = header.plan(base, [], None)
    summary = pd.DataFrame(
        {
            "network.bottleneck.buffer": list(buffers) * 2,
            "traffic.0.flows": [1, 1, 1, 4, 4, 4],
            # flows = 1 reaches 0.8 exactly at 4pkt (the target counts as reached); flows = 4
            # never does, and its 8pkt point has not run.
            "utilization_mean": [0.5, 0.8, 0.9, 0.3, 0.7, math.nan],
            "utilization_ci95": [math.nan] * 6,
        }
    )
    return SweepView(plan, header, summary)


@pytest.mark.engine
def test_the_threshold_is_the_smallest_x_reaching_the_target_per_line() -> None:
    frame = threshold_frame(_threshold_view())
    assert frame is not None
    rows = frame.to_dict("records")
    assert rows[0]["minimum"] == "4pkt"
    assert rows[0]["utilization"] == 0.8
    assert rows[0]["minimum_times_0.flows"] == 4.0  # 4 packets x 1 flow
    assert pd.isna(rows[1]["minimum"])
    assert rows[1]["largest_run"] == "4pkt"
    assert math.isnan(rows[1]["minimum_times_0.flows"])


def test_a_whole_number_minimum_stays_whole_beside_a_line_that_never_reached(
    tmp_path: Path,
) -> None:
    """pandas would turn [4, missing] into floats: the table showed "4.0" beside "> 4"."""
    view = _threshold_view((2, 4, 8))
    frame, _ = write_thresholds(view, tmp_path, "tiny", "0.0")
    assert frame is not None
    assert frame["minimum"].tolist()[0] == 4
    assert frame["largest_run"].tolist() == [8, 4]
    rendered = list(threshold_table(view, frame).columns[1].cells)
    assert rendered == ["4", "> 4"]
    assert pd.read_csv(tmp_path / "threshold.csv")["minimum"].tolist()[0] == 4


@pytest.mark.engine
def test_thresholds_are_written_as_a_table_and_a_figure_against_the_line_key(
    tmp_path: Path,
) -> None:
    """Fig 3.4 plots the minimum against the switch size: a numeric line key gets the figure,
    including a line that never reached the target (drawn as 'more needed')."""
    frame, figures = write_thresholds(_threshold_view(), tmp_path, "tiny", "0.0")
    assert frame is not None
    assert pd.read_csv(tmp_path / "threshold.csv")["traffic.0.flows"].tolist() == [1, 4]
    assert sorted(path.name for path in figures) == ["tiny_threshold.png", "tiny_threshold.svg"]
    assert all(path.stat().st_size > 0 for path in figures)


@pytest.mark.engine
def test_sqrt_n_puts_each_lines_rule_beside_its_minimum_and_a_curve_per_series(
    tmp_path: Path,
) -> None:
    """P3 plots the minimum buffer against flows, paced and unpaced, beside RTT·C/√N: the
    rule is each line's own (RTT·C of the scenario over √flows), and a second line key is one
    curve per value on the same figure."""
    text = (
        TINY_SCENARIO
        + """
[sweep.vary]
"network.bottleneck.buffer" = ["2pkt", "4pkt"]
"traffic.0.flows" = [1, 4]
"traffic.0.pacing" = ["off", "window"]
[sweep.threshold]
metric = "utilization"
target = 0.8
sqrt_n = true
"""
    )
    base, header = split_header(load_scenario(text))
    plan = header.plan(base, [], None)
    summary = pd.DataFrame(
        {
            "network.bottleneck.buffer": ["2pkt", "4pkt"] * 4,
            "traffic.0.flows": [1, 1, 1, 1, 4, 4, 4, 4],
            "traffic.0.pacing": ["off", "off", "window", "window"] * 2,
            "utilization_mean": [0.9, 0.95, 0.5, 0.85, 0.9, 0.9, 0.5, 0.6],
            "utilization_ci95": [math.nan] * 8,
        }
    )
    view = SweepView(plan, header, summary)
    frame, figures = write_thresholds(view, tmp_path, "tiny", "0.0")
    assert frame is not None
    rtt_c = 10e6 * 0.030 / (1000 * 8)  # 10 Mb/s × the mean of 20-40 ms in 1000 B packets
    rules = dict(zip(frame["traffic.0.flows"], frame["rtt_c_sqrt_n_pkts"], strict=False))
    assert rules[1] == pytest.approx(rtt_c)
    assert rules[4] == pytest.approx(rtt_c / 2)  # √4
    assert frame["minimum"].tolist() == ["2pkt", "4pkt", "2pkt", None]
    assert "RTT·C/√N" in [column.header for column in threshold_table(view, frame).columns]
    assert sorted(path.name for path in figures) == ["tiny_threshold.png", "tiny_threshold.svg"]


@pytest.mark.engine
def test_every_shipped_recipe_is_valid_at_every_point() -> None:
    """Each point of each recipe passes the engine's checks, and each published entry names
    varied values that the recipe sweeps; a typo would otherwise show only after hours."""
    shipped = {"headline", "s7", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11"}
    shipped |= {"p3", "p4", "p4_100m", "p5", "tiny_bump", "qcn"}
    assert shipped <= set(recipes.names())
    for name in recipes.names():
        base, header = recipes.load(name)
        plan = header.plan(base, [], 1)
        for scenario in {scenario_json(run.scenario): run.scenario for run in plan.runs}.values():
            core().validate(scenario_json(scenario))
        values = {vary.key: {str(v) for v in vary.values} for vary in plan.varies}
        for entry in header.published:
            for point in (entry.point, entry.relative_to or {}):
                for key, value in point.items():
                    assert str(value) in values[key], f"{name}: {key} = {value}"
        assert recipes.describe(name), f"{name} has no first comment line"


def test_a_directory_named_like_a_recipe_does_not_hide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`buflab reproduce s3 --out s3` leaves a directory `s3/` in the working directory; a
    second `reproduce s3` from there must resume the recipe, not try to read the directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t1").mkdir()
    base, header = recipes.load("t1")
    assert base["name"] and header.varies


@pytest.mark.engine
def test_reproduce_prints_published_numbers_beside_buflabs(tmp_path: Path) -> None:
    recipe = tmp_path / "mini.toml"
    recipe.write_text(
        TINY_SCENARIO
        + CASES.replace("runs = 2", "runs = 1")
        + """
[[sweep.published]]
point = { access = "fast", "network.bottleneck.buffer" = "50pkt" }
metric = "utilization"
value = 0.9
band = 0.1
source = "a made-up figure"
"""
    )
    result = CliRunner().invoke(cli, ["reproduce", str(recipe), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "published beside buflab" in result.stdout and "made-up" in result.stdout
    table = pd.read_csv(tmp_path / "out" / "published.csv")
    assert table["verdict"].iloc[0] in ("agrees", "above", "below")
    assert run_id({"access": "fast"}, 1).startswith("access-fast")


def test_reproduce_lists_the_recipes() -> None:
    result = CliRunner().invoke(cli, ["reproduce", "--list"])
    assert result.exit_code == 0, result.output
    assert "t1: closed-loop users at 125 % offered load" in result.stdout


@pytest.mark.engine
def test_run_and_load_take_a_recipe_file_and_use_its_scenario(tmp_path: Path) -> None:
    """A recipe is a scenario plus a [sweep] header: `run` and `load` use the scenario."""
    recipe = tmp_path / "mini.toml"
    recipe.write_text(TINY_SCENARIO + CASES)
    for command in (["run", str(recipe), "--json"], ["load", str(recipe)]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, result.output


@pytest.mark.engine
def test_a_voq_sweep_plots_the_input_drop_rate_where_its_losses_are() -> None:
    """With speedup 1 and 100-packet output buffers the outputs never drop: the lower panel
    of s4_voq's figure must be the VOQs' drop rate, and a sweep naming no drop metric keeps
    the output's."""
    base, header = recipes.load("s4_voq")
    plan = header.plan(base, [], None)
    summary = pd.DataFrame(
        {
            "network.switch.voq_buffer": [1, 2],
            "network.switch.ports": [2, 2],
            "utilization_mean": [0.2, 0.5],
            "utilization_ci95": [math.nan] * 2,
            "drop_rate_mean": [0.0, 0.0],
            "drop_rate_ci95": [math.nan] * 2,
            "input_drop_rate_mean": [0.012, 0.002],
            "input_drop_rate_ci95": [math.nan] * 2,
        }
    )
    view = SweepView(plan, header, summary)
    assert view.drop_metric() == "input_drop_rate"
    assert [line.bottom for line in view.lines()] == [[0.012, 0.002]]
    assert _threshold_view().drop_metric() == "drop_rate"
