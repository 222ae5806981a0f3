"""Exec credential plugins (`users[].user.exec`, client.authentication.k8s.io v1 and v1beta1).

The plugin is run as a subprocess; its stdout is an `ExecCredential` carrying a token or a client
certificate and, optionally, `expirationTimestamp`. The result is cached until it expires or until the
server answers 401, and concurrent requests share one run of the plugin.

A plugin that never exits (waiting for a login prompt nobody sees, a hung network call) must not hang
the program silently: a non-interactive run is killed after `timeout` seconds (`EXEC_TIMEOUT` unless
given) with `ExecPluginTimeout`, at start-up and at every refresh alike. Interactive runs (a user at a
terminal) get no deadline. A caller that gives up earlier (the client's request timeout) kills the
plugin too, so no run is left behind. A non-interactive plugin runs in its own process group and
the kill takes the whole group: wrapper scripts start children that would otherwise outlive it and
keep its pipes open.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from typing import Any

import orjson

from kubeloop.config._credentials import Credentials
from kubeloop.config._errors import ExecPluginError, ExecPluginTimeout

SUPPORTED_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
# Refresh a little before the plugin says the credential expires, so an in-flight request does not
# arrive just after expiry.
EXPIRY_SKEW = 5.0
EXEC_TIMEOUT = 60.0
"""Seconds a non-interactive exec plugin may run (cloud CLIs usually answer within a few seconds)."""


PIPE_GRACE = 1.0
"""Seconds to wait, after the plugin exited, for the end of its output (a child of a wrapper
script may hold its stdout open; what the plugin itself printed has arrived by then)."""


class _PluginRun(asyncio.SubprocessProtocol):
    """One run of the plugin: its output, its exit and the end of its pipes, as futures.

    `loop.subprocess_exec` with this protocol (rather than `asyncio.create_subprocess_exec`) tells
    the process's exit apart from the end of its pipes: `Process.wait()` waits for both, and
    a pipe held by a grandchild made it wait forever after the plugin was killed.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.exited: asyncio.Future[None] = loop.create_future()
        self._open: dict[int, asyncio.Future[None]] = {1: loop.create_future(), 2: loop.create_future()}

    @property
    def pipes(self) -> list[asyncio.Future[None]]:
        """One future per pipe of ours (stdout, stderr when captured), done at its end."""
        return list(self._open.values())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        for fd in (1, 2):
            if transport.get_pipe_transport(fd) is None:  # not a pipe (an interactive stderr)
                self._open.pop(fd)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        buf = self.out if fd == 1 else self.err
        if fd == 1 or len(buf) < 65536:  # stderr only for the error message's last line
            buf.extend(data.encode() if isinstance(data, str) else data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        fut = self._open.get(fd)
        if fut is not None and not fut.done():
            fut.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


def parse_timestamp(value: str) -> float:
    """RFC 3339 timestamp -> POSIX seconds."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text).timestamp()


class ExecAuth:
    """Runs an exec plugin for credentials, caching them until `expirationTimestamp` or a 401."""

    def __init__(
        self,
        spec: dict[str, Any],
        *,
        source: str,
        cluster_info: dict[str, Any] | None = None,
        base: Credentials | None = None,
        timeout: float = EXEC_TIMEOUT,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"exec plugin timeout must be > 0 seconds, got {timeout!r}")
        self.timeout = timeout
        self.source = source
        self.api_version = str(spec.get("apiVersion") or "")
        if self.api_version not in SUPPORTED_API_VERSIONS:
            raise ExecPluginError(
                f"exec plugin apiVersion {self.api_version or '(missing)'!r} is not supported "
                f"(use one of {', '.join(SUPPORTED_API_VERSIONS)})", source=source)
        command = spec.get("command")
        if not command or not isinstance(command, str):
            raise ExecPluginError("exec plugin has no command", source=source)
        self.command = command
        self.args = [str(a) for a in (spec.get("args") or [])]
        self.env = {str(e["name"]): str(e.get("value", "")) for e in (spec.get("env") or []) if "name" in e}
        self.install_hint = str(spec.get("installHint") or "")
        mode = spec.get("interactiveMode")
        if not mode:
            if self.api_version.endswith("/v1"):
                raise ExecPluginError("exec plugin interactiveMode is required for client.authentication.k8s.io/v1",
                                      source=source)
            mode = "IfAvailable"
        if mode not in ("Never", "IfAvailable", "Always"):
            raise ExecPluginError(f"exec plugin interactiveMode {mode!r} is not one of Never, IfAvailable, Always",
                                  source=source)
        self.interactive_mode = str(mode)
        self.provide_cluster_info = bool(spec.get("provideClusterInfo"))
        self.cluster_info = cluster_info or {}
        self._base = base or Credentials()
        self._creds: Credentials | None = None
        self._expires_at: float | None = None
        self._lock = asyncio.Lock()
        self.runs = 0  # how many times the plugin was executed (observability, tests)

    def _interactive(self) -> bool:
        if self.interactive_mode == "Never":
            return False
        tty = sys.stdin is not None and sys.stdin.isatty()
        if self.interactive_mode == "Always" and not tty:
            raise ExecPluginError(
                f"exec plugin {self.command!r} needs an interactive terminal (interactiveMode Always) "
                "but standard input is not a terminal", source=self.source)
        return tty

    def _exec_info(self, interactive: bool) -> str:
        spec: dict[str, Any] = {"interactive": interactive}
        if self.provide_cluster_info:
            spec["cluster"] = self.cluster_info
        return orjson.dumps({"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}).decode()

    def _valid(self) -> bool:
        if self._creds is None:
            return False
        return self._expires_at is None or time.time() < self._expires_at - EXPIRY_SKEW

    async def credentials(self) -> Credentials:
        """The cached credential, or a fresh one from the plugin (raises `ExecPluginError`)."""
        if self._valid():
            assert self._creds is not None
            return self._creds
        async with self._lock:
            if not self._valid():
                await self._run()
            assert self._creds is not None
            return self._creds

    def invalidate(self) -> None:
        """Forget the cached credential (the server answered 401): the next request reruns the plugin."""
        self._creds = None

    async def _run(self) -> None:
        interactive = self._interactive()
        env = dict(os.environ)
        env.update(self.env)
        env["KUBERNETES_EXEC_INFO"] = self._exec_info(interactive)
        self.runs += 1
        loop = asyncio.get_running_loop()
        plugin = _PluginRun(loop)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: plugin, self.command, *self.args, env=env,
                stdin=None if interactive else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=None if interactive else subprocess.PIPE,
                # its own process group, so a timeout kills the wrappers' children too; an
                # interactive plugin stays in ours, where it can read the terminal
                start_new_session=not interactive,
            )
        except OSError as exc:
            hint = f" ({self.install_hint})" if self.install_hint else ""
            raise ExecPluginError(f"cannot run exec plugin {self.command!r}: {exc.strerror or exc}{hint}",
                                  source=self.source) from None
        await self._wait(transport, plugin, interactive)
        code = transport.get_returncode()
        if code != 0:
            tail = bytes(plugin.err).decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise ExecPluginError(
                f"exec plugin {self.command!r} exited with code {code}" + (f": {tail[0]}" if tail[0] else ""),
                source=self.source)
        self._creds, self._expires_at = self._parse(bytes(plugin.out))

    async def _wait(self, transport: asyncio.SubprocessTransport, plugin: _PluginRun, interactive: bool) -> None:
        """Wait until the plugin exits and its output is read, killing it on timeout or when the
        caller gives up. The pipes are waited for only briefly after the exit, and never after a
        kill: a child the plugin started (``sleep 30 &`` in a wrapper script) may hold them open."""
        try:
            try:
                if interactive:
                    await asyncio.shield(plugin.exited)
                else:
                    async with asyncio.timeout(self.timeout):
                        await asyncio.shield(plugin.exited)
            except TimeoutError:
                raise ExecPluginTimeout(
                    f"exec plugin {self.command!r} did not exit within {self.timeout:g}s and was killed "
                    "(is it waiting for input, or for a network that does not answer?)", source=self.source) from None
            await asyncio.wait(plugin.pipes, timeout=PIPE_GRACE)
        finally:
            if not plugin.exited.done():
                pid = transport.get_pid()
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if interactive:
                        transport.kill()
                    else:
                        os.killpg(pid, signal.SIGKILL)  # the plugin and everything it started
                await asyncio.shield(plugin.exited)
            transport.close()

    def _parse(self, out: bytes) -> tuple[Credentials, float | None]:
        where = f"exec plugin {self.command!r}"
        try:
            doc = orjson.loads(out)
        except orjson.JSONDecodeError as exc:
            raise ExecPluginError(f"{where} printed invalid JSON: {exc}", source=self.source) from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise ExecPluginError(f"{where} did not print an ExecCredential", source=self.source)
        if doc.get("apiVersion") != self.api_version:
            raise ExecPluginError(
                f"{where} returned apiVersion {doc.get('apiVersion')!r}, expected {self.api_version!r}",
                source=self.source)
        status = doc.get("status") or {}
        token = status.get("token") or None
        cert = status.get("clientCertificateData") or None
        key = status.get("clientKeyData") or None
        if bool(cert) != bool(key):
            raise ExecPluginError(f"{where} returned only one of clientCertificateData and clientKeyData",
                                  source=self.source)
        if not token and not cert:
            raise ExecPluginError(f"{where} returned neither a token nor a client certificate", source=self.source)
        expires: float | None = None
        if status.get("expirationTimestamp"):
            try:
                expires = parse_timestamp(str(status["expirationTimestamp"]))
            except ValueError:
                raise ExecPluginError(
                    f"{where} returned an invalid expirationTimestamp {status['expirationTimestamp']!r}",
                    source=self.source) from None
        creds = Credentials(
            token=token or self._base.token,
            client_cert=cert.encode() if cert else self._base.client_cert,
            client_key=key.encode() if key else self._base.client_key,
        )
        return creds, expires


def cluster_info_for_exec(cluster: dict[str, Any], ca_data: bytes | None) -> dict[str, Any]:
    """The `spec.cluster` object of KUBERNETES_EXEC_INFO (provideClusterInfo: true)."""
    info: dict[str, Any] = {"server": cluster.get("server", "")}
    if cluster.get("tls-server-name"):
        info["tls-server-name"] = cluster["tls-server-name"]
    if cluster.get("insecure-skip-tls-verify"):
        info["insecure-skip-tls-verify"] = True
    if ca_data:
        info["certificate-authority-data"] = base64.b64encode(ca_data).decode("ascii")
    if cluster.get("proxy-url"):
        info["proxy-url"] = cluster["proxy-url"]
    ext = {e.get("name"): e.get("extension") for e in (cluster.get("extensions") or []) if isinstance(e, dict)}
    if "client.authentication.k8s.io/exec" in ext:
        info["config"] = ext["client.authentication.k8s.io/exec"]
    return info
