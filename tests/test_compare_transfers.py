"""`buflab compare` with finite transfers: each size bin's transfers both ways and the offered
load beside the load each way carried. The pairing rules need no emulation: two simulated
runs of different seeds stand in for the two sides here (the emulated side of the command is
tested as root in test_emulate.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import buflab
from buflab.analysis.transfers import by_size_bin
from buflab.cli import cli
from buflab.experiments import compare as compare_module
from buflab.experiments.compare import (
    TRANSFER_FIGURES,
    loads_compared,
    measured_transfers,
    transfers_compared,
    write_compare,
)
from buflab.experiments.load import offered_load

# Twelve Harpoon-style users on 10 Mb/s for 12 s (2 s warm-up): a few hundred downloads.
USERS_TOML = """
name = "users both ways"
duration = "12s"
warmup = "2s"
[network]
bottleneck = { rate = "10Mbps", buffer = "50pkt" }
rtt = "50ms"
[[traffic]]
kind = "closed_loop"
users = 12
packet = "1500B"
start = "0s..1s"
file_size = { dist = "pareto", mean = "40KB", shape = 1.5 }
think = { dist = "exponential", mean = "0.5s" }
"""
USERS: dict[str, Any] = tomllib.loads(USERS_TOML)


def two_sides() -> tuple[buflab.Result, buflab.Result]:
    return buflab.run(USERS), buflab.run(USERS, overrides={"seed": 2})


def test_each_bin_holds_each_sides_transfers_after_its_warmup() -> None:
    """Row k of each side is by_size_bin's row k over that side's transfers that started
    after the warm-up (the rule a sweep's transfer metrics use), with the point's values in
    front; every started transfer falls in one bin."""
    sim, real = two_sides()
    bins = transfers_compared({"x": 1}, sim, real)
    assert list(bins["x"]) == [1] * len(bins)
    for side, result in (("sim", sim), ("real", real)):
        measured = measured_transfers(result)
        assert (measured["start_s"] >= 2.0).all() and len(measured) < len(result.transfers)
        expected = by_size_bin(measured)
        assert list(bins["bin"]) == list(expected["bin"])
        for name in TRANSFER_FIGURES:
            assert bins[f"{side}_{name}"].tolist() == pytest.approx(
                expected[name].tolist(), nan_ok=True
            )
        assert bins[f"{side}_transfers"].sum() == len(measured) > 50
    # Different seeds, different downloads: the two sides are not one copied twice.
    assert bins["sim_transfers"].tolist() != bins["real_transfers"].tolist()


def test_long_lived_runs_have_no_transfer_rows() -> None:
    bulk = {**USERS, "traffic": [{"kind": "long_lived", "flows": 2}]}
    sim = buflab.run(bulk)
    assert len(transfers_compared({}, sim, sim)) == 0


def test_offered_load_is_buflab_loads_and_carried_is_each_runs_utilization() -> None:
    sim, real = two_sides()
    loads = loads_compared(sim, real)
    assert loads["offered"] == offered_load(USERS)["load"]
    assert (loads["sim"], loads["real"]) == (
        sim.summary["utilization"],
        real.summary["utilization"],
    )


def test_compare_prints_and_writes_the_bins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's own path, its emulation replaced by a simulated run of seed 2 (and its
    root check by nothing): a line of loads and a table of bins, and compare_transfers.csv
    with a row per bin."""

    def emulate(tree: dict[str, Any]) -> buflab.Result:
        result = buflab.run(tree, overrides={"seed": 2})
        # The two figures only an emulation reports, which the command's table reads.
        result.summary.update(faithful=True, late_within_10us=1.0)
        return result

    monkeypatch.setattr(compare_module, "emulate", emulate)
    monkeypatch.setattr(
        "buflab.engine.emulation.testbed.require_privileges", lambda: None, raising=True
    )
    monkeypatch.setattr(compare_module, "store_compared", lambda out, kept: None)
    scenario = tmp_path / "users.toml"
    scenario.write_text(USERS_TOML)
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["compare", str(scenario), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "offered load" in done.output and "transfers by file size" in done.output
    rows = (out / "compare_transfers.csv").read_text().splitlines()
    assert len(rows) == 1 + 6, rows  # a header and the six bins of thesis Fig. 4.6


def test_write_compare_leaves_out_the_transfers_file_without_transfers(tmp_path: Path) -> None:
    import pandas as pd

    bulk = {**USERS, "traffic": [{"kind": "long_lived", "flows": 2}]}
    sim = buflab.run(bulk)
    frame = pd.DataFrame([{"sim_utilization": 1.0, "real_utilization": 1.0,
                           "sim_drop_rate": 0.0, "real_drop_rate": 0.0}])  # fmt: skip
    files = write_compare(frame, None, tmp_path, "t", "footer", [({}, sim, sim)])
    assert not (tmp_path / "compare_transfers.csv").exists()
    assert tmp_path / "compare.csv" in files
