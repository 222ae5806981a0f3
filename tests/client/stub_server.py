"""A tiny real HTTP server of a test's own, for what the emulator would never send."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web


@contextlib.asynccontextmanager
async def serve(handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                path: str = "/{tail:.*}") -> AsyncIterator[str]:
    """Serve GET `path` with `handler` on a free local port; yields the base URL."""
    app = web.Application()
    app.router.add_get(path, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
