"""Student-t intervals for sweep summaries."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from buflab.analysis.stats import mean_ci, t_quantile_two_sided
from buflab.experiments.sweep import summarize


@pytest.mark.parametrize(
    ("dof", "expected"),
    # Two-sided 95 % quantiles from any t table, printed to three decimals; the tolerance
    # is the table's rounding.
    [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (9, 2.262), (29, 2.045), (120, 1.980)],
)
def test_t_quantiles_match_the_table(dof: int, expected: float) -> None:
    assert t_quantile_two_sided(0.95, dof) == pytest.approx(expected, abs=5e-4)


def test_mean_ci_uses_n_minus_one_degrees_of_freedom() -> None:
    mean, half_width = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half_width == pytest.approx(4.303 * 1.0 / math.sqrt(3), rel=1e-3)
    assert math.isnan(mean_ci([5.0])[1]), "one run has no interval"


def test_summarize_groups_points_in_order() -> None:
    results = pd.DataFrame(
        {
            "run": ["a", "b", "c", "d"],
            "buffer": ["10pkt", "10pkt", "5pkt", "5pkt"],
            "seed": [1, 2, 1, 2],
            "name": ["x"] * 4,
            "utilization": [0.5, 0.7, 0.2, 0.2],
        }
    )
    summary = summarize(results, ["buffer"])
    assert summary["buffer"].tolist() == ["10pkt", "5pkt"]
    assert summary["runs"].tolist() == [2, 2]
    assert summary["utilization_mean"].tolist() == pytest.approx([0.6, 0.2])
    assert summary["utilization_ci95"].iloc[0] == pytest.approx(12.706 * 0.1, rel=1e-3)
    assert summary["utilization_ci95"].iloc[1] == 0
    assert "seed_mean" not in summary and "name_mean" not in summary
