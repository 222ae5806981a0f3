"""What the client presents to the API server, and the sources that produce it.

A source (`Auth`) hands out `Credentials` and may be told that the server rejected them (a 401), so
rotating credentials (service-account token files, exec plugins) are re-read or re-run. The client
asks for credentials before every request; cheap sources answer without awaiting anything slow.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from kubeloop.config._errors import ConfigError


@dataclass(frozen=True)
class Credentials:
    """One set of credentials. Client certificate and key are PEM bytes (kept in memory only).
    Secrets are left out of `repr()` so logging a config never leaks them."""

    token: str | None = field(default=None, repr=False)
    client_cert: bytes | None = field(default=None, repr=False)
    client_key: bytes | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    def authorization(self) -> str | None:
        """The `Authorization` header value, if these credentials use one."""
        if self.token:
            return f"Bearer {self.token}"
        if self.username is not None:
            raw = f"{self.username}:{self.password or ''}".encode()
            return "Basic " + base64.b64encode(raw).decode("ascii")
        return None


class Auth(Protocol):
    """A source of credentials."""

    async def credentials(self) -> Credentials:
        """Current credentials (may refresh them first)."""
        ...

    def invalidate(self) -> None:
        """The server answered 401 with the last credentials: refresh before the next request."""
        ...


class StaticAuth:
    """Credentials that never change (token or client certificate written in the kubeconfig)."""

    def __init__(self, creds: Credentials | None = None) -> None:
        self._creds = creds or Credentials()

    async def credentials(self) -> Credentials:
        return self._creds

    def invalidate(self) -> None:
        """Nothing to refresh: the next request sends the same credentials and gets 401 again."""


class TokenFileAuth:
    """A bearer token read from a file, re-read periodically and after a 401.

    Bound service-account tokens are rotated by the kubelet (about hourly), so a token read once at
    start-up stops working; client-go re-reads the file every minute, and so do we.
    """

    def __init__(self, path: str | Path, *, base: Credentials | None = None, reread_after: float = 60.0) -> None:
        self.path = Path(path)
        self._base = base or Credentials()
        self._reread_after = reread_after
        self._creds: Credentials | None = None
        self._read_at = 0.0

    def _read(self) -> Credentials:
        try:
            token = self.path.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"cannot read token file: {exc.strerror or exc}", source=str(self.path)) from None
        if not token:
            raise ConfigError("token file is empty", source=str(self.path))
        return replace(self._base, token=token)

    def current(self) -> Credentials:
        """Synchronous read used at load time (fails early on a missing file)."""
        now = time.monotonic()
        if self._creds is None or now - self._read_at >= self._reread_after:
            self._creds = self._read()
            self._read_at = now
        return self._creds

    async def credentials(self) -> Credentials:
        # A small local file: reading it inline is cheaper than a thread hop, and happens once a minute.
        return self.current()

    def invalidate(self) -> None:
        self._creds = None
