"""Kubernetes `Status` errors as the real kube-apiserver shapes them.

Every failure inside the emulator is raised as a `StatusError`; the HTTP layer turns it into a
`kind: Status` JSON body with the same code, reason and details a real server sends. Keeping the
builders in one place is what keeps the shapes consistent across handlers.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


class StatusError(Exception):
    """A failure that the server reports to the client as a `Status` object."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.retry_after = retry_after

    def status(self) -> dict[str, Any]:
        """The `Status` body for this error, its fields in the order Go encodes `metav1.Status`:
        kind, apiVersion, metadata, status, message, reason, details, code (an empty reason and
        absent details are omitted)."""
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": self.message}
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def encode_status(status: dict[str, Any], *, indented: bool = False) -> bytes:
    """A Status body as kube-apiserver writes it: compact JSON and a newline (Go's `json.Encoder`),
    or indented by two spaces without one (the serializer negotiated for Table and metadata)."""
    if indented:
        text = json.dumps(status, indent=2, ensure_ascii=False)
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()
    return orjson.dumps(status) + b"\n"


def _details(name: str | None, group: str, kind: str, causes: list[dict[str, str]] | None = None,
             retry_after: int | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name is not None:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = kind
    if causes is not None:
        d["causes"] = causes
    if retry_after is not None:
        d["retryAfterSeconds"] = retry_after
    return d


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, name: str, group: str = "") -> StatusError:
    """404 for a named object; `details.kind` is the resource (plural), as on the real server."""
    return StatusError(404, "NotFound", f'{_qualified(resource, group)} "{name}" not found',
                       _details(name, group, resource))


def already_exists(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(409, "AlreadyExists", f'{_qualified(resource, group)} "{name}" already exists',
                       _details(name, group, resource))


def conflict(resource: str, name: str, group: str = "", message: str | None = None) -> StatusError:
    """409 Conflict on a stale resourceVersion (optimistic concurrency)."""
    msg = message or (
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    return StatusError(409, "Conflict", msg, _details(name, group, resource))


def cause(reason: str, message: str, field: str) -> dict[str, str]:
    """One entry of `details.causes`."""
    return {"reason": reason, "message": message, "field": field}


def invalid(kind: str, name: str | None, causes: list[dict[str, str]], group: str = "") -> StatusError:
    """422 Invalid; `details.kind` is the Kind (e.g. `ConfigMap`), as on the real server."""
    shown = name if name else ""
    # like apimachinery's ErrorList.ToAggregate: identical messages are shown once
    texts = list(dict.fromkeys(f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes))
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    msg = f'{_qualified(kind, group)} "{shown}" is invalid: {text}'
    return StatusError(422, "Invalid", msg, _details(name if name else None, group, kind, causes))


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(message: str, details: dict[str, Any] | None = None) -> StatusError:
    return StatusError(403, "Forbidden", message, details)


def unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")


def method_not_allowed() -> StatusError:
    return StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", f'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got "{content_type}")')


def not_acceptable(message: str) -> StatusError:
    return StatusError(406, "NotAcceptable", message)


def expired(message: str) -> StatusError:
    """410 Expired: the requested resourceVersion is older than the retained history."""
    return StatusError(410, "Expired", message)


def server_timeout(message: str, details: dict[str, Any] | None = None, retry_after: int | None = None) -> StatusError:
    return StatusError(504, "Timeout", message, details, retry_after=retry_after)


def internal_error(message: str) -> StatusError:
    return StatusError(500, "InternalError", message)
