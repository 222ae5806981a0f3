"""Typed errors: one exception class per Kubernetes `Status` reason, plus transport failures.

Callers catch what they mean (`except NotFound`, `except Conflict`) instead of comparing codes.
Every `ApiError` keeps the server's `Status` dict in `.status`.
"""

from __future__ import annotations

from typing import Any

import orjson


def _code(value: Any) -> int:
    """An HTTP status code from untrusted input, or 0."""
    try:
        code = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return code if 100 <= code <= 599 else 0


class KubeloopClientError(Exception):
    """Base of every error the client raises."""


class ApiError(KubeloopClientError):
    """The API server answered with a failure `Status`."""

    code_default: int = 0

    def __init__(self, status: dict[str, Any], *, retry_after: float | None = None) -> None:
        self.status = status
        self.code: int = _code(status.get("code")) or self.code_default
        self.reason: str = str(status.get("reason") or "")
        self.message: str = str(status.get("message") or "")
        details = status.get("details")
        self.details: dict[str, Any] = details if isinstance(details, dict) else {}
        if retry_after is None and self.details.get("retryAfterSeconds") is not None:
            try:
                retry_after = float(self.details["retryAfterSeconds"])
            except (TypeError, ValueError):
                retry_after = None
        self.retry_after = retry_after
        super().__init__(f"{self.code} {self.reason or 'Unknown'}: {self.message}".rstrip(": "))


class BadRequest(ApiError):
    code_default = 400


class Unauthorized(ApiError):
    code_default = 401


class Forbidden(ApiError):
    code_default = 403


class NotFound(ApiError):
    code_default = 404


class MethodNotAllowed(ApiError):
    code_default = 405


class NotAcceptable(ApiError):
    code_default = 406


class AlreadyExists(ApiError):
    code_default = 409


class Conflict(ApiError):
    code_default = 409


class Gone(ApiError):
    """410: the resourceVersion (or continue token) is older than the server keeps (reason Expired or Gone)."""

    code_default = 410


Expired = Gone


class RequestEntityTooLarge(ApiError):
    code_default = 413


class UnsupportedMediaType(ApiError):
    code_default = 415


class Invalid(ApiError):
    """422: validation failed; `.causes` lists `{reason, message, field}` entries."""

    code_default = 422

    @property
    def causes(self) -> list[dict[str, Any]]:
        causes = self.details.get("causes")
        return list(causes) if isinstance(causes, list) else []


class TooManyRequests(ApiError):
    code_default = 429


class InternalError(ApiError):
    code_default = 500


class ServerTimeout(ApiError):
    """Reason ServerTimeout (code 500): the server could not finish in time; retry later."""

    code_default = 500


class ServiceUnavailable(ApiError):
    code_default = 503


class Timeout(ApiError):
    """504 / reason Timeout: the request did not complete within the server's deadline."""

    code_default = 504


class ClientConnectionError(KubeloopClientError):
    """The request never got an HTTP answer (connection refused/reset, TLS failure, timeout)."""


class RequestTimeoutError(ClientConnectionError):
    """The client-side timeout of a request elapsed."""


class WatchStreamError(KubeloopClientError):
    """A watch stream broke in a way that is not an API `Status` (raised after earlier events)."""


class MalformedWatchLine(WatchStreamError):
    """A line of a watch stream is not a valid watch event."""

    def __init__(self, message: str, line: bytes) -> None:
        shown = line[:200] + (b"..." if len(line) > 200 else b"")
        super().__init__(f"{message}: {shown!r}")
        self.line = line


class MalformedListResponse(KubeloopClientError):
    """A LIST response is not a valid list (raised after the items before the fault were returned)."""

    def __init__(self, message: str, data: bytes) -> None:
        shown = data[:200] + (b"..." if len(data) > 200 else b"")
        super().__init__(f"{message}: {shown!r}")
        self.data = data[:4096]


class UnknownResource(KubeloopClientError, LookupError):
    """The server does not serve the requested kind/resource (checked against fresh discovery)."""


class UnknownKind(UnknownResource):
    """A kind that can never be served: a built-in group/version (no dot in the group) is served and
    does not have it, and no CRD can add kinds to a built-in group. A typo, so nothing waits for it."""


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotAllowed,
    "NotAcceptable": NotAcceptable,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": Gone,
    "Expired": Gone,
    "RequestEntityTooLarge": RequestEntityTooLarge,
    "UnsupportedMediaType": UnsupportedMediaType,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": InternalError,
    "ServerTimeout": ServerTimeout,
    "ServiceUnavailable": ServiceUnavailable,
    "Timeout": Timeout,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    406: NotAcceptable, 409: Conflict, 410: Gone, 413: RequestEntityTooLarge, 415: UnsupportedMediaType,
    422: Invalid, 429: TooManyRequests, 500: InternalError, 503: ServiceUnavailable, 504: Timeout,
}

_REASON_FOR_CODE = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
    406: "NotAcceptable", 409: "Conflict", 410: "Gone", 413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
    503: "ServiceUnavailable", 504: "Timeout",
}


def error_class(reason: str, code: int) -> type[ApiError]:
    """The exception class for a Status reason (falling back on the HTTP code)."""
    cls = _BY_REASON.get(reason)
    if cls is None:
        cls = _BY_CODE.get(code)
        if cls is None:
            cls = InternalError if code >= 500 else BadRequest if code >= 400 else ApiError
    return cls


def error_from_status(status: dict[str, Any], *, code: int | None = None,
                      retry_after: float | None = None) -> ApiError:
    """Turn a `Status` dict (from a response body or a watch ERROR event) into its typed error."""
    c = _code(status.get("code")) or _code(code) or 500
    if _code(status.get("code")) != c:
        status = {**status, "code": c}
    return error_class(str(status.get("reason") or ""), c)(status, retry_after=retry_after)


def error_from_response(code: int, body: bytes, *, retry_after: float | None = None) -> ApiError:
    """Build the typed error for a failed HTTP response (Status body, or any other text)."""
    status: dict[str, Any] | None = None
    if body:
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            status = parsed
    if status is None:
        text = body.decode("utf-8", errors="replace").strip()[:500] if body else ""
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": text or f"HTTP {code}", "reason": _REASON_FOR_CODE.get(code, ""), "code": code}
    return error_from_status(status, code=code, retry_after=retry_after)
