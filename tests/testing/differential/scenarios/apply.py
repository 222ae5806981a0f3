"""Server-side apply on built-in kinds: fields the schema does not declare, wrong types, duplicate
and key-less list items, list-map keys with defaults, conflicts and force, managers stripped by an
update, Go value semantics in apply."""

from __future__ import annotations

from typing import Any

from ..harness import Run
from .common import APPLY, MERGE, namespace


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "c", "image": "nginx:1.25"}])
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}},
                     **spec}}


async def scenario_apply_schema(run: Run) -> None:
    ns = await namespace(run, "ssa")
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    deps = f"/apis/apps/v1/namespaces/{ns}/deployments"
    q = {"fieldManager": "alice"}

    async def apply(step: str, path: str, body: Any, soft: tuple[str, ...] = (), **extra: str) -> Any:
        return await run.req(step, "PATCH", path, body, ctype=APPLY, query={**q, **extra}, soft=soft)

    await apply("apply configmap with a misspelt field", f"{cms}/c1",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "dta": {"a": "b"}})
    await run.req("nothing was created", "GET", f"{cms}/c1")
    await apply("apply configmap data not a string", f"{cms}/c1",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"a": 1}})
    await apply("apply configmap immutable not a bool", f"{cms}/c1",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "immutable": "yes"})
    await apply("apply configmap data a list", f"{cms}/c1",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": ["a"]})
    await apply("apply configmap", f"{cms}/c1",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1", "labels": {"a": "1"}},
                 "data": {"k": "v"}})
    await apply("apply deployment replica typo", f"{deps}/d1", {**deployment("d1"), "spec": {
        **deployment("d1")["spec"], "replica": 2}})
    await apply("apply deployment several errors", f"{deps}/d1", deployment(
        "d1", replicas="2", containers=[{"name": "c", "image": "x", "bogus": 1}, {"name": "c", "image": "y"}]),
        soft=("message:lines",))  # the errors come in Go's map order
    await apply("apply deployment duplicate ports with a defaulted key", f"{deps}/d1", deployment(
        "d1", containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80},
                                                               {"containerPort": 80, "protocol": "TCP"}]}]))
    await apply("apply deployment port list without its key", f"{deps}/d1", deployment(
        "d1", containers=[{"name": "c", "image": "x", "ports": [{"name": "web"}]}]))
    await apply("apply deployment finalizers with a map", f"{deps}/d1", {**deployment("d1"), "metadata": {
        "name": "d1", "finalizers": [{"a": 1}]}})
    created = await apply("apply deployment", f"{deps}/d1", deployment(
        "d1", replicas=2, containers=[{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                                       "env": [{"name": "A", "value": "1"}]}]))
    await apply("reapply identical", f"{deps}/d1", deployment(
        "d1", replicas=2, containers=[{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                                       "env": [{"name": "A", "value": "1"}]}]))
    again = await run.raw("GET", f"{deps}/d1")
    run.fact("identical reapply keeps the resourceVersion", again.rv == created.rv)
    await run.req("bob applies replicas (conflict)", "PATCH", f"{deps}/d1", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}, "spec": {"replicas": 3}},
        ctype=APPLY, query={"fieldManager": "bob"})
    await run.req("bob forces replicas", "PATCH", f"{deps}/d1", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}, "spec": {"replicas": 3}},
        ctype=APPLY, query={"fieldManager": "bob", "force": "true"})
    await run.req("bob applies a port by key (containerPort only)", "PATCH", f"{deps}/d1", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}, "spec": {"template": {"spec": {
            "containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "web"}]}]}}}},
        ctype=APPLY, query={"fieldManager": "bob"})
    await apply("alice drops env", f"{deps}/d1", deployment(
        "d1", replicas=2, containers=[{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]))
    await run.req("an update takes a field", "PATCH", f"{deps}/d1",
                  {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}},
                  ctype="application/strategic-merge-patch+json", query={"fieldManager": "kubectl-edit"})
    await run.req("managers stripped by an update", "PATCH", f"{deps}/d1",
                  {"metadata": {"managedFields": [{}]}}, ctype=MERGE)
    await apply("apply after the managers were stripped", f"{deps}/d1", deployment("d1", replicas=4))
    await run.req("apply with force on a non-apply patch", "PATCH", f"{deps}/d1", {"spec": {"replicas": 1}},
                  ctype=MERGE, query={"force": "true"})
    await run.req("apply without fieldManager", "PATCH", f"{deps}/d1", deployment("d1"), ctype=APPLY)


async def scenario_apply_values(run: Run) -> None:
    ns = await namespace(run, "ssav")
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    q = {"fieldManager": "alice"}
    await run.req("apply yaml body", "PATCH", f"{cms}/y1",
                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\ndata:\n  a: 'true'\n  b: '1'\n",
                  ctype=APPLY, query=q)
    await run.req("apply yaml with unquoted values", "PATCH", f"{cms}/y2",
                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y2\ndata:\n  a: true\n", ctype=APPLY, query=q)
    await run.req("apply null removes nothing it never owned", "PATCH", f"{cms}/y1",
                  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y1"}, "data": {"a": "true",
                                                                                                  "c": None}},
                  ctype=APPLY, query=q)
    await run.req("apply wrong kind", "PATCH", f"{cms}/y3", {"apiVersion": "v1", "kind": "Secret",
                                                             "metadata": {"name": "y3"}}, ctype=APPLY, query=q)
    await run.req("apply name mismatch", "PATCH", f"{cms}/y4", {"apiVersion": "v1", "kind": "ConfigMap",
                                                                "metadata": {"name": "other"}}, ctype=APPLY, query=q)
    await run.req("apply to status of a configmap", "PATCH", f"{cms}/y1/status", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y1"}}, ctype=APPLY, query=q)
    svcs = f"/api/v1/namespaces/{ns}/services"
    await run.req("apply service ports keyed by port and defaulted protocol", "PATCH", f"{svcs}/s1", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"},
        "spec": {"selector": {"app": "s"}, "ports": [{"port": 80, "name": "http"}, {"port": 80, "protocol": "UDP",
                                                                                     "name": "dns"}]}},
        ctype=APPLY, query=q)
    await run.req("apply service duplicate port and protocol", "PATCH", f"{svcs}/s2", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s2"},
        "spec": {"ports": [{"port": 80, "name": "a"}, {"port": 80, "protocol": "TCP", "name": "b"}]}},
        ctype=APPLY, query=q)
