"""What a queue event log says: the queue rebuilt from it, and the testbed's traffic measures.

`analyze(log)` reads the log once, batch by batch (memory bounded by a batch whatever the log's
length), and returns a `QueueAnalysis`:

- **The queue rebuilt** from the events alone: utilization (each service's serialization time
  inside the measured window), throughput, arrivals, drops and drop rate, ECN marks and mark
  rate, the time-average and
  largest occupancy, the mean queueing delay (each stored packet's wait, matching the k-th
  enqueue with the k-th dequeue of the FIFO; under FQ-CoDel, whose packets leave out of arrival
  order (`LogFacts.fifo` false), each dequeue with the enqueue of the same flow and sequence
  number), and the per-interval `series` (the run's time series). A mark counts as a mark
  whether it follows its packet's enqueue (a discipline that marks at arrival) or its dequeue
  (CoDel and FQ-CoDel mark as they send). Integer picoseconds throughout, so these equal the
  run's own summary exactly — the check that the log is complete.
- **Inter-arrival times of stored packets** (thesis Fig 4.9, IMC Fig 7: dropped packets
  excluded), and the fraction faster than line rate.
- **Burst sizes**, a burst being a run of successive arrivals of one flow, dropped ones
  included (thesis Fig 4.12), and the fraction of successive arrivals of the same flow (IMC
  Fig 13).
- **Queueing delays** of stored packets.

Everything is over the measured window (warm-up excluded), with the engine's conventions: an
event at the window's start counts, one at its end does not; a burst straddling the start
begins afresh there.

It reads the log through `buflab.engine.events` and must not know how runs are organised,
drawn (`buflab.plots.queue`) or printed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from buflab.engine.events import (
    DEQUEUE,
    DROP,
    ENQUEUE,
    EVENT_NAMES,
    MARK,
    PS_PER_S,
    PURGE,
    LogFacts,
    iter_batches,
    read_facts,
)

# Log-spaced bins for times (inter-arrival gaps, queueing delays): 1 ps to 10^13 ps (10 s),
# 200 per decade, so a quantile read off the histogram is within 1.2 % of the exact one.
_TIME_EDGES = np.concatenate(([0, 1], np.logspace(0, 13, 13 * 200 + 1)[1:]))


@dataclass
class Distribution:
    """Counts of a quantity in bins [edges[i], edges[i+1]), with its exact sum and count."""

    edges: np.ndarray
    counts: np.ndarray
    # Whole numbers counted exactly: bin i holds the value i, and the bins grow as needed.
    whole: bool = False
    total: int = 0
    count: int = 0
    # The smallest and largest values, exactly (nan before any).
    low: float = float("nan")
    high: float = float("nan")

    @classmethod
    def of_times(cls) -> Distribution:
        return cls(_TIME_EDGES, np.zeros(len(_TIME_EDGES) - 1, dtype=np.int64))

    @classmethod
    def of_integers(cls) -> Distribution:
        return cls(np.arange(2.0), np.zeros(1, dtype=np.int64), whole=True)

    def add(self, values: np.ndarray) -> None:
        if len(values) == 0:
            return
        self.total += _exact_sum(values)
        self.count += len(values)
        self.low = float(np.nanmin([self.low, float(values.min())]))
        self.high = float(np.nanmax([self.high, float(values.max())]))
        if self.whole:
            top = int(values.max())
            if top >= len(self.counts):
                self.counts = np.pad(self.counts, (0, top + 1 - len(self.counts)))
                self.edges = np.arange(len(self.counts) + 1.0)
            self.counts += np.bincount(values, minlength=len(self.counts))
        else:
            index = np.searchsorted(self.edges, values, side="right") - 1
            self.counts += np.bincount(
                np.minimum(index, len(self.counts) - 1), minlength=len(self.counts)
            )

    @property
    def mean(self) -> float:
        # float(sum) / float(count): the engine's rounding, so exact means agree to the bit.
        return float(self.total) / float(self.count) if self.count else 0.0

    def cdf(self) -> pd.DataFrame:
        """(value, cdf): the fraction of values ≤ each bin's upper edge, for non-empty bins
        (for whole numbers, the fraction ≤ each value)."""
        nonzero = np.flatnonzero(self.counts)
        cumulative = np.cumsum(self.counts)[nonzero] / max(self.count, 1)
        upper = self.edges[nonzero] if self.whole else self.edges[nonzero + 1]
        return pd.DataFrame({"value": upper, "cdf": cumulative})

    def fraction_between(self, lo: float, hi: float) -> float:
        """The fraction of the values in [lo, hi], read off the bins: exact for whole
        numbers; for times, a bin counts if its middle is in the band, which puts each end
        within a bin (1.2 %) of the band's. nan without values."""
        if self.count == 0:
            return float("nan")
        if self.whole:
            middle = self.edges[:-1]
        else:
            middle = (self.edges[:-1] + self.edges[1:]) / 2
        inside = (middle >= lo) & (middle <= hi)
        return float(self.counts[inside[: len(self.counts)]].sum()) / self.count

    def quantile(self, q: float, positive: bool = False) -> float:
        """The smallest bin edge (upper edge; the value itself for whole numbers) with at
        least a fraction q of the values (of the values above zero, if `positive`) at or below
        it; nan when there are none."""
        skip = int(positive)  # bin 0 holds zero (for times, [0, 1 ps))
        counts = self.counts[skip:]
        total = int(counts.sum())
        if total == 0:
            return float("nan")
        index = skip + int(np.searchsorted(np.cumsum(counts), q * total, side="left"))
        if self.whole or index == 0:
            # Whole numbers are exact; for times, bin 0 holds exactly zero (whole picoseconds).
            return float(self.edges[index])
        return float(self.edges[index + 1])


def _exact_sum(values: np.ndarray) -> int:
    """Sum of non-negative int64 values as a Python int, without int64 overflow: the high and
    low 32 bits are summed apart (each sum fits for batches under 2^31 values)."""
    v = values.astype(np.int64)
    return (int((v >> 32).sum()) << 32) + int((v & 0xFFFFFFFF).sum())


@dataclass
class QueueAnalysis:
    """One queue's log, rebuilt and measured over the measured window."""

    facts: LogFacts
    arrivals: int = 0
    drops: int = 0
    marks: int = 0
    departures: int = 0
    departed_bytes: int = 0
    busy_ps: int = 0
    occupancy_pkt_ps: int = 0
    occupancy_byte_ps: int = 0
    max_queue_pkts: int = 0
    interarrival: Distribution = field(default_factory=Distribution.of_times)
    faster_than_line: int = 0
    bursts: Distribution = field(default_factory=Distribution.of_integers)
    pairs: int = 0
    same_flow_pairs: int = 0
    queue_delay: Distribution = field(default_factory=Distribution.of_times)
    stored_sizes: Distribution = field(default_factory=Distribution.of_integers)
    series: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def window_ps(self) -> int:
        return self.facts.window_end_ps - self.facts.window_start_ps

    def summary(self) -> dict[str, float]:
        """The rebuilt numbers under the run summary's names (for comparison with it)."""
        window, seconds = float(self.window_ps), self.window_ps / PS_PER_S
        return {
            "utilization": self.busy_ps / window,
            "throughput_bps": self.departed_bytes * 8.0 / seconds,
            "drop_rate": self.drops / self.arrivals if self.arrivals else 0.0,
            "drops": self.drops,
            "marks": self.marks,
            "mark_rate": self.marks / self.arrivals if self.arrivals else 0.0,
            "arrivals": self.arrivals,
            "mean_queue_pkts": float(self.occupancy_pkt_ps) / window,
            "mean_queue_bytes": float(self.occupancy_byte_ps) / window,
            "max_queue_pkts": self.max_queue_pkts,
            "queue_delay_mean_s": self.queue_delay.mean / PS_PER_S,
            "iat_mean_s": self.interarrival.mean / PS_PER_S,
            "iat_faster_than_line": _ratio(self.faster_than_line, self.interarrival.count),
            "burst_mean_pkts": self.bursts.mean,
            "same_flow_fraction": _ratio(self.same_flow_pairs, self.pairs),
        }


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def analyze(
    log: str | Path | pd.DataFrame, facts: LogFacts | None = None, batch_rows: int = 1 << 20
) -> QueueAnalysis:
    """Rebuild and measure the queue from an event log: a run directory or Parquet file (its
    facts come with it), read `batch_rows` events at a time, or a frame of events (then
    `facts` is required: `Result.events_facts`)."""
    if isinstance(log, pd.DataFrame):
        if facts is None:
            raise ValueError("analyze(frame): the queue's facts (LogFacts) are required")
        batches: Iterable[pd.DataFrame] = [log]
    else:
        path = log_path(log)
        facts = facts or read_facts(path)
        batches = iter_batches(path, batch_rows)
    walker = _Walker(facts)
    for batch in batches:
        walker.batch(batch)
    return walker.finish()


class _Walker:
    """Carries the state that spans batches: the occupancy standing, packets still waiting,
    the last stored packet and the burst in progress."""

    def __init__(self, facts: LogFacts) -> None:
        self.facts = facts
        self.result = QueueAnalysis(facts)
        self.start, self.end = facts.window_start_ps, facts.window_end_ps
        self.interval = facts.interval_ps
        buckets = -(-self.end // self.interval)
        self.bucket_busy = np.zeros(buckets, dtype=np.int64)
        self.bucket_occupancy = [0] * buckets
        self.bucket_max = np.zeros(buckets, dtype=np.int64)
        self.bucket_arrivals = np.zeros(buckets, dtype=np.int64)
        self.bucket_drops = np.zeros(buckets, dtype=np.int64)
        # The occupancy step function: the last knot and the packets/bytes after it.
        self.last_time, self.last_pkts, self.last_bytes = 0, 0, 0
        # Enqueue times, sizes and (flow, seq) of admitted packets not yet dequeued in the
        # log, in order.
        self.waiting_times = np.zeros(0, dtype=np.int64)
        self.waiting_sizes = np.zeros(0, dtype=np.int64)
        self.waiting_ids = np.zeros(0, dtype=np.int64)
        self.service_end = 0
        # The last stored packet (time, serialization) and the arrival run in progress.
        self.last_stored: tuple[int, int] | None = None
        self.run_flow, self.run_length = -1, 0

    def batch(self, events: pd.DataFrame) -> None:
        if len(events) == 0:
            return
        time = events["time_ps"].to_numpy(np.int64)
        kind = pd.Categorical(events["event"], categories=EVENT_NAMES).codes
        pkts = events["queue_pkts"].to_numpy(np.int64)
        size = events["size"].to_numpy(np.int64)
        self._occupancy(time, pkts, events["queue_bytes"].to_numpy(np.int64))
        self._counts(time, kind)
        self._services(time[kind == DEQUEUE], size[kind == DEQUEUE])
        ids = (events["flow"].to_numpy(np.int64) << 32) | events["seq"].to_numpy(np.int64)
        self._delays(time, kind, size, ids)
        self._interarrivals(time[kind == ENQUEUE], size[kind == ENQUEUE])
        self._bursts(time, kind, events["flow"].to_numpy(np.int64))

    def _occupancy(self, time: np.ndarray, pkts: np.ndarray, nbytes: np.ndarray) -> None:
        """Integrates the step function up to the batch's last event, knotted at every
        interval boundary and window edge, so that no piece straddles one."""
        marks = self._marks(self.last_time, int(time[-1]))
        # A mark carries the value standing just before it: after the last event earlier
        # than it (the engine crosses a boundary before it handles events at that instant).
        before = np.searchsorted(time, marks, side="left") - 1
        mark_pkts = np.where(before >= 0, pkts[np.maximum(before, 0)], self.last_pkts)
        mark_bytes = np.where(before >= 0, nbytes[np.maximum(before, 0)], self.last_bytes)
        # Marks sort before events at the same time.
        knot_time = np.concatenate(([self.last_time], marks, time))
        knot_pkts = np.concatenate(([self.last_pkts], mark_pkts, pkts))
        knot_bytes = np.concatenate(([self.last_bytes], mark_bytes, nbytes))
        order = np.argsort(
            np.concatenate(([0], np.zeros(len(marks)), np.ones(len(time)))), kind="stable"
        )
        order = order[np.argsort(knot_time[order], kind="stable")]
        knot_time, knot_pkts, knot_bytes = knot_time[order], knot_pkts[order], knot_bytes[order]
        self._integrate(knot_time, knot_pkts, knot_bytes)
        self.last_time, self.last_pkts, self.last_bytes = (
            int(time[-1]),
            int(pkts[-1]),
            int(nbytes[-1]),
        )

    def _marks(self, after: int, upto: int) -> np.ndarray:
        """Interval boundaries and window edges in (after, upto]."""
        first = after // self.interval + 1
        boundaries = np.arange(first, upto // self.interval + 1, dtype=np.int64) * self.interval
        edges = [e for e in (self.start, self.end) if after < e <= upto]
        return np.unique(np.concatenate((boundaries, np.array(edges, dtype=np.int64))))

    def _integrate(
        self, knot_time: np.ndarray, knot_pkts: np.ndarray, knot_bytes: np.ndarray
    ) -> None:
        r = self.result
        piece_start, piece_len = knot_time[:-1], np.diff(knot_time)
        value_pkts, value_bytes = knot_pkts[:-1], knot_bytes[:-1]
        inside = (piece_start >= self.start) & (piece_start < self.end)
        r.occupancy_pkt_ps += _exact_sum(value_pkts[inside] * piece_len[inside])
        r.occupancy_byte_ps += _exact_sum(value_bytes[inside] * piece_len[inside])
        # The largest occupancy: every knot in the window (marks carry the value standing at
        # the window's start and at each boundary; only enqueues raise it between them).
        knot_inside = (knot_time >= self.start) & (knot_time < self.end)
        if knot_inside.any():
            r.max_queue_pkts = max(r.max_queue_pkts, int(knot_pkts[knot_inside].max()))
        # The time series covers the run up to the window's end, warm-up included.
        bucket = piece_start // self.interval
        weighted = value_pkts * piece_len
        for b in np.unique(bucket[(weighted > 0) & (piece_start < self.end)]):
            self.bucket_occupancy[b] += _exact_sum(weighted[bucket == b])
        before_end = knot_time < self.end
        np.maximum.at(
            self.bucket_max, knot_time[before_end] // self.interval, knot_pkts[before_end]
        )

    def _counts(self, time: np.ndarray, kind: np.ndarray) -> None:
        r = self.result
        inside = (time >= self.start) & (time < self.end)
        arriving = (kind == ENQUEUE) | (kind == DROP)
        # A purge drops a packet that arrived (and was counted) earlier.
        dropped = (kind == DROP) | (kind == PURGE)
        r.arrivals += int((inside & arriving).sum())
        r.drops += int((inside & dropped).sum())
        # A mark follows its packet's enqueue: the packet is counted once, as an arrival.
        r.marks += int((inside & (kind == MARK)).sum())
        bucket = time // self.interval
        before_end = time < self.end
        np.add.at(self.bucket_arrivals, bucket[arriving & before_end], 1)
        np.add.at(self.bucket_drops, bucket[dropped & before_end], 1)

    def _services(self, start: np.ndarray, size: np.ndarray) -> None:
        """Busy time: each service [start, start + serialization) clipped to the window and
        split at interval boundaries (a service is shorter than an interval)."""
        r = self.result
        if len(start) == 0:
            return
        end = start + self.facts.serialization_ps(size)
        self.service_end = int(end[-1])
        inside = (start >= self.start) & (start < self.end)
        r.departures += int(inside.sum())
        r.departed_bytes += int(size[inside].sum())
        clipped = np.minimum(end, self.end) - np.maximum(start, self.start)
        r.busy_ps += _exact_sum(np.maximum(clipped, 0))
        # A service started before the run's end counts in its interval, the part past the
        # interval's end in the next (cut at the run's end, as the window is).
        before_end = start < self.end
        start, end = start[before_end], np.minimum(end[before_end], self.end)
        first = start // self.interval
        split = np.minimum((first + 1) * self.interval, end)
        np.add.at(self.bucket_busy, first, split - start)
        spill = end - split
        later = spill > 0
        np.add.at(self.bucket_busy, first[later] + 1, spill[later])

    def _delays(
        self, time: np.ndarray, kind: np.ndarray, size: np.ndarray, ids: np.ndarray
    ) -> None:
        """FIFO: the k-th dequeue is the k-th enqueue's service start, once the packets a
        discipline purged from its queue are taken out (matched by flow and sequence
        number, oldest first). A queue that is not FIFO: each dequeue and purge matched by
        flow and sequence number."""
        if not self.facts.fifo:
            return self._delays_by_packet(time, kind, size, ids)
        if (kind == PURGE).any():
            return self._delays_with_purges(time, kind, size, ids)
        enqueued = kind == ENQUEUE
        waiting = np.concatenate((self.waiting_times, time[enqueued]))
        sizes = np.concatenate((self.waiting_sizes, size[enqueued]))
        waiting_ids = np.concatenate((self.waiting_ids, ids[enqueued]))
        started = time[kind == DEQUEUE]
        n = len(started)
        self._record_delays(waiting[:n], started)
        self.waiting_times, self.waiting_sizes = waiting[n:], sizes[n:]
        self.waiting_ids = waiting_ids[n:]

    def _delays_with_purges(
        self, time: np.ndarray, kind: np.ndarray, size: np.ndarray, ids: np.ndarray
    ) -> None:
        """`_delays` event by event, for a batch in which packets left the queue unsent."""
        queue = deque(
            zip(
                self.waiting_times.tolist(),
                self.waiting_sizes.tolist(),
                self.waiting_ids.tolist(),
                strict=True,
            )
        )
        enqueued, started = [], []
        for t, k, s, i in zip(
            time.tolist(), kind.tolist(), size.tolist(), ids.tolist(), strict=True
        ):
            if k == ENQUEUE:
                queue.append((t, s, i))
            elif k == DEQUEUE:
                enqueued.append(queue.popleft()[0])
                started.append(t)
            elif k == PURGE:
                del queue[next(j for j, entry in enumerate(queue) if entry[2] == i)]
        self._record_delays(np.array(enqueued, dtype=np.int64), np.array(started, dtype=np.int64))
        self.waiting_times = np.array([e[0] for e in queue], dtype=np.int64)
        self.waiting_sizes = np.array([e[1] for e in queue], dtype=np.int64)
        self.waiting_ids = np.array([e[2] for e in queue], dtype=np.int64)

    def _delays_by_packet(
        self, time: np.ndarray, kind: np.ndarray, size: np.ndarray, ids: np.ndarray
    ) -> None:
        """`_delays` for a queue that is not FIFO: the packets waiting by (flow, sequence
        number), each dequeue or purge taking the oldest of its own (a retransmission may
        wait beside its original, in the same flow's queue)."""
        waiting: dict[int, deque[tuple[int, int, int]]] = {}
        order = 0
        for t, s, i in zip(
            self.waiting_times.tolist(),
            self.waiting_sizes.tolist(),
            self.waiting_ids.tolist(),
            strict=True,
        ):
            waiting.setdefault(i, deque()).append((order, t, s))
            order += 1
        enqueued, started = [], []
        for t, k, s, i in zip(
            time.tolist(), kind.tolist(), size.tolist(), ids.tolist(), strict=True
        ):
            if k == ENQUEUE:
                waiting.setdefault(i, deque()).append((order, t, s))
                order += 1
            elif k == DEQUEUE or k == PURGE:
                mine = waiting[i]
                entry = mine.popleft()
                if not mine:
                    del waiting[i]
                if k == DEQUEUE:
                    enqueued.append(entry[1])
                    started.append(t)
        self._record_delays(np.array(enqueued, dtype=np.int64), np.array(started, dtype=np.int64))
        left = sorted((entry, i) for i, entries in waiting.items() for entry in entries)
        self.waiting_times = np.array([e[1] for e, _ in left], dtype=np.int64)
        self.waiting_sizes = np.array([e[2] for e, _ in left], dtype=np.int64)
        self.waiting_ids = np.array([i for _, i in left], dtype=np.int64)

    def _record_delays(self, enqueued: np.ndarray, started: np.ndarray) -> None:
        inside = (enqueued >= self.start) & (enqueued < self.end)
        self.result.queue_delay.add(started[inside] - enqueued[inside])

    def _interarrivals(self, time: np.ndarray, size: np.ndarray) -> None:
        if len(time) == 0:
            return
        r = self.result
        ser = self.facts.serialization_ps(size)
        previous_time, previous_ser = (
            (
                np.concatenate(([self.last_stored[0]], time[:-1])),
                np.concatenate(([self.last_stored[1]], ser[:-1])),
            )
            if self.last_stored
            else (time[:-1], ser[:-1])
        )
        current = time if self.last_stored else time[1:]
        inside = (current >= self.start) & (current < self.end)
        gap = (current - previous_time)[inside]
        r.interarrival.add(gap)
        r.stored_sizes.add(size[(time >= self.start) & (time < self.end)])
        r.faster_than_line += int((gap < previous_ser[inside]).sum())
        self.last_stored = (int(time[-1]), int(ser[-1]))

    def _bursts(self, time: np.ndarray, kind: np.ndarray, flow: np.ndarray) -> None:
        """Runs of one flow among the window's arrivals, carried across batches."""
        arriving = (kind == ENQUEUE) | (kind == DROP)
        inside = arriving & (time >= self.start) & (time < self.end)
        flows = flow[inside]
        if len(flows) == 0:
            return
        r = self.result
        r.pairs += len(flows) - (0 if self.run_length else 1)
        same = flows[1:] == flows[:-1]
        r.same_flow_pairs += int(same.sum()) + int(
            self.run_length > 0 and flows[0] == self.run_flow
        )
        # Run boundaries: where the flow changes, the first continuing the carried run.
        starts = np.concatenate(([0], np.flatnonzero(~same) + 1))
        lengths = np.diff(np.concatenate((starts, [len(flows)])))
        if self.run_length and flows[0] == self.run_flow:
            lengths[0] += self.run_length
        elif self.run_length:
            r.bursts.add(np.array([self.run_length]))
        r.bursts.add(lengths[:-1])
        self.run_flow, self.run_length = int(flows[-1]), int(lengths[-1])

    def finish(self) -> QueueAnalysis:
        r = self.result
        # The queue stands unchanged from the last event to the end of the run.
        marks = self._marks(self.last_time, self.end)
        knots = np.concatenate(([self.last_time], marks))
        self._integrate(
            knots,
            np.full(len(knots), self.last_pkts, dtype=np.int64),
            np.full(len(knots), self.last_bytes, dtype=np.int64),
        )
        if self.run_length:
            r.bursts.add(np.array([self.run_length]))
        # Packets still waiting when the run ended start one after another, back to back
        # from the end of the last service: a waiting packet means a busy serializer, and the
        # link is a work-conserving FIFO. A queue that is not FIFO has no such order known in
        # advance, and the engine charges those packets nothing; neither does this.
        if len(self.waiting_times) and self.facts.fifo:
            service = self.facts.serialization_ps(self.waiting_sizes)
            starts = self.service_end + np.concatenate(([0], np.cumsum(service[:-1])))
            self._record_delays(self.waiting_times, starts)
        r.series = self._series()
        return r

    def _series(self) -> pd.DataFrame:
        boundaries = np.arange(1, len(self.bucket_busy) + 1, dtype=np.int64) * self.interval
        ends = np.minimum(boundaries, self.end)
        lengths = (ends - (boundaries - self.interval)).astype(float)
        utilization = self.bucket_busy / lengths
        # The engine's arithmetic, so that the two series agree to the bit.
        interval_s = self.interval / PS_PER_S
        time_s = np.minimum(np.arange(1, len(ends) + 1) * interval_s, self.end / PS_PER_S)
        return pd.DataFrame(
            {
                "time_s": time_s,
                "throughput_bps": utilization * self.facts.rate_bps,
                "utilization": utilization,
                "queue_pkts": np.array([float(v) for v in self.bucket_occupancy]) / lengths,
                "queue_max_pkts": self.bucket_max,
                "arrivals": self.bucket_arrivals,
                "drops": self.bucket_drops,
            }
        )


def log_path(run: str | Path) -> Path:
    """The event log of a run directory (or the log file itself)."""
    path = Path(run)
    if path.is_dir():
        path = path / "events.parquet"
    if not path.exists():
        partial = path.with_name(path.name + ".partial")
        hint = (
            f"; {partial.name} is the log of a run that did not finish"
            if partial.exists()
            else "; run with --set monitor.events=true --out DIR to record one"
        )
        raise FileNotFoundError(2, f"no event log {path}{hint}", str(path))
    return path


# Summary figures that on a switch cover every output line, and so are compared with the
# logged output's row of the links table instead.
_PER_LINK = (
    "utilization",
    "throughput_bps",
    "drop_rate",
    "drops",
    "marks",
    "mark_rate",
    "arrivals",
    "mean_queue_pkts",
    "max_queue_pkts",
    "queue_delay_mean_s",
)


# What a bump's row of the bumps table reports of its queue, for a log recorded at a bump
# (`monitor.events_at`): the log's rebuilt names, and the row's (the one instance the log
# records is the entry's only one, or the row sums several and is not comparable).
_PER_BUMP = {
    "arrivals": "arrivals",
    "drops": "drops",
    "mean_queue_pkts": "mean_queue_pkts",
    "max_queue_pkts": "max_queue_pkts",
}


def check_summary(
    analysis: QueueAnalysis,
    summary: dict[str, float],
    links: pd.DataFrame | None = None,
    bumps: pd.DataFrame | None = None,
) -> list[tuple[str, float, float]]:
    """(key, rebuilt, reported) for every rebuilt number the run's summary also reports. On a
    switch (`summary["ports"] > 0`) the log is one output's and the summary's totals and means
    cover them all, so those come from that output's row of `links` (and are left out
    without it). A log recorded at a bump is checked against its row of `bumps` instead, when
    the entry has that one instance (none otherwise)."""
    rebuilt = analysis.summary()
    if bumps is not None and analysis.facts.link in set(bumps["name"]):
        row = bumps[bumps["name"] == analysis.facts.link].iloc[0]
        if row["instances"] != 1:
            return []
        return [(key, rebuilt[key], row[column]) for key, column in _PER_BUMP.items()]
    reported = dict(summary)
    if summary.get("ports", 0) > 0:
        for key in (*_PER_LINK, "mean_queue_bytes"):
            reported.pop(key, None)
        row = None if links is None else links[links["name"] == analysis.facts.link]
        if row is not None and len(row) == 1:
            reported.update({key: row[key].iloc[0] for key in _PER_LINK})
    return [(key, rebuilt[key], reported[key]) for key in rebuilt if key in reported]


def cdf_frame(analyses: dict[str, QueueAnalysis]) -> pd.DataFrame:
    """Every run's CDFs in one long table: run, measure, value, cdf (value in seconds for
    times, packets for bursts)."""
    frames = []
    for label, a in analyses.items():
        for measure, dist, scale in (
            ("interarrival_s", a.interarrival, 1 / PS_PER_S),
            ("burst_pkts", a.bursts, 1.0),
            ("queue_delay_s", a.queue_delay, 1 / PS_PER_S),
        ):
            cdf = dist.cdf()
            cdf["value"] *= scale
            cdf.insert(0, "measure", measure)
            cdf.insert(0, "run", label)
            frames.append(cdf)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
