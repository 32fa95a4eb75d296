"""The optical FIFO of fiber delay lines (thesis ch. 6) from Python and the command line:
recipe F8's tables, the walk through the slots, a run buffered in fiber equal to its drop-tail
run, its tables and sweep metrics, and one line for every bad input. The construction's own
checks (every reachable state at small N, property tests up to N = 1,024, exact counts) are
the Rust tests of `crates/buflab-queue`; here, that Python shows them faithfully."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import buflab
from buflab.analysis.optical import optical_metrics
from buflab.cli import cli
from buflab.experiments import optical
from buflab.experiments.recipes import load
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine


def invoke(*args: str | Path):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def test_counts_match_theorems_6_1_and_6_2_for_n_up_to_1024() -> None:
    """Thm 6.2 (Thm 6.1 at K = 1): 2(log N + K − log K) − 3 lines and N − 1 + (N − 2K)/(2K)
    packet times of fiber, exactly, for N = 4 … 1,024 and K = 1, 2, 4, N/2; the table shows
    the construction's numbers beside the formula's, computed apart (here by hand too)."""
    table = optical.counts_table(1024)
    assert len(table) == 2 + 3 + 7 * 4  # N = 4: K = 1, 2; N = 8: 1, 2, 4; then 1, 2, 4, N/2
    assert table["holds"].all()
    for row in table.itertuples():
        log_n, log_k = int(math.log2(row.N)), int(math.log2(row.K))
        assert row.lines == 2 * (log_n + row.K - log_k) - 3
        assert row.fiber_slots == row.N - 1 + (row.N - 2 * row.K) // (2 * row.K)
    assert table.query("N == 1024 and K == 1")["fiber_slots"].item() == 1534  # ≈ 1.5N


def test_every_request_pattern_is_exact_beside_an_electronic_fifo() -> None:
    """F8's sequences (Bernoulli at loads 0.5 … 1.0, bursts, a sawtooth) at N = 16 and 64:
    no slot in which the two differ, no breach of Appendix E, W below N/(2K), and drops in the
    adversarial ones (the comparison covers the full buffer, not only an idle one)."""
    table = optical.exactness_table((16, 64), (1, 4), slots=20_000, seed=3)
    assert len(table) == 2 * 2 * 6
    assert (table["mismatches"] == 0).all() and (table["violations"] == 0).all()
    assert (table["waiting_max"] < table["waiting_bound"]).all()
    bursts = table[table["pattern"].str.startswith("bursts")]
    assert (bursts["drops"] > 0).all()


def test_the_check_command_prints_both_tables_and_the_verdict() -> None:
    result = invoke("optical", "check", "--n-max", "16", "--slots", "2000")
    assert result.exit_code == 0, result.output
    assert "Counts equal to the theorems: all 9 rows" in result.stdout
    assert "no property of Appendix E broken: all 12 sequences" in result.stdout


def test_the_walk_shows_where_each_arrival_went() -> None:
    """At N = 8 the fourth arrival in a row (order 4) goes straight to the tail of D3, and an
    arrival whose predecessor is a slot from a tail waits in W (the module's worked case)."""
    result = invoke("optical", "show", "--n", "8", "--requests", "a a a a d d ad d d")
    assert result.exit_code == 0, result.output
    assert "arrival: p3 goes straight to the tail of D3" in result.stdout
    assert "arrival: p4 waits 2 slot(s) in W, through W2 (Algorithm B)" in result.stdout
    assert "departure: p4 leaves" in result.stdout and "violations" not in result.stdout
    random = invoke("optical", "show", "--slots", "5", "--seed", "2")
    assert random.exit_code == 0 and "slot 5:" in random.stdout


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["optical", "show", "--n", "12"], ("--n = 12", "power of two")),
        (["optical", "show", "--n", "8", "--k", "8"], ("--k = 8", "from 1 to 4")),
        (["optical", "show", "--requests", "a x"], ("--requests: got 'x'", "a (arrival)")),
        (["optical", "show", "--load", "3"], ("--load 3.0", "0 to 2")),
        (["optical", "check", "--n-max", "1000"], ("--n-max = 1000", "power of two")),
        (["optical", "check", "--k", "3"], ("--k = 3", "power of two")),
        (["optical", "check", "--slots", "0"], ("--slots 0", "1 to")),
    ],
)
def test_bad_optical_input_is_one_line(args: list[str], fragments: tuple[str, ...]) -> None:
    one_line_error(invoke(*args), *fragments)


def tiny(queue: str, buffer: str = "15pkt", **more: object) -> dict:
    overrides = {"network.bottleneck.buffer": buffer, "network.bottleneck.queue": queue}
    overrides.update(more)
    return buflab.load_scenario(TINY_SCENARIO, overrides=overrides)


def test_a_run_in_fiber_is_its_drop_tail_run_with_the_fiber_s_tables() -> None:
    """Thm 6.1 end to end: the tiny dumbbell with 15 packets of fiber gives exactly the
    drop-tail run (every summary value but the machine's, every table), and the optical
    tables describe 7 lines and 22 packet times of fiber with no breach."""
    tail = buflab.run(tiny("droptail", **{"traffic.0.flows": 20}))
    fiber = buflab.run(tiny("optical_fifo", **{"traffic.0.flows": 20}))
    # Every figure but the machine's and the names, which say what was set (the queue).
    machine = {"wall_s", "peak_rss_mib", "name"}
    assert {k: v for k, v in fiber.summary.items() if k not in machine} == {
        k: v for k, v in tail.summary.items() if k not in machine
    }
    assert tail.summary["drops"] > 0, "the buffer must overflow for the comparison to mean much"
    assert fiber.flows.equals(tail.flows) and fiber.links.equals(tail.links)
    assert len(tail.optical) == 0 and "optical" not in tail.tables()
    row = fiber.optical.iloc[0]
    assert (row["lines"], row["fiber_slots"], row["violations"], row["unlike_fifo"]) == (
        7,
        22,
        0,
        0,
    )
    assert row["drops"] == fiber.links["drops"].iloc[0]
    assert list(fiber.optical_lines["line"]) == ["D1", "D2", "D3", "D4", "W1", "W2", "W3"]
    assert {"optical", "optical_lines"} <= set(fiber.tables())


def test_bad_optical_scenarios_are_one_line() -> None:
    """The buffer must be N − 1 packets, K a power of two up to N/2, and the traffic of one
    packet size unless padded: each refused with one line naming the key."""
    cases = [
        (tiny("optical_fifo", "20pkt"), 'network.bottleneck.buffer: got "20pkt"'),
        (
            tiny("optical_fifo", **{"network.bottleneck.optical_k": 3}),
            "network.bottleneck.optical_k: got 3",
        ),
        (
            tiny("optical_fifo")
            | {"traffic": [{"kind": "long_lived", "packet": "1500B"}, {"kind": "long_lived"}]},
            "network.bottleneck.optical_pad: got false",
        ),
    ]
    for scenario, message in cases:
        with pytest.raises(buflab.ScenarioError) as error:
            buflab.validate(scenario)
        assert "\n" not in str(error.value) and message in str(error.value), str(error.value)


def test_a_sweep_keeps_the_fiber_s_figures_as_metrics() -> None:
    columns = {"link": ["bottleneck"], "lines": [7], "passes_mean": [None]}
    assert optical_metrics(columns)["optical.bottleneck.lines"] == 7.0
    assert math.isnan(optical_metrics(columns)["optical.bottleneck.passes_mean"])


def test_recipe_f8_plans_each_size_in_fiber_and_as_drop_tail() -> None:
    scenario, header = load("f8")
    runs = header.plan(scenario, [], None).runs
    assert len(runs) == 3 * 2 * 2
    queues = {r.scenario["network"]["bottleneck"]["queue"] for r in runs}
    buffers = {r.scenario["network"]["bottleneck"]["buffer"] for r in runs}
    assert queues == {"droptail", "optical_fifo"} and buffers == {"15pkt", "31pkt", "63pkt"}
    for run in runs:
        buflab.validate(run.scenario)
