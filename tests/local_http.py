"""A tiny real HTTP server on the loopback for tests that need a server the emulator would never be
(a malformed stream, a proxy that drops a parameter)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

__all__ = ["serve", "serve_get"]


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1 (a free port) for the block; yields its base URL."""
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def serve_get(handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                    path: str = "/{tail:.*}") -> AsyncIterator[str]:
    """Serve GET ``path`` with ``handler`` (every path by default); yields the base URL."""
    app = web.Application()
    app.router.add_get(path, handler)
    async with serve(app) as url:
        yield url
