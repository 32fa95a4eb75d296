"""The ns-3 cross-check's queue disciplines (`validation/ns3_crosscheck.py --queue`): what
it asks of buflab and how it reads both sides. ns-3 itself is not run here (it needs its own
venv and minutes a run; see validation/README.md): these check the script's buflab side,
its reading of ns-3's drop reasons, and its refusal of a queue it does not know."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import buflab

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "validation"))
import ns3_crosscheck as crosscheck  # noqa: E402

# The disciplines buflab runs (`pie_sojourn` is `pie` on its side, see below).
AQMS = [q for q in crosscheck.QUEUES if q not in ("droptail", "pie_sojourn")]


def small(queue: str) -> crosscheck.Spec:
    """The cross-check's dumbbell cut to 10 flows and 10 s with 5 s of warm-up (a fraction of a
    second in buflab), with a buffer of 1,000 packets, most of RTT·C: deep enough that each
    AQM's law drops in the measured window (with 200 packets slow start's overflow does all
    the dropping that early)."""
    return crosscheck.Spec("newreno", 1000, 10, 10.0, 5.0, 1, queue)


@pytest.mark.engine
@pytest.mark.parametrize("queue", AQMS)
def test_the_explicit_aqm_settings_are_buflabs_defaults(queue: str) -> None:
    """The script writes every AQM parameter out and the README's table calls each value
    buflab's default (its RFC's): the run with them is identical to the run with the keys left
    out, and buflab accepts them all (it refuses unknown keys). If a default moves, this fails
    and the README's table must move with it. (fq_codel_ecn is false here, true by default:
    no sender is ECN-capable, so ECN changes nothing; the runs are still compared whole.)"""
    scenario = crosscheck.buflab_scenario(small(queue))
    bare = crosscheck.buflab_scenario(small(queue))
    for key in crosscheck.aqm_settings(queue):
        del bare["network"]["bottleneck"][key]
    assert crosscheck.aqm_settings(queue), "every AQM has settings to match"
    explicit, default = buflab.run(scenario), buflab.run(bare)
    assert explicit.aqm.iloc[0]["queue"] == queue
    for key in ("arrivals", "drops", "utilization", "mean_queue_pkts", "queue_delay_mean_s"):
        assert explicit.summary[key] == default.summary[key], key


def test_pie_sojourn_runs_buflabs_pie() -> None:
    """`pie_sojourn` changes only ns-3's side (its delay measure): buflab's scenario is the
    `pie` row's, so the two rows differ by ns-3's estimator alone."""
    assert crosscheck.buflab_scenario(small("pie_sojourn")) == crosscheck.buflab_scenario(
        small("pie")
    ) | {"name": crosscheck.buflab_scenario(small("pie_sojourn"))["name"]}


@pytest.mark.engine
@pytest.mark.parametrize("queue", crosscheck.QUEUES)
def test_buflabs_drops_split_by_cause_add_up(queue: str) -> None:
    """buflab's side of each run splits the bottleneck's drops into the AQM's law, overflow and
    FQ-CoDel's fattest-queue drops, which add up to the summary's drops; drop-tail's are all
    overflow; every AQM drops by its law; and the sojourn figures are in order: median ≤ 99th
    percentile ≤ the longest wait a packet can have, behind the buffer's 1,000 packets and the
    one in service at 80 µs each (1000 B at 100 Mb/s), give or take the 0.8 % to which
    buflab's delay histogram places a value (monitor/histogram.rs)."""
    r: dict[str, Any] = crosscheck.run_buflab(small(queue))
    assert r["drops"] > 0
    assert r["law_drops"] + r["overflow_drops"] + r["fattest_drops"] == r["drops"]
    if queue == "droptail":
        assert r["overflow_drops"] == r["drops"]
    else:
        assert r["law_drops"] > 0
    assert 0 < r["sojourn_p50_s"] <= r["sojourn_p99_s"] <= 1001 * 80e-6 * 1.008
    assert (r["fq_queues"] > 0) == (queue == "fq_codel")


def test_ns3_drop_reasons_map_onto_buflabs_causes() -> None:
    """ns-3 3.44 names its drops by reason (the strings below are the ones its queue discs
    report, as the script's runs record them in `drop_reasons`): CoDel's and PIE's laws, drops
    from a full buffer, FQ-CoDel's drop from the fattest queue (its own "Overlimit drop" at
    dequeue) and its flow queues' CoDel drops and overflows, which reach it prefixed."""
    child = "(Dropped by child queue disc) "
    fq = {
        f"enqueue: {child}Overlimit drop": 3,
        f"dequeue: {child}Target exceeded drop": 17,
        "dequeue: Overlimit drop": 40,
    }
    assert crosscheck.drop_causes("fq_codel", fq) == {"law": 17, "fattest": 40, "overflow": 3}
    codel = {"enqueue: Overlimit drop": 5, "dequeue: Target exceeded drop": 9}
    assert crosscheck.drop_causes("codel", codel) == {"law": 9, "fattest": 0, "overflow": 5}
    pie = {"enqueue: Forced drop": 2, "enqueue: Unforced drop": 11}
    assert crosscheck.drop_causes("pie", pie) == {"law": 11, "fattest": 0, "overflow": 2}
    fifo = {"enqueue: Queue disc limit exceeded": 7}
    assert crosscheck.drop_causes("droptail", fifo) == {"law": 0, "fattest": 0, "overflow": 7}


@pytest.mark.parametrize("given", ["fifo", "codel,red", ""])
def test_an_unknown_queue_gets_one_line_naming_it(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--queue` with a name the script does not know: exit status 2 and one line that names
    the option, the value and the names it takes, before anything is run or looked for."""
    assert crosscheck.main(["--queue", given, "--ns3-python", "/nonexistent"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    bad = given.split(",")[-1]
    assert err.startswith(f"error: --queue: unknown queue {bad!r}; expected "), err
    assert all(q in err for q in crosscheck.QUEUES)
