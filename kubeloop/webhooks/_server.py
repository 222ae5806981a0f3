"""`WebhookServer`: the HTTPS server (aiohttp) answering a `Webhooks` set's admission and conversion reviews.

    server = WebhookServer(webhooks, certificates, host="0.0.0.0", port=9443)
    await server.run(stop)          # a runnable: serves until `stop` is set; `server.ready` once listening

It serves `POST /validate/<name>`, `POST /mutate/<name>` and `POST /convert`, and `GET /readyz`. It
is a runnable that needs no leader: every replica serves (the API server picks any Service
endpoint). A handler's failure is answered per its failure policy (see `_admission.py`); anything
else that goes wrong serving a request is a 500 with the error, logged; the server never stops for
it. Metrics (controller-runtime's names, `webhook` = the path): requests by code, latency and
requests in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ._review import ReviewError, parse_review, review_response
from ._webhooks import CONVERT_PATH, Webhooks

if TYPE_CHECKING:
    from ._certs import CertificateSource, Stop

__all__ = ["WebhookServer"]

log = logging.getLogger("kubeloop.webhooks")

#: the port controller-runtime's webhook server listens on by default
DEFAULT_PORT = 9443
#: the largest review body accepted (a LIST page of objects to convert can be large)
MAX_BODY = 64 * 1024 * 1024


class WebhookServer:
    """Serves `webhooks` over HTTPS with the certificate of `certificates` (reloaded in place).

    `port=0` picks a free port (read `port`/`url` once ready). `needs_leader` is False: run it on
    every replica.
    """

    needs_leader = False

    def __init__(self, webhooks: Webhooks, certificates: CertificateSource, *, host: str = "0.0.0.0",
                 port: int = DEFAULT_PORT) -> None:
        self.webhooks = webhooks
        self.certificates = certificates
        self.host = host
        self.port = port
        self._ready = asyncio.Event() if _running() else None
        self._started = False

    @property
    def ready(self) -> bool:
        """True while the server listens with a certificate loaded."""
        return self._started and self.certificates.ready

    async def wait_ready(self) -> None:
        if self._ready is None:
            self._ready = asyncio.Event()
        if self._started:
            self._ready.set()
        await self._ready.wait()

    @property
    def url(self) -> str:
        """`https://host:port` (the base of a URL `clientConfig` for the dev loop)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        shown = f"[{host}]" if ":" in host else host
        return f"https://{shown}:{self.port}"

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post("/validate/{name}", self._admission)
        app.router.add_post("/mutate/{name}", self._admission)
        app.router.add_post(CONVERT_PATH, self._convert)
        app.router.add_get("/readyz", self._readyz)
        return app

    async def run(self, stop: Stop) -> None:
        """Listen until `stop` is set, then close (requests in flight get a short grace period)."""
        if not self.certificates.ready:
            raise RuntimeError("the webhook server's certificate source has no certificate yet: run it first "
                               "(or use EphemeralCertificates)")
        runner = web.AppRunner(self.make_app(), access_log=None, handle_signals=False, shutdown_timeout=2.0)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port, ssl_context=self.certificates.ssl_context,
                               reuse_address=True)
            await site.start()
            server = site._server
            if server is not None and getattr(server, "sockets", None):
                self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
            self._started = True
            if self._ready is None:
                self._ready = asyncio.Event()
            self._ready.set()
            log.info("webhook server listening on %s (%s)", self.url, ", ".join(self.webhooks.paths) or "no webhooks")
            await stop.wait()
        finally:
            self._started = False
            if self._ready is not None:
                self._ready.clear()
            await runner.cleanup()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[WebhookServer]:
        """Run the server in a task of its own while the block runs, without a Manager (tests,
        benchmarks): `async with server.running(): ...` (ready, its `url` and `port` set)."""
        stop = asyncio.Event()
        task = asyncio.create_task(self.run(stop))
        ready = asyncio.create_task(self.wait_ready())
        try:
            await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                task.result()  # it failed to start: raise why
            yield self
        finally:
            ready.cancel()
            stop.set()
            await task

    # -- handlers ------------------------------------------------------------------------------
    async def _readyz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok" if self.ready else "not ready", status=200 if self.ready else 503)

    async def _admission(self, request: web.Request) -> web.Response:
        return await self._serve(request, self._answer_admission)

    async def _convert(self, request: web.Request) -> web.Response:
        return await self._serve(request, self._answer_conversion)

    async def _serve(self, request: web.Request, answer: Any) -> web.Response:
        from kubeloop import metrics

        path = request.path
        in_flight = metrics.WEBHOOK_IN_FLIGHT.labels(path)
        in_flight.inc()
        started = time.perf_counter()
        try:
            try:
                body = await request.read()
                response = web.Response(body=await answer(path, body), content_type="application/json")
            except ReviewError as e:
                response = web.Response(status=400, text=str(e))
            except web.HTTPException as e:
                response = web.Response(status=e.status, text=e.text or e.reason)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a bug serving one request must not take the server down
                log.exception("webhook server: error serving %s", path)
                response = web.Response(status=500, text=f"{type(e).__name__}: {e}")
        finally:
            in_flight.dec()
        code = str(response.status)
        metrics.WEBHOOK_REQUESTS.labels(path, code).inc()
        metrics.WEBHOOK_LATENCY.labels(path, code).observe(time.perf_counter() - started)
        return response

    async def _answer_admission(self, path: str, body: bytes) -> bytes:
        from kubeloop import metrics

        hook = self.webhooks.webhook(path)
        if hook is None:
            raise web.HTTPNotFound(text=f"no webhook at {path}")
        request = parse_review(body, "AdmissionReview")
        answer = await hook.answer(request)
        if answer.failure:
            metrics.WEBHOOK_HANDLER_FAILURES.labels(path, answer.failure).inc()
        return review_response(str(request["uid"]), answer.verdict, patch=answer.patch, warnings=answer.warnings)

    async def _answer_conversion(self, path: str, body: bytes) -> bytes:
        if not self.webhooks.converter:
            raise web.HTTPNotFound(text="this server converts no resource")
        return await self.webhooks.converter.review(parse_review(body, "ConversionReview"))


def _running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
