"""CRD lifecycle in the emulator: served after create, Established, cleaned up after delete."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from kubeloop.testing import APIServer
from tests.testing.conftest import Http

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                               "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


async def _until(pred: Callable[[], Awaitable[bool]]) -> bool:
    for _ in range(150):
        if await pred():
            return True
        await asyncio.sleep(0.02)
    return False


async def test_crd_served_established_then_cleaned_up(server: APIServer, http: Http) -> None:
    code, _ = await http.post(CRDS, CRD)
    assert code == 201

    async def established() -> bool:
        _, crd = await http.get(CRDS + "/widgets.example.com")
        return any(c["type"] == "Established" and c["status"] == "True"
                   for c in (crd.get("status") or {}).get("conditions") or [])
    assert await _until(established)
    code, _ = await http.post(WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": "w"}, "spec": {"size": 1}})
    assert code == 201
    code, lst = await http.get(WIDGETS)
    assert code == 200 and lst["items"][0]["kind"] == "Widget"
    watch = asyncio.create_task(http.watch(WIDGETS, 10, resourceVersion=lst["metadata"]["resourceVersion"]))
    await asyncio.sleep(0.05)
    code, crd = await http.req("DELETE", CRDS + "/widgets.example.com")
    assert code == 200 and "customresourcecleanup.apiextensions.k8s.io" in crd["metadata"]["finalizers"]

    async def crd_gone() -> bool:
        code, _ = await http.get(CRDS + "/widgets.example.com")
        return code == 404
    assert await _until(crd_gone)
    events = await asyncio.wait_for(watch, 3)  # the CR's deletion, then the stream ends
    assert [e["type"] for e in events] == ["DELETED"]
    code, _ = await http.get(WIDGETS)
    assert code == 404
    code, groups = await http.get("/apis")
    assert "example.com" not in [g["name"] for g in groups["groups"]]


async def test_conflicting_names_are_not_accepted(http: Http) -> None:
    await http.post(CRDS, CRD)
    other = {**CRD, "metadata": {"name": "gadgets.example.com"},
             "spec": {**CRD["spec"], "names": {"plural": "gadgets", "kind": "Widget"}}}
    code, _ = await http.post(CRDS, other)
    assert code == 201

    async def refused() -> bool:
        _, crd = await http.get(CRDS + "/gadgets.example.com")
        conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
        return conds == {"NamesAccepted": "False", "Established": "False"}
    assert await _until(refused)
    code, _ = await http.get("/apis/example.com/v1/namespaces/default/gadgets")
    assert code == 404
