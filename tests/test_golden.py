"""Refactors and speed-ups leave the model alone: every example, and points of every recipe,
give bit-for-bit the results recorded in tests/golden/ (see tests/golden.py, which also
records them anew after a deliberate change to the model).

The tolerance is zero: the engine is deterministic (integer time, its own random streams, no
libm in model code), so any difference is a change in what runs."""

from __future__ import annotations

import os

import pytest

import golden

pytestmark = pytest.mark.engine


def check(full: bool) -> None:
    jobs = max(1, min(4, os.cpu_count() or 1))
    diff = golden.differences(golden.recorded(full), golden.compute(full, jobs))
    assert not diff, "results changed:\n" + "\n".join(diff[:20])


def test_examples_and_recipe_points_give_the_recorded_results() -> None:
    check(full=False)


@pytest.mark.slow
def test_every_recipe_point_gives_the_recorded_results() -> None:
    check(full=True)
