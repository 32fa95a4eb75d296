//! The autosize table: the live auto-sizer's steps.
//!
//! Read first: [`crate::autosize`] (the search, and the [`Step`] it records at the end of each
//! interval) and [`super::table`] (how a table is described). This file owns only the table's
//! description: a step is its row as the auto-sizer keeps it.

use super::table::table;
use crate::autosize::Step;

table!(Step, "autosize",
    "Only with `[autosize]`: one row per step of the live auto-sizer, in time order.",
{
    time_s: "s", "End of the interval, when the step decided.", |s| s.time.secs_f64();
    buffer_pkts: "pkt", "The buffer limit during the interval.", |s| s.buffer_pkts;
    utilization: "",
        "Fraction of the interval after its first `autosize.settle` that the bottleneck \
         serializer was busy.",
        |s| s.utilization;
    drops: "pkt", "Bottleneck queue drops over that part of the interval.", |s| s.drops;
    arrivals: "pkt", "Arrivals at the bottleneck queue, admitted or dropped, over that part of the interval.",
        |s| s.arrivals;
    passed: "", "utilization ≥ tolerance × target.", |s| s.passed;
    next_buffer_pkts: "pkt",
        "The limit set for the next interval (after the run's last step it is not applied).",
        |s| s.next_buffer_pkts;
    converged: "", "The search had converged after this step (its bounds one packet apart).", |s| s.converged;
});
