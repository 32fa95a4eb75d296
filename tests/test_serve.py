"""`buflab serve` without a browser: the WebSocket protocol (bad values, controls during a
pause, a viewer leaving mid-stream, two viewers and who controls), the security checks
(cross-origin WebSockets, foreign Host names, ids not paths), the download and the port.

Each test runs a real server on the loopback (aiohttp's test server) against a tiny
scenario, and waits for messages with a deadline; none asserts a duration."""

from __future__ import annotations

import asyncio
import json
import os
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from buflab.web.catalogue import Entry, catalogue, listing
from buflab.web.experiment import VIEWER_QUEUE, Experiment, Viewer
from buflab.web.server import ServeError, is_loopback, make_app, start, vendor_missing

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent

TINY = {
    "name": "tiny",
    "duration": "3600s",
    "network": {"bottleneck": {"rate": "10Mbps", "buffer": "50pkt"}, "rtt": "20ms..40ms"},
    "traffic": [{"kind": "long_lived", "flows": 5}],
}
# Long enough for any message to come on a loaded machine; tests never wait for it to pass.
DEADLINE_S = 60


def entries() -> dict[str, Entry]:
    return {"tiny": Entry("tiny", "tiny test scenario", TINY)}


def run_with_client(test: Callable[[TestClient, Experiment], Awaitable[None]]) -> None:
    async def main() -> None:
        experiment = Experiment(entries())
        async with TestServer(make_app(experiment)) as server, TestClient(server) as client:
            await test(client, experiment)

    asyncio.run(main())


async def until(ws: aiohttp.ClientWebSocketResponse, wanted: Callable[[dict], bool]) -> dict:
    """The first message `wanted` accepts."""
    async with asyncio.timeout(DEADLINE_S):
        while True:
            message = json.loads(await ws.receive_str())
            if wanted(message):
                return message


def of_type(kind: str) -> Callable[[dict], bool]:
    return lambda m: m["type"] == kind


async def loaded(ws: aiohttp.ClientWebSocketResponse) -> dict:
    """Loads the tiny scenario; returns the state that follows."""
    await ws.send_json({"type": "load", "source": "tiny"})
    await until(ws, of_type("loaded"))
    return await until(ws, lambda m: m["type"] == "state" and m["loaded"])


def test_a_bad_control_value_is_one_line_on_the_page_and_changes_nothing() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        ws = await client.ws_connect("/ws")
        await loaded(ws)
        await ws.send_json({"type": "control", "name": "buffer", "value": "-3pkt"})
        error = await until(ws, of_type("error"))
        assert error["message"].startswith('change.buffer: got "-3pkt"; expected')
        await ws.send_json({"type": "control", "name": "flows", "value": "many"})
        error = await until(ws, of_type("error"))
        assert error["message"] == "flows: got 'many'; expected a whole number"
        await ws.send_json({"type": "control", "name": "volume", "value": 11})
        error = await until(ws, of_type("error"))
        assert error["message"].startswith("control: got 'volume'; expected buffer, flows")
        await ws.send_str("not json")
        assert (await until(ws, of_type("error")))["message"] == "a message is JSON text"
        assert experiment.live is not None and experiment.live.changes == []
        assert list(experiment.log) == []

    run_with_client(test)


def test_a_control_during_a_pause_applies_at_the_paused_time() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        ws = await client.ws_connect("/ws")
        await loaded(ws)
        await ws.send_json({"type": "pace", "value": "max"})
        await ws.send_json({"type": "resume"})
        update = await until(ws, lambda m: m["type"] == "update" and m["t"] > 2)
        await ws.send_json({"type": "pause"})
        paused = await until(ws, lambda m: m["type"] == "state" and m["paused"])
        at = paused["reached_s"]
        assert at >= update["t"]
        await ws.send_json({"type": "control", "name": "buffer", "value": 7})
        changed = await until(ws, of_type("changed"))
        assert (changed["t"], changed["text"]) == (at, "buffer = 7")
        state = await until(ws, of_type("state"))
        assert state["reached_s"] == at, "nothing ran while paused"
        assert state["log"][-1]["t"] == at
        # Resumed, the next reading shows the new limit.
        await ws.send_json({"type": "resume"})
        update = await until(ws, of_type("update"))
        assert update["buffer_pkts"] == 7 and update["t"] > at

    run_with_client(test)


def test_a_viewer_leaving_mid_stream_leaves_the_others_streaming() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        first = await client.ws_connect("/ws")
        second = await client.ws_connect("/ws")
        await loaded(first)
        await first.send_json({"type": "pace", "value": "max"})
        await first.send_json({"type": "resume"})
        await until(second, of_type("update"))
        await second.close()
        # The first still streams, and the server has forgotten the second.
        later = await until(first, lambda m: m["type"] == "update" and m["t"] > 5)
        state = await until(first, of_type("state")) if len(experiment.viewers) != 1 else None
        assert later["t"] > 5
        assert len(experiment.viewers) == 1, state
        # The controller leaving hands control to the one left.
        third = await client.ws_connect("/ws")
        await until(third, of_type("hello"))
        await first.close()
        state = await until(third, lambda m: m["type"] == "state" and len(m["viewers"]) == 1)
        assert state["controller"] == state["viewers"][0]

    run_with_client(test)


def test_two_viewers_one_controls_and_control_can_be_taken() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        first = await client.ws_connect("/ws")
        hello = await until(first, of_type("hello"))
        second = await client.ws_connect("/ws")
        hello2 = await until(second, of_type("hello"))
        await loaded(first)
        await second.send_json({"type": "control", "name": "flows", "value": 8})
        error = await until(second, of_type("error"))
        assert (
            error["message"]
            == f"viewer {hello2['you']} is watching: viewer {hello['you']} controls"
        )
        await second.send_json({"type": "take_control"})
        state = await until(
            first, lambda m: m["type"] == "state" and m["controller"] == hello2["you"]
        )
        assert state["viewers"] == [hello["you"], hello2["you"]]
        await second.send_json({"type": "control", "name": "flows", "value": 8})
        # Both see the change, and RTT·C/√N follows N: 10 Mb/s × 30 ms ÷ 8000 bits = 37.5
        # packets of RTT·C, over √8.
        for ws in (first, second):
            assert (await until(ws, of_type("changed")))["text"] == "flows = 8"
        rules = (await until(first, of_type("state")))["rules"]
        assert (rules["flows"], rules["rtt_c"]) == (8, pytest.approx(37.5))
        assert rules["sqrt_n"] == pytest.approx(37.5 / 8**0.5)
        await second.send_json({"type": "control", "name": "flows", "value": 0})
        rules = (
            await until(
                first, lambda m: m["type"] == "state" and m["log"][-1]["text"] == "flows = 0"
            )
        )["rules"]
        assert (rules["flows"], rules["sqrt_n"]) == (0, None)
        await first.send_json({"type": "pause"})
        assert (await until(first, of_type("error")))["message"].endswith(
            f"viewer {hello2['you']} controls"
        )

    run_with_client(test)


def test_cross_origin_websockets_and_foreign_hosts_are_refused() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect("/ws", headers={"Origin": "http://example.org"})
        assert refused.value.status == 403
        own = f"http://{client.server.host}:{client.server.port}"
        ws = await client.ws_connect("/ws", headers={"Origin": own})
        await until(ws, of_type("hello"))
        page = await client.get("/", headers={"Host": "rebound.example.org"})
        assert page.status == 403
        assert (await client.get("/")).status == 200
        # Static files stay inside their folder.
        assert (await client.get("/static/../experiment.py")).status in (403, 404)

    run_with_client(test)


def test_the_page_names_scenarios_by_id_only() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        ws = await client.ws_connect("/ws")
        for source in ("/etc/passwd", "../examples/dumbbell.toml", 3):
            await ws.send_json({"type": "load", "source": source})
            error = await until(ws, of_type("error"))
            assert error["message"] == f"source: got {source!r}; expected one of the page's list"
        assert experiment.live is None

    run_with_client(test)


def test_the_download_is_the_scenario_with_its_changes() -> None:
    async def test(client: TestClient, experiment: Experiment) -> None:
        assert (await client.get("/replay.toml")).status == 404
        ws = await client.ws_connect("/ws")
        await loaded(ws)
        await ws.send_json({"type": "control", "name": "flows", "value": 9})
        await until(ws, of_type("changed"))
        response = await client.get("/replay.toml")
        assert response.headers["Content-Disposition"] == 'attachment; filename="session.toml"'
        tree = tomllib.loads(await response.text())
        assert tree["traffic"] == TINY["traffic"]
        assert tree["change"] == [{"flows": 9, "at": "0s"}]

    run_with_client(test)


def test_a_slow_viewer_loses_its_oldest_messages_not_the_servers_memory() -> None:
    async def test() -> None:
        viewer = Viewer(1)
        for i in range(VIEWER_QUEUE * 3):
            viewer.offer({"type": "update", "i": i})
        assert viewer.queue.qsize() == VIEWER_QUEUE
        assert json.loads(viewer.queue.get_nowait())["i"] == VIEWER_QUEUE * 2

    asyncio.run(test())


def test_a_port_taken_is_one_line() -> None:
    if vendor_missing():
        pytest.skip("the page's charting library is not installed (bash scripts/setup)")

    async def test() -> None:
        runner, url = await start(Experiment(entries()), "127.0.0.1", 0)
        port = int(url.rsplit(":", 1)[1].strip("/"))
        try:
            with pytest.raises(ServeError) as taken:
                await start(Experiment(entries()), "127.0.0.1", port)
            assert str(taken.value) == (
                f"port {port} on 127.0.0.1 is taken; choose another with --port (0: any free one)"
            )
        finally:
            await runner.cleanup()

    asyncio.run(test())


def test_only_loopback_addresses_count_as_this_machine() -> None:
    """What decides the warning at start and the Host check: loopback names and addresses
    only (0.0.0.0 listens on every interface)."""
    assert all(map(is_loopback, ["127.0.0.1", "127.8.9.1", "::1", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.2", "example.org"]))


def test_the_catalogue_lists_the_given_file_the_examples_and_the_recipes() -> None:
    found = listing(catalogue(None))
    ids = [e["id"] for e in found]
    assert "example:dumbbell" in ids and any(i.startswith("recipe:") for i in ids)
    assert all(not i.startswith("/") for i in ids)


EMULATED = {
    "name": "emulated dumbbell",
    "duration": "6s",
    "warmup": "2s",
    "network": {"bottleneck": {"rate": "20Mbps", "buffer": "30pkt"}, "rtt": "20ms..60ms"},
    "traffic": [
        {"kind": "long_lived", "flows": 10, "packet": "1500B", "tcp": "sack", "start": "0s..1s"}
    ],
}


def test_the_flow_controls_drive_the_main_entry_of_several() -> None:
    """On a parking lot (main flows and three entries of cross flows, 40 in all) the page's
    flow count is every entry's: asking for 50 adds 10 main flows (the change names entry
    0), the count shown becomes 50, and a count below the cross flows' 30 is refused in one
    line and changes nothing."""
    with open(ROOT / "examples" / "parking_lot.toml", "rb") as f:
        tree = tomllib.load(f)
    tree["duration"] = "600s"

    async def main() -> None:
        experiment = Experiment({"lot": Entry("lot", "parking lot", tree)})
        async with TestServer(make_app(experiment)) as server, TestClient(server) as client:
            ws = await client.ws_connect("/ws")
            await ws.send_json({"type": "load", "source": "lot"})
            await until(ws, of_type("loaded"))
            await ws.send_json({"type": "pace", "value": "max"})
            await ws.send_json({"type": "resume"})
            first = await until(ws, of_type("update"))
            assert first["flows"] == 40
            await ws.send_json({"type": "control", "name": "flows", "value": 50})
            changed = await until(ws, of_type("changed"))
            assert changed["text"] == "flows = 20, traffic = 0"
            later = await until(ws, lambda m: m["type"] == "update" and m["t"] > changed["t"])
            assert later["flows"] == 50
            await ws.send_json({"type": "control", "name": "flows", "value": 20})
            error = await until(ws, of_type("error"))
            assert error["message"].startswith("flows: got 20; expected 30 or more")
            assert experiment.live is not None and len(experiment.live.changes) == 1

    asyncio.run(main())


@pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (CI runs as root)")
def test_the_page_drives_the_emulator_buffer_and_flows_live() -> None:
    """`buflab serve --emulate`: the page says it drives the emulator; after warm-up the
    buffer changes live through the datapath's control channel and the readings show the new
    limit; flows open (the plan's spare slots, through the traffic generator's control
    channel) and close, the page's count follows, and the flows opened carry traffic (bytes
    acknowledged in the window, real TCP); beyond the spare slots, or what the emulator cannot
    change (access links, a pause), is refused in one line. 6 s of emulation."""
    from buflab.engine.emulation.plan import SPARE_FLOWS

    async def main() -> None:
        experiment = Experiment({"small": Entry("small", "small", EMULATED)}, emulate=True)
        async with TestServer(make_app(experiment)) as server, TestClient(server) as client:
            ws = await client.ws_connect("/ws")
            state = await until(ws, of_type("state"))
            assert state["engine"].startswith("emulator")
            await ws.send_json({"type": "load", "source": "small"})
            await until(ws, of_type("loaded"))
            await ws.send_json({"type": "resume"})
            await until(ws, lambda m: m["type"] == "update" and m["t"] > 2.2)
            await ws.send_json({"type": "control", "name": "buffer", "value": 5})
            changed = await until(ws, of_type("changed"))
            assert changed["text"] == "buffer = 5"
            update = await until(ws, lambda m: m["type"] == "update" and m["t"] > changed["t"])
            assert update["buffer_pkts"] == 5
            assert update["flows"] == 10
            await ws.send_json({"type": "control", "name": "flows", "value": 20})
            changed = await until(ws, of_type("changed"))
            assert changed["text"] == "flows = 20"
            update = await until(ws, lambda m: m["type"] == "update" and m["t"] > changed["t"])
            assert update["flows"] == 20
            await ws.send_json({"type": "control", "name": "flows", "value": 20 + SPARE_FLOWS})
            error = await until(ws, of_type("error"))
            assert error["message"] == (
                f"change.flows: got {20 + SPARE_FLOWS}; expected at most {10 + SPARE_FLOWS} (the "
                f"emulator opens at most {SPARE_FLOWS} flows in a run, each known to the datapath "
                f"from its start; {SPARE_FLOWS - 10} left)"
            )
            await until(ws, lambda m: m["type"] == "update" and m["t"] > changed["t"] + 1.0)
            await ws.send_json({"type": "control", "name": "flows", "value": 14})
            changed = await until(ws, of_type("changed"))
            update = await until(ws, lambda m: m["type"] == "update" and m["t"] > changed["t"])
            assert update["flows"] == 14
            await ws.send_json({"type": "control", "name": "access", "value": "fast"})
            error = await until(ws, of_type("error"))
            assert error["message"].startswith("change.access_rate: not on the emulator")
            await ws.send_json({"type": "pause"})
            error = await until(ws, of_type("error"))
            assert error["message"] == "the emulator runs in real time: it cannot pause or resume"
            done = await until(ws, lambda m: m["type"] == "state" and m["done"])
            assert done["summary"]["emulated"] is True
            assert done["summary"]["buffer_pkts"] == 5
            assert done["summary"]["flows"] == 20, "10 flows, then 10 opened from the page"
        live = experiment.live
        assert live is not None and live.result is not None
        flows = live.result.flows.set_index("flow")
        host = live.result.emulation["hosts"][0]
        opened = [int(f) for f, _ in host["opened"]]
        closed = [int(f) for f, _ in host["closed"]]
        assert len(opened) == 10 and opened == sorted(opened) and min(opened) >= 10
        # The last 6 opened are the ones closed (the simulator closes the newest first too).
        assert closed == opened[4:]
        rows = flows.loc[opened, ["start_s", "delivered_bytes", "retransmits", "error"]]
        assert (rows["start_s"] > 2.0).all(), "started from the page, after the warm-up"
        assert rows["error"].isna().all(), rows
        # The 4 left open ran the last seconds of the run and carried traffic. (One closed
        # a second after it opened may not have: behind a 5-packet buffer a lost SYN waits out
        # Linux's 1-s initial RTO.)
        assert (rows.loc[opened[:4], "delivered_bytes"] > 0).all(), rows
        assert all(at > dict(host["opened"])[f] for f, at in host["closed"])

    asyncio.run(main())
