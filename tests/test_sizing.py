"""`buflab size`: the bisection for the smallest buffer meeting a target utilization, and
`--vary` / `buflab.size_curve`: one search per value of another key."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.analysis import theory
from buflab.cli import cli
from buflab.cli.console import precision_line
from buflab.experiments.sizing import curve_vary, minimum_buffer, value_directory
from buflab.experiments.sweep import Vary
from conftest import TINY_SCENARIO
from test_cli import assert_one_line_error


def fake_runs(
    monkeypatch: pytest.MonkeyPatch, utilization: Callable[[int], float | list[float]]
) -> list[int]:
    """Replace the simulator by `utilization(buffer packets)` (one run's, or a list of
    several seeds'); returns the probed buffers."""
    probed: list[int] = []

    def run_sweep(plan: Any, out: Any, jobs: Any = None, **_: Any) -> SimpleNamespace:
        buffer = int(str(plan.varies[0].values[0]).removesuffix("pkt"))
        probed.append(buffer)
        value = utilization(buffer)
        results = pd.DataFrame({"utilization": value if isinstance(value, list) else [value]})
        return SimpleNamespace(results=results, executed=len(results))

    monkeypatch.setattr("buflab.experiments.sizing.run_sweep", run_sweep)
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
    assert minimum_buffer({}, 1.0, tmp_path, high=100, precision=0).buffer_pkts == 350
    assert probed[:4] == [100, 200, 400, 300], "bisects between the last miss and the hit"
    assert len(probed) == len(set(probed)), "no buffer is probed twice"

    probed = fake_runs(monkeypatch, lambda b: 0.5)
    sizing = minimum_buffer({}, 0.9, tmp_path, high=10)
    assert sizing.buffer_pkts is None
    assert probed == [10, 20, 40, 80, 160]


def test_bisection_stops_within_its_precision(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A search near 6,650 packets refined to one packet took 18 probes (newcomer issue, item
    6). With the default precision (1 %) it stops once the smallest passing buffer is within
    1 % of itself from the largest miss, and says where the minimum lies."""
    probed = fake_runs(monkeypatch, lambda b: 0.99 if b >= 6650 else 0.9)
    sizing = minimum_buffer({}, 0.98, tmp_path, high=8000)
    assert sizing.stopped == "precision"
    assert sizing.missed_pkts < 6650 <= sizing.buffer_pkts
    assert sizing.buffer_pkts - sizing.missed_pkts <= 0.01 * sizing.buffer_pkts
    exact = fake_runs(monkeypatch, lambda b: 0.99 if b >= 6650 else 0.9)
    assert minimum_buffer({}, 0.98, tmp_path / "exact", high=8000, precision=0).buffer_pkts == 6650
    assert len(probed) <= len(exact) - 5, "about log2(1/0.01) fewer probes than to one packet"
    line = precision_line(sizing)
    assert f"between {sizing.missed_pkts + 1:,} and {sizing.buffer_pkts:,} pkt" in line
    assert "--precision 0" in line


def test_a_probe_whose_interval_holds_the_target_stops_the_search(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two seeds that disagree by more than the distance to the target cannot say on which
    side a buffer lies: bisecting further only follows their noise (705 against 706 packets
    with ±2 % intervals, newcomer issue item 6)."""

    def two_seeds(b: int) -> list[float]:
        mean = min(1.0, b / 1000)
        return [mean - 0.02, mean + 0.02]  # a 95 % interval of about ±0.25

    fake_runs(monkeypatch, two_seeds)
    sizing = minimum_buffer({}, 0.9, tmp_path, high=1000, runs=2)
    assert sizing.stopped == "noise"
    noisy = sizing.probes[-1]
    assert abs(noisy.utilization - 0.9) <= noisy.ci95
    assert "cannot tell sizes this close apart" in precision_line(sizing)


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


@pytest.mark.parametrize("target", ["1.5", "0"])
def test_bad_target(tiny_file: Path, tmp_path: Path, target: str) -> None:
    """A target utilization outside (0, 1] (above the link, or nothing) is one `error:` line
    naming --target-utilization and the value, exit status 2, before any probe runs. The
    scenario file is valid, so that error can only come from the target."""
    out = tmp_path / "out"
    command = ["size", str(tiny_file), "--target-utilization", target, "--out", str(out)]
    result = CliRunner().invoke(cli, command)
    assert_one_line_error(result, f"--target-utilization {float(target)}", "(0, 1]")
    assert not out.exists()


@pytest.mark.engine
def test_size_command_on_a_small_scenario_and_resume(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY_SCENARIO)
    out = tmp_path / "out"
    command = ["size", str(scenario), "--target-utilization", "0.9", "--out", str(out)]
    first = CliRunner().invoke(cli, command)
    assert first.exit_code == 0, first.output
    assert "minimum buffer:" in first.stdout and "RTT·C/√N" in first.stdout
    # 100 Mb/s access links let each flow fill the link: the load is unbounded.
    assert "eq. 2.1 (tiny buffers) does not apply: the offered load is unbounded" in first.stdout
    assert {"size.png", "size.svg"} <= {p.name for p in out.iterdir()}
    runs = sorted(p.name for p in (out / "runs").glob("*.json"))
    # The same search again reads every probe from disk: no new run files.
    again = CliRunner().invoke(cli, command)
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in (out / "runs").glob("*.json")) == runs
    answer = [line for line in first.stdout.splitlines() if line.startswith("minimum buffer:")]
    assert answer and answer[0] in again.stdout.splitlines()
    assert "(0 found on disk)" in first.stdout and "(0 found on disk)" not in again.stdout
    # From Python, over the same probes on disk: the answer met the target and every probe
    # below it missed (bisection keeps failures below successes).
    sizing = buflab.size(str(scenario), 0.9, out)
    assert sizing.buffer_pkts is not None
    for probe in sizing.probes:
        assert probe.passed == (probe.buffer_pkts >= sizing.buffer_pkts)


# A probe line as `buflab size` prints it: "      38 pkt: utilization 88.91 %, misses 90.00 %".
PROBE_LINE = re.compile(r"^\s*([\d,]+) pkt: utilization ([\d.]+) %, (meets|misses) ")
SHORT_RUNS = ["--set", "duration=3s"]  # each probe of the tiny scenario in about 0.1 s


def printed_probes(stdout: str) -> list[tuple[int, bool]]:
    """(buffer packets, met the target) of each probe line, in the order they were run."""
    probes = []
    for line in stdout.splitlines():
        match = PROBE_LINE.match(line)
        if match:
            probes.append((int(match[1].replace(",", "")), match[3] == "meets"))
    return probes


def probe_runs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((out / "runs").glob("*.json"))]


@pytest.mark.engine
def test_key_sizes_another_buffer_and_leaves_the_bottleneck_alone(
    tiny_file: Path, tmp_path: Path
) -> None:
    """--key network.access.buffer bisects over the senders' access-link buffers instead
    of the bottleneck's: every probe's run has that key set to the probe's size in packets,
    while the bottleneck keeps the file's 20 packets (its summary's buffer_pkts, as the
    engine ran it); results.csv has a column for the key searched and none for the default
    one; and the answer is the smallest probe that met the target. Exact: the run files
    record the scenario of each probe."""
    out = tmp_path / "out"
    key = "network.access.buffer"
    command = ["size", str(tiny_file), "--target-utilization", "0.9", "--key", key]
    result = CliRunner().invoke(cli, [*command, *SHORT_RUNS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    probes = printed_probes(result.stdout)
    assert probes, result.stdout
    runs = probe_runs(out)
    assert len(runs) == len(probes)
    access = sorted(
        int(run["scenario"]["network"]["access"]["buffer"][: -len("pkt")]) for run in runs
    )
    assert access == sorted(size for size, _ in probes)
    for run in runs:
        assert run["point"] == {key: run["scenario"]["network"]["access"]["buffer"]}
        assert run["scenario"]["network"]["bottleneck"]["buffer"] == "20pkt"
        assert run["summary"]["buffer_pkts"] == 20
    columns = pd.read_csv(out / "results.csv").columns
    assert key in columns and "network.bottleneck.buffer" not in columns
    smallest = min(size for size, met in probes if met)
    assert f"minimum buffer: {smallest:,} pkt for 90.00 %" in result.stdout


@pytest.mark.engine
def test_high_is_the_first_probe_and_bounds_a_search_that_meets_it(
    tiny_file: Path, tmp_path: Path
) -> None:
    """--high replaces RTT·C (38 packets for the tiny scenario) as the first probe. When it
    meets the target the search only bisects below it: --high 12 at a 50 % target (12
    packets give about 87 %, far above) probes nothing, writes no run and answers nothing
    above 12 packets. When it misses, it is doubled until a probe meets the target (at
    most four times): --high 1 at 95 % probes 1, 2, 4 and 8 packets first, each missing
    (8 packets give about 87 %, 8 points short, so a small change in the model keeps
    this order)."""
    command = ["size", str(tiny_file), *SHORT_RUNS]
    out = tmp_path / "met"
    met = CliRunner().invoke(
        cli, [*command, "--target-utilization", "0.5", "--high", "12", "--out", str(out)]
    )
    assert met.exit_code == 0, met.output
    probes = printed_probes(met.stdout)
    assert probes[0] == (12, True)
    assert all(size < 12 for size, _ in probes[1:]) and len(probes) > 1
    assert max(run["summary"]["buffer_pkts"] for run in probe_runs(out)) == 12
    answer = min(size for size, passed in probes if passed)
    assert f"minimum buffer: {answer:,} pkt for 50.00 %" in met.stdout

    out = tmp_path / "missed"
    missed = CliRunner().invoke(
        cli, [*command, "--target-utilization", "0.95", "--high", "1", "--out", str(out)]
    )
    assert missed.exit_code == 0, missed.output
    assert printed_probes(missed.stdout)[:4] == [(1, False), (2, False), (4, False), (8, False)]


# --- one search per value of another key (--vary, buflab.size_curve) -------------------------

# Access links of 1 Mb/s hold each flow to a tenth of the 10 Mb/s bottleneck, so N flows offer
# a load of N/10: eq. 2.1 applies to 8 flows at a target of 70 % and not to 4 (the target is
# above their 40 % load) or 12 (load 1.2).
SLOW_ACCESS = ["network.access.rate=1Mbps"]


@pytest.mark.engine
def test_theory_columns_match_theory_py(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each row's RTT·C, RTT·C/√N and eq. 2.1 are theory.py's for that value's scenario, and
    eq. 2.1 says why where it does not apply."""
    fake_runs(monkeypatch, lambda b: min(1.0, b / 20))
    curve = buflab.size_curve(
        TINY_SCENARIO, 0.7, tmp_path, ("traffic.0.flows", [4, 8, 12]), overrides=SLOW_ACCESS
    )
    table = curve.frame().set_index("traffic.0.flows")
    bdp = theory.bdp_packets(10e6, 0.030, 1000)  # 10 Mb/s, mean RTT 30 ms, 1000 B packets
    assert table["rtt_c_pkts"].tolist() == pytest.approx([bdp] * 3)
    for flows in (4, 8, 12):
        expected = theory.sqrt_n_packets(10e6, 0.030, 1000, flows)
        assert table.loc[flows, "rtt_c_sqrt_n_pkts"] == pytest.approx(expected)
    wmax = 1e6 * 0.030 / 8000  # what a 1 Mb/s access link carries in an RTT, in packets
    assert table.loc[8, "eq21_pkts"] == pytest.approx(
        theory.tiny_buffer_for_utilization(wmax, 0.8, 0.7)
    )
    assert table.loc[8, "eq21_note"] == ""
    assert "not below the offered load" in table.loc[4, "eq21_note"]
    assert "not below 1" in table.loc[12, "eq21_note"]
    assert table["eq21_pkts"].isna().tolist() == [True, False, True]
    assert table["buffer_pkts"].tolist() == [14, 14, 14]  # 14/20 = 0.7
    assert (tmp_path / "sizes.csv").exists()


@pytest.mark.engine
def test_single_search_prints_eq21_beside_the_answer(
    monkeypatch: pytest.MonkeyPatch, tiny_file: Path, tmp_path: Path
) -> None:
    """Without --vary the answer line is followed by eq. 2.1 with its inputs when it applies,
    and by the reason when it does not."""
    fake_runs(monkeypatch, lambda b: min(1.0, b / 20))
    command = [
        "size",
        str(tiny_file),
        "--out",
        str(tmp_path),
        *sum((["--set", o] for o in SLOW_ACCESS), []),
    ]
    applies = CliRunner().invoke(
        cli, [*command, "--set", "traffic.0.flows=8", "--target-utilization", "0.7"]
    )
    assert applies.exit_code == 0, applies.output
    wmax = 1e6 * 0.030 / 8000
    tiny = theory.tiny_buffer_for_utilization(wmax, 0.8, 0.7)
    assert f"eq. 2.1 (tiny buffers): {tiny:,.1f} pkt (W_max = 3.75 pkt, ρ = 0.8" in applies.stdout
    above = CliRunner().invoke(
        cli, [*command, "--set", "traffic.0.flows=8", "--target-utilization", "0.9"]
    )
    assert "eq. 2.1 (tiny buffers) does not apply: the target 0.9 is not below" in above.stdout


@pytest.mark.engine
def test_a_value_with_no_buffer_is_kept_and_drawn(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A search that finds no buffer stays in the table (no minimum, its largest probe) and
    is drawn as its own marker rather than left out of the plot."""
    fake_runs(monkeypatch, lambda b: 0.5)
    curve = buflab.size_curve(TINY_SCENARIO, 0.9, tmp_path, "traffic.0.flows=2,20", high=10)
    table = curve.frame()
    assert table["buffer_pkts"].isna().all()
    assert table["largest_probe_pkts"].tolist() == [160, 160]
    assert {p.name for p in curve.figures} == {"size_curve.png", "size_curve.svg"}
    svg = (tmp_path / "size_curve.svg").read_text()
    assert "no buffer found" in svg and "&gt; 160 pkt" in svg


def test_short_flows_key_names_the_only_traffic_entry() -> None:
    """`flows=...` means traffic.0.flows with one traffic entry and is refused, naming the
    full form, when there are several."""
    one = {"traffic": [{"kind": "long_lived"}]}
    assert curve_vary(one, "flows=1,10").key == "traffic.0.flows"
    two = {"traffic": [{"kind": "long_lived"}, {"kind": "long_lived"}]}
    with pytest.raises(buflab.ScenarioError, match="traffic.0.flows"):
        curve_vary(two, "flows=1,10")


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (("traffic.0.flows", []), "non-empty list"),
        (("traffic.0.flows", "1,2"), "non-empty list"),
        ("traffic.0.flows", "expected KEY=V1,V2"),
        (Vary("network.bottleneck.buffer", ("5pkt",)), "the buffer being sized"),
        ("flows=2,2", "given twice"),
    ],
)
def test_bad_vary_from_python_names_what_was_expected(spec: object, fragment: str) -> None:
    """The Python API refuses what it cannot search over with a ScenarioError saying why."""
    with pytest.raises(buflab.ScenarioError, match=fragment):
        curve_vary({"traffic": [{"kind": "long_lived"}]}, spec)  # type: ignore[arg-type]


def test_values_get_distinct_directories(tmp_path: Path) -> None:
    """Each value has its own readable directory; values whose text is not file-name-safe
    get a hash too, so two values never share one."""
    assert value_directory(tmp_path, "traffic.0.flows", 10).name == "traffic.0.flows-10"
    assert value_directory(tmp_path, "network.access.rate", "1Mbps").name == (
        "network.access.rate-1Mbps"
    )
    odd = {value_directory(tmp_path, "k", value) for value in ("a b", "a/b", "a-b")}
    assert len(odd) == 3


@pytest.mark.engine
@pytest.mark.parametrize(
    ("vary", "fragments"),
    [
        ("traffic.0.flowz=1,2", ("traffic.0.flowz", "unknown key")),  # unknown key
        ("traffic.0.flows=", ("traffic.0.flows=", "expected KEY=V1,V2")),  # empty list
        ("traffic.0.flows", ("traffic.0.flows", "expected KEY=V1,V2")),  # no values
        ("traffic.0.flows=1,,2", ("empty value",)),
        ("traffic.0.flows=2,ten", ("traffic.0.flows=ten", "whole number")),  # bad last value
        ("network.bottleneck.buffer=5pkt", ("network.bottleneck.buffer", "being sized")),
        ("traffic.3.flows=1", ("traffic.3.flows", "out of range")),
    ],
)
def test_bad_vary_is_one_line_before_any_search(
    tiny_file: Path, tmp_path: Path, vary: str, fragments: tuple[str, ...]
) -> None:
    """Bad --vary input is one `error:` line naming the key or value and what was expected,
    exit status 2, and no search starts (a bad last value is caught before the first)."""
    out = tmp_path / "out"
    command = ["size", str(tiny_file), "--target-utilization", "0.9", "--out", str(out)]
    result = CliRunner().invoke(cli, [*command, "--vary", vary])
    assert_one_line_error(result, *fragments)
    assert not list(out.glob("*/runs/*.json"))


@pytest.mark.engine
def test_vary_given_three_times_is_refused(tiny_file: Path) -> None:
    """A size search varies one key and at most one more (a curve per value): a third
    --vary is an error, not silently dropped; the same key twice is one too."""
    command = ["size", str(tiny_file), "--target-utilization", "0.9"]
    three = ["--vary", "flows=2", "--vary", "seed=1,2", "--vary", "duration=1s,2s"]
    assert_one_line_error(CliRunner().invoke(cli, [*command, *three]), "--vary", "one key")
    same = ["--vary", "flows=2", "--vary", "traffic.0.flows=3,4"]
    assert_one_line_error(CliRunner().invoke(cli, [*command, *same]), "given twice")


@pytest.mark.engine
def test_a_second_vary_draws_one_curve_per_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`size_curves` (a second --vary): one curve per value of the series key, each in its
    own OUT/KEY-VALUE with its own table, and OUT/sizes.csv holding every row with the
    series column; the overlay names each series in its legend. Here a paced flow needs
    twice the buffer of an unpaced one (a made-up utilization, to check the bookkeeping)."""

    def run_sweep(plan: Any, out: Any, jobs: Any = None, **_: Any) -> SimpleNamespace:
        buffer = int(str(plan.varies[0].values[0]).removesuffix("pkt"))
        paced = plan.base["traffic"][0].get("pacing") == "window"
        utilization = min(1.0, buffer / (40 if paced else 20))
        return SimpleNamespace(results=pd.DataFrame({"utilization": [utilization]}), executed=1)

    monkeypatch.setattr("buflab.experiments.sizing.run_sweep", run_sweep)
    curves = buflab.size_curves(
        TINY_SCENARIO, 0.9, tmp_path, "flows=2,8", ("traffic.0.pacing", ["off", "window"])
    )
    assert [c.label for c in curves] == ["traffic.0.pacing = off", "traffic.0.pacing = window"]
    assert [c.frame()["buffer_pkts"].tolist() for c in curves] == [[18, 18], [36, 36]]
    table = pd.read_csv(tmp_path / "sizes.csv")
    assert list(table.columns[:2]) == ["traffic.0.pacing", "traffic.0.flows"]
    assert table["traffic.0.pacing"].tolist() == ["off", "off", "window", "window"]
    for pacing in ("off", "window"):
        assert (tmp_path / f"traffic.0.pacing-{pacing}" / "sizes.csv").exists()
    svg = (tmp_path / "size_curve.svg").read_text()
    # In words, not the raw key (`plots.labels`).
    assert "minimum buffer, pacing off" in svg
    assert "minimum buffer, pacing window" in svg
    assert "traffic.0.pacing" not in svg


# Shorter than the tiny scenario's 5 s: two values of a curve search in a few seconds.
CURVE_COMMAND = ["--target-utilization", "0.9", "--vary", "flows=2,8", "--set", "duration=3s"]


@pytest.fixture(scope="module")
def curve_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path, str]:
    """One `buflab size --vary` on the tiny scenario: (command, OUT, its stdout)."""
    base = tmp_path_factory.mktemp("curve")
    scenario = base / "tiny.toml"
    scenario.write_text(TINY_SCENARIO)
    out = base / "out"
    command = ["size", str(scenario), *CURVE_COMMAND, "--out", str(out)]
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 0, result.output
    return command, out, result.stdout


def _run_files(out: Path) -> dict[str, list[Path]]:
    """Each search's run files, by its directory (OUT's run store is not a search)."""
    return {d.name: sorted(d.glob("runs/*.json")) for d in out.iterdir() if (d / "runs").is_dir()}


@pytest.mark.engine
def test_vary_runs_one_search_per_value_in_its_own_directory(
    curve_run: tuple[list[str], Path, str],
) -> None:
    """Each value's search prints under its own heading and keeps its probes in its own
    directory, each run made from the scenario with that value: probes never collide."""
    _, out, stdout = curve_run
    assert "traffic.0.flows = 2" in stdout and "traffic.0.flows = 8" in stdout
    files = _run_files(out)
    assert set(files) == {"traffic.0.flows-2", "traffic.0.flows-8"}
    for directory, runs in files.items():
        assert runs, directory
        flows = int(directory.rsplit("-", 1)[1])
        for path in runs:
            assert json.loads(path.read_text())["scenario"]["traffic"][0]["flows"] == flows
    table = pd.read_csv(out / "sizes.csv")
    assert table["traffic.0.flows"].tolist() == [2, 8]
    for row in table.itertuples():
        assert row.probes == len(files[f"traffic.0.flows-{row._1}"])
    # One run store for the whole command, in OUT: a row per probe run, named by its search.
    stored = buflab.runs.open(out)
    assert sorted(stored["run"]) == sorted(path.stem for runs in files.values() for path in runs)
    for directory, runs in files.items():
        rows = stored[stored["directory"] == directory]
        assert set(rows["run"]) == {path.stem for path in runs}
        assert set(rows["traffic.0.flows"]) == {int(directory.rsplit("-", 1)[1])}
        assert set(rows["command"]) == {"size"}


@pytest.mark.engine
def test_vary_writes_the_table_and_the_plots(curve_run: tuple[list[str], Path, str]) -> None:
    """The final table names the theory columns; sizes.csv, the curve plot and each search's
    probe plot are written, and every figure names its scenario and seeds."""
    _, out, stdout = curve_run
    for column in ("minimum", "RTT·C", "RTT·C/√N", "eq. 2.1", "probes", "wall"):
        assert column in stdout
    assert "eq. 2.1 does not apply at every value" in stdout
    names = {path.relative_to(out).as_posix() for path in out.rglob("*.*")}
    for expected in ("sizes.csv", "size_curve.png", "size_curve.svg"):
        assert expected in names
    for value in (2, 8):
        assert {f"traffic.0.flows-{value}/size.png", f"traffic.0.flows-{value}/size.svg"} <= names
    # The curve's footer names the flows as the range searched.
    assert (
        "scenario tiny (duration=3s) · 10 Mb/s bottleneck · 2–8 flows · 3 s (1 s warm-up) "
        "simulated · seed 1 · buflab"
    ) in (out / "size_curve.svg").read_text()


@pytest.mark.engine
def test_a_resumed_vary_search_runs_no_new_probe(curve_run: tuple[list[str], Path, str]) -> None:
    """Running the same curve again finds every probe on disk: nothing is simulated, no run
    file is added and the answers are the same."""
    command, out, stdout = curve_run
    before = _run_files(out)
    again = CliRunner().invoke(cli, command)
    assert again.exit_code == 0, again.output
    assert _run_files(out) == before
    probes = [line for line in again.stdout.splitlines() if " pkt: utilization " in line]
    assert probes and all(line.endswith("(on disk)") for line in probes)
    answers = [line for line in stdout.splitlines() if line.startswith("minimum buffer:")]
    assert answers == [
        line for line in again.stdout.splitlines() if line.startswith("minimum buffer:")
    ]
    # From Python, over the same directories: the full key and the short one share probes.
    curve = buflab.size_curve(
        TINY_SCENARIO, 0.9, out, ("traffic.0.flows", [2, 8]), overrides=["duration=3s"]
    )
    assert sum(probe.simulated for p in curve.points for probe in p.sizing.probes) == 0
