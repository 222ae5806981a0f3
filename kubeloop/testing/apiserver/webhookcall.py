"""Calling a webhook as kube-apiserver does: the URL from a `clientConfig`, TLS checked against its
`caBundle`, a timeout, and failures described the way Go's HTTP client prints them.

Shared by admission (`admission.py`) and CRD conversion (`conversion.py`). A `clientConfig` with a
`url` is called there; one with a `service` is called at `https://<name>.<namespace>.svc:<port>`,
which outside a cluster does not resolve (the emulator runs no cluster DNS), as on a real API
server that cannot reach the Service. The caller's error (`CallError`) carries the text the real
server puts after `failed to call webhook: `.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import contextvars
import ssl
import urllib.parse
from collections.abc import Mapping
from typing import Any

import aiohttp
import orjson

__all__ = ["SYNCHRONOUS", "CallError", "WebhookCaller", "webhook_url"]

#: set while a registry flow runs synchronously (`registry.run_sync`: the emulator's own
#: controllers, bulk loads): a webhook cannot be called there, and the call is refused before any I/O
SYNCHRONOUS: contextvars.ContextVar[bool] = contextvars.ContextVar("kubeloop_emulator_sync", default=False)


class CallError(Exception):
    """The webhook could not be called or gave no usable answer; `str()` is the Go-style reason."""


def webhook_url(client_config: Mapping[str, Any]) -> str:
    """The URL a `clientConfig` names (without the `?timeout=` the API server adds)."""
    url = client_config.get("url")
    if url:
        return str(url)
    svc = client_config.get("service") or {}
    port = int(svc.get("port") or 443)
    path = str(svc.get("path") or "")
    host = f"{svc.get('name', '')}.{svc.get('namespace', '')}.svc"
    return f"https://{host}{'' if port == 443 else f':{port}'}{path}"


def _go_seconds(seconds: float) -> str:
    """Go's Duration.String() for whole seconds (`10s`, `1m0s`)."""
    s = int(seconds)
    return f"{s // 60}m{s % 60}s" if s >= 60 else f"{s}s"


class WebhookCaller:
    """One aiohttp session for every webhook call; one TLS context per distinct caBundle."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes, ssl.SSLContext] = {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _ssl(self, ca_bundle: Any) -> ssl.SSLContext:
        raw = b""
        if ca_bundle:
            try:
                raw = base64.b64decode(str(ca_bundle), validate=True)
            except (binascii.Error, ValueError):
                raise CallError("x509: malformed caBundle") from None
        ctx = self._contexts.get(raw)
        if ctx is None:
            ctx = ssl.create_default_context()
            if raw:
                try:
                    ctx = ssl.create_default_context(cadata=raw.decode("ascii", "replace"))
                except ssl.SSLError:
                    raise CallError("x509: unable to parse caBundle") from None
            if len(self._contexts) > 32:
                self._contexts.clear()
            self._contexts[raw] = ctx
        return ctx

    async def post(self, client_config: Mapping[str, Any], body: Mapping[str, Any], seconds: float) -> Any:
        """POST `body` as JSON; the decoded JSON answer. `CallError` on any failure."""
        if SYNCHRONOUS.get():
            raise CallError("the emulator cannot call a webhook on a synchronous path (its built-in controllers)")
        base = webhook_url(client_config)
        url = base + ("&" if "?" in base else "?") + "timeout=" + _go_seconds(seconds)
        shown = f'Post "{url}"'
        parsed = urllib.parse.urlsplit(base)
        if parsed.scheme != "https":
            raise CallError(f'{shown}: unsupported protocol scheme "{parsed.scheme}"')
        ctx = self._ssl(client_config.get("caBundle"))
        if self._session is None:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True))
        try:
            async with asyncio.timeout(seconds):
                async with self._session.post(url, data=orjson.dumps(body), ssl=ctx,
                                              headers={"Content-Type": "application/json",
                                                       "Accept": "application/json, */*"}) as resp:
                    data = await resp.read()
                    if resp.status >= 300:
                        raise CallError(f"the server responded with the status code {resp.status} but did not "
                                        "return more information")
        except TimeoutError:
            raise CallError(f"{shown}: context deadline exceeded") from None
        except aiohttp.ClientConnectorCertificateError as e:
            reason = _x509(e.certificate_error)
            if reason == UNKNOWN_AUTHORITY:
                reason += await _candidate_hint(parsed, client_config.get("caBundle"))
            raise CallError(f"{shown}: {reason}") from None
        except aiohttp.ClientConnectorError as e:
            raise CallError(f"{shown}: {_dial(e, parsed)}") from None
        except aiohttp.ClientError as e:
            raise CallError(f"{shown}: {e}") from None
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            raise CallError("couldn't get version/kind; json parse error: invalid character looking for beginning "
                            "of value") from None


UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"


def _x509(err: BaseException) -> str:
    text = str(err)
    if "unable to get local issuer certificate" in text or "self-signed certificate" in text \
            or "self signed certificate" in text or "unknown ca" in text.lower() \
            or "certificate signature failure" in text:
        return UNKNOWN_AUTHORITY
    if "Hostname mismatch" in text or "IP address mismatch" in text:
        return "x509: certificate is not valid for the requested host"
    if "expired" in text:
        return "x509: certificate has expired or is not yet valid"
    return f"x509: {text}"


async def _candidate_hint(url: urllib.parse.SplitResult, ca_bundle: Any) -> str:
    """Go's hint when a CA of the bundle has the issuer's name but did not sign the certificate:
    ` (possibly because of "x509: ECDSA verification failure" while trying to verify candidate
    authority certificate "<CN>")`; empty when none does (or the certificate cannot be read)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    try:
        bundle = x509.load_pem_x509_certificates(base64.b64decode(str(ca_bundle or "")))
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(url.hostname, url.port or 443, ssl=ctx), 5)
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.close()
        leaf = x509.load_der_x509_certificate(der)
    except (OSError, ValueError, TimeoutError):
        return ""
    for ca in bundle:
        if ca.subject == leaf.issuer:
            names = ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
            cn = str(names[0].value) if names else ""
            why = "x509: ECDSA verification failure" if isinstance(ca.public_key(), ec.EllipticCurvePublicKey) \
                else "crypto/rsa: verification error"
            return f' (possibly because of "{why}" while trying to verify candidate authority certificate "{cn}")'
    return ""


def _dial(err: aiohttp.ClientConnectorError, url: urllib.parse.SplitResult) -> str:
    host, port = url.hostname or "", url.port or 443
    os_err = err.os_error
    if isinstance(os_err, ConnectionRefusedError) or getattr(os_err, "errno", None) == 111:
        with contextlib.suppress(ValueError):
            return f"dial tcp {host}:{port}: connect: connection refused"
    if "Name or service not known" in str(err) or "nodename nor servname" in str(err) \
            or "Temporary failure in name resolution" in str(err):
        return f"dial tcp: lookup {host}: no such host"
    return f"dial tcp {host}:{port}: {os_err}"
