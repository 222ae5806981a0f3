"""Exec credential plugins (`users[].user.exec`, client.authentication.k8s.io v1 and v1beta1).

The plugin is run as a subprocess; its stdout is an `ExecCredential` carrying a token or a client
certificate and, optionally, `expirationTimestamp`. The result is cached until it expires or until the
server answers 401, and concurrent requests share one run of the plugin.

A plugin that never exits (waiting for a login prompt nobody sees, a hung network call) must not hang
the program silently: a non-interactive run is killed after `timeout` seconds (`EXEC_TIMEOUT` unless
given) with `ExecPluginTimeout`, at start-up and at every refresh alike. Interactive runs (a user at a
terminal) get no deadline. A caller that gives up earlier (the client's request timeout) kills the
plugin too, so no run is left behind.
"""

from __future__ import annotations

import asyncio
import base64
import os
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
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command, *self.args, env=env,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=None if interactive else asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            hint = f" ({self.install_hint})" if self.install_hint else ""
            raise ExecPluginError(f"cannot run exec plugin {self.command!r}: {exc.strerror or exc}{hint}",
                                  source=self.source) from None
        out, err = await self._communicate(proc, interactive)
        if proc.returncode != 0:
            tail = (err or b"").decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise ExecPluginError(
                f"exec plugin {self.command!r} exited with code {proc.returncode}"
                + (f": {tail[0]}" if tail[0] else ""), source=self.source)
        self._creds, self._expires_at = self._parse(out)

    async def _communicate(self, proc: asyncio.subprocess.Process, interactive: bool) -> tuple[bytes, bytes]:
        """Wait for the plugin's output, killing it on timeout or when the caller gives up."""
        try:
            if interactive:
                return await proc.communicate()
            async with asyncio.timeout(self.timeout):
                return await proc.communicate()
        except TimeoutError:
            raise ExecPluginTimeout(
                f"exec plugin {self.command!r} did not exit within {self.timeout:g}s and was killed "
                "(is it waiting for input, or for a network that does not answer?)", source=self.source) from None
        finally:
            if proc.returncode is None:
                proc.kill()
                await asyncio.shield(proc.wait())

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
