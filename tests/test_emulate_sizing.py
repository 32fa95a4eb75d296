"""Buffer sizing and recipes on real TCP: `buflab autosize --emulate` (the engine's auto-sizer
setting the datapath's buffer live), `buflab size --emulate` (probes as emulations, kept and
resumed as simulated ones) and `buflab reproduce --emulate` (a recipe's points as
emulations, or one line saying why not). What is refused needs no root; the runs do (CI runs
as root)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from buflab.experiments import recipes

pytestmark = pytest.mark.engine

BUFLAB = str(Path(sys.executable).parent / "buflab")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (CI runs as root)")

# Ten Linux flows through 20 Mb/s: 12 s in all, the auto-sizer's steps every 2 s after a 2-s
# warm-up (at 4, 6, 8, 10 and 12 s; the last, at the end, is measured and not applied).
SIZED = """
name = "auto-sized on real TCP"
duration = "12s"
warmup = "2s"
[network]
bottleneck = { rate = "20Mbps", buffer = "30pkt" }
rtt = "20ms..60ms"
[[traffic]]
kind = "long_lived"
flows = 10
tcp = "sack"
packet = "1500B"
start = "0s..1s"
[monitor]
events = true
"""


def buflab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BUFLAB, *args], capture_output=True, text=True, timeout=600)


@as_root
def test_autosize_emulate_sets_the_datapaths_buffer_live_and_reports_each_step(
    tmp_path: Path,
) -> None:
    """The engine's search drives the datapath: five steps, each probing the limit the one
    before it chose (starting from --start), each limit in force from when the datapath
    took it, and from then on every admitted frame found fewer than that limit waiting and
    every drop at least that many (the event log's occupancy): the limit changed live, not
    at the next run. The steps are printed as a table, the answer or why there is none, and
    the run's fidelity. (Whether the search passes or fails a step depends on Linux; that it
    moves from 60 packets either way does not: halving or doubling.)"""
    scenario = tmp_path / "sized.toml"
    scenario.write_text(SIZED)
    out = tmp_path / "out"
    done = buflab(
        "autosize", str(scenario), "--emulate", "--target-utilization", "0.95",
        "--interval", "2s", "--start", "60", "--set", "autosize.settle=0.5s", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "auto-sizer steps" in done.stdout and "real TCP:" in done.stdout, done.stdout
    assert "converged buffer" in done.stdout or "not converged" in done.stdout, done.stdout
    steps = pd.read_parquet(out / "autosize.parquet")
    assert len(steps) == 5 and steps["buffer_pkts"].iloc[0] == 60, steps
    # Each step measured the limit the previous one set.
    assert steps["buffer_pkts"].tolist()[1:] == steps["next_buffer_pkts"].tolist()[:-1], steps
    assert steps["next_buffer_pkts"].iloc[0] in (30, 120), "halved or doubled"
    assert ((steps["utilization"] > 0) & (steps["utilization"] <= 1)).all(), steps
    # Four limits set, each after its step; the last step's (at the end) is not.
    set_at = steps["limit_set_s"].tolist()
    assert all(t >= s for t, s in zip(set_at[:-1], steps["time_s"], strict=False)), steps
    assert pd.isna(set_at[-1]), steps
    summary = json.loads((out / "summary.json").read_text())
    assert summary["emulated"] and summary["buffer_pkts"] == steps["next_buffer_pkts"].iloc[-2]
    log = pd.read_parquet(out / "events.parquet")
    limits = steps["next_buffer_pkts"].tolist()[:-1]
    bounds = [*(round(t * 1e12) for t in set_at[:-1]), round(summary["window_end_s"] * 1e12)]
    for limit, start, end in zip(limits, bounds, bounds[1:], strict=False):
        during = log[(log["time_ps"] > start) & (log["time_ps"] < end)]
        assert during.loc[during["event"] == "enqueue", "queue_pkts"].max() <= limit
        assert (during.loc[during["event"] == "drop", "queue_pkts"] >= limit).all()


# One Linux flow for 3 s: each probe of a size search is a short emulation.
PROBED = """
name = "probed on real TCP"
duration = "3s"
warmup = "1s"
[network]
bottleneck = { rate = "10Mbps", buffer = "8pkt" }
rtt = "20ms"
[[traffic]]
kind = "long_lived"
flows = 2
tcp = "sack"
packet = "1500B"
"""


@as_root
def test_size_emulate_keeps_its_probes_and_a_second_search_reuses_them(tmp_path: Path) -> None:
    """Each probe is an emulation whose run file and store row say Linux made it; the same
    search again runs nothing (every probe "(on disk)") and gives the same answer, as a
    simulated search resumes; a simulated search in the same directory does not take the
    emulated probes for its own (it runs them). The target (50 %) is one two Reno flows
    meet at any buffer of a few packets, so the search's probes are 8, 4, 2 (and 1 if 2
    passes) and the answer does not hinge on Linux's exact utilization."""
    scenario = tmp_path / "probed.toml"
    scenario.write_text(PROBED)
    out = tmp_path / "out"
    args = ["size", str(scenario), "--target-utilization", "0.5", "--high", "8", "--out", str(out)]
    first = buflab(*args, "--emulate")
    assert first.returncode == 0, first.stderr
    assert "(on disk)" not in first.stdout and "minimum buffer:" in first.stdout, first.stdout
    runs = [json.loads(path.read_text()) for path in (out / "runs").glob("*.json")]
    assert len(runs) >= 3 and all(r["engine_build"].startswith("linux ") for r in runs), runs
    assert all(r["summary"]["emulated"] for r in runs)
    again = buflab(*args, "--emulate")
    assert again.returncode == 0, again.stderr
    probes = [line for line in again.stdout.splitlines() if " pkt: utilization" in line]
    assert probes and all(line.endswith("(on disk)") for line in probes), again.stdout
    answer = [line for line in first.stdout.splitlines() if line.startswith("minimum buffer:")]
    assert answer[0] in again.stdout
    simulated = buflab(*args)
    assert simulated.returncode == 0, simulated.stderr
    assert "(on disk)" not in simulated.stdout, "the emulated probes are not the simulator's"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["size", "examples/dumbbell.toml", "--emulate", "--jobs", "2"], "--jobs 2 with --emulate"),
        (["size", "examples/dumbbell.toml", "--emulate", "--cluster", "local"], "--cluster local"),
        (["reproduce", "headline", "--emulate", "--jobs", "3"], "--jobs 3 with --emulate"),
    ],
)
def test_emulate_refuses_options_that_spread_runs_in_one_line(
    args: list[str], message: str
) -> None:
    """Emulations run one at a time on this machine: --jobs above 1 and --cluster are refused
    in one line before anything runs (no root needed to say so)."""
    done = buflab(*args, "--target-utilization", "0.9") if args[0] == "size" else buflab(*args)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and message in lines[0], done.stderr


def test_a_recipe_the_emulator_cannot_realise_is_refused_by_name_with_why() -> None:
    """`reproduce NAME --emulate` plans every point before anything runs; a point it cannot
    realise ends the command with one line naming the recipe, the point and the reason
    (the planner's: here the switch fabric, the optical FIFO and the traffic generator's
    datagram rate, each said as such). Bumps run (P4 is planned)."""
    from buflab.experiments.emulator import check_emulable

    for name, reason in (
        ("s4_output", "the switch fabric has no emulation"),
        ("f8", "network.bottleneck.queue: got 'optical_fifo'"),
        ("qcn", "datagrams per second"),
    ):
        scenario, header = recipes.load(name)
        plan = header.plan(scenario, [], 1)
        with pytest.raises(Exception) as error:
            check_emulable([run.scenario for run in plan.runs], f"reproduce {name} --emulate")
        text = str(error.value)
        assert (
            "\n" not in text
            and text.startswith(f"reproduce {name} --emulate: ")
            and (reason in text)
        ), text
    scenario, header = recipes.load("p4")
    check_emulable([run.scenario for run in header.plan(scenario, [], 1).runs], "reproduce p4")


# Two buffers, one run each of 4 s on real TCP, and a threshold over them.
BESIDE_RECIPE = """
name = "two buffers both ways"
duration = "4s"
warmup = "1s"
[network]
bottleneck = { rate = "20Mbps", buffer = "10pkt" }
rtt = "20ms"
[[traffic]]
kind = "long_lived"
flows = 4
tcp = "sack"
packet = "1500B"
[sweep]
runs = 1
metrics = ["utilization", "drop_rate"]
[sweep.vary]
"network.bottleneck.buffer" = ["5pkt", "50pkt"]
[sweep.threshold]
metric = "utilization"
target = 0.5
"""


@as_root
def test_reproduce_emulate_prints_each_point_beside_the_same_point_simulated(
    tmp_path: Path,
) -> None:
    """The emulated points, and the same plan simulated in OUT/simulated (same seeds, so the
    same flows): beside_simulated.csv holds each point's metrics from the two summaries, and
    the threshold line both ways is printed."""
    recipe = tmp_path / "two.toml"
    recipe.write_text(BESIDE_RECIPE)
    out = tmp_path / "out"
    done = buflab("reproduce", str(recipe), "--emulate", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "simulated / on Linux" in done.stdout and "smallest passing buffer" in done.stdout
    both = pd.read_csv(out / "beside_simulated.csv").set_index("network.bottleneck.buffer")
    real = pd.read_csv(out / "summary.csv").set_index("network.bottleneck.buffer")
    sim = pd.read_csv(out / "simulated" / "summary.csv").set_index("network.bottleneck.buffer")
    assert list(both.index) == ["5pkt", "50pkt"]
    for metric in ("utilization", "drop_rate"):
        assert both[f"real_{metric}"].tolist() == real.loc[both.index, f"{metric}_mean"].tolist()
        assert both[f"sim_{metric}"].tolist() == sim.loc[both.index, f"{metric}_mean"].tolist()
    assert real["emulated_mean"].eq(1).all() and "emulated_mean" not in sim
