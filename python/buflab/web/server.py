"""The HTTP and WebSocket front of `buflab serve`, on aiohttp.

Why aiohttp: one well-kept library (aio-libs, released several times a year) that serves
HTTP, static files and WebSockets on asyncio, with a test server and client of its own, so
the server needs no second package (an ASGI framework would need a server beside it).

Routes: `/` the page, `/static/…` its files (aiohttp's static route, which refuses paths
outside its folder), `/ws` the WebSocket, `/replay.toml` the scenario with the session's
changes. Security: it binds to 127.0.0.1 unless told otherwise (and then says so); a
WebSocket whose `Origin` is not this server's own page is refused (403), as is a request
whose `Host` is not this server (a DNS-rebinding page); the page names scenarios by their id
in the catalogue, never by path; messages are JSON, read with `json.loads` only: nothing
from the page is evaluated or run.

It must not know what a control means (`experiment` does).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from buflab.engine import Error
from buflab.web.experiment import Experiment

STATIC = Path(__file__).resolve().parent / "static"
VENDOR_FILES = ("uPlot.iife.min.js", "uPlot.min.css")
# Largest message the page may send (a control is a few dozen bytes).
MAX_MESSAGE_BYTES = 64 * 1024

EXPERIMENT = web.AppKey("experiment", Experiment)
LOOPBACK = web.AppKey("loopback", bool)


class ServeError(Error):
    """The server cannot start: one line for the command line."""


def vendor_missing() -> list[str]:
    """The charting library's files that `scripts/setup` has not installed."""
    return [name for name in VENDOR_FILES if not (STATIC / "vendor" / name).is_file()]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _same_host(request: web.Request) -> bool:
    """Whether the request's Host is this server: any host when it listens beyond the
    loopback, only loopback names when it listens there."""
    if not request.app[LOOPBACK]:
        return True
    host = urlsplit(f"//{request.host}").hostname or ""
    return is_loopback(host)


def _same_origin(request: web.Request) -> bool:
    """A browser's WebSocket carries the page's Origin: it must be this server's own."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser: no page of another site is behind it
    return origin == f"{request.scheme}://{request.host}"


async def index(request: web.Request) -> web.StreamResponse:
    if not _same_host(request):
        raise web.HTTPForbidden(text="unknown host")
    return web.FileResponse(STATIC / "index.html")


async def replay(request: web.Request) -> web.StreamResponse:
    if not _same_host(request):
        raise web.HTTPForbidden(text="unknown host")
    text = request.app[EXPERIMENT].replay_text()
    if text is None:
        raise web.HTTPNotFound(text="no scenario loaded")
    return web.Response(
        text=text,
        content_type="application/toml",
        headers={"Content-Disposition": 'attachment; filename="session.toml"'},
    )


async def websocket(request: web.Request) -> web.StreamResponse:
    if not _same_host(request) or not _same_origin(request):
        raise web.HTTPForbidden(text="cross-origin WebSocket refused")
    ws = web.WebSocketResponse(heartbeat=20, max_msg_size=MAX_MESSAGE_BYTES)
    await ws.prepare(request)
    experiment = request.app[EXPERIMENT]
    viewer = experiment.join()

    async def send() -> None:
        while True:
            await ws.send_str(await viewer.queue.get())

    sender = asyncio.create_task(send())
    try:
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            try:
                message = json.loads(msg.data)
            except json.JSONDecodeError:
                viewer.offer({"type": "error", "message": "a message is JSON text"})
                continue
            await experiment.handle(viewer, message)
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await sender
        experiment.leave(viewer)
    return ws


def make_app(experiment: Experiment, *, loopback: bool = True) -> web.Application:
    """The application; `loopback`: it listens on the loopback only (Host names checked)."""
    app = web.Application(client_max_size=MAX_MESSAGE_BYTES)
    app[EXPERIMENT] = experiment
    app[LOOPBACK] = loopback
    app.router.add_get("/", index)
    app.router.add_get("/ws", websocket)
    app.router.add_get("/replay.toml", replay)
    app.router.add_static("/static", STATIC, show_index=False, follow_symlinks=False)

    async def stepping(app: web.Application):  # noqa: ANN202 (aiohttp's cleanup context)
        task = asyncio.create_task(experiment.run())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.cleanup_ctx.append(stepping)
    return app


async def start(experiment: Experiment, host: str, port: int) -> tuple[web.AppRunner, str]:
    """Starts the server; returns its runner and the page's URL. Raises ServeError for a
    port taken or an address that cannot be bound."""
    missing = vendor_missing()
    if missing:
        raise ServeError(
            f"the page's charting library is not installed ({', '.join(missing)} missing "
            f"under {STATIC / 'vendor'}); run `bash scripts/setup`"
        )
    runner = web.AppRunner(make_app(experiment, loopback=is_loopback(host)), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        if error.errno == errno.EADDRINUSE:
            raise ServeError(
                f"port {port} on {host} is taken; choose another with --port (0: any free one)"
            ) from None
        raise ServeError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sockets = site._server.sockets if site._server else []  # noqa: SLF001 (the bound port)
    bound = sockets[0].getsockname()[1] if sockets else port
    shown = f"[{host}]" if ":" in host else host
    return runner, f"http://{shown}:{bound}/"


def serve(experiment: Experiment, host: str, port: int, say: Callable[[str], None]) -> None:
    """Serves until Ctrl-C, saying the URL (and a warning beyond the loopback) with `say`."""

    async def main() -> None:
        runner, url = await start(experiment, host, port)
        if not is_loopback(host):
            say(
                f"warning: listening on {host}, beyond this machine: anyone who can reach it "
                "can watch and control the experiment"
            )
        say(f"buflab serve: {url}  (Ctrl-C to stop)")
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
