"""The command line: bad input gives one line and exit status 2; --json gives the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import buflab
from buflab.cli import cli
from conftest import TINY_SCENARIO

pytestmark = pytest.mark.engine


def invoke(*args: str | Path):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.mark.parametrize(
    ("override", "fragments"),
    [
        # A misspelt key: the engine names it and suggests the key it resembles.
        ("network.bottleneck.bufer=10pkt", ("bufer", "buffer")),
        ("network.bottleneck.rate=-5Mbps", ("network.bottleneck.rate", "-5Mbps")),
        ("warmup=10s", ("warmup",)),  # longer than the 5 s duration
        ("network.bottleneck.buffer=ten", ("network.bottleneck.buffer", "ten")),
        ("traffic.2.flows=3", ("traffic.2.flows", "out of range")),  # caught in Python
        # RED settings on a drop-tail queue are refused, never ignored.
        ("network.bottleneck.red_min_th=5", ("network.bottleneck.red_min_th", "droptail")),
        ("network.bottleneck.queue=sfq", ("network.bottleneck.queue", "sfq", "red", "codel")),
        # Quantities beyond any link are refused, not wrapped or capped (hardening defect 7).
        ("network.bottleneck.buffer=9223372036854775807pkt", ("buffer", "at most")),
        ("network.bottleneck.rate=100000Tbps", ("network.bottleneck.rate", "at most 1000Tbps")),
        # A time series that would take gigabytes is refused up front (defect 4).
        ("monitor.interval=1ns", ("monitor.interval", "time-series rows", "at least")),
    ],
)
def test_bad_scenarios_exit_2_with_one_line(tiny_file: Path, override: str, fragments) -> None:
    assert_one_line_error(invoke("run", tiny_file, "--set", override), *fragments)


def test_misspelt_key_in_the_file(tmp_path: Path, tiny_file: Path) -> None:
    path = tmp_path / "typo.toml"
    path.write_text(tiny_file.read_text().replace("duration =", "duraton ="))
    assert_one_line_error(invoke("run", path), "duraton", "duration")


def test_missing_file_and_bad_toml(tmp_path: Path) -> None:
    assert_one_line_error(invoke("run", tmp_path / "absent.toml"), "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    assert_one_line_error(invoke("run", bad), "invalid TOML")


def test_files_that_are_not_scenarios_get_one_line(tmp_path: Path, tiny_file: Path) -> None:
    """Hardening issue, defects 2 and 3: each once gave a traceback (or read a path as TOML)."""
    binary = tmp_path / "binary.toml"
    binary.write_bytes(bytes(range(128, 256)))
    assert_one_line_error(invoke("run", binary), "binary.toml", "not a text file")
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    assert_one_line_error(invoke("run", folder), "folder.toml", "a directory")
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 500 + "]" * 500 + "\n")
    assert_one_line_error(invoke("run", deep), "deep.toml", "nested too deep")
    # A path with "=" in it is a path: it runs (here: a bad override proves it was read).
    odd = tmp_path / "a=b"
    odd.mkdir()
    (odd / "s.toml").write_text(tiny_file.read_text())
    assert_one_line_error(invoke("run", odd / "s.toml", "--set", "warmup=10s"), "warmup")


@pytest.mark.parametrize(
    ("header", "fragment"),
    [
        ('[sweep]\nvary = "x"\n', "sweep.vary = 'x': expected a table"),
        ("[sweep.theory]\nx = 1\n", "sweep.theory.x: unknown key"),
        ('[sweep.theory]\nload = "high"\nutilization = 0.9\n', "sweep.theory.load = 'high'"),
        ("[sweep]\nruns = 0\n", "sweep.runs = 0"),
    ],
)
def test_bad_sweep_headers_get_one_line(
    tmp_path: Path, tiny_file: Path, header: str, fragment: str
) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(tiny_file.read_text() + "\n" + header)
    assert_one_line_error(
        invoke("sweep", path, "--vary", "seed=1", "--out", tmp_path / "out"), fragment
    )


def test_an_out_that_is_a_file_is_refused_before_running(tmp_path: Path, tiny_file: Path) -> None:
    """Hardening issue, defect 2: `--out` at a file once failed after the simulation ran."""
    taken = tmp_path / "taken"
    taken.write_text("")
    for command in (("run", tiny_file), ("sweep", tiny_file, "--vary", "seed=1")):
        assert_one_line_error(invoke(*command, "--out", taken), "a file is there")


def test_sweep_with_a_bad_value_fails_before_running(tmp_path: Path, tiny_file: Path) -> None:
    result = invoke(
        "sweep", tiny_file, "--vary", "network.bottleneck.buffer=5pkt,ten", "--out", tmp_path
    )
    assert_one_line_error(result, "network.bottleneck.buffer", "ten")
    assert not list((tmp_path / "runs").glob("*.json"))


def test_json_summary_equals_the_python_api(tiny_file: Path) -> None:
    result = invoke("run", tiny_file, "--json", "--set", "seed=7")
    assert result.exit_code == 0, result.output
    from_cli = json.loads(result.stdout)  # exactly one JSON object, nothing else
    from_python = buflab.run(tiny_file, seed=7).summary
    # Wall time and the process's peak memory are measurements of the run, not results.
    for varying in ("wall_s", "peak_rss_mib"):
        from_cli.pop(varying)
        from_python.pop(varying)
    assert from_cli == from_python
    assert from_cli["seed"] == 7


def test_run_writes_the_result_directory(tmp_path: Path, tiny_file: Path) -> None:
    out = tmp_path / "out"
    result = invoke("run", tiny_file, "--out", out, "--csv", "--set", "monitor.events=true")
    assert result.exit_code == 0, result.output
    assert "utilization" in result.stdout
    assert "links" not in result.stdout, "one link: the summary already describes it"
    names = {path.name for path in out.iterdir()}
    for table in ("flows", "timeseries", "links", "events"):
        assert {f"{table}.parquet", f"{table}.csv"} <= names
    assert json.loads((out / "summary.json").read_text())["name"] == "tiny"
    # The run is also the one row of OUT's run store, as a sweep's runs are of theirs.
    stored = buflab.runs.open(out)
    assert stored["command"].tolist() == ["run"]
    assert (
        stored["utilization"].iloc[0]
        == json.loads((out / "summary.json").read_text())["utilization"]
    )


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_output_to_a_log_is_wide_enough_for_sweep_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep's output kept in a file (nohup, CI) is not a terminal: rich would squeeze its
    tables into 80 columns of ellipses. It gets 160 unless COLUMNS says otherwise."""
    from buflab.cli import console

    monkeypatch.delenv("COLUMNS", raising=False)
    assert console._console().width == console.LOG_WIDTH
    monkeypatch.setenv("COLUMNS", "100")
    assert console._console().width == 100


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_every_example_is_a_valid_scenario(path: Path) -> None:
    """The README and the examples' headers point users at these files: each must pass the
    engine's checks as shipped."""
    assert buflab.validate(path)["name"]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_every_example_runs_from_the_command_line(path: Path) -> None:
    """Validating is not running: the command line reads more of a scenario before it runs
    (the run's estimates), and `buflab run examples/qcn.toml` once failed there while the
    file validated. Each example runs, a simulated second of it, to a JSON summary."""
    ran = invoke(
        "run", path, "--set", "duration=1s", "--set", "warmup=0.5s",
        "--set", "monitor.events=false", "--json",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout.strip().splitlines()[-1])["duration_s"] == 1.0


def test_ecn_rows_appear_only_for_a_run_with_marks(tiny_file: Path) -> None:
    # The RED + ECN example, shortened: its summary shows marks, mark rate and reactions.
    marked = invoke("run", EXAMPLES / "red_ecn.toml", "--set", "duration=20s", "--set", "warmup=5s")
    assert marked.exit_code == 0, marked.output
    for label in ("ECN marks", "mark rate", "ECN window reductions"):
        assert label in marked.stdout, label
    # A drop-tail run has none, and its table shows no such rows.
    plain = invoke("run", tiny_file)
    assert plain.exit_code == 0, plain.output
    assert "ECN" not in plain.stdout and "mark rate" not in plain.stdout


def test_theory_table() -> None:
    result = invoke(
        "theory", "--rate", "10Gbps", "--rtt", "100ms", "--flows", "800",
        "--wmax", "83", "--load", "0.75", "--target", "0.70",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "125,000.0" in result.stdout
    assert "4,419.4" in result.stdout
    assert "37.7" in result.stdout


def test_theory_bad_unit_is_one_line() -> None:
    assert_one_line_error(invoke("theory", "--rate", "10Gbs", "--rtt", "100ms"), "--rate", "10Gbs")


def test_theory_reads_a_scenario(tiny_file: Path) -> None:
    # 10 Mb/s × 30 ms mean RTT / 8000 bits = 37.5 packets; 4 flows → 18.75.
    result = invoke("theory", tiny_file, "--set", "traffic.0.flows=4")
    assert result.exit_code == 0, result.output
    assert "37.5" in result.stdout
    assert "18.8" in result.stdout


def test_point_runs_one_case_of_a_recipe() -> None:
    # T7's "1 machine" case replaces the whole access table: one machine with 16 classes.
    short = ["--set", "duration=2s", "--set", "warmup=1s", "--json"]
    result = invoke("run", "t7", "--point", "machines=1 machine", *short)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["flows"] == 400


def test_point_names_what_the_recipe_varies() -> None:
    result = invoke("run", "t7", "--point", "buffer=10pkt")
    assert result.exit_code == 2
    assert "--point buffer: not varied" in result.output and "machines" in result.output
    result = invoke("run", "t7", "--point", "machines=2 machines")
    assert result.exit_code == 2
    assert "'1 machine'" in result.output, "the error lists the recipe's cases"


def test_sweep_values_given_twice_and_seeds_past_the_last_are_refused(
    tmp_path: Path, tiny_file: Path
) -> None:
    """Hardening issue, defect 10: `--vary seed=1,1` ran once and wrote two identical rows;
    `seed = 2^64 - 1` with two runs failed on seed + 1 without saying so."""
    out = tmp_path / "out"
    assert_one_line_error(
        invoke("sweep", tiny_file, "--vary", "network.bottleneck.buffer=5pkt,5pkt", "--out", out),
        "network.bottleneck.buffer",
        "5pkt is given twice",
    )
    last = str(2**64 - 1)
    one_value = "network.bottleneck.buffer=5pkt"
    assert_one_line_error(
        invoke("sweep", tiny_file, "--set", f"seed={last}", "--vary", one_value, "--runs", "2",
               "--out", out),
        "the seeds run to",
    )  # fmt: skip


def test_an_event_log_without_a_destination_is_refused(tiny_file: Path) -> None:
    """Hardening issue, defect 6: the log was kept in memory and thrown away."""
    assert_one_line_error(
        invoke("run", tiny_file, "--set", "monitor.events=true"), "monitor.events", "--out"
    )


def test_ctrl_c_stops_a_single_run_within_a_second(tmp_path: Path) -> None:
    """Hardening issue, defect 5: SIGINT was ignored for the whole run. The engine now asks
    Python for signals every 65,536 events (about a hundredth of a second)."""
    import signal
    import subprocess
    import sys
    import time

    buflab_cli = Path(sys.executable).parent / "buflab"
    out = tmp_path / "out"
    run = subprocess.Popen(
        [buflab_cli, "run", EXAMPLES / "dumbbell.toml", "--set", "duration=20000s", "--out", out],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Into the simulation (the whole run would take minutes): the run announces itself just
    # before the engine starts; a fixed sleep could land in Python's start-up on a loaded
    # machine, which is another window than the one this test is about.
    first = run.stderr.readline() if run.stderr else ""
    time.sleep(1.0)
    run.send_signal(signal.SIGINT)
    # Without the check the run goes on for minutes and this times out; with it, it stops in
    # about a hundredth of a second (measured: 0.08 s).
    _, rest = run.communicate(timeout=30)
    err = first + rest
    assert run.returncode == 130, err
    lines = err.strip().splitlines()
    # A run this long says so first (defect 5: how long it will take, with its progress).
    assert lines[0].startswith("note: this run simulates 20,000 s: about 250,000,000 packets")
    assert lines[-1] == "interrupted: the run was stopped; no results were written"
    assert not out.exists()


# Ctrl-C while a module is being imported, made exact: a finder that raises it when asked for
# the module, as Python's signal handler would in the middle of that import.
INTERRUPT_AT_IMPORT = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
sys.argv = ["buflab", *{args!r}]
from buflab.cli import main
main()
"""


@pytest.mark.parametrize(
    ("module", "args", "line"),
    [
        # In the first few tenths of a second the commands' modules are still importing.
        ("buflab.cli.group", ["--version"], "interrupted: stopped before anything was run"),
        # A command importing pandas before its own handler is in place: click printed
        # "Aborted!" and exited with 1.
        (
            "pandas",
            ["load", str(EXAMPLES / "closed_loop.toml")],
            "interrupted: the command was stopped",
        ),
    ],
)
def test_ctrl_c_while_starting_is_one_line_and_130(
    module: str, args: list[str], line: str | None
) -> None:
    """Ctrl-C always stops cleanly, from the first moment the command's own code runs: one
    line and status 130 (what a shell reports for SIGINT), never a traceback or click's
    "Aborted!". (Python's own start-up, before the entry point is read, is not ours: about
    15 ms.)"""
    import subprocess
    import sys

    probe = INTERRUPT_AT_IMPORT.format(module=module, args=args)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 130, done.stderr
    assert lines == [line], done.stderr


def test_a_long_run_is_estimated_from_its_links_and_a_short_one_is_not_announced() -> None:
    """The estimate is the bottleneck's packets in the simulated time (rate × duration ÷
    packet size) at the engine's usual speed; only runs above half a minute are announced."""
    from buflab.engine.runner import load_scenario, validate
    from buflab.engine.wall_time import DEPARTURES_PER_WALL_SECOND, announcement, estimate

    long = estimate(validate(load_scenario(EXAMPLES / "dumbbell.toml", duration="20000s")))
    assert long.packets == 100e6 * 20000 / (8 * 1000)  # 100 Mb/s, 1000-byte packets
    assert long.wall_s == long.packets / DEPARTURES_PER_WALL_SECOND and long.announced
    assert "roughly 83 seconds" in announcement(long)
    assert not estimate(validate(load_scenario(EXAMPLES / "dumbbell.toml"))).announced


def test_open_loop_arrivals_and_autosize_steps_that_would_exhaust_memory_are_refused(
    tmp_path: Path,
) -> None:
    """Hardening issue, defect 4: `open_loop` at 10⁹ arrivals a second and an
    `autosize.interval` of 1 ns died by SIGABRT (every arrival keeps its flow and row; every
    step is a row). Each is now one line naming the key, before anything runs."""
    path = tmp_path / "open.toml"
    path.write_text(
        'duration = "10s"\n[network]\nbottleneck = { rate = "100Mbps" }\n'
        '[[traffic]]\nkind = "open_loop"\narrivals = 1e9\n'
    )
    assert_one_line_error(
        invoke("run", path), "traffic.0.arrivals: got 1,000,000,000", "10,000,000,000 flows"
    )
    sized = invoke(
        "run", EXAMPLES / "dumbbell.toml",
        "--set", "autosize.target_utilization=0.98", "--set", 'autosize.interval="1ns"',
    )  # fmt: skip
    assert_one_line_error(sized, "autosize.interval", "steps over the measured")


def test_a_source_faster_than_its_unlimited_access_link_is_refused(tmp_path: Path) -> None:
    """Hardening issue, defect 4: `udp_poisson` at 1 Tbps piled packets up until the machine
    ran out of memory."""
    path = tmp_path / "udp.toml"
    path.write_text(
        'duration = "1s"\n[network]\nbottleneck = { rate = "10Mbps" }\n'
        'access = { rate = "1Gbps" }\n[[traffic]]\nkind = "udp_poisson"\nrate = "1Tbps"\n'
    )
    assert_one_line_error(invoke("run", path), "traffic.0.rate", "at most the access rate")
    # A sweep checks every point before its workers start (they run the engine directly).
    sweep = invoke("sweep", path, "--vary", "traffic.0.rate=1Mbps,1Tbps", "--out", tmp_path / "out")
    assert_one_line_error(sweep, "traffic.0.rate", "at most the access rate")


def test_flows_is_short_for_the_only_traffic_entrys_flows_everywhere(
    tmp_path: Path, tiny_file: Path
) -> None:
    """Newcomer issue, item 5: `--vary flows=…` worked for `size` but `--set flows=2000` was
    refused. One rule for every command and the API: `flows` is short for `traffic.0.flows`
    when the scenario has one traffic entry, and an error naming the choice when it has
    several."""
    ran = invoke("run", tiny_file, "--set", "flows=3", "--json")
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["flows"] == 3
    swept = invoke("sweep", tiny_file, "--vary", "flows=1,2", "--out", tmp_path / "sweep")
    assert swept.exit_code == 0, swept.output
    assert sorted(pd.read_csv(tmp_path / "sweep" / "results.csv")["flows"]) == [1, 2]
    assert buflab.run(TINY_SCENARIO, overrides={"flows": 2}).summary["flows"] == 2
    assert_one_line_error(
        invoke("run", EXAMPLES / "parking_lot.toml", "--set", "flows=3"),
        "flows: short for the flows of the only [[traffic]] entry",
        "e.g. traffic.0.flows",
    )


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run"], "Missing argument 'FILE'. (see `"),
        (["sweep", "x.toml", "--runs", "x"], "'x' is not a valid integer"),
        (["nosuch"], "No such command 'nosuch'. (see `"),
    ],
)
def test_click_usage_errors_are_one_line_like_every_other(argv: list[str], fragment: str) -> None:
    """Newcomer issue, item 8: click's own usage errors printed the usage and `Error: …`,
    beside buflab's `error: …` lines; now every bad input is one `error:` line."""
    assert_one_line_error(invoke(*argv), fragment)


def test_default_output_folders_differ_with_the_settings() -> None:
    """Newcomer issue, item 4: the README's `size` commands, run in order, shared
    `out/size-NAME` and the second was refused as "made from a different scenario". The
    default folder now carries a digest of what changes the scenario, and only then."""
    from buflab.cli.common import default_out

    plain = default_out("size", "examples/dumbbell.toml", (), (), None)
    assert plain == Path("out/size-dumbbell")
    a = default_out("size", "examples/dumbbell.toml", ("duration=120s",), (), None)
    b = default_out("size", "examples/dumbbell.toml", ("duration=60s",), (), None)
    assert (
        a != b and a.name.startswith("size-dumbbell-") and len(a.name) == len("size-dumbbell-") + 8
    )
    assert a == default_out("size", "examples/dumbbell.toml", ("duration=120s",), (), None)
    assert default_out("", "t1", ("seed=2",)).name.startswith("t1-")


def test_a_warm_up_too_short_for_the_flows_to_settle_is_pointed_out(tiny_file: Path) -> None:
    """Newcomer issue, item 8: a 10 Gb/s run of 2,000 flows with 10 s of warm-up reported
    Jain 0.49 with no hint. A warm-up shorter than five sawtooth cycles of the flows' fair
    window (W/2 round trips each) gets a note with the warm-up to use; a long enough one
    gets none. The example: 2,000 flows at 10 Gb/s, RTT 100 ms, 1000 B packets: W = 62.5
    packets, 5 × 31.25 RTTs = 15.6 s."""
    from buflab.analysis.theory import aimd_convergence_s

    assert aimd_convergence_s(10e9, 0.1, 1000, 2000, 1e9) == pytest.approx(15.625)
    assert aimd_convergence_s(10e9, 0.1, 1000, 2000, 20) == pytest.approx(5.0), "window-limited"
    short = invoke("run", EXAMPLES / "dumbbell.toml", "--set", "warmup=1s", "--set", "duration=2s")
    assert short.exit_code == 0, short.output
    assert "note: warm-up 1 s is shorter than the 3.125 s the 100 long-lived flows" in short.stderr
    assert "--set warmup=4s" in short.stderr
    assert "warm-up" not in invoke("run", tiny_file).stderr


def test_flows_that_share_one_rtt_without_jitter_are_pointed_out() -> None:
    """Linux fidelity issue, equal RTTs: a star of flows that all have exactly one RTT and no
    send jitter locks in phase at a drop-tail queue (100 flows through 62.5 Mb/s at 87 ms:
    92 % at 24 packets, 87 % at 48, against 99 % and more with RTTs of 80–94 ms or 1 ms of
    jitter), a property of the scenario that real hosts' timing noise hides. `run` (and
    `sweep`, `size`) say so; an RTT range, a jittered entry, or the `linux` profile (whose
    default host jitter is on) gets no note."""
    from buflab.cli.common import phase_lock_note

    args = ("--set", "duration=2s", "--set", "warmup=1s", "--set", "traffic.0.flows=5")
    exact = invoke("run", EXAMPLES / "dumbbell.toml", "--set", "network.rtt=87ms", *args)
    assert exact.exit_code == 0, exact.output
    assert "note: every TCP flow's RTT is exactly 87ms and no traffic entry has send jitter" in (
        exact.stderr
    )
    base = buflab.validate(EXAMPLES / "dumbbell.toml", network__rtt="87ms")
    assert phase_lock_note(base) is not None
    assert phase_lock_note(buflab.validate(EXAMPLES / "dumbbell.toml")) is None, "a range"
    jittered = buflab.validate(
        EXAMPLES / "dumbbell.toml", network__rtt="87ms", traffic__0__jitter="1ms"
    )
    assert phase_lock_note(jittered) is None
    linux = buflab.validate(
        EXAMPLES / "dumbbell.toml", network__rtt="87ms", traffic__0__tcp="linux"
    )
    assert phase_lock_note(linux) is None
    one_choice = {"dist": "choice", "values": ["87ms"], "weights": [1]}
    choice = buflab.validate(EXAMPLES / "dumbbell.toml", traffic__0__rtt=one_choice)
    assert phase_lock_note(choice) is not None


def test_jitter_comparable_to_the_rtt_gets_a_note() -> None:
    """The `linux` profile's 100 µs host jitter is a WAN host's; on a 100 µs data-centre path it
    doubles the round trip the flows see (DCTCP then needs about twice the marking threshold
    C·RTT/7 gives). A jitter of a quarter of the smallest RTT or more gets a note naming the
    entry's key; 10 µs there, or the default on a WAN path, gets none."""
    from buflab.cli.common import jitter_note

    def note(**kw: str) -> str | None:
        return jitter_note(
            buflab.validate(EXAMPLES / "dumbbell.toml", traffic__0__tcp="linux", **kw)
        )

    dc = note(network__rtt="50us..150us")
    assert dc is not None and dc.startswith("traffic.0.jitter = 100us is a quarter or more")
    assert note(network__rtt="50us..150us", traffic__0__jitter="10us") is None
    assert note() is None, "the example's 20–60 ms path"
