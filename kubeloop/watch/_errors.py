"""Classify list/watch failures into the few kinds the state machine acts on.

The machine never sees exceptions, only `WatchError` values, so it stays pure. Exceptions are
classified by duck typing (an integer `.code` or `.status`, optional `.retry_after`, `.reason`,
`.message`) so this module does not depend on the client package or its import order.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class ErrorKind(enum.Enum):
    """What a failure means for the watcher."""

    GONE = "Gone"  # 410 Expired / too large resource version: relist (quorum)
    NOT_FOUND = "NotFound"  # 404: the kind is not served (CRD not installed yet)
    FORBIDDEN = "Forbidden"  # 403: missing RBAC permission
    UNAUTHORIZED = "Unauthorized"  # 401: credentials rejected (may be refreshed)
    TOO_MANY_REQUESTS = "TooManyRequests"  # 429: honour Retry-After
    REJECTED = "Rejected"  # 400/422: the server refused the request's parameters
    SERVER = "Server"  # 5xx
    TRANSPORT = "Transport"  # connection refused/reset, broken stream
    TIMEOUT = "Timeout"  # no answer or no event within the deadline
    OTHER = "Other"  # anything else (kept retrying with backoff, and reported)


@dataclass(frozen=True, slots=True)
class WatchError:
    """A classified failure; `message` is the server's own words when it gave any."""

    kind: ErrorKind
    message: str
    code: int | None = None
    reason: str | None = None
    retry_after: float | None = None

    def __str__(self) -> str:
        code = f" {self.code}" if self.code is not None else ""
        return f"{self.kind.value}{code}: {self.message}"


_REASONS = {
    "Expired": ErrorKind.GONE,
    "Gone": ErrorKind.GONE,
    "NotFound": ErrorKind.NOT_FOUND,
    "Forbidden": ErrorKind.FORBIDDEN,
    "Unauthorized": ErrorKind.UNAUTHORIZED,
    "TooManyRequests": ErrorKind.TOO_MANY_REQUESTS,
    "BadRequest": ErrorKind.REJECTED,
    "Invalid": ErrorKind.REJECTED,
}

_TOO_LARGE_RV = "ResourceVersionTooLarge"


def kind_for(code: int | None, reason: str | None = None, message: str = "") -> ErrorKind:
    """The kind for an HTTP code (and `Status.reason`); the code wins when both are known."""
    if "too large resource version" in message.lower():
        # client-go treats this (a 504 from a lagging watch cache) like 410: relist from etcd.
        return ErrorKind.GONE
    if code is not None:
        if code == 410:
            return ErrorKind.GONE
        if code == 404:
            return ErrorKind.NOT_FOUND
        if code == 403:
            return ErrorKind.FORBIDDEN
        if code == 401:
            return ErrorKind.UNAUTHORIZED
        if code == 429:
            return ErrorKind.TOO_MANY_REQUESTS
        if code in (400, 422):
            return ErrorKind.REJECTED
        if code == 504 and reason == "Timeout":
            return ErrorKind.TIMEOUT
        if 500 <= code <= 599:
            return ErrorKind.SERVER
    if reason is not None and reason in _REASONS:
        return _REASONS[reason]
    return ErrorKind.OTHER


def _too_large_rv(details: Mapping[str, Any]) -> bool:
    """A 504 whose cause is ResourceVersionTooLarge: the cache lags our RV; client-go relists."""
    causes = details.get("causes")
    return isinstance(causes, list) and any(
        isinstance(c, Mapping) and c.get("reason") == _TOO_LARGE_RV for c in causes
    )


def classify_status(status: Any) -> WatchError:
    """Classify the `Status` object carried by a watch ERROR event."""
    if not isinstance(status, Mapping):
        return WatchError(ErrorKind.OTHER, f"watch ERROR event without a Status: {status!r}")
    raw_code = status.get("code")
    code = raw_code if isinstance(raw_code, int) else None
    reason = status.get("reason") if isinstance(status.get("reason"), str) else None
    message = str(status.get("message") or reason or "watch ERROR event")
    details = status.get("details")
    retry_after: float | None = None
    if isinstance(details, Mapping):
        ras = details.get("retryAfterSeconds")
        if isinstance(ras, int | float):
            retry_after = float(ras)
        if _too_large_rv(details):
            return WatchError(ErrorKind.GONE, message, code, reason, retry_after)
    return WatchError(kind_for(code, reason, message), message, code, reason, retry_after)


def _int_attr(exc: BaseException, name: str) -> int | None:
    value = getattr(exc, name, None)
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    return None


_TRANSPORT_NAMES = frozenset({
    "ClientConnectionError",  # kubeloop.client and aiohttp
    "ClientPayloadError",
    "ServerDisconnectedError",
    "ClientOSError",
    "WatchStreamError",  # kubeloop.client: a broken or malformed watch stream
})
_NAMED_KINDS = {
    "RequestTimeoutError": ErrorKind.TIMEOUT,  # kubeloop.client
    "UnknownKind": ErrorKind.REJECTED,  # kubeloop.client: a typo in a built-in group, never served
    "UnknownResource": ErrorKind.NOT_FOUND,  # kubeloop.client: discovery does not know the kind
}


def classify_exception(exc: BaseException) -> WatchError:
    """Classify an exception raised by a watch source (the client's `ApiError` family or I/O)."""
    code = _int_attr(exc, "status")  # aiohttp (and `.status` is the Status dict on kubeloop errors)
    if code is None:
        code = _int_attr(exc, "code")
    reason_attr = getattr(exc, "reason", None)
    reason = reason_attr if isinstance(reason_attr, str) else None
    message_attr = getattr(exc, "message", None)
    message = message_attr if isinstance(message_attr, str) and message_attr else str(exc)
    if not message:
        message = type(exc).__name__
    ra = getattr(exc, "retry_after", None)
    retry_after = float(ra) if isinstance(ra, int | float) and not isinstance(ra, bool) else None
    if code is not None or reason in _REASONS:
        details = getattr(exc, "details", None)
        if isinstance(details, Mapping) and _too_large_rv(details):
            return WatchError(ErrorKind.GONE, message, code, reason, retry_after)
        return WatchError(kind_for(code, reason, message), message, code, reason, retry_after)
    names = [cls.__name__ for cls in type(exc).__mro__]
    for name in names:
        if name in _NAMED_KINDS:
            return WatchError(_NAMED_KINDS[name], message)
    if isinstance(exc, TimeoutError):
        return WatchError(ErrorKind.TIMEOUT, message)
    if isinstance(exc, OSError | EOFError) or not _TRANSPORT_NAMES.isdisjoint(names):
        return WatchError(ErrorKind.TRANSPORT, message)
    return WatchError(ErrorKind.OTHER, f"{type(exc).__name__}: {message}")
