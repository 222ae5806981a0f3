"""TokenRequest, TokenReview and the authorization reviews, answered from the emulator's own
authenticators (`authn.py`) and RBAC (`rbac.py`), as kube-apiserver answers them.

Reviews are not stored: a create answers 201 with the review and its `status` (who a token is;
whether a user may do something and which binding says so; every rule a user has in a namespace).
"""

from __future__ import annotations

import copy
import time
from typing import Any

from aiohttp import web

from . import errors
from .actions import Call, json_response
from .authn import API_AUDIENCES, CURRENT_USER, AuthenticationError, User
from .errors import StatusError, cause
from .managedfields import record_update
from .objectmeta import now_rfc3339
from .rbac import Attributes
from .shapes import Obj

MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
DEFAULT_EXPIRATION = 3600


def _review_invalid(fld: str, message: str, kind: str = "") -> StatusError:
    """A review's 422: the internal validation names no kind (`.authorization.k8s.io ""`)."""
    group = "authorization.k8s.io"
    details: dict[str, Any] = {"group": group, "causes": [cause("FieldValueInvalid", message, fld)]}
    if kind:
        details["kind"] = kind
    return StatusError(422, "Invalid", f'{kind}.{group} "" is invalid: {fld}: {message}', details)


def _with_managed_fields(call: Call, review: Obj, subresource: str = "") -> None:
    if call.manager:
        record_update(call.info, review, None, call.manager, subresource)


def _caller(call: Call) -> User:
    user = CURRENT_USER.get()
    if user is None:
        raise errors.unauthorized()
    return user


# ---- TokenRequest -----------------------------------------------------------------------------------

async def token_request(call: Call) -> web.StreamResponse:
    """`POST serviceaccounts/<name>/token`: a token for the ServiceAccount (bound to a Pod or Secret)."""
    body = await call.body()
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds")
    seconds = DEFAULT_EXPIRATION if seconds is None else int(seconds)
    fld = "spec.expirationSeconds"
    for bad, text in ((seconds < MIN_EXPIRATION, "may not specify a duration less than 10 minutes"),
                      (seconds > MAX_EXPIRATION, "may not specify a duration larger than 2^32 seconds")):
        if bad:
            msg = f"Invalid value: {seconds}: {text}"
            raise StatusError(422, "Invalid", f'TokenRequest.authentication.k8s.io "" is invalid: {fld}: {msg}',
                              {"group": "authentication.k8s.io", "kind": "TokenRequest",
                               "causes": [cause("FieldValueInvalid", msg, fld)]})
    audiences = tuple(spec.get("audiences") or API_AUDIENCES)
    sa = call.registry.bucket(call.info).objects.get((call.namespace, call.name))
    if sa is None:
        raise errors.not_found("serviceaccounts", call.name)
    bound = None
    ref = spec.get("boundObjectRef")
    if isinstance(ref, dict):
        kind = ref.get("kind")
        resource = {"Pod": "pods", "Secret": "secrets"}.get(str(kind))
        if resource is None:
            raise errors.bad_request(f"cannot bind token to object of type {kind}")
        info = call.registry.catalog.lookup("", "v1", resource)
        assert info is not None
        obj = call.registry.bucket(info).objects.get((call.namespace, str(ref.get("name") or "")))
        if obj is None:
            raise errors.not_found(resource, str(ref.get("name") or ""))
        uid = obj.obj["metadata"]["uid"]
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.conflict(resource, str(ref.get("name")), message=(
                f'Operation cannot be fulfilled on {resource} "{ref.get("name")}": the UID in the bound object '
                f"reference ({ref['uid']}) does not match the UID in record. The object might have been deleted "
                "and then recreated"))
        bound = {"kind": kind, "name": ref.get("name"), "uid": uid}
        spec["boundObjectRef"] = {**ref, "uid": uid}
    assert call.access is not None
    token, expires = call.access.authenticator.mint(call.namespace, call.name, audiences=audiences,
                                                    expiration=seconds, bound=bound)
    review: Obj = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                   "metadata": {"name": call.name, "namespace": call.namespace, "creationTimestamp": now_rfc3339()},
                   "spec": {"audiences": list(audiences), "expirationSeconds": seconds,
                            "boundObjectRef": spec.get("boundObjectRef")},
                   "status": {"token": token, "expirationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                  time.gmtime(expires))}}
    review["metadata"]["managedFields"] = [{"manager": call.manager, "operation": "Update",
                                            "apiVersion": "authentication.k8s.io/v1", "time": now_rfc3339(),
                                            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {
                                                "f:audiences": {}, "f:expirationSeconds": {}}},
                                            "subresource": "token"}]
    return json_response(review, 201)


# ---- TokenReview ------------------------------------------------------------------------------------

async def token_review(call: Call) -> web.StreamResponse:
    body = await call.body()
    spec = body.get("spec") or {}
    token = spec.get("token") or ""
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    assert call.access is not None
    wanted = tuple(spec.get("audiences") or ())
    review: Obj = {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                   "metadata": {"creationTimestamp": None}, "spec": copy.deepcopy(spec)}
    try:
        user, audiences = call.access.authenticator.token(token, wanted or API_AUDIENCES)
        review["status"] = {"authenticated": True, "user": user.to_json(), "audiences": list(audiences)}
    except AuthenticationError as e:
        review["status"] = {"user": {}, "error": str(e)}
    _with_managed_fields(call, review)
    review["metadata"].setdefault("creationTimestamp", None)
    return json_response(review, 201)


# ---- access reviews ---------------------------------------------------------------------------------

def _attributes(spec: Obj) -> Attributes:
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(non, dict) and res is None:
        return Attributes(str(non.get("verb") or ""), str(non.get("path") or ""))
    res = res or {}
    return Attributes(str(res.get("verb") or ""), "", True, str(res.get("group") or ""),
                      str(res.get("version") or ""), str(res.get("resource") or ""),
                      str(res.get("subresource") or ""), str(res.get("name") or ""), str(res.get("namespace") or ""))


async def access_review(call: Call) -> web.StreamResponse:
    """SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectAccessReview."""
    body = await call.body()
    spec: Obj = copy.deepcopy(body.get("spec") or {})
    kind = call.info.kind
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (res is None) == (non is None):
        raise _review_invalid("spec.resourceAttributes", 'Invalid value: "null": exactly one of '
                                                         "nonResourceAttributes or resourceAttributes must be specified")
    if kind == "SelfSubjectAccessReview":
        user = _caller(call)
    else:
        if not spec.get("user") and not spec.get("groups"):
            raise _review_invalid("spec.user", 'Invalid value: "": at least one of user or group must be specified')
        extra = {k: tuple(v) for k, v in (spec.get("extra") or {}).items()}
        user = User(str(spec.get("user") or ""), str(spec.get("uid") or ""), tuple(spec.get("groups") or ()), extra)
    meta: Obj = {"creationTimestamp": None}
    if kind == "LocalSubjectAccessReview":
        ns = (res or {}).get("namespace") if res is not None else None
        if res is not None and ns != call.namespace:
            raise _review_invalid("spec.resourceAttributes.namespace",
                                  f'Invalid value: "{ns or ""}": must match metadata.namespace')
        meta = {"namespace": call.namespace, "creationTimestamp": None}
    assert call.access is not None
    decision = call.access.decide(user, _attributes(spec))
    status: Obj = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    elif decision.errors:
        status["reason"] = "RBAC: " + ", ".join(decision.errors)
    review: Obj = {"kind": kind, "apiVersion": "authorization.k8s.io/v1", "metadata": meta, "spec": spec,
                   "status": status}
    _with_managed_fields(call, review)
    return json_response(review, 201)


def _review_rules(rules: list[Any]) -> tuple[list[Obj], list[Obj]]:
    resource_rules, non_resource_rules = [], []
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        if rule.get("resources"):
            entry: Obj = {"verbs": list(rule.get("verbs") or [])}
            if rule.get("apiGroups"):
                entry["apiGroups"] = list(rule["apiGroups"])
            entry["resources"] = list(rule["resources"])
            if rule.get("resourceNames"):
                entry["resourceNames"] = list(rule["resourceNames"])
            resource_rules.append(entry)
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": list(rule.get("verbs") or []),
                                       "nonResourceURLs": list(rule["nonResourceURLs"])})
    return resource_rules, non_resource_rules


async def rules_review(call: Call) -> web.StreamResponse:
    """SelfSubjectRulesReview: every rule the caller has in `spec.namespace`."""
    body = await call.body()
    namespace = (body.get("spec") or {}).get("namespace") or ""
    if not namespace:
        raise errors.bad_request("no namespace on request")
    user = _caller(call)
    assert call.access is not None
    if user.admin:
        rules: list[Any] = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                            {"verbs": ["*"], "nonResourceURLs": ["*"]}]
        problems: list[str] = []
    else:
        rules, problems = call.access.rules_for(user, namespace)
    resource_rules, non_resource_rules = _review_rules(rules)
    status: Obj = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    if problems:
        status["evaluationError"] = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    return json_response({"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                          "metadata": {"creationTimestamp": None}, "spec": {}, "status": status}, 201)
