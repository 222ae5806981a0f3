"""CustomResourceDefinitions: deletion conditions, deprecated versions and their warnings, Go
value semantics of custom resources, apply against a CRD schema."""

from __future__ import annotations

from typing import Any

from ..harness import Resp, Run
from .common import APPLY, MERGE, namespace

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd(group: str, **version_extra: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                     "versions": [
                         {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                             "type": "object", "properties": {"spec": {"type": "object", "properties": {
                                 "size": {"type": "integer"}, "weight": {"type": "number"},
                                 "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                                 "items": {"type": "array", "x-kubernetes-list-type": "map",
                                           "x-kubernetes-list-map-keys": ["key"],
                                           "items": {"type": "object", "required": ["key"], "properties": {
                                               "key": {"type": "string"}, "value": {"type": "string"}}}},
                                 "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
                                 "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}},
                          "subresources": {"status": {}}, **version_extra},
                         {"name": "v1beta1", "served": True, "storage": False, "deprecated": True,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}},
                         {"name": "v1alpha1", "served": True, "storage": False, "deprecated": True,
                          "deprecationWarning": "fd v1alpha1 Gadgets go away; move to v1",
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _established(resp: Resp) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (resp.obj.get("status") or {}).get("conditions") or [])


def _crd_view(resp: Resp) -> dict[str, Any]:
    """A CRD's status conditions without their times (what the scenario records of them)."""
    return {c.get("type"): [c.get("status"), c.get("reason"), c.get("message")]
            for c in (resp.obj.get("status") or {}).get("conditions") or []}


async def scenario_custom_resources(run: Run) -> None:
    ns = await namespace(run, "cr")
    group = f"{run.sfx}.fd.example.com"
    run.on_cleanup(f"{CRDS}/gadgets.{group}")
    await run.req("create crd", "POST", CRDS, crd(group), soft=("conditions",))
    await run.wait(f"{CRDS}/gadgets.{group}", _established)
    base = f"/apis/{group}/v1/namespaces/{ns}/gadgets"
    created = await run.req("create gadget", "POST", base, {"apiVersion": f"{group}/v1", "kind": "Gadget",
                                                              "metadata": {"name": "g"},
                                                              "spec": {"size": 1, "weight": 1, "free": {"x": True}}})
    first = await run.req("weight 1.0 over 1 bumps generation", "PATCH", f"{base}/g", {"spec": {"weight": 1.0}},
                          ctype=MERGE)
    second = await run.req("and again", "PATCH", f"{base}/g", {"spec": {"weight": 1.0}}, ctype=MERGE)
    run.fact("each 1.0 write is a new resourceVersion", len({created.rv, first.rv, second.rv}) == 3)
    await run.req("true to 1 is a change", "PATCH", f"{base}/g", {"spec": {"free": {"x": 1}}}, ctype=MERGE)
    same = await run.req("1 again is a no-op", "PATCH", f"{base}/g", {"spec": {"free": {"x": 1}}}, ctype=MERGE)
    after = await run.raw("GET", f"{base}/g")
    run.fact("no-op keeps the resourceVersion", after.rv == same.rv)
    await run.req("apply an undeclared field", "PATCH", f"{base}/a", {
        "apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "a"}, "spec": {"size": 2, "bogus": 1}},
        ctype=APPLY, query={"fieldManager": "alice"})
    await run.req("apply a duplicate set item", "PATCH", f"{base}/a", {
        "apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "a"}, "spec": {"tags": ["x", "x"]}},
        ctype=APPLY, query={"fieldManager": "alice"})
    await run.req("apply a map item without its key", "PATCH", f"{base}/a", {
        "apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "a"}, "spec": {"items": [{"value": "v"}]}},
        ctype=APPLY, query={"fieldManager": "alice"})
    await run.req("apply size as a string", "PATCH", f"{base}/a", {
        "apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "a"}, "spec": {"size": "2"}},
        ctype=APPLY, query={"fieldManager": "alice"})
    await run.req("apply gadget", "PATCH", f"{base}/a", {
        "apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "a"},
        "spec": {"size": 2, "items": [{"key": "k", "value": "v"}], "free": {"any": {"thing": [1]}}}},
        ctype=APPLY, query={"fieldManager": "alice"})
    await run.req("deprecated version (default warning)", "GET", f"/apis/{group}/v1beta1/namespaces/{ns}/gadgets/a")
    await run.req("deprecated version (its own warning)", "GET",
                  f"/apis/{group}/v1alpha1/namespaces/{ns}/gadgets", query={"limit": "1"})
    await run.req("deprecated version, a missing object", "GET", f"/apis/{group}/v1beta1/namespaces/{ns}/gadgets/nope")
    await run.req("status of a gadget", "PATCH", f"{base}/g/status", {"status": {"ready": True}}, ctype=MERGE)
    await run.req("delete crd (terminating)", "DELETE", f"{CRDS}/gadgets.{group}", soft=("conditions",))
    gone = await run.wait(f"{CRDS}/gadgets.{group}", lambda r: r.code == 404, within=60)
    run.fact("crd removed once its instances are gone", gone.code)


async def scenario_crd_deletion_conditions(run: Run) -> None:
    """The conditions a CRD goes through while its instances are removed: a finalizer on an instance
    holds the CRD in `Terminating` with `InstanceDeletionInProgress`, then the cleanup finishes."""
    ns = await namespace(run, "crdel")
    group = f"{run.sfx}.fdd.example.com"
    run.on_cleanup(f"{CRDS}/gadgets.{group}")
    await run.raw("POST", CRDS, crd(group))
    await run.wait(f"{CRDS}/gadgets.{group}", _established)
    base = f"/apis/{group}/v1/namespaces/{ns}/gadgets"
    await run.raw("POST", base, {"apiVersion": f"{group}/v1", "kind": "Gadget",
                                 "metadata": {"name": "held", "finalizers": ["fd.example.com/hold"]}})
    deleted = await run.raw("DELETE", f"{CRDS}/gadgets.{group}")
    run.fact("delete answers the CRD with its cleanup finalizer", deleted.obj.get("metadata", {}).get("finalizers"))
    held = await run.wait(f"{CRDS}/gadgets.{group}", lambda r: _crd_view(r).get("Terminating", [None, ""])[1] ==
                          "InstanceDeletionInProgress", within=30)
    run.fact("terminating while instances remain", _crd_view(held).get("Terminating"))
    await run.req("the instance is terminating", "GET", f"{base}/held")
    await run.req("new instances are refused", "POST", base, {"apiVersion": f"{group}/v1", "kind": "Gadget",
                                                               "metadata": {"name": "late"}})
    await run.req("release the finalizer", "PATCH", f"{base}/held", {"metadata": {"finalizers": None}}, ctype=MERGE)
    gone = await run.wait(f"{CRDS}/gadgets.{group}", lambda r: r.code == 404, within=60)
    run.fact("the CRD is removed", gone.code)
