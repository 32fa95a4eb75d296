"""Live sessions (`buflab.engine.live`) and their replay: the scenario with the session's
changes written as `[[change]]` entries, read back from the TOML text a page downloads."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest

import buflab
from buflab.engine import ScenarioError
from buflab.engine.live import LiveRun
from buflab.engine.toml_text import dumps

ROOT = Path(__file__).resolve().parent.parent
# Fields that measure the machine, not the model (as tests/golden.py leaves them out).
MACHINE = {"wall_s", "peak_rss_mib"}


def same_summary(a: dict, b: dict) -> bool:
    """Every model field equal, bit for bit (NaN equal to NaN)."""
    keys = set(a) - MACHINE
    if keys != set(b) - MACHINE:
        return False
    for k in keys:
        x, y = a[k], b[k]
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y:
            return False
    return True


@pytest.mark.engine
def test_a_scripted_session_gives_identical_summaries_live_and_replayed(tmp_path: Path) -> None:
    """The issue's script on the example dumbbell (100 flows, 100 Mb/s), cut to 40 s: the
    buffer to 10 packets at 10 s, 50 more flows at 20 s, the auto-sizer at 30 s. The replay
    goes through the downloaded TOML text and `buflab.run`, as a user's would, and must give
    the live summary exactly: the engine applies each change at the same point of the run."""
    live = LiveRun(ROOT / "examples" / "dumbbell.toml", overrides={"duration": "40s"})
    script = [
        (10.0, {"buffer": "10pkt"}),
        (20.0, {"flows": 150}),
        (30.0, {"target_utilization": 0.95, "autosize": True}),
    ]
    for at, change in script:
        # Uneven steps, as a page paced to the wall clock makes them.
        while live.reached_s < at:
            live.run_until(min(at, live.reached_s + 0.37))
            live.read()
        entry = live.apply(change)
        assert entry["at"] == f"{at:g}s"
    text = dumps(live.replay_tree(), header="# a live session")
    result = live.finish()
    assert result.summary["flows"] == 150
    assert len(result.autosize) > 0, "the auto-sizer stepped from 30 s on"
    path = tmp_path / "session.toml"
    path.write_text(text)
    replayed = buflab.run(path)
    assert same_summary(result.summary, replayed.summary)
    assert result.autosize.equals(replayed.autosize)


@pytest.mark.engine
def test_a_bad_change_names_its_key_and_changes_nothing() -> None:
    """A live change is checked by the engine's scenario reader, as a file's is."""
    live = LiveRun(
        ROOT / "examples" / "dumbbell.toml", overrides={"duration": "3s", "warmup": "0s"}
    )
    live.run_until(1.0)
    with pytest.raises(ScenarioError, match=r"^change\.cc: got \"vegas\"; expected one of"):
        live.apply({"cc": "vegas"})
    with pytest.raises(ScenarioError, match=r"^change\.target_utilization: got 1\.5; expected"):
        live.apply({"target_utilization": 1.5})
    assert live.changes == []


def test_toml_text_reads_back_to_the_same_tree() -> None:
    """Tables, arrays of tables, inline tables, quoted keys and every scalar survive."""
    tree = {
        "name": 'quo"te',
        "seed": 3,
        "duration": "10s",
        "network": {"bottleneck": {"rate": "1Gbps", "buffer": 20}, "rtt": "1ms..2ms"},
        "traffic": [
            {"kind": "long_lived", "flows": 2, "file_size": {"dist": "constant", "value": "1KB"}},
            {"kind": "udp_cbr", "rate": "1Mbps"},
        ],
        "change": [{"at": "1s", "autosize": True, "target_utilization": 0.9}],
        "monitor": {"trace_flows": [0, 1], "a key": 1.5e-3},
    }
    assert tomllib.loads(dumps(tree, header="# header")) == tree
