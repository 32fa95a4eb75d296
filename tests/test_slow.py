"""The main job, `buflab reproduce headline`, end to end with the shipped recipe; and the
networks of tiny buffers (thesis ch. 5) at full recipe size.

Skipped by default; run with `pytest -m slow` or `bash scripts/test --slow`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from buflab.cli import cli
from buflab.experiments.reproduce import reproduce

pytestmark = [pytest.mark.slow, pytest.mark.engine]


def test_headline(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["reproduce", "headline", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "RTT·C/√N" in result.stdout and "thesis" in result.stdout
    for name in ("headline.png", "headline.svg", "results.csv"):
        assert (tmp_path / name).stat().st_size > 0

    summary = pd.read_csv(tmp_path / "summary.csv")
    assert len(summary) == 13 * 3, "13 buffers × fast, slow and fast paced access"
    by_access = {
        case: rows.set_index("network.bottleneck.buffer")["utilization_mean"]
        for case, rows in summary.groupby("access")
    }
    fast, slow, paced = by_access["fast"], by_access["slow"], by_access["fast, paced"]
    # The figure's qualitative claims, which hold whatever the exact numbers:
    # slow access links smooth the traffic, and so does pacing the senders, so a small buffer
    # loses less utilization ...
    for buffer in ("5pkt", "10pkt", "20pkt", "50pkt"):
        assert slow[buffer] > fast[buffer], buffer
        assert paced[buffer] > fast[buffer], buffer
    # ... and a buffer of RTT·C fills the link with either kind of access.
    assert fast["12500pkt"] >= 0.95 and slow["12500pkt"] >= 0.95
    # The published numbers, read off thesis Fig. 2.3 (so a band, not a point): with slow
    # access, 10 packets give "close to 80 %"; buflab measures about 88 % at this scale, so
    # 0.75 is the band's floor. With fast access, buffers above RTT·C/√N (442 here) keep the
    # link above 99 % in the thesis; 2,000 packets (4.5x) must reach 0.98 here.
    assert slow["10pkt"] >= 0.75
    assert fast["2000pkt"] >= 0.98


def test_f5_every_router_of_the_tree_stays_under_lemma_5_1(tmp_path: Path) -> None:
    """The recipe at full size (32 points, 60 s each): at every point no router drops more
    than ρ^B and the network no more than n·ρ^B (thesis Lemma 5.1, Thm 5.1). The bounds are
    loose enough (≥ 30 times the measurement at a median) that this is no coin toss; the
    network's drop rate must also fall as B grows, at every load."""
    reproduction = reproduce("f5", tmp_path / "f5")
    bounds = reproduction.bounds
    assert len(bounds) == 32
    assert (bounds["max_router_drop_rate"] <= bounds["lemma_5_1_bound"]).all()
    assert (bounds["network_drop_rate"] <= bounds["thm_5_1_bound"]).all()
    for _, rows in bounds.groupby("load"):
        assert rows.sort_values("buffer_pkts")["network_drop_rate"].is_monotonic_decreasing


def test_f6_tcp_paced_flows_over_bjp_keep_their_throughput_and_unpaced_ones_do_not(
    tmp_path: Path,
) -> None:
    """What the README says of the f6_tcp recipe: paced TCP over BJP routers reaches an
    effective utilization above 95 % from 16 packets on, with no retransmission, while
    unpaced TCP over the same routers stays below 30 %, retransmitting segments none of which
    the routers dropped at 64 packets (BJP sends a burst in reverse order)."""
    reproduction = reproduce("f6_tcp", tmp_path / "f6_tcp")
    b = reproduction.bounds
    bjp = b[b["queue"] == "bjp"]
    paced = bjp[(bjp["pacing"] == "window") & (bjp["buffer_pkts"] >= 16)]
    assert (paced["effective_utilization"] > 0.95).all() and (paced["retransmits"] == 0).all()
    unpaced = bjp[bjp["pacing"] == "off"]
    assert (unpaced["effective_utilization"] < 0.3).all()
    largest = unpaced[unpaced["buffer_pkts"] == 64].iloc[0]
    assert largest["max_router_drop_rate"] == 0 and largest["retransmits"] > 1000
