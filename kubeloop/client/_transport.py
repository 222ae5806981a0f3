"""HTTP transport for one cluster: sessions, TLS, credentials, rate limit, retries, typed errors.

Two aiohttp sessions per client: one for ordinary requests (pooled, keep-alive) and one for watches
with no connection cap, so any number of long watches never starves ordinary requests. TLS contexts
are cached per client certificate (exec plugins may rotate it) and passed per request.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import ssl
import time
from collections.abc import Mapping
from typing import Any, TypedDict
from urllib.parse import urlsplit

import aiohttp

from kubeloop.client._errors import (
    ClientConnectionError,
    RequestTimeoutError,
    error_from_response,
)
from kubeloop.client._ratelimit import RequestRateLimiter
from kubeloop.client._retry import (
    RetryPolicy,
    parse_retry_after,
    should_retry_connection_error,
    should_retry_status,
)
from kubeloop.config import ClusterConfig, Credentials, make_ssl_context
from kubeloop.metrics import REST_CLIENT

log = logging.getLogger("kubeloop.client")

Params = Mapping[str, str] | None


class TransportOptions(TypedDict, total=False):
    """The tuning keywords `Client(...)` passes through to `Transport` (defaults are Transport's)."""

    qps: float | None
    burst: int
    timeout: float
    user_agent: str
    retry: RetryPolicy | None
    connection_limit: int
    trust_env: bool
    compression: bool | None


def nearby(config: ClusterConfig) -> bool:
    """True for a server on this host (loopback) or reached from inside its cluster: there the
    client asks for uncompressed responses by default (`Client(compression=...)` decides otherwise).

    The API server gzips a response over 128 KiB when the client accepts it (its
    APIResponseCompression, on by default), as client-go's and aiohttp's requests do, at the cost
    of its own CPU (the resource every client of a cluster shares) before the last byte leaves.
    Measured on loopback against a 1.24 server (TLS), informers listing from the watch cache,
    interleaved: 10,000 Pods synced in 0.66 s uncompressed against 0.74 s compressed (medians of
    5), 10,000 ConfigMaps of random text in 1.23 s against 1.72 s (of 4); realistic ConfigMaps
    compress well enough that both took 0.47-0.49 s. Across a slow link (a laptop to a distant
    cluster) compression saves more than it costs, so it stays on there.
    """
    if config.source == "in-cluster":
        return True
    host = (urlsplit(config.server).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Transport:
    """Sends requests to one cluster. Not tied to any resource; `Client` builds paths and bodies."""

    def __init__(
        self,
        config: ClusterConfig,
        *,
        qps: float | None = 50.0,
        burst: int = 100,
        timeout: float = 30.0,
        user_agent: str = "kubeloop",
        retry: RetryPolicy | None = None,
        connection_limit: int = 100,
        trust_env: bool = False,
        compression: bool | None = None,
    ) -> None:
        self.config = config
        self.compression = compression if compression is not None else not nearby(config)
        """Ask for gzip-compressed responses (see `nearby`)."""
        self.timeout = timeout
        self.user_agent = user_agent
        self.retry = retry or RetryPolicy()
        self.limiter = RequestRateLimiter(qps, burst) if qps else None
        self._connection_limit = connection_limit
        self._trust_env = trust_env
        self._https = config.server.startswith("https://")
        self._host = urlsplit(config.server).netloc  # the metrics' host label, as client-go's
        self._ssl: dict[tuple[bytes | None, bytes | None], ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None
        self._watch_session: aiohttp.ClientSession | None = None
        self._closed = False
        self._request_timeout = aiohttp.ClientTimeout(total=timeout)

    # -- sessions -------------------------------------------------------------------------------

    def _new_session(self, limit: int) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0, enable_cleanup_closed=False)
        return aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": self.user_agent},
            trust_env=self._trust_env,
            read_bufsize=2**18,
            skip_auto_headers=("Content-Type",),
        )

    def session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("client is closed")
        if self._session is None:
            self._session = self._new_session(self._connection_limit)
        return self._session

    def watch_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("client is closed")
        if self._watch_session is None:
            self._watch_session = self._new_session(0)
        return self._watch_session

    async def close(self) -> None:
        self._closed = True
        for s in (self._session, self._watch_session):
            if s is not None:
                await s.close()
        self._session = self._watch_session = None

    # -- credentials and TLS --------------------------------------------------------------------

    def _ssl_for(self, creds: Credentials) -> ssl.SSLContext | None:
        if not self._https:
            return None
        key = (creds.client_cert, creds.client_key)
        ctx = self._ssl.get(key)
        if ctx is None:
            if len(self._ssl) > 4:  # rotated certificates: keep only the newest few
                self._ssl.clear()
            ctx = make_ssl_context(ca_data=self.config.ca_data, insecure=self.config.insecure_skip_tls_verify,
                                   client_cert=creds.client_cert, client_key=creds.client_key,
                                   source=self.config.source)
            self._ssl[key] = ctx
        return ctx

    async def check(self) -> None:
        """Fetch credentials and build the TLS context now, so configuration errors (a failing exec
        plugin, a bad certificate) surface at start-up rather than on the first request."""
        self._ssl_for(await self.config.auth.credentials())

    async def _request_kwargs(self, headers: dict[str, str]) -> dict[str, Any]:
        creds = await self.config.auth.credentials()
        authz = creds.authorization()
        if authz:
            headers["Authorization"] = authz
        kw: dict[str, Any] = {"headers": headers}
        ctx = self._ssl_for(creds)
        if ctx is not None:
            kw["ssl"] = ctx
            if self.config.tls_server_name:
                kw["server_hostname"] = self.config.tls_server_name
        if self.config.proxy_url:
            kw["proxy"] = self.config.proxy_url
        return kw

    async def _request_kwargs_within(self, headers: dict[str, str], limits: aiohttp.ClientTimeout,
                                     what: str) -> tuple[dict[str, Any], aiohttp.ClientTimeout]:
        """`_request_kwargs`, with fetching credentials (an exec plugin may hang) counted against
        the request's timeout (`total`, or `connect` for streams); returns the time left."""
        budget = limits.total if limits.total is not None else limits.connect
        if budget is None:
            return await self._request_kwargs(headers), limits
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with asyncio.timeout(budget):
                kw = await self._request_kwargs(headers)
        except TimeoutError:
            raise RequestTimeoutError(f"{what}: timed out after {budget}s fetching credentials") from None
        if limits.total is None:
            return kw, limits
        left = max(limits.total - (loop.time() - started), 0.001)
        return kw, aiohttp.ClientTimeout(total=left, connect=limits.connect, sock_read=limits.sock_read)

    # -- requests -------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        request_timeout: float | None = None,
        throttle: bool = True,
    ) -> tuple[int, bytes]:
        """Send a request (with retries); return (status, body) of a 2xx answer or raise `ApiError`.

        ``throttle=False`` skips the client-side rate limiter for the first attempt (retries wait for
        it): for the continued pages of one LIST, which the limiter charged once (see `Client.list_page`).
        """
        started = time.monotonic()
        try:
            resp = await self._send(method, path, params=params, body=body, content_type=content_type,
                                    accept=accept, stream=False, request_timeout=request_timeout, throttle=throttle)
        finally:  # as client-go: every request's latency, failed ones and retries included
            REST_CLIENT.observe_latency(method, self._host, time.monotonic() - started)
        assert isinstance(resp, tuple)
        return resp

    async def open_stream(
        self,
        path: str,
        *,
        params: Params = None,
        accept: str = "application/json",
        inactivity_timeout: float | None = None,
        watch: bool = True,
        throttle: bool = True,
    ) -> aiohttp.ClientResponse:
        """Open a GET whose body is read incrementally (a watch; with ``watch=False`` a LIST read
        as it arrives, on the pooled session). The caller closes the response."""
        resp = await self._send("GET", path, params=params, body=None, content_type=None, accept=accept,
                                stream=True, inactivity_timeout=inactivity_timeout, watch=watch, throttle=throttle)
        assert isinstance(resp, aiohttp.ClientResponse)
        return resp

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Params,
        body: bytes | None,
        content_type: str | None,
        accept: str,
        stream: bool,
        request_timeout: float | None = None,
        inactivity_timeout: float | None = None,
        throttle: bool = True,
        watch: bool = True,
    ) -> tuple[int, bytes] | aiohttp.ClientResponse:
        url = self.config.server + path
        policy = self.retry
        attempt = 0
        reauthenticated = False
        session, client_timeout = self._session_for(stream, request_timeout, inactivity_timeout, watch)
        while True:
            attempt += 1
            if self.limiter is not None and (throttle or attempt > 1):
                await self.limiter.wait()
            headers = {"Accept": accept}
            if not self.compression:
                headers["Accept-Encoding"] = "identity"
            if content_type:
                headers["Content-Type"] = content_type
            kw, attempt_timeout = await self._request_kwargs_within(headers, client_timeout, f"{method} {url}")
            try:
                try:
                    resp = await session.request(method, url, params=params, data=body, timeout=attempt_timeout,
                                                 **kw)
                except BaseException:
                    REST_CLIENT.request_done(None, method, self._host)
                    raise
                REST_CLIENT.request_done(resp.status, method, self._host)
                if stream and resp.status < 300:
                    return resp
                try:
                    data = await resp.read()
                finally:
                    resp.release()
            except aiohttp.ClientSSLError as exc:
                raise ClientConnectionError(f"{method} {url}: TLS error: {exc}") from exc
            except (aiohttp.ClientConnectorError, aiohttp.ClientError, TimeoutError) as exc:
                await asyncio.sleep(self._retry_delay(method, url, exc, attempt, client_timeout))
                continue
            status = resp.status
            if status < 300:
                return status, data
            if status == 401 and not reauthenticated:
                # Rotating credentials (token files, exec plugins) may simply be stale: refresh once.
                reauthenticated = True
                self.config.auth.invalidate()
                attempt -= 1
                continue
            retry_after = parse_retry_after(resp.headers.get("Retry-After"))
            if attempt < policy.max_attempts and should_retry_status(method, status):
                delay = policy.delay(attempt, retry_after)
                log.debug("retrying %s %s in %.2fs after HTTP %d", method, url, delay, status)
                await asyncio.sleep(delay)
                continue
            raise error_from_response(status, data, retry_after=retry_after)

    def _session_for(self, stream: bool, request_timeout: float | None, inactivity_timeout: float | None,
                     watch: bool = True) -> tuple[aiohttp.ClientSession, aiohttp.ClientTimeout]:
        """Watches get their own session without a connection limit (each holds one open) and no
        total timeout, only an inactivity one; requests get the request timeout. A LIST read as
        it arrives takes a pooled connection and no total timeout (a large one takes as long as
        its bytes do), but fails after the request timeout without a byte."""
        if stream and watch:
            return self.watch_session(), aiohttp.ClientTimeout(total=None, connect=self.timeout,
                                                               sock_read=inactivity_timeout)
        if stream:
            return self.session(), aiohttp.ClientTimeout(total=None, connect=self.timeout,
                                                         sock_read=inactivity_timeout or self.timeout)
        timeout = self._request_timeout if request_timeout is None else aiohttp.ClientTimeout(total=request_timeout)
        return self.session(), timeout

    def _retry_delay(self, method: str, url: str, exc: BaseException, attempt: int,
                     client_timeout: aiohttp.ClientTimeout) -> float:
        """The wait before retrying after a connection failure, or the typed error to raise instead
        (a refused connection is safe to retry for any method; a cut one only for idempotent ones)."""
        connected = not isinstance(exc, aiohttp.ClientConnectorError)
        if attempt < self.retry.max_attempts and should_retry_connection_error(method, connected=connected):
            delay = self.retry.delay(attempt)
            log.debug("retrying %s %s in %.2fs after %r", method, url, delay, exc)
            return delay
        if isinstance(exc, TimeoutError):  # the total timeout, or no byte for sock_read seconds (a stream)
            limit = client_timeout.total if client_timeout.total is not None else client_timeout.sock_read
            raise RequestTimeoutError(f"{method} {url}: timed out after {limit}s") from exc
        raise ClientConnectionError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc
