"""The one experiment a `buflab serve` runs, shared by every viewer of the page.

It holds the live session (`buflab.engine.live.LiveRun`) and steps it against the wall clock
(real time, ×10, or as fast as possible), about ten times a second, each step on a worker
thread without the GIL while the server keeps answering; after each step it reads what
changed and streams it to every viewer. It turns the page's controls into `[[change]]`
entries, which the engine checks as it checks a file's (a bad value is one line back to the
viewer who sent it and changes nothing), and logs each change at its simulated time.

**Who controls.** One viewer controls at a time: the first to come; any other may take
control with the page's button, and every viewer sees who has it. A control from a viewer
without it is refused with a message.

**Bounded memory.** Each viewer has a queue of at most `VIEWER_QUEUE` messages: a viewer too
slow to keep up loses its oldest updates, never the server its memory. The server keeps the
last `HISTORY` updates (a minute at ten a second) for a viewer who joins, and the last
`LOG_KEPT` lines of the change log. The engine's own tables grow with simulated time only.

It must not know HTTP or WebSockets (`server` hands it messages as dicts and takes what it
sends as text).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from buflab.engine import Error, ScenarioError
from buflab.engine.live import LiveRun
from buflab.engine.scenario import Scenario, apply_overrides
from buflab.engine.toml_text import dumps
from buflab.engine.units import parse_time
from buflab.experiments.sizing import rule_sizes
from buflab.web.catalogue import Entry, listing, tree_of
from buflab.web.emulated import EmulatedRun

# Wall seconds between two updates: about ten a second.
TICK_S = 0.1
# Simulated seconds per wall second at each pace; None: as fast as possible.
PACES: dict[str, float | None] = {"1": 1.0, "10": 10.0, "max": None}
# The longest wall gap one step makes up for (a stalled loop does not leap ahead).
MAX_CATCH_UP_S = 0.5
HISTORY = 600
VIEWER_QUEUE = 64
LOG_KEPT = 200
# The target utilization the page offers before any is set (the thesis's tool took any).
DEFAULT_TARGET = 0.95


@dataclass
class Viewer:
    """One connected page: its id and the messages waiting to be sent to it."""

    id: int
    queue: asyncio.Queue[str] = field(default_factory=lambda: asyncio.Queue(VIEWER_QUEUE))

    def offer(self, message: dict[str, Any]) -> None:
        """Queues `message`; when the queue is full, the oldest waiting message goes."""
        text = json.dumps(message, allow_nan=False, default=_plain)
        if self.queue.full():
            self.queue.get_nowait()
        self.queue.put_nowait(text)


def _plain(value: Any) -> Any:
    raise TypeError(f"not JSON: {value!r}")


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


class Refused(Error):
    """A message from the page that cannot be done (shown on the page, changes nothing)."""


class Experiment:
    """The experiment, its viewers and its stepping loop (see the module doc)."""

    def __init__(self, entries: dict[str, Entry], *, emulate: bool = False) -> None:
        self.entries = entries
        self.emulate = emulate
        self.engine = "emulator (real Linux TCP, buflab emulate)" if emulate else "simulator"
        self.viewers: dict[int, Viewer] = {}
        self.controller: int | None = None
        self._next_id = 1
        self.live: LiveRun | EmulatedRun | None = None
        self.source: str | None = None
        self.paused = True
        self.pace = "1"
        self.target: float | None = None
        self.summary: dict[str, Any] | None = None
        self.rules: dict[str, Any] = {}
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_KEPT)
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.speed = 0.0  # simulated seconds per wall second, last step
        self._no_flows = False  # the last change closed every long-lived flow
        self._last_fast_s: float | None = None  # the last step's length, as fast as possible
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()

    # ---- viewers ----

    def join(self) -> Viewer:
        viewer = Viewer(self._next_id)
        self._next_id += 1
        self.viewers[viewer.id] = viewer
        if self.controller is None:
            self.controller = viewer.id
        viewer.offer({"type": "hello", "you": viewer.id, "catalogue": listing(self.entries)})
        viewer.offer(self.state())
        for update in self.history:
            viewer.offer(update)
        self._broadcast_state()
        return viewer

    def leave(self, viewer: Viewer) -> None:
        self.viewers.pop(viewer.id, None)
        if self.controller == viewer.id:
            self.controller = min(self.viewers, default=None)
        self._broadcast_state()

    def _broadcast(self, message: dict[str, Any]) -> None:
        for viewer in list(self.viewers.values()):
            viewer.offer(message)

    def _broadcast_state(self) -> None:
        self._broadcast(self.state())

    def state(self) -> dict[str, Any]:
        live = self.live
        return {
            "type": "state",
            "engine": self.engine,
            "source": self.source,
            "loaded": live is not None,
            "paused": self.paused,
            "pace": self.pace,
            "paces": list(PACES),
            "controller": self.controller,
            "viewers": sorted(self.viewers),
            "reached_s": live.reached_s if live else 0.0,
            "end_s": live.end_s if live else 0.0,
            "done": self.summary is not None,
            "target": self.target,
            "rules": self.rules,
            "access": self._access_rates() if live else {},
            "rate_bps": float(live.link_facts["rate_bps"]) if live else None,
            "log": list(self.log),
            "summary": self.summary,
        }

    # ---- messages from the page ----

    async def handle(self, viewer: Viewer, message: Any) -> None:
        """Does what the page asks, or tells that viewer why not."""
        try:
            await self._handle(viewer, message)
        except Error as error:
            # Refused, a bad key, or an emulator process that no longer answers: one line to
            # that viewer; the page and the run go on.
            viewer.offer({"type": "error", "message": str(error)})

    async def _handle(self, viewer: Viewer, message: Any) -> None:
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise Refused('a message is a JSON object with a "type"')
        kind = message["type"]
        if kind == "take_control":
            self.controller = viewer.id
            self._broadcast_state()
            return
        if self.controller != viewer.id:
            raise Refused(f"viewer {viewer.id} is watching: viewer {self.controller} controls")
        if kind == "load":
            await self._load(message.get("source"), message.get("duration"))
        elif kind in ("pause", "resume"):
            if self.live is None:
                raise Refused("load a scenario first")
            if isinstance(self.live, EmulatedRun):
                if kind == "pause" or self.live.started:
                    raise Refused("the emulator runs in real time: it cannot pause or resume")
                self.live.begin()
            # A step in flight finishes first: the state a pause sends says where the run
            # stopped, and a control sent during the pause applies there.
            async with self._lock:
                self.paused = kind == "pause"
            self._wake.set()
            self._broadcast_state()
        elif kind == "pace":
            value = message.get("value")
            if value not in PACES:
                raise Refused(f"pace: got {value!r}; expected one of {', '.join(PACES)}")
            if self.emulate and value != "1":
                raise Refused("the emulator runs in real time: its pace is 1")
            self.pace = value
            self._broadcast_state()
        elif kind == "control":
            await self._control(message.get("name"), message.get("value"), viewer)
        else:
            raise Refused(
                f"unknown message type {kind!r}; expected load, pause, resume, pace, control "
                "or take_control"
            )

    async def _load(self, source: Any, duration: Any) -> None:
        tree = tree_of(self.entries, source)
        if tree is None:
            raise Refused(f"source: got {source!r}; expected one of the page's list")
        if duration is not None:
            if not isinstance(duration, str):
                raise Refused(f'duration: got {duration!r}; expected a time such as "600s"')
            tree = apply_overrides(tree, {"duration": duration})
        async with self._lock:
            live = await asyncio.to_thread(EmulatedRun if self.emulate else LiveRun, tree)
            self.live, self.source, self.summary = live, source, None
            self.paused = True
            self.history.clear()
            self.log.clear()
            self.target = _autosize_target(live.normalized)
            self.rules = self._rules()
        self._broadcast({"type": "loaded", "source": source})
        self._broadcast_state()

    def _access_rates(self) -> dict[str, str]:
        """The access rates the page's fast and slow buttons give new flows: fast, ten times
        the bottleneck's rate; slow, a tenth of it (thesis ch. 4: slow access links are what
        let tiny buffers work)."""
        assert self.live is not None
        rate = float(self.live.link_facts["rate_bps"])
        return {"fast": f"{rate * 10:.0f}bps", "slow": f"{rate / 10:.0f}bps"}

    async def _control(self, name: Any, value: Any, viewer: Viewer) -> None:
        """A control of the page as a `[[change]]` entry, applied now."""
        if self.live is None or self.summary is not None:
            raise Refused("load a scenario first" if self.live is None else "the run has ended")
        change = self._for_entry(self._as_change(name, value))
        async with self._lock:
            if self.live.done:
                raise Refused("the run has ended")
            entry = self.live.apply(change)
            if "target_utilization" in entry:
                self.target = float(entry["target_utilization"])
            if "flows" in entry or "target_utilization" in entry or "access_rate" in entry:
                self.rules = self._rules()
        # When it applies: now, or for flows closed while senders ran ahead of the time
        # reached, a little later (the engine's `live` module).
        at = _seconds(str(entry["at"]))
        text = ", ".join(f"{k} = {v}" for k, v in entry.items() if k != "at")
        self.log.append({"t": at, "text": text, "by": viewer.id})
        self._broadcast({"type": "changed", "t": at, "text": text, "by": viewer.id})
        self._broadcast_state()

    def _as_change(self, name: Any, value: Any) -> dict[str, Any]:
        """A control's name and value as a change entry; types are checked here, values by the
        engine."""
        if name == "buffer":
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise Refused(f'buffer: got {value!r}; expected packets (20) or a size ("80KB")')
            return {"buffer": value}
        if name == "flows":
            if isinstance(value, bool) or not isinstance(value, int):
                raise Refused(f"flows: got {value!r}; expected a whole number")
            return {"flows": value}
        if name == "access":
            if value not in ("fast", "slow"):
                raise Refused(f"access: got {value!r}; expected fast or slow")
            return {"access_rate": self._access_rates()[value]}
        if name in ("pacing", "cc"):
            if not isinstance(value, str):
                raise Refused(f"{name}: got {value!r}; expected a name")
            return {name: value}
        if name == "target":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise Refused(f"target: got {value!r}; expected a number such as 0.95")
            return {"target_utilization": value}
        if name == "autosize":
            if not isinstance(value, bool):
                raise Refused(f"autosize: got {value!r}; expected true or false")
            change: dict[str, Any] = {"autosize": value}
            if value and self.target is None:
                change["target_utilization"] = DEFAULT_TARGET
            return change
        raise Refused(
            f"control: got {name!r}; expected buffer, flows, access, pacing, cc, target or autosize"
        )

    def _for_entry(self, change: dict[str, Any]) -> dict[str, Any]:
        """A change of flows or of new flows' settings made about the first long-lived entry,
        which the page's flow controls drive: with several long-lived entries (a parking lot's
        main and cross traffic, a network's routes) it names it, and the page's count of flows,
        which is every entry's, becomes that entry's (the others keep theirs)."""
        assert self.live is not None
        per_entry = {"flows", "access_rate", "pacing", "cc"}
        long_lived = _long_lived(self.live.normalized)
        if len(long_lived) < 2 or not per_entry & change.keys():
            return change
        main = long_lived[0]
        change = {**change, "traffic": main}
        if "flows" in change and isinstance(change["flows"], int):
            open_now = self._open_flows()
            others = sum(n for i, n in open_now.items() if i != main)
            if change["flows"] < others:
                raise Refused(
                    f"flows: got {change['flows']}; expected {others} or more (the page's flow "
                    f"controls change traffic entry {main}; the other entries keep their {others})"
                )
            change["flows"] -= others
        return change

    def _open_flows(self) -> dict[int, int]:
        """The long-lived flows open now, by traffic entry."""
        assert self.live is not None
        tree = self.live.replay_tree()
        traffic = self.live.normalized["traffic"]
        open_now = {i: int(traffic[i]["flows"]) for i in _long_lived(self.live.normalized)}
        for c in tree.get("change", []):
            if "flows" in c:
                open_now[int(c.get("traffic", _only_long_lived(tree)))] = int(c["flows"])
        return open_now

    def _rules(self) -> dict[str, Any]:
        """RTT·C, RTT·C/√N (N: the flows open now) and eq. 2.1 for the target, in packets,
        for the page's buffer axis."""
        assert self.live is not None
        self._no_flows = False
        tree = self._tree_now()
        target = self.target or DEFAULT_TARGET
        try:
            rules = rule_sizes(tree, target)
        except (ScenarioError, ValueError) as error:
            return {"note": str(error)}
        if self._no_flows:
            return {"rtt_c": rules.rtt_c, "sqrt_n": None, "eq21": None, "flows": 0,
                    "eq21_note": "no long-lived flows open", "target": target}  # fmt: skip
        return {
            "rtt_c": rules.rtt_c,
            "sqrt_n": _finite(rules.rtt_c_sqrt_n),
            "eq21": _finite(rules.eq21),
            "eq21_note": rules.eq21_note,
            "flows": rules.flows,
            "target": target,
        }

    def _tree_now(self) -> Scenario:
        """The scenario as the flows and access links now stand (for the rules of thumb)."""
        assert self.live is not None
        tree = self.live.replay_tree()
        changes = tree.pop("change", [])
        for c in changes:
            entry = int(c.get("traffic", _only_long_lived(tree)))
            if "flows" in c:
                # The engine reads 1 flow at least; with none open, N is 0 (see _rules).
                tree["traffic"][entry]["flows"] = max(1, c["flows"])
                self._no_flows = c["flows"] == 0
            if "access_rate" in c:
                tree.setdefault("network", {}).setdefault("access", {})["rate"] = c["access_rate"]
        return tree

    # ---- the download ----

    def replay_text(self) -> str | None:
        """The scenario and its changes as TOML text, or None with nothing loaded."""
        if self.live is None:
            return None
        header = (
            f"# A buflab serve session on {self.source}: the scenario and its changes.\n"
            "# `buflab run` of this file reproduces the session's results exactly."
        )
        return dumps(self.live.replay_tree(), header)

    # ---- stepping ----

    async def run(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Steps the experiment about ten times a second for ever (cancel the task to stop)."""
        last = clock()
        while True:
            if self.live is None or self.paused or self.summary is not None:
                self._wake.clear()
                await self._wake.wait()
                last = clock()
                continue
            pace = PACES[self.pace]
            if pace is not None:
                await asyncio.sleep(max(0.0, last + TICK_S - clock()))
            now = clock()
            gap, last = min(now - last, MAX_CATCH_UP_S), now
            try:
                await self.step(gap if pace is None else pace * gap, fast=pace is None)
            except Exception as error:  # noqa: BLE001 (the server outlives a failed run)
                # The run cannot go on (an emulation that failed, a bug): every viewer is
                # told, the run stays paused, and the page can load another.
                self.paused = True
                self._broadcast({"type": "error", "message": f"the run stopped: {error}"})
                self._broadcast_state()

    async def step(self, simulated_s: float, *, fast: bool = False) -> None:
        """One step: runs `simulated_s` more (as fast as possible: as much as a tick of wall
        time takes at the last speed measured), reads, and streams the reading."""
        async with self._lock:
            live = self.live
            if live is None or self.paused or self.summary is not None:
                return
            if fast:
                simulated_s = max(1e-3, self.speed * TICK_S) if self.speed > 0 else 0.05
                # At most twice the last step: a speed measured while little ran (before the
                # flows start) would otherwise make one step of minutes, deaf to the page.
                if self._last_fast_s is not None:
                    simulated_s = min(simulated_s, 2 * self._last_fast_s)
                self._last_fast_s = simulated_s
            else:
                self._last_fast_s = None
            before = live.reached_s
            began = time.perf_counter()
            await asyncio.to_thread(live.run_until, before + simulated_s)
            took = time.perf_counter() - began
            reading = live.read()
            if took > 0:
                self.speed = (live.reached_s - before) / took
            update = self._update(reading)
            self.history.append(update)
            self._broadcast(update)
            if live.done:
                result = await asyncio.to_thread(live.finish)
                self.summary = _summary(result.summary)
                self.paused = True
                self._broadcast_state()

    def _update(self, r: dict[str, Any]) -> dict[str, Any]:
        arrivals = r["arrivals"]
        return {
            "type": "update",
            "t": r["time_s"],
            "utilization": r["utilization"],
            "goodput_bps": r["goodput_bps"],
            "drop_rate": r["drops"] / arrivals if arrivals else 0.0,
            "queue_pkts": r["queue_pkts"],
            "mean_queue_pkts": r["mean_queue_pkts"],
            "delay_ms": r["queue_delay_s"] * 1e3,
            "buffer_pkts": r["buffer_pkts"],
            "buffer_bytes": r["buffer_bytes"],
            "flows": r["open_flows"],
            "windows": r["windows"],
            "steps": r["steps"],
            "autosizing": r["autosizing"],
            "speed": self.speed,
        }


# The units the engine writes a change's exact time in (`exact_time`), in picoseconds.
_EXACT_UNITS = {"ps": 1, "ns": 10**3, "us": 10**6, "ms": 10**9, "s": 10**12}


def _seconds(at: str) -> float:
    """A change's `at` in seconds: the engine's exact time (a whole number of a unit) as the
    same float as its clock gives (picoseconds ÷ 10¹²), anything else as a time is read."""
    number = at.rstrip("pnums")
    unit = at[len(number) :]
    if number.isdigit() and unit in _EXACT_UNITS:
        return int(number) * _EXACT_UNITS[unit] / 10**12
    return parse_time(at)


def _long_lived(tree: Scenario) -> list[int]:
    return [i for i, t in enumerate(tree["traffic"]) if t.get("kind") == "long_lived"]


def _only_long_lived(tree: Scenario) -> int:
    entries = _long_lived(tree)
    return entries[0] if entries else 0


def _autosize_target(normalized: Scenario) -> float | None:
    target = normalized.get("autosize", {}).get("target_utilization")
    return float(target) if target is not None else None


def _summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The final summary's numbers for the page (NaN as null)."""
    out: dict[str, Any] = {}
    for k, v in summary.items():
        if isinstance(v, float):
            out[k] = _finite(v)
        elif isinstance(v, bool | int | str) or v is None:
            out[k] = v
    return out
