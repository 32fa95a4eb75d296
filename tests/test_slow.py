"""The main job, `buflab reproduce headline`, end to end with the shipped recipe.

Skipped by default; run with `pytest -m slow` or `bash scripts/test --slow`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from buflab.cli import cli

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
