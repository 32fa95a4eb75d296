"""The `buflab serve` page in a real browser: Debian's chromium, headless, driven by
Playwright (pointed at /usr/bin/chromium: nothing downloads a browser). `scripts/setup --dev`
installs both, as root; elsewhere the test is skipped with the reason.

It loads the example dumbbell (100 flows behind fast 1 Gb/s access links at 100 Mb/s), runs
it as fast as possible past the flows' start, then at ten times real time, moves the buffer
slider to RTT·C and then to 10 packets, and checks what a class would see: the utilization
shown drops, and the queue chart's limit line follows the slider; it adds flows and sees the
count change, presses auto-size and sees its steps arrive, and saves a screenshot of the page
(`BUFLAB_ARTIFACTS`, by default `out/test-artifacts/`)."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from buflab.web.catalogue import catalogue
from buflab.web.experiment import Experiment
from buflab.web.server import start, vendor_missing

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# Headless chromium as root: no sandbox, and nothing that reaches the network by itself.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Generous: the machine is shared; nothing here measures time.
TIMEOUT_MS = 120_000


def launch_chromium(playwright, profile: Path, viewport: dict[str, int], **options):  # noqa: ANN001, ANN201 (Playwright's)
    """Debian's headless chromium with a fresh profile, as the tests drive it."""
    return playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=viewport,
        **options,
    )


def artifacts() -> Path:
    path = Path(os.environ.get("BUFLAB_ARTIFACTS", ROOT / "out" / "test-artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def server_url() -> Iterator[str]:
    """A buflab serve on a free loopback port, in a thread of its own."""
    if vendor_missing():
        pytest.skip("the page's charting library is not installed (bash scripts/setup)")
    loop = asyncio.new_event_loop()
    started: dict[str, object] = {}
    ready = threading.Event()

    async def main() -> None:
        runner, url = await start(Experiment(catalogue(None)), "127.0.0.1", 0)
        started.update(runner=runner, url=url)
        ready.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(main(), loop).result(timeout=60)
    ready.wait(60)
    yield str(started["url"])
    asyncio.run_coroutine_threadsafe(started["runner"].cleanup(), loop).result(timeout=60)  # type: ignore[attr-defined]
    loop.call_soon_threadsafe(loop.stop)
    thread.join(60)


def mean_utilization_since(page, t0: float) -> float:  # noqa: ANN001 (a Playwright page)
    """The mean of the utilization the page's chart shows after simulated time `t0`."""
    return page.evaluate(
        """(t0) => { const d = window.buflabPage.data;
             const xs = d.util.filter((_, i) => d.t[i] > t0);
             return xs.reduce((a, b) => a + b, 0) / xs.length / 100; }""",
        t0,
    )


def wait_for_time(page, t: float) -> None:  # noqa: ANN001
    page.wait_for_function(
        "(t) => window.buflabPage.last && window.buflabPage.last.t > t", arg=t, timeout=TIMEOUT_MS
    )


def move_slider(page, pkts: float) -> int:  # noqa: ANN001
    """Moves the buffer slider to the position of `pkts` as a hand would (input, then change
    on release); returns the buffer it asks for."""
    return page.evaluate(
        """(pkts) => { const s = document.getElementById("buffer-slider");
             s.value = window.buflabPage.sliderValueFor(pkts);
             s.dispatchEvent(new Event("input")); s.dispatchEvent(new Event("change"));
             return Number(document.getElementById("buffer-box").value); }""",
        pkts,
    )


def test_the_page_drives_a_running_experiment(server_url: str, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (bash scripts/setup --dev, as root)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p, tmp_path / "profile", {"width": 1500, "height": 1000})
        try:
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(server_url)
            page.wait_for_selector("#source option[value='example:dumbbell']", state="attached")
            assert page.text_content("#engine") == "engine: simulator"
            page.select_option("#source", "example:dumbbell")
            page.fill("#duration", "900s")
            page.click("#load")
            page.wait_for_function(
                "document.getElementById('message').textContent.includes('loaded')"
            )
            page.select_option("#pace", "max")
            page.click("#resume")
            wait_for_time(page, 25)
            # "press Start" goes once the run runs.
            assert "press Start" not in (page.text_content("#message") or "")
            # Measured at ×10: a point a simulated second, as a class would watch it.
            page.select_option("#pace", "10")

            # The buffer at RTT·C: 1,250 packets, where 100 flows keep the link full.
            rtt_c = page.evaluate("window.buflabPage.rules.rtt_c")
            assert rtt_c == pytest.approx(1250)
            big = move_slider(page, rtt_c)
            assert big == pytest.approx(rtt_c, rel=0.01)
            page.wait_for_function(
                f"document.getElementById('limit-now')?.textContent == '{big} pkt'"
            )
            t_big = page.evaluate("window.buflabPage.last.t")
            wait_for_time(page, t_big + 30)
            full = mean_utilization_since(page, t_big + 5)

            # Down to 10 packets: behind fast access links the flows' bursts overflow it.
            small = move_slider(page, 10)
            assert small == 10
            page.wait_for_function("document.getElementById('limit-now')?.textContent == '10 pkt'")
            t_small = page.evaluate("window.buflabPage.last.t")
            limit_line = page.evaluate("window.buflabPage.charts.queue.data[3].at(-1)")
            assert limit_line == 10, "the queue chart's limit line follows the slider"
            wait_for_time(page, t_small + 30)
            tiny = mean_utilization_since(page, t_small + 5)
            shown = page.text_content("#util-now")
            # At RTT·C the link stays busy (the rule of thumb's promise); at 10 packets with
            # fast access it loses several percent (thesis Fig 4.4: fast access needs more
            # than tiny buffers). 3 points apart is far beyond 30-s means' noise (±0.5 %).
            assert full > 0.97, full
            assert tiny < full - 0.03, (full, tiny, shown)

            # 10 more flows: the count shown changes.
            page.click("#flows-more")
            page.wait_for_function("document.getElementById('flows-now')?.textContent == '110'")

            # The auto-sizer: its steps arrive and are listed.
            page.fill("#target", "0.9")
            page.click("#autosize")
            page.wait_for_function("document.getElementById('steps').childElementCount >= 3")
            assert "running" in page.text_content("#autosize-state")
            assert page.locator("#log li").count() >= 5
            page.screenshot(path=str(artifacts() / "serve_page.png"), full_page=True)
        finally:
            browser.close()
