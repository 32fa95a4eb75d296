"""The smallest buffer that meets a target utilization, found by bisection.

The thesis's testbed had an automatic tool for this (ch. 4.3): binary search over the buffer
size, probing each size and keeping the smaller half when the target was met. `minimum_buffer`
does the same offline: each probe is `runs` seeds of the scenario with the buffer set to a
whole number of packets, and it passes when their mean utilization reaches the target.

Bisection assumes utilization grows with the buffer. It does not always: seeds differ, and
synchronisation can make a larger buffer do worse. Every probe is kept, and any pair where the
larger buffer's mean utilization is below the smaller one's by more than their 95 %
intervals together is reported as a contradiction rather than hidden. (Bisection itself never
sees a larger buffer fail where a smaller one passed: it only probes between the largest
failure and the smallest success so far, so the means are the only witness.)

Probes are sweep runs written to OUT/runs, so an interrupted search resumes where it stopped
and a repeated one costs nothing.

`size_curve` repeats the search for each value of one other key (`--vary traffic.0.flows=
1,10,100`: the course plot "minimum buffer vs number of flows"). Each value's search is the
search of the scenario with that value set, kept in its own directory OUT/KEY-VALUE (e.g.
OUT/traffic.0.flows-10), so values never share probes, a resumed curve reuses every probe,
and `--set KEY=VALUE --out OUT/KEY-VALUE` repeats one value's search alone. Beside each
answer are the rules of thumb for that value's scenario (`rule_sizes`): RTT·C, RTT·C/√N and
eq. 2.1 when it applies; the table is written to OUT/sizes.csv as each search finishes.

It must not know how probes and answers are drawn (`sizing_plot`) or printed (the command
line, through `on_probe`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from buflab.analysis import theory
from buflab.analysis.stats import mean_ci
from buflab.engine import ScenarioError, core, scenario_json
from buflab.engine.files import write_atomically
from buflab.engine.scenario import Scenario, apply_overrides, expand_shorthand
from buflab.engine.units import format_percent
from buflab.experiments.backends import executor_for
from buflab.experiments.execution import Executor, in_parallel
from buflab.experiments.load import offered_load
from buflab.experiments.store import RunStore
from buflab.experiments.sweep import DEFAULT_SEED, Plan, Vary, run_sweep

DEFAULT_KEY = "network.bottleneck.buffer"
# Doubling past RTT·C this many times before giving up: 16·RTT·C holds any TCP window the
# rule of thumb is about, so a target missed there is out of reach of buffering.
MAX_DOUBLINGS = 4
# Bisection stops once the answer is known within this share of itself (or one packet): a
# search at 6,650 packets refined to one packet took 18 probes, and told 705 from 706 packets
# with ±2 % intervals, which no run can.
DEFAULT_PRECISION = 0.01


@dataclass(frozen=True)
class Probe:
    """One buffer size tried: the mean utilization over its seeds and whether it passed.
    `simulated` counts the runs this search simulated; the others were found on disk."""

    buffer_pkts: int
    utilization: float
    ci95: float
    passed: bool
    simulated: int = 0
    label: str = ""  # "KEY = VALUE" of the search it belongs to, when several run at once


@dataclass(frozen=True)
class RuleSizes:
    """The rules of thumb (theory.py) for one scenario and target, in packets.

    `rtt_c_sqrt_n` is None without long-lived flows (there is no N); `eq21` is None when
    eq. 2.1 does not apply, and `eq21_note` then says why (otherwise it gives its inputs).
    """

    rtt_c: float
    rtt_c_sqrt_n: float | None
    flows: int
    eq21: float | None
    eq21_note: str
    load: float  # offered load ρ of all the traffic (inf when long-lived flows are unbounded)
    wmax_pkts: float


@dataclass
class Sizing:
    """The outcome of a search: the minimum buffer (None if even the largest probe failed),
    every probe in the order run, and the probes that contradict monotonicity. `wall_s` is
    the search's wall-clock time (small when its probes were found on disk); `rules` and
    `figures` are filled in by `buflab.size` and `buflab.size_curve`."""

    target: float
    buffer_pkts: int | None
    probes: list[Probe] = field(default_factory=list)
    wall_s: float = 0.0
    rules: RuleSizes | None = None
    figures: list[Path] = field(default_factory=list)
    # How precise the answer is: the largest buffer known to miss (0 when none was probed),
    # so the minimum lies above it and at most `buffer_pkts`; and why bisection stopped:
    # "packet" (refined to one packet), "precision" (within `precision` of the answer) or
    # "noise" (a probe's 95 % interval held the target: its seeds cannot tell it apart).
    missed_pkts: int = 0
    stopped: str = "packet"
    precision: float = DEFAULT_PRECISION

    @property
    def contradictions(self) -> list[tuple[Probe, Probe]]:
        """(smaller, larger) pairs whose utilization fell as the buffer grew, by more than
        the two 95 % intervals together (any fall, with one seed per probe)."""
        return [
            (small, large)
            for small in self.probes
            for large in self.probes
            if small.buffer_pkts < large.buffer_pkts
            and small.utilization - large.utilization > _margin(small, large)
        ]

    @property
    def largest_probe(self) -> int:
        return max((probe.buffer_pkts for probe in self.probes), default=0)


def _margin(a: Probe, b: Probe) -> float:
    return math.hypot(*(0.0 if math.isnan(p.ci95) else p.ci95 for p in (a, b)))


def check_target(target: float) -> None:
    """A target utilization is a fraction of the link: above 0, at most 1."""
    if not 0 < target <= 1:
        raise ScenarioError(f"--target-utilization {target}: expected a fraction in (0, 1]")


def minimum_buffer(
    scenario: Scenario,
    target: float,
    out: str | Path,
    *,
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    precision: float = DEFAULT_PRECISION,
    on_probe: Callable[[Probe], None] | None = None,
    executor: Executor | str | None = None,
    store: RunStore | None = None,
) -> Sizing:
    """Bisect over whole packets for the smallest `key` buffer with mean utilization ≥ target.

    The search starts from `high` packets (default RTT·C of the scenario's bottleneck, rounded
    up), doubling it up to four times until it passes; a buffer of 0 packets is taken to
    fail, so the answer is at least 1. Bisection stops when the smallest passing buffer is
    within `precision` of itself from the largest failing one (0: one packet), or when a
    probe's 95 % interval holds the target (its seeds cannot say which side it is on);
    `Sizing.missed_pkts` and `Sizing.stopped` say how precise the answer is. A probe's
    `runs` seeds run at once on `executor` (as `run_sweep` takes it; one pool or cluster
    serves every probe) and are added to `store` (default: OUT's run store).
    """
    check_target(target)
    if not 0 <= precision < 1:
        raise ScenarioError(f"--precision {precision}: expected a fraction in [0, 1), e.g. 0.01")
    if high is None:
        facts = theory.LinkFacts.from_scenario(core().validate(scenario_json(scenario)))
        high = math.ceil(theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes))
    if high < 1:
        raise ScenarioError(f"upper buffer {high}: expected at least 1 packet")
    started = time.perf_counter()
    sizing = Sizing(target, None, precision=precision)
    store = store if store is not None else RunStore(out)

    with executor_for(executor, jobs) as runner:

        def probe(buffer_pkts: int) -> Probe:
            plan = Plan(scenario, [Vary(key, (f"{buffer_pkts}pkt",))], runs)
            outcome = run_sweep(plan, out, executor=runner, store=store, command="size")
            mean, ci95 = mean_ci(outcome.results["utilization"].astype(float).tolist())
            result = Probe(buffer_pkts, mean, ci95, mean >= target, outcome.executed)
            sizing.probes.append(result)
            if on_probe:
                on_probe(result)
            return result

        _bisect(probe, high, sizing)
    sizing.wall_s = time.perf_counter() - started
    return sizing


def _bisect(probe: Callable[[int], Probe], high: int, sizing: Sizing) -> None:
    """The smallest whole number whose probe passes, from `high` (doubled while it fails),
    into `sizing`: its answer, the largest miss below it and why the search stopped."""
    low = 0  # the largest buffer known to miss (a buffer of 0 packets is taken to miss)
    for _ in range(MAX_DOUBLINGS + 1):
        if probe(high).passed:
            break
        low, high = high, high * 2
    else:
        sizing.missed_pkts = low
        return  # even the largest buffer misses the target
    sizing.stopped = "packet"
    while high - low > 1:
        if high - low <= math.floor(sizing.precision * high):
            sizing.stopped = "precision"
            break
        middle = (low + high) // 2
        tried = probe(middle)
        if tried.passed:
            high = middle
        else:
            low = middle
        if _within_noise(tried, sizing.target):
            sizing.stopped = "noise"
            break
    sizing.buffer_pkts, sizing.missed_pkts = high, low


def _within_noise(probe: Probe, target: float) -> bool:
    """Whether the probe's 95 % interval holds the target (never with one seed, which has
    no interval): sizes near it pass or fail by the luck of their seeds."""
    return not math.isnan(probe.ci95) and abs(probe.utilization - target) <= probe.ci95


# --- the rules of thumb beside an answer -----------------------------------------------------


def rule_sizes(scenario: Scenario, target: float) -> RuleSizes:
    """RTT·C, RTT·C/√N and eq. 2.1 for the scenario's bottleneck (`theory.LinkFacts`).

    Eq. 2.1 takes W_max from LinkFacts (the max window, or what the access link carries in
    an RTT), ρ from `buflab.experiments.load.offered_load` (the mean offered load of all the
    traffic, standing in for the thesis's peak load) and the target as the link utilization
    θρ.
    """
    normalised = core().validate(scenario_json(scenario))
    facts = theory.LinkFacts.from_scenario(normalised)
    rtt_c = theory.bdp_packets(facts.rate_bps, facts.rtt_s, facts.packet_bytes)
    load = float(offered_load(normalised)["load"])
    eq21, note = tiny_buffer_rule(facts, load, target)
    return RuleSizes(
        rtt_c=rtt_c,
        rtt_c_sqrt_n=rtt_c / math.sqrt(facts.flows) if facts.flows > 0 else None,
        flows=facts.flows,
        eq21=eq21,
        eq21_note=note,
        load=load,
        wmax_pkts=facts.wmax_pkts,
    )


def tiny_buffer_rule(
    facts: theory.LinkFacts, load: float, target: float
) -> tuple[float | None, str]:
    """Eq. 2.1 for this link, load and target utilization, with its inputs; or None and
    why it does not apply."""
    if facts.flows == 0:
        return None, "no long-lived flows to take the window W_max from"
    if not math.isfinite(load):
        return None, (
            "the offered load is unbounded (the access link and max window let a long-lived "
            "flow fill the link); it needs ρ < 1"
        )
    if load >= 1:
        return None, f"the offered load ρ = {load:.3g} is not below 1; it needs ρ < 1"
    if not math.isfinite(facts.wmax_pkts):
        return None, "the flows have no finite max window W_max"
    if target >= load:
        return None, (
            f"the target {target:g} is not below the offered load ρ = {load:.3g}, "
            "so no buffer reaches it"
        )
    tiny = theory.tiny_buffer_for_utilization(facts.wmax_pkts, load, target)
    return tiny, f"W_max = {facts.wmax_pkts:,.3g} pkt, ρ = {load:.3g}, θρ = {target:g}"


# --- one search per value of another key -----------------------------------------------------


@dataclass
class SizePoint:
    """One search of a curve: the varied value, the scenario with it set, its search (with
    its rules of thumb) and the directory that holds its probes."""

    value: Any
    scenario: Scenario
    sizing: Sizing
    out: Path
    label: str = ""  # "KEY = VALUE", as its probes are labelled


@dataclass
class SizeCurve:
    """The minimum buffer for each value of `key`, in the order the values were given."""

    key: str
    target: float
    points: list[SizePoint] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    # One curve of several (`size_curves`): the other varied key and its value here.
    series: tuple[str, Any] | None = None

    @property
    def label(self) -> str:
        """`KEY = VALUE` of the series this curve is, or "" for a lone curve."""
        return "" if self.series is None else f"{self.series[0]} = {_value_text(self.series[1])}"

    def frame(self) -> pd.DataFrame:
        """One row per value, as written to sizes.csv: the value (column named by the key),
        the minimum buffer (<NA> when none was found up to `largest_probe_pkts`), the largest
        buffer that missed and why bisection stopped (`Sizing.missed_pkts`, `stopped`), the rules
        of thumb in packets (eq. 2.1 empty where `eq21_note` says it does not apply), the
        number of probes, contradicting probe pairs and the search's wall time; a curve of
        several has the series key's column first."""
        rows = [_row(self.key, point) for point in self.points]
        frame = pd.DataFrame(rows, columns=[self.key, *_ROW_COLUMNS])
        if self.series is not None:
            frame.insert(0, self.series[0], [self.series[1]] * len(frame))
        return frame.astype({"buffer_pkts": "Int64", "probes": "int64"})


_ROW_COLUMNS = [
    "target",
    "buffer_pkts",
    "missed_pkts",
    "stopped",
    "largest_probe_pkts",
    "rtt_c_pkts",
    "rtt_c_sqrt_n_pkts",
    "eq21_pkts",
    "eq21_note",
    "flows",
    "load",
    "wmax_pkts",
    "probes",
    "contradictions",
    "wall_s",
    "out",
]


def _row(key: str, point: SizePoint) -> dict[str, Any]:
    sizing, rules = point.sizing, point.sizing.rules
    assert rules is not None, "size_curve fills in every search's rules"
    return {
        key: point.value,
        "target": sizing.target,
        "buffer_pkts": sizing.buffer_pkts,
        "missed_pkts": sizing.missed_pkts,
        "stopped": sizing.stopped if sizing.buffer_pkts is not None else "",
        "largest_probe_pkts": sizing.largest_probe,
        "rtt_c_pkts": rules.rtt_c,
        "rtt_c_sqrt_n_pkts": math.nan if rules.rtt_c_sqrt_n is None else rules.rtt_c_sqrt_n,
        "eq21_pkts": math.nan if rules.eq21 is None else rules.eq21,
        "eq21_note": rules.eq21_note if rules.eq21 is None else "",
        "flows": rules.flows,
        "load": rules.load,
        "wmax_pkts": rules.wmax_pkts,
        "probes": len(sizing.probes),
        "contradictions": len(sizing.contradictions),
        "wall_s": sizing.wall_s,
        "out": str(point.out),
    }


VarySpec = str | Vary | tuple[str, Sequence[Any]]


def curve_vary(scenario: Scenario, spec: VarySpec, buffer_key: str = DEFAULT_KEY) -> Vary:
    """The varied key and values of a curve, from "KEY=V1,V2" (as --vary), a `Vary` or a
    (key, values) pair; the short key `flows` names the flows of the only traffic entry.
    Raises ScenarioError naming the key and value for anything it cannot search over."""
    if isinstance(spec, str):
        vary = Vary.parse(spec)
    elif isinstance(spec, Vary):
        vary = spec
    else:
        vary = _vary_of_pair(spec)
    key = _resolve_key(scenario, vary.key)
    if key == buffer_key:
        raise ScenarioError(
            f"--vary {key}: that is the buffer being sized; vary another key, "
            "e.g. traffic.0.flows=1,10,100"
        )
    names = [_value_text(value) for value in vary.values]
    for name in names:
        if names.count(name) > 1:
            raise ScenarioError(f"--vary {key}: the value {name} is given twice")
    return Vary(key, vary.values)


def _vary_of_pair(spec: Any) -> Vary:
    try:
        key, values = spec
    except (TypeError, ValueError):
        raise ScenarioError(
            f"vary {spec!r}: expected (KEY, [V1, V2, ...]) or 'KEY=V1,V2,...'"
        ) from None
    if not isinstance(key, str) or not key.strip():
        raise ScenarioError(f"vary key {key!r}: expected a dotted key, e.g. traffic.0.flows")
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
        raise ScenarioError(
            f"vary {key}: values {values!r}: expected a non-empty list, e.g. [1, 10, 100]"
        )
    return Vary(key.strip(), tuple(values))


def _resolve_key(scenario: Scenario, key: str) -> str:
    try:
        return expand_shorthand(scenario, key)
    except ScenarioError as error:
        raise ScenarioError(f"--vary {error}") from None


def value_scenarios(scenario: Scenario, vary: Vary) -> list[Scenario]:
    """The scenario with each value set, every one checked by the engine before any search
    starts, so a bad last value does not fail after the first searches."""
    scenarios = []
    for value in vary.values:
        try:
            at_value = apply_overrides(scenario, {vary.key: value})
            core().validate(scenario_json(at_value))
        except ScenarioError as error:
            raise ScenarioError(f"--vary {vary.key}={_value_text(value)}: {error}") from None
        scenarios.append(at_value)
    return scenarios


def value_directory(out: Path, key: str, value: Any) -> Path:
    """OUT/KEY-VALUE, e.g. OUT/traffic.0.flows-10: readable, and the same for the same value
    so a resumed curve finds its probes. A value whose text is not file-name-safe gets a hash
    of the text too, so two values never share a directory."""
    text = _value_text(value)
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "-", f"{key}-{text}")
    if safe != f"{key}-{text}":
        safe += "_" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return out / safe


def _value_text(value: Any) -> str:
    """A value as written on the command line: strings as they are, others as TOML/JSON
    would write them (10, 0.5, true)."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def size_curve(
    scenario: Scenario,
    target: float,
    out: str | Path,
    vary: VarySpec,
    *,
    key: str = DEFAULT_KEY,
    runs: int = 1,
    jobs: int | None = None,
    high: int | None = None,
    precision: float = DEFAULT_PRECISION,
    on_value: Callable[[str, Any], None] | None = None,
    on_probe: Callable[[Probe], None] | None = None,
    on_point: Callable[[SizePoint], None] | None = None,
    executor: Executor | str | None = None,
    store: RunStore | None = None,
) -> SizeCurve:
    """`minimum_buffer` for each value of the varied key, each in its own OUT/KEY-VALUE, the
    searches at once (each from a thread of its own, their probes sharing one `executor`, the
    process pool of `jobs` unless given, and one run store, OUT's unless given).

    `on_value(key, value)` is called as a value's search starts, `on_probe` for each of its
    probes (labelled with the value) and `on_point` when it is done, in the order of the
    values (a search that finishes early waits for the ones before it). OUT/sizes.csv
    (`SizeCurve.frame`) is rewritten as each is reported, so an interrupted curve keeps the
    table of the values it finished. The callbacks are never called from two threads at once.
    """
    check_target(target)
    vary = curve_vary(scenario, vary, key)
    scenarios = value_scenarios(scenario, vary)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store = store if store is not None else RunStore(out)
    curve = SizeCurve(vary.key, target)
    lock = threading.RLock()

    def report(point: SizePoint) -> None:
        curve.points.append(point)
        table = curve.frame()
        write_atomically(out / "sizes.csv", partial(table.to_csv, index=False))
        if on_point:
            on_point(point)

    in_order = InOrder(report, lock)

    def labelled(label: str) -> Callable[[Probe], None]:
        def show(probe: Probe) -> None:
            if on_probe:
                with lock:
                    on_probe(dataclasses.replace(probe, label=label))

        return show

    with executor_for(executor, jobs) as runner:

        def search(index: int, value: Any, at_value: Scenario) -> None:
            if on_value:
                with lock:
                    on_value(vary.key, value)
            directory = value_directory(out, vary.key, value)
            label = f"{vary.key} = {_value_text(value)}" if len(vary.values) > 1 else ""
            sizing = minimum_buffer(
                at_value,
                target,
                directory,
                key=key,
                runs=runs,
                high=high,
                precision=precision,
                on_probe=labelled(label),
                executor=runner,
                store=store,
            )
            sizing.rules = rule_sizes(at_value, target)
            label = f"{vary.key} = {_value_text(value)}"
            point = SizePoint(value, at_value, sizing, directory, label)
            in_order.done(index, point)

        in_parallel(
            [
                partial(search, index, value, at_value)
                for index, (value, at_value) in enumerate(zip(vary.values, scenarios, strict=True))
            ],
            runner,
        )
    return curve


class InOrder:
    """Hands finished items to `report` in their index order: item i waits for items
    0 … i-1, whichever thread finishes first. Reports run under `lock`."""

    def __init__(self, report: Callable[[Any], None], lock: threading.RLock) -> None:
        self._waiting: dict[int, Any] = {}
        self._next = 0
        self._report = report
        self._lock = lock

    def done(self, index: int, item: Any) -> None:
        with self._lock:
            self._waiting[index] = item
            while self._next in self._waiting:
                self._report(self._waiting.pop(self._next))
                self._next += 1


def eq21_notes(labelled: Sequence[tuple[str, RuleSizes | None]]) -> list[str]:
    """One note per reason eq. 2.1 does not apply, naming the (labelled) values it concerns,
    or "every value" when there are several and it concerns them all."""
    by_reason: dict[str, list[str]] = {}
    for label, rules in labelled:
        if rules is not None and rules.eq21 is None:
            by_reason.setdefault(rules.eq21_note, []).append(label)
    notes = []
    for reason, labels in by_reason.items():
        if len(labels) == len(labelled) > 1:
            where = " at every value"
        else:
            where = f" at {', '.join(labels)}" if any(labels) else ""
        notes.append(f"eq. 2.1 does not apply{where}: {reason}.")
    return notes


def precision_text(sizing: Sizing, advice: bool = True) -> str:
    """How precise a found answer is: where the largest miss lies below it, and why the
    bisection stopped there; with `advice`, the option that would make it finer."""
    answer, missed = sizing.buffer_pkts, sizing.missed_pkts
    assert answer is not None, "only a found answer has a precision"
    if missed == answer - 1:
        return f"one packet ({missed:,} pkt missed)"
    where = f"the minimum lies between {missed + 1:,} and {answer:,} pkt"
    if sizing.stopped == "noise":
        noisy = sizing.probes[-1]
        return (
            f"{where}: the probe at {noisy.buffer_pkts:,} pkt came within its 95 % interval "
            f"(±{format_percent(noisy.ci95)}) of the target, so its seeds cannot tell sizes this "
            "close apart" + (" (--runs narrows it)" if advice else "")
        )
    finer = "; --precision 0 refines to one packet" if advice else ""
    return f"{where} (bisection stops within {sizing.precision:.0%} of the answer{finer})"


def seeds_of(scenario: Scenario, runs: int) -> list[int]:
    """The seeds a probe of `runs` runs uses: the scenario's seed and the next ones."""
    base = scenario.get("seed", DEFAULT_SEED)
    return list(range(base, base + runs)) if isinstance(base, int) else []
