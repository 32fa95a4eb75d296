"""A scenario run in steps and changed as it goes: the engine's live session, the ground
`buflab serve` stands on.

`LiveRun` holds the engine's `LiveSession` (`buflab_core::live`): `run_until` steps to a
simulated time without the GIL, `read` says what changed since the last reading, `apply`
applies a change now (a `[[change]]` entry without `at`, checked by the engine's scenario
reader) and `finish` runs what is left and returns the `Result`. `replay_tree` is the
scenario with every change applied so far written as `[[change]]` entries: `run` of it gives
this session's results exactly (the engine applies a change at the same point of the run
either way). This module knows no clock but simulated time, and nothing of a web page.
"""

from __future__ import annotations

import json
from typing import Any

from buflab.engine import core, peak_rss_mib
from buflab.engine.result import Result
from buflab.engine.runner import prepare
from buflab.engine.scenario import Overrides, Scenario, ScenarioSource, copy_tree

PS_PER_S = 10**12


def to_ps(seconds: float) -> int:
    """Seconds as whole picoseconds (the engine's time)."""
    return round(seconds * PS_PER_S)


class LiveRun:
    """One scenario run in steps (see the module doc)."""

    def __init__(self, scenario: ScenarioSource, *, overrides: Overrides = None) -> None:
        ready = prepare(scenario, overrides=overrides)
        self.tree: Scenario = ready.tree
        self.normalized: Scenario = ready.normalized
        self.link_facts: dict[str, Any] = ready.link_facts
        self._session = core().LiveSession(ready.text)
        self.changes: list[dict[str, Any]] = []
        self._end_ps = self._session.end_ps()
        self.end_s = self._end_ps / PS_PER_S
        self._finished = False

    @property
    def reached_s(self) -> float:
        """The simulated time reached: every event before it has run."""
        return self._reached_ps() / PS_PER_S

    def _reached_ps(self) -> int:
        return self._end_ps if self._finished else self._session.reached_ps()

    @property
    def done(self) -> bool:
        return self._reached_ps() >= self._end_ps

    def run_until(self, seconds: float) -> None:
        """Runs every event before `seconds` (at most the end of the run)."""
        self._session.run_until(max(0, to_ps(seconds)))

    def read(self) -> dict[str, Any]:
        """What changed since the last reading: utilization, goodput, drops and queue of the
        interval, the queue and limit now, open flows, a few windows, the auto-sizer's new
        steps."""
        return self._session.read()

    def apply(self, change: dict[str, Any]) -> dict[str, Any]:
        """Applies `change` (a `[[change]]` entry without `at`) now; returns it as it replays,
        with its `at`. One that closes flows while senders have run ahead of the time reached
        (or that follows such a one) applies a little later, at that `at`, when the run gets
        there. Raises ScenarioError naming the key for a bad value, changing nothing."""
        entry = self._session.apply(json.dumps(change))
        self.changes.append(entry)
        return entry

    def replay_tree(self) -> Scenario:
        """The scenario with the changes so far as `[[change]]` entries after its own."""
        tree = copy_tree(self.tree)
        tree["change"] = [*tree.get("change", []), *self.changes]
        return tree

    def finish(self) -> Result:
        """Runs what is left of the run and returns its result, as `run` does."""
        raw = self._session.finish()
        self._finished = True
        raw["summary"]["peak_rss_mib"] = peak_rss_mib()
        return Result.from_engine(raw, self.tree)
