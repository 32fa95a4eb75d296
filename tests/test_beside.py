"""`buflab reproduce NAME --emulate` pairs every point on real TCP with the same point
simulated (`buflab.experiments.beside`): the pairing rules on made-up summary frames (the
command itself runs as root in test_emulate_sizing.py)."""

from __future__ import annotations

import math

import pandas as pd

from buflab.experiments.beside import points_beside, thresholds_beside

KEYS = ["network.bottleneck.buffer", "traffic.0.pacing"]


def summary(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {KEYS[0]: b, KEYS[1]: p, "utilization_mean": u, "utilization_ci95": 0.01,
             "drop_rate_mean": d}
            for b, p, u, d in rows
        ]
    )  # fmt: skip


def test_points_pair_by_their_varied_values_in_the_real_runs_order() -> None:
    """Rows follow the emulated summary; each metric's simulated value comes from the row of
    the simulated summary with the same varied values, whatever its order there; a metric a
    side lacks is nan, not an error."""
    real = summary([("10pkt", "off", 0.5, 0.02), ("100pkt", "off", 0.9, 0.01)])
    sim = summary([("100pkt", "off", 0.95, 0.015), ("10pkt", "off", 0.6, 0.03)])
    both = points_beside(real, sim, KEYS, ["utilization", "drop_rate", "timeouts"])
    assert list(both[KEYS[0]]) == ["10pkt", "100pkt"]
    assert list(both["real_utilization"]) == [0.5, 0.9]
    assert list(both["sim_utilization"]) == [0.6, 0.95]
    assert list(both["sim_drop_rate"]) == [0.03, 0.015]
    assert both["sim_timeouts"].isna().all() and both["real_timeouts"].isna().all()
    assert list(both.columns)[2:4] == ["sim_utilization", "real_utilization"]


def test_a_point_only_one_side_ran_stays_with_nan_for_the_other() -> None:
    real = summary([("10pkt", "off", 0.5, 0.02), ("10pkt", "window", 0.7, 0.01)])
    sim = summary([("10pkt", "off", 0.6, 0.03)])
    both = points_beside(real, sim, KEYS, ["utilization"])
    assert len(both) == 2 and math.isnan(both["sim_utilization"].iloc[1])


def test_threshold_lines_pair_by_their_line_keys() -> None:
    """Each line's smallest passing buffer both ways; a line the simulator never passed keeps
    an empty minimum."""
    line = ["traffic.0.pacing"]
    real = pd.DataFrame({"traffic.0.pacing": ["off", "window"], "minimum": ["125pkt", "300pkt"],
                         "utilization": [0.987, 0.985], "largest_run": ["300pkt"] * 2})  # fmt: skip
    sim = pd.DataFrame({"traffic.0.pacing": ["window", "off"], "minimum": [None, "300pkt"],
                        "utilization": [None, 0.999], "largest_run": ["300pkt"] * 2})  # fmt: skip
    both = thresholds_beside(real, sim, line)
    assert list(both.columns) == [
        "traffic.0.pacing", "sim_minimum", "real_minimum", "sim_utilization", "real_utilization"
    ]  # fmt: skip
    assert list(both["real_minimum"]) == ["125pkt", "300pkt"]
    assert both["sim_minimum"].iloc[0] == "300pkt" and pd.isna(both["sim_minimum"].iloc[1])


def test_a_single_line_threshold_pairs_its_one_row() -> None:
    real = pd.DataFrame({"minimum": ["50pkt"], "utilization": [0.9], "largest_run": ["50pkt"]})
    sim = pd.DataFrame({"minimum": ["5pkt"], "utilization": [0.6], "largest_run": ["50pkt"]})
    both = thresholds_beside(real, sim, [])
    assert both.to_dict("records") == [
        {"sim_minimum": "5pkt", "real_minimum": "50pkt", "sim_utilization": 0.6,
         "real_utilization": 0.9}
    ]  # fmt: skip
