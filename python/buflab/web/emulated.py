"""The page's experiment on real Linux TCP: `buflab emulate` run in a thread, read and changed
through its datapath's control channel (`buflab.engine.emulation.runner.DatapathControl`).

`EmulatedRun` offers what `experiment.Experiment` asks of a live session (`LiveRun`): it
steps by the wall clock alone (an emulation runs in real time: no pace, no pause), reads the
datapath's counts (arrivals, drops, busy time, the queue's integral) into the same reading a
simulated session gives, and applies the one change the datapath takes while it runs, the
bottleneck's buffer, checked by the engine as a `[[change]]` entry's would be. What it does
not do, and says so when asked: flows added or closed (the traffic generator,
`buflab-traffic send`, takes its flows' start times at launch and no command while it
runs), access links, pacing and congestion control of new flows, the auto-sizer, and the
windows of flows (the generator's TCP_INFO traces are read after the run).
"""

from __future__ import annotations

import threading
from typing import Any

from buflab.engine import Error, ScenarioError, core, scenario_json
from buflab.engine.emulation.runner import DatapathControl, emulate
from buflab.engine.result import Result
from buflab.engine.runner import prepare
from buflab.engine.scenario import Scenario, copy_tree
from buflab.engine.units import parse_time

PS_PER_S = 10**12
NOT_ON_THE_EMULATOR = (
    "not on the emulator: only the buffer changes while an emulation runs (the traffic "
    "generator's flows are fixed at its launch)"
)


class EmulatedRun:
    """One emulation, started by `begin`, read and changed while it runs (module doc)."""

    def __init__(self, tree: Scenario) -> None:
        ready = prepare(tree)
        self.tree, self.normalized, self.link_facts = ready.tree, ready.normalized, ready.link_facts
        self.end_s = parse_time(str(self.normalized["duration"]))
        self.warmup_s = parse_time(str(self.normalized["warmup"]))
        self.changes: list[dict[str, Any]] = []
        self._control: DatapathControl | None = None
        self._last: dict[str, Any] | None = None
        self._thread: threading.Thread | None = None
        self._held = threading.Event()
        self.result: Result | None = None
        self.error: Error | None = None

    def begin(self) -> None:
        """Starts the emulation (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._emulate, daemon=True)
            self._thread.start()

    def _emulate(self) -> None:
        try:
            self.result = emulate(self.tree, while_running=self._hold)
        except Error as error:
            self.error = error
        finally:
            self._control = None

    def _hold(self, control: DatapathControl) -> None:
        """From the end of warm-up: the control channel is ours until the run's end."""
        self._control = control
        self._held.wait(max(0.0, self.end_s - self.warmup_s))

    @property
    def started(self) -> bool:
        return self._thread is not None

    @property
    def done(self) -> bool:
        return self._thread is not None and not self._thread.is_alive()

    @property
    def reached_s(self) -> float:
        last = self._last
        return min(self.end_s, last["clock_ps"] / PS_PER_S) if last else 0.0

    def run_until(self, seconds: float) -> None:
        """Real time runs by itself: nothing to do but wait for the next reading."""

    def read(self) -> dict[str, Any]:
        """The datapath's counts since the last reading, as a simulated session's reading."""
        control = self._control
        if control is None:
            now = {"arrivals": 0, "drops": 0, "busy_ps": 0.0, "waiting_integral": 0.0,
                   "waiting": 0, "clock_ps": 0, "buffer": str(self.normalized["network"]
                   ["bottleneck"]["buffer"])}  # fmt: skip
            if self._last is not None:
                now = {**self._last, "waiting": 0}
        else:
            try:
                now = control.counts()
            except (Error, OSError):
                now = {**(self._last or {}), "waiting": 0}
        before = self._last or now
        self._last = now
        span = max(0, now.get("clock_ps", 0) - before.get("clock_ps", 0))
        arrivals = now.get("arrivals", 0) - before.get("arrivals", 0)
        drops = now.get("drops", 0) - before.get("drops", 0)
        queue = now.get("waiting_integral", 0.0) - before.get("waiting_integral", 0.0)
        admitted = arrivals - drops
        limit = str(now.get("buffer", ""))
        return {
            "time_s": now.get("clock_ps", 0) / PS_PER_S,
            "utilization": (now.get("busy_ps", 0.0) - before.get("busy_ps", 0.0)) / span
            if span
            else 0.0,
            "goodput_bps": None,
            "arrivals": arrivals,
            "drops": drops,
            "queue_pkts": now.get("waiting", 0),
            "mean_queue_pkts": queue / span if span else 0.0,
            "queue_delay_s": queue / admitted / PS_PER_S if admitted > 0 else 0.0,
            "buffer_pkts": int(limit[:-3]) if limit.endswith("pkt") else None,
            "buffer_bytes": int(limit[:-1])
            if limit.endswith("B") and limit[:-1].isdigit()
            else None,
            "open_flows": sum(
                int(t.get("flows", 0))
                for t in self.normalized["traffic"]
                if t["kind"] == "long_lived"
            ),
            "windows": [],
            "steps": [],
            "autosizing": False,
        }

    def apply(self, change: dict[str, Any]) -> dict[str, Any]:
        """The buffer, now; anything else is refused (module doc)."""
        others = sorted(set(change) - {"buffer"})
        if others:
            raise ScenarioError(f"change.{others[0]}: {NOT_ON_THE_EMULATOR}")
        control = self._control
        if control is None:
            raise ScenarioError(
                "change: the emulation takes changes from the end of its warm-up until its end"
            )
        at = f"{self.reached_s:.6f}s"
        entry = {**change, "at": at}
        # Checked as a scenario's `[[change]]` entry is, naming the key.
        trial = {**copy_tree(self.tree), "change": [entry]}
        try:
            core().validate(scenario_json(trial))
        except ScenarioError as error:
            raise ScenarioError(str(error).replace("change.0.", "change.", 1)) from None
        value = change["buffer"]
        control.set_buffer(f"{value}pkt" if isinstance(value, int) else str(value))
        self.changes.append(entry)
        return entry

    def replay_tree(self) -> Scenario:
        """The scenario with the buffer changes made: run on the simulator, it is the same
        experiment, not the same packets."""
        tree = copy_tree(self.tree)
        tree["change"] = [*tree.get("change", []), *self.changes]
        return tree

    def finish(self) -> Result:
        """Waits for the emulation's end and returns its result."""
        self._held.set()
        if self._thread is not None:
            self._thread.join()
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result
