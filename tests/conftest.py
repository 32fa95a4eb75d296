"""Shared fixtures. Tests marked `engine` need the compiled engine and are skipped, with a
reason that says how to build it, only when `buflab._core` cannot be imported — and never
under `bash scripts/test` (it sets BUFLAB_REQUIRE_ENGINE): there a missing engine stops the
run with the import's own error, so CI cannot pass by skipping."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# A suite started in the background of a non-interactive shell inherits SIGINT ignored, and
# every program a test starts would inherit the ignore: the Ctrl-C tests would then test the
# shell, not buflab (a handler, unlike an ignore, is reset to the default in a child).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

try:
    import buflab._core  # noqa: F401

    HAVE_ENGINE, ENGINE_ERROR = True, ""
except ImportError as error:
    HAVE_ENGINE, ENGINE_ERROR = False, str(error)

# Small enough to run in well under a second: 10 Mb/s, 4 flows, 5 simulated seconds.
TINY_SCENARIO = """\
name = "tiny"
seed = 1
duration = "5s"
warmup = "1s"

[network]
topology = "dumbbell"
bottleneck = { rate = "10Mbps", buffer = "20pkt" }
access = { rate = "100Mbps" }
rtt = "20ms..40ms"

[[traffic]]
kind = "long_lived"
flows = 4
tcp = "newreno"
packet = "1000B"
start = "0s..0.5s"
"""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAVE_ENGINE:
        return
    if os.environ.get("BUFLAB_REQUIRE_ENGINE"):
        raise pytest.UsageError(f"buflab._core does not import: {ENGINE_ERROR}")
    skip = pytest.mark.skip(reason="buflab._core is not built; run `bash scripts/setup`")
    for item in items:
        if "engine" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SCENARIO)
    return path
