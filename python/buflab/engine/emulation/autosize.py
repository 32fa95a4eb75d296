"""The live auto-sizer on real TCP: the thesis's real-time buffer sizing tool (ch. 4.3), which
set the NetFPGA router's buffer while Harpoon's users ran, here setting the datapath's.

Read first: crates/buflab-core/src/autosize.rs (the search and its steps) and `runner`'s
`DatapathControl`. The search is the engine's own (`_core.AutoSizer`, the simulator's
`AutoSizer`): this module only reads the datapath's counts when a step is due, hands them to
it and sets the limit it returns, so a simulated and an emulated run of one scenario search
by the same rule and report the same `autosize` table. It must not decide anything itself.

Its timing is the wall clock's: a reading comes a moment after it is due (a sleep's
wake-up, a round trip on the control socket), the interval is measured over the time between
the readings actually taken, and each limit takes effect when the datapath reads the
command: its answer says when, and the emulated `autosize` table has it beside the
simulator's columns (`limit_set_s`).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from buflab.engine import core, scenario_json
from buflab.engine.events import PS_PER_S
from buflab.engine.result import table_dtypes, typed_frame

if TYPE_CHECKING:
    from buflab.engine.emulation.runner import DatapathControl


class LiveAutoSizer:
    """The engine's auto-sizer for a validated scenario with `[autosize]`, driven on a running
    emulation (`drive`); `table()` and `answer()` as a simulated run reports them."""

    def __init__(self, scenario: dict[str, Any], end_s: float) -> None:
        self._search = core().AutoSizer(scenario_json(scenario))
        self._end_ps = round(end_s * PS_PER_S)
        # When each limit the search returned took effect, on the run's clock (s), in order.
        self._set_at_s: list[float] = []

    def drive(self, control: DatapathControl, epoch_s: float) -> None:
        """Steps until the run's end (`epoch_s`: its time 0 on `time.monotonic`): each time a
        reading is due, the datapath's counts to the search, and the limit it returns to the
        datapath. As in the simulator, a step due exactly at the end is measured and its
        limit not set (it would apply to no packet)."""
        while (due := self._search.next_at_ps) <= self._end_ps:
            time.sleep(max(0.0, epoch_s + due / PS_PER_S - time.monotonic()))
            counts = control.counts()
            # The clock reads at least the due time (the datapath's clock is the one it is
            # measured on); a reading a hair early by rounding is taken as on time.
            now_ps = max(int(counts["clock_ps"]), due)
            limit = self._search.tick(
                now_ps, int(counts["busy_ps"]), int(counts["arrivals"]), int(counts["drops"])
            )
            if limit is not None and due < self._end_ps:
                answer = control.set_buffer(f"{limit}pkt")
                self._set_at_s.append(int(answer["time_ps"]) / PS_PER_S)

    def table(self) -> pd.DataFrame:
        """The `autosize` table, and beyond the simulator's columns `limit_set_s`: when the
        datapath put the step's next limit in force (NaN after a step at the run's end,
        whose limit is not set)."""
        steps = typed_frame(self._search.steps(), table_dtypes("autosize"))
        set_at = self._set_at_s + [math.nan] * (len(steps) - len(self._set_at_s))
        return steps.assign(limit_set_s=set_at)

    def answer(self) -> int | None:
        """The median of the sizes the search converged to (None if it never did)."""
        return self._search.answer()
