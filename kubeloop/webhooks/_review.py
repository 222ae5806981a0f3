"""The AdmissionReview (admission.k8s.io/v1) a handler sees and the verdict it returns.

Plain data, no I/O: `AdmissionRequest` is the request as a handler reads it (typed objects when
the handler declared a `CustomResource` model, plain dicts otherwise), `Verdict` what a handler
answers, and `review_response` the AdmissionReview the server sends back.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import orjson

__all__ = ["AdmissionRequest", "GroupVersionKind", "GroupVersionResource", "Operation", "UserInfo", "Verdict",
           "allow", "deny", "review_response"]

T = TypeVar("T")
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
OPERATIONS: tuple[Operation, ...] = ("CREATE", "UPDATE", "DELETE", "CONNECT")


class ReviewError(ValueError):
    """A body that is not an AdmissionReview/ConversionReview request (answered 400)."""


class GroupVersionKind(NamedTuple):
    group: str
    version: str
    kind: str


class GroupVersionResource(NamedTuple):
    group: str
    version: str
    resource: str


def _triple(d: Mapping[str, Any] | None, third: str) -> tuple[str, str, str]:
    d = d or {}
    return str(d.get("group") or ""), str(d.get("version") or ""), str(d.get(third) or "")


@dataclass(frozen=True)
class UserInfo:
    """Who made the request (authentication.k8s.io/v1 UserInfo)."""

    username: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> UserInfo:
        d = d or {}
        extra = {str(k): tuple(str(x) for x in v or ()) for k, v in (d.get("extra") or {}).items()}
        return cls(str(d.get("username") or ""), str(d.get("uid") or ""),
                   tuple(str(g) for g in d.get("groups") or ()), extra)


@dataclass
class AdmissionRequest(Generic[T]):
    """One admission request: what is being done, to what, by whom.

    `object` is the object being written (None for DELETE), `old_object` the stored one (None for
    CREATE); both are instances of the handler's model when it declared one, else plain dicts.
    `warn(text)` adds a warning the client prints (kubectl shows `Warning: ...`).
    """

    uid: str
    operation: Operation
    kind: GroupVersionKind
    resource: GroupVersionResource
    sub_resource: str
    request_kind: GroupVersionKind
    request_resource: GroupVersionResource
    name: str
    namespace: str
    user_info: UserInfo
    object: T | None
    old_object: T | None
    dry_run: bool
    options: Mapping[str, Any]
    #: the AdmissionReview's `request` as received
    raw: Mapping[str, Any] = field(repr=False, default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def warn(self, text: str) -> None:
        """Send `text` back as a warning (shown by kubectl, logged by client-go)."""
        self.warnings.append(str(text))


@dataclass(frozen=True)
class Verdict:
    """A handler's answer: allowed, or denied with a message (and an HTTP code and reason)."""

    allowed: bool
    message: str = ""
    code: int = 200
    reason: str = ""
    warnings: tuple[str, ...] = ()


def allow(*warnings: str) -> Verdict:
    """Let the request through (with warnings the client shows)."""
    return Verdict(True, warnings=tuple(warnings))


def deny(message: str, *, code: int = 403, reason: str = "Forbidden", warnings: Sequence[str] = ()) -> Verdict:
    """Refuse the request. The client sees `admission webhook "<name>" denied the request: <message>`
    with HTTP `code` (at least 400: the API server raises anything lower to 400)."""
    return Verdict(False, str(message), int(code), str(reason), tuple(warnings))


def parse_review(body: bytes, kind: str) -> dict[str, Any]:
    """The `request` of an `<kind>` (AdmissionReview or ConversionReview) v1 body."""
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise ReviewError(f"the body is not JSON: {e}") from None
    if not isinstance(review, dict):
        raise ReviewError(f"expected a {kind} object")
    group = "admission.k8s.io" if kind == "AdmissionReview" else "apiextensions.k8s.io"
    if review.get("kind") != kind or review.get("apiVersion") not in (f"{group}/v1", f"{group}/v1beta1"):
        raise ReviewError(f"expected a {kind} of {group}/v1, got {review.get('apiVersion')}/{review.get('kind')}")
    request = review.get("request")
    if not isinstance(request, dict) or not request.get("uid"):
        raise ReviewError(f"the {kind} has no request (or no request.uid)")
    return request


def request_from_review(request: Mapping[str, Any], obj: T | None, old: T | None) -> AdmissionRequest[T]:
    op = str(request.get("operation") or "")
    if op not in OPERATIONS:
        raise ReviewError(f"unknown operation {op!r}")
    return AdmissionRequest(
        uid=str(request["uid"]), operation=op,
        kind=GroupVersionKind(*_triple(request.get("kind"), "kind")),
        resource=GroupVersionResource(*_triple(request.get("resource"), "resource")),
        sub_resource=str(request.get("subResource") or ""),
        request_kind=GroupVersionKind(*_triple(request.get("requestKind") or request.get("kind"), "kind")),
        request_resource=GroupVersionResource(*_triple(request.get("requestResource") or request.get("resource"),
                                                        "resource")),
        name=str(request.get("name") or ""), namespace=str(request.get("namespace") or ""),
        user_info=UserInfo.from_dict(request.get("userInfo")), object=obj, old_object=old,
        dry_run=bool(request.get("dryRun")), options=dict(request.get("options") or {}), raw=request)


def review_response(uid: str, verdict: Verdict, *, patch: list[dict[str, Any]] | None = None,
                    warnings: Sequence[str] = ()) -> bytes:
    """The AdmissionReview v1 answer to request `uid`."""
    response: dict[str, Any] = {"uid": uid, "allowed": verdict.allowed}
    if not verdict.allowed:
        response["status"] = {"code": max(verdict.code, 400), "message": verdict.message,
                              **({"reason": verdict.reason} if verdict.reason else {})}
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
    all_warnings = [*verdict.warnings, *warnings]
    if all_warnings:
        response["warnings"] = all_warnings
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
