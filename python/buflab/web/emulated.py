"""The page's experiment on real Linux TCP: `buflab emulate` run in a thread, read and changed
through its control channels (`buflab.engine.emulation.runner.RunControls`).

`EmulatedRun` offers what `experiment.Experiment` asks of a live session (`LiveRun`): it
steps by the wall clock alone (an emulation runs in real time: no pace, no pause), reads the
datapath's counts (arrivals, drops, busy time, the queue's integral) into the same reading a
simulated session gives, and applies the changes an emulation takes while it runs, each
checked by the engine as a `[[change]]` entry's would be: the bottleneck's buffer (the
datapath's channel) and the number of long-lived flows (the traffic generator's: a flow
opened takes the next of the run's spare slots, `plan.SPARE_FLOWS` of them, each known to the
datapath from the start; closing takes the last opened first, as the simulator does). What it
does not do, and says so when asked: access links, pacing and congestion control of new
flows, the auto-sizer, and the windows of flows (the generator's TCP_INFO traces are read
after the run).
"""

from __future__ import annotations

import threading
from typing import Any

from buflab.engine import Error, ScenarioError, core, scenario_json
from buflab.engine.emulation.plan import SPARE_FLOWS
from buflab.engine.emulation.runner import DatapathControl, RunControls, TrafficControl, emulate
from buflab.engine.result import Result
from buflab.engine.runner import prepare
from buflab.engine.scenario import Scenario, copy_tree
from buflab.engine.units import parse_time

PS_PER_S = 10**12
NOT_ON_THE_EMULATOR = (
    "not on the emulator: only the buffer and the number of long-lived flows change while an "
    "emulation runs"
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
        self._traffic: TrafficControl | None = None
        # Per long-lived entry: its flows open (or due to start), in the order they opened.
        self._open: dict[int, list[int]] | None = None
        self._spare_left = 0
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
            self.result = emulate(self.tree, while_running=self._hold, live=True)
        except Error as error:
            self.error = error
        finally:
            self._control = None

    def _hold(self, controls: RunControls) -> None:
        """From the end of warm-up: the control channels are ours until the run's end."""
        if controls.traffic is not None:
            flows, self._spare_left = controls.traffic.flows()
            opened: dict[int, list[int]] = {}
            for flow, entry in flows:
                opened.setdefault(entry, []).append(flow)
            self._open = opened
            self._traffic = controls.traffic
        self._control = controls.datapath
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
            "open_flows": self._open_flows(),
            "windows": [],
            "steps": [],
            "autosizing": False,
        }

    def _open_flows(self) -> int:
        """Long-lived flows open now (before the control channels are ours: the scenario's)."""
        if self._open is not None:
            return sum(len(flows) for flows in self._open.values())
        return sum(
            int(t.get("flows", 0)) for t in self.normalized["traffic"] if t["kind"] == "long_lived"
        )

    def apply(self, change: dict[str, Any]) -> dict[str, Any]:
        """The buffer and the long-lived flows, now; anything else is refused (module doc)."""
        others = sorted(set(change) - {"buffer", "flows", "traffic"})
        if others:
            raise ScenarioError(f"change.{others[0]}: {NOT_ON_THE_EMULATOR}")
        control = self._control
        if control is None:
            raise ScenarioError(
                "change: the emulation takes changes from the end of its warm-up until its end"
            )
        at = f"{self.reached_s:.6f}s"
        entry = {**change, "at": at}
        # Checked as a scenario's `[[change]]` entry is, after the changes so far, naming the key.
        trial = {**copy_tree(self.tree), "change": [*self.changes, entry]}
        try:
            core().validate(scenario_json(trial))
        except ScenarioError as error:
            raise ScenarioError(
                str(error).replace(f"change.{len(self.changes)}.", "change.", 1)
            ) from None
        if "flows" in change:
            self._set_flows(int(change.get("traffic", self._first_long_lived())), change["flows"])
        if "buffer" in change:
            value = change["buffer"]
            control.set_buffer(f"{value}pkt" if isinstance(value, int) else str(value))
        self.changes.append(entry)
        return entry

    def _first_long_lived(self) -> int:
        traffic = self.normalized["traffic"]
        return next(i for i, t in enumerate(traffic) if t["kind"] == "long_lived")

    def _set_flows(self, entry: int, n: int) -> None:
        """Opens flows of `entry` from the spare slots, or closes its last opened, until `n`
        are open."""
        traffic, opened = self._traffic, self._open
        if traffic is None or opened is None:
            raise ScenarioError(
                f"change.flows: got {n}; expected no change (this emulation has no spare flow "
                "slots: flows change only on per-flow access links, network.access.machines = 0)"
            )
        flows = opened.setdefault(entry, [])
        more = n - len(flows)
        if more > 0 and entry != self._first_long_lived():
            raise ScenarioError(
                f"change.flows: got {n}; expected at most {len(flows)} for traffic entry {entry} "
                f"(the emulator opens flows of entry {self._first_long_lived()} only)"
            )
        if more > self._spare_left:
            raise ScenarioError(
                f"change.flows: got {n}; expected at most {len(flows) + self._spare_left} (the "
                f"emulator opens at most {SPARE_FLOWS} flows in a run, each known to the "
                f"datapath from its start; {self._spare_left} left)"
            )
        for _ in range(more):
            flows.append(traffic.open())
            self._spare_left -= 1
        while len(flows) > n:
            traffic.close(flows.pop())

    def replay_tree(self) -> Scenario:
        """The scenario with the changes made (buffer, flows): run on the simulator, it is the
        same experiment, not the same packets."""
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
