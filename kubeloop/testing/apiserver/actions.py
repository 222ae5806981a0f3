"""Requests answered by an action rather than the generic storage flow: what kube-apiserver serves
from a REST handler of its own (`Connecter`s, `NamedCreater`s, reviews, computed lists).

`ACTIONS` maps (group, resource, subresource) to the handler; the HTTP layer calls it after
authentication, authorization and fault injection, as it would call the registry. The handlers
live beside the concept they serve: `podsubresources.py` (pods' log, exec, attach, port-forward,
proxy, binding and eviction, node and service proxies), `reviews.py` (TokenRequest, TokenReview
and the access reviews); component statuses are here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from . import errors
from .resources import ServedResource
from .shapes import Obj

if TYPE_CHECKING:
    from .rbac import Access
    from .registry import Registry


@dataclass
class Call:
    """One request to an action."""

    request: web.Request
    info: ServedResource
    namespace: str
    name: str
    subresource: str
    verb: str
    registry: Registry
    access: Access | None
    manager: str

    async def body(self) -> Obj:
        """The request body as a JSON object (400 as the real server words it otherwise)."""
        raw = await self.request.read()
        try:
            obj = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError:
            raise errors.bad_request(f"the object provided is unrecognized (must be of type {self.info.kind}): "
                                     "couldn't get version/kind; json parse error: invalid character") from None
        if not isinstance(obj, dict):
            raise errors.bad_request(f"the object provided is unrecognized (must be of type {self.info.kind})")
        return obj

    def dry_run(self) -> bool:
        return self.registry.check_dry_run(self.request.query.getall("dryRun", []), "CreateOptions")


Action = Callable[[Call], Awaitable[web.StreamResponse]]


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body) + b"\n", content_type="application/json")


def success(code: int = 201) -> web.Response:
    """The `Status` a NamedCreater answers with when it has no object to return."""
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code},
                         code)


# ---- component statuses ---------------------------------------------------------------------------

def _components(call: Call) -> list[Obj]:
    """What `/api/v1/componentstatuses` reports: etcd is the emulator's store (healthy); the
    controller manager is healthy when the emulator runs its controllers; there is no scheduler."""
    refused = 'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: connect: connection refused'
    cluster = call.registry.settings.cluster
    controller_manager = ({"type": "Healthy", "status": "True", "message": "ok"} if cluster else
                          {"type": "Healthy", "status": "False", "message": refused.format(port=10257)})
    return [
        {"metadata": {"name": "scheduler", "creationTimestamp": None}, "conditions": [
            {"type": "Healthy", "status": "False", "message": refused.format(port=10259)}]},
        {"metadata": {"name": "controller-manager", "creationTimestamp": None}, "conditions": [controller_manager]},
        {"metadata": {"name": "etcd-0", "creationTimestamp": None}, "conditions": [
            {"type": "Healthy", "status": "True", "message": '{"health":"true"}'}]},
    ]


async def component_statuses(call: Call) -> web.StreamResponse:
    from . import tables
    from .negotiation import TABLES, negotiate

    items = [{"kind": "ComponentStatus", "apiVersion": "v1", **item} for item in _components(call)]
    if call.name:
        items = [item for item in items if item["metadata"]["name"] == call.name]
        if not items:
            raise errors.StatusError(500, "", f"Component not found: {call.name}")
    mode = negotiate(call.request.headers.get("Accept"), is_list=not call.name, kind=call.info.kind)
    if mode in TABLES.values():
        version = next(v for v, m in TABLES.items() if m == mode)
        include = tables.include_object(call.request.query)
        return json_response(tables.table("", "componentstatuses", items, {}, include, version))
    if call.name:
        return json_response(items[0])
    return json_response({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                          "items": [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in items]})


def actions() -> dict[tuple[str, str, str], Action]:
    """Every action by (group, resource, subresource)."""
    from . import podsubresources as pods
    from . import reviews

    authz = "authorization.k8s.io"
    return {
        ("", "componentstatuses", ""): component_statuses,
        ("", "pods", "log"): pods.log,
        ("", "pods", "exec"): pods.stream,
        ("", "pods", "attach"): pods.stream,
        ("", "pods", "portforward"): pods.stream,
        ("", "pods", "proxy"): pods.pod_proxy,
        ("", "pods", "binding"): pods.binding,
        ("", "bindings", ""): pods.binding,
        ("", "pods", "eviction"): pods.eviction,
        ("", "nodes", "proxy"): pods.node_proxy,
        ("", "services", "proxy"): pods.service_proxy,
        ("", "serviceaccounts", "token"): reviews.token_request,
        ("authentication.k8s.io", "tokenreviews", ""): reviews.token_review,
        (authz, "subjectaccessreviews", ""): reviews.access_review,
        (authz, "localsubjectaccessreviews", ""): reviews.access_review,
        (authz, "selfsubjectaccessreviews", ""): reviews.access_review,
        (authz, "selfsubjectrulesreviews", ""): reviews.rules_review,
    }
