"""The Manager's HTTP endpoints: ``/healthz``, ``/readyz`` and ``/metrics`` (aiohttp).

- ``/healthz`` (liveness): 200 ``ok`` while the event loop answers and every health check passes.
- ``/readyz`` (readiness): 200 ``ok`` when the manager says it is ready; otherwise 503 with one
  reason per line (an informer still listing, a watch failing with 403 naming the permission,
  leadership not known yet, ...). ``?verbose`` lists the passing checks too, and the manager's
  details (the shard map when sharding).
- ``/metrics``: Prometheus text format of `kubeloop.metrics.REGISTRY` (`kubeloop.metrics.exposition`).

Probes and metrics may share one port or use two; either can be off. Port 0 picks a free port
(the bound URL is then in `ProbeServer.health_url` / `metrics_url`).

Both are runnables of the Manager: `Probes` (the server as one) the first of the ``servers`` group
(a port that is taken fails start-up at once, naming it), `ReadinessLog` one of the ``others``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubeloop import metrics
from kubeloop.manager._errors import ManagerError
from kubeloop.manager._runnable import Stop

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["ProbeServer", "Probes", "ReadinessLog", "Reasons"]

log = logging.getLogger("kubeloop.manager")

Reasons = Callable[[], list[str]]
"""A check: returns why something is not healthy/ready (an empty list: all good)."""
_Handler = Callable[["web.Request"], Awaitable["web.Response"]]


@dataclass
class _Site:
    runner: web.AppRunner
    url: str
    paths: list[str] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class ProbeServer:
    """Serves the probes on ``health_port`` and the metrics on ``metrics_port`` (None: off), bound
    to ``host``; once started, ``health_url`` / ``metrics_url`` are where they answer.

    ``readiness()`` / ``liveness()`` return the reasons for a 503; they run on the event loop for
    every request, so they must be cheap. ``details()`` adds lines to ``/readyz?verbose``.
    """

    health_port: int | None
    metrics_port: int | None
    host: str = "0.0.0.0"
    readiness: Reasons
    liveness: Reasons
    details: Reasons | None = None
    health_url: str | None = field(default=None, init=False)
    metrics_url: str | None = field(default=None, init=False)
    _sites: list[_Site] = field(default_factory=list, init=False, repr=False)

    # ------------------------------------------------------------------ answers: (status, text) for a query

    def _healthz(self, query: Mapping[str, str]) -> tuple[int, str]:
        return self._answer(self.liveness(), query, "unhealthy")

    def _readyz(self, query: Mapping[str, str]) -> tuple[int, str]:
        status, text = self._answer(self.readiness(), query, "not ready")
        if "verbose" in query and self.details is not None:
            text += "".join(f"{line}\n" for line in self.details())
        return status, text

    @staticmethod
    def _answer(reasons: list[str], query: Mapping[str, str], failing: str) -> tuple[int, str]:
        """200 ``ok``, or 503 with `failing` (what a failed probe means: a liveness failure is not
        a readiness one, and an operator reading the answer must not be sent the wrong way)."""
        if reasons:
            return 503, f"{failing}:\n" + "".join(f"- {r}\n" for r in reasons)
        return 200, "ok\n" if "verbose" not in query else "ok: all checks passed\n"

    # ------------------------------------------------------------------ lifetime

    async def start(self) -> None:
        """Bind the ports (raises OSError with the port named when one is taken)."""
        sites: list[tuple[int, list[str]]] = []
        shared = self.health_port is not None and self.health_port == self.metrics_port and self.health_port != 0
        if shared:
            sites.append((self.health_port or 0, ["health", "metrics"]))
        else:
            if self.health_port is not None:
                sites.append((self.health_port, ["health"]))
            if self.metrics_port is not None:
                sites.append((self.metrics_port, ["metrics"]))
        if not sites:
            return
        # aiohttp's server is imported here, when a port is served: a Manager serving none (embedded
        # in a program, in tests) does not pay its ~25 ms of imports at start-up.
        from aiohttp import web

        def plain(answer: Callable[[Mapping[str, str]], tuple[int, str]]) -> _Handler:
            async def handle(request: web.Request) -> web.Response:
                status, text = answer(request.query)
                return web.Response(status=status, text=text)

            return handle

        async def scrape(request: web.Request) -> web.Response:
            body, content_type = metrics.exposition()  # kubeloop's families render in well under a millisecond
            resp = web.Response(body=body)
            resp.headers["Content-Type"] = content_type
            return resp

        try:
            for port, roles in sites:
                app = web.Application()
                if "health" in roles:
                    app.router.add_get("/healthz", plain(self._healthz))
                    app.router.add_get("/readyz", plain(self._readyz))
                if "metrics" in roles:
                    app.router.add_get("/metrics", scrape)
                runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
                await runner.setup()
                site = web.TCPSite(runner, self.host, port, reuse_address=True)
                try:
                    await site.start()
                except OSError as exc:
                    await runner.cleanup()
                    raise OSError(exc.errno, f"cannot serve {' and '.join(roles)} on {self.host}:{port}: "
                                             f"{exc.strerror or exc}") from None
                server = site._server
                assert server is not None
                bound = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
                host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
                host = f"[{host}]" if ":" in host else host
                url = f"http://{host}:{bound}"
                self._sites.append(_Site(runner, url, roles))
                if "health" in roles:
                    self.health_url = url
                if "metrics" in roles:
                    self.metrics_url = url
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        sites, self._sites = self._sites, []
        for s in sites:
            await s.runner.cleanup()


class Probes:
    """The `ProbeServer` as the first runnable of the Manager's ``servers`` group: serving until
    stopped; a port that is taken fails the start with one line naming it."""

    name = "probes"
    needs_leader = False

    def __init__(self, server: ProbeServer) -> None:
        self.server = server

    async def run(self, stop: Stop) -> None:
        try:
            await self.server.start()
        except OSError as exc:
            raise ManagerError(str(exc.strerror or exc)) from None
        stop.started()
        try:
            await stop.wait()
        finally:
            await self.server.stop()

    def readiness(self) -> list[str]:
        return []


class ReadinessLog:
    """Logs the Manager's readiness when it changes: INFO while starting up, WARNING for reasons that
    outlast start-up (``3 * interval``). Checked every ``interval`` seconds, it is also what tells the
    manager's waiters about changes no event reports (an informer stuck, a user's readiness check)."""

    name = "readiness log"
    needs_leader = False

    def __init__(self, readiness: Reasons, interval: float) -> None:
        self.readiness_of = readiness
        self.interval = interval

    async def run(self, stop: Stop) -> None:
        started = time.monotonic()
        last: list[str] | None = None
        last_level = logging.INFO
        while not stop.is_set():
            reasons = self.readiness_of()
            starting = time.monotonic() - started < 3 * self.interval and last != []
            level = logging.INFO if not reasons or starting else logging.WARNING
            if reasons != last or level > last_level:
                if reasons:
                    log.log(level, "not ready: %s", "; ".join(reasons))
                else:
                    log.info("ready")
                if reasons != last:
                    stop.changed()
                last, last_level = reasons, level
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval)

    def readiness(self) -> list[str]:
        return []
