"""Kind-specific behaviour through real HTTP: CRD versions in discovery, the two Event APIs,
Deployment /scale, Secret stringData."""

from __future__ import annotations

import asyncio
import copy

from kubeloop.testing import APIServer
from tests.testing.conftest import Http

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {"size": {"type": "integer"},
                                              "color": {"type": "string", "default": "blue"}}}}}}


def multi_version_crd() -> dict:
    versions = [{"name": n, "served": served, "storage": n == "v1", "schema": SCHEMA}
                for n, served in (("v1", True), ("v2", True), ("v3", False))]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gizmos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "versions": versions,
                     "names": {"plural": "gizmos", "kind": "Gizmo"}}}


async def _wait_served(http: Http, path: str) -> None:
    for _ in range(200):
        code, _ = await http.get(path)
        if code == 200:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never served")


async def test_crd_versions_share_objects_and_discovery(server: APIServer, http: Http) -> None:
    code, created = await http.post(CRDS, multi_version_crd())
    assert code == 201, created
    assert created["spec"]["names"]["listKind"] == "GizmoList"
    await _wait_served(http, "/apis/example.com/v2")
    code, group = await http.get("/apis/example.com")
    assert code == 200
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"]["version"] == "v2"
    code, doc = await http.get("/apis/example.com/v2")
    assert code == 200 and [r["name"] for r in doc["resources"]] == ["gizmos"]
    assert doc["resources"][0]["singularName"] == "gizmo"
    code, _ = await http.get("/apis/example.com/v3/namespaces/default/gizmos")
    assert code == 404
    body = {"apiVersion": "example.com/v2", "kind": "Gizmo", "metadata": {"name": "g"},
            "spec": {"size": 1, "junk": True}}
    code, made = await http.post("/apis/example.com/v2/namespaces/default/gizmos", body)
    assert code == 201, made
    assert made["apiVersion"] == "example.com/v2" and made["spec"] == {"size": 1, "color": "blue"}
    code, via_v1 = await http.get("/apis/example.com/v1/namespaces/default/gizmos/g")
    assert code == 200 and via_v1["apiVersion"] == "example.com/v1" and via_v1["spec"]["size"] == 1
    code, lst = await http.get("/apis/example.com/v1/namespaces/default/gizmos")
    assert code == 200 and [i["kind"] for i in lst["items"]] == ["Gizmo"]
    code, err = await http.post("/apis/example.com/v1/namespaces/default/gizmos",
                                dict(body, apiVersion="example.com/v1", metadata={"name": "h"}, spec={"size": "x"}))
    assert code == 422 and err["details"]["causes"][0]["field"] == "spec.size"


async def test_events_through_both_apis(server: APIServer, http: Http) -> None:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "namespace": "default", "uid": "u-1"}
    new = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"},
           "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl",
           "reportingInstance": "ctl-1", "action": "Reconcile", "reason": "Synced", "regarding": ref,
           "note": "synced it", "type": "Normal"}
    code, out = await http.post("/apis/events.k8s.io/v1/namespaces/default/events", new)
    assert code == 201, out
    code, core = await http.get("/api/v1/namespaces/default/events/e1")
    assert code == 200 and core["message"] == "synced it" and core["involvedObject"] == ref
    assert core["reportingComponent"] == "example.com/ctl" and core["firstTimestamp"] is None
    old = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2"}, "involvedObject": ref,
           "reason": "Created", "message": "m", "count": 2}
    code, _ = await http.post("/api/v1/namespaces/default/events", old)
    assert code == 201
    code, lst = await http.get("/apis/events.k8s.io/v1/namespaces/default/events",
                               fieldSelector="regarding.name=cfg,reason=Created")
    assert code == 200 and [i["metadata"]["name"] for i in lst["items"]] == ["e2"]
    assert lst["items"][0]["deprecatedCount"] == 2 and lst["items"][0]["note"] == "m"
    code, err = await http.get("/api/v1/namespaces/default/events", fieldSelector="bogus=1")
    assert code == 400 and err["message"] == "field label not supported: bogus"


async def test_deployment_scale_and_secret_string_data(server: APIServer, http: Http) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    base = "/apis/apps/v1/namespaces/default/deployments"
    code, made = await http.post(base, dep)
    assert code == 201 and made["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    code, scale = await http.get(base + "/web/scale")
    assert code == 200 and scale["spec"] == {"replicas": 1} and scale["status"]["selector"] == "app=web"
    scale = copy.deepcopy(scale)
    scale["spec"]["replicas"] = 4
    code, out = await http.req("PUT", base + "/web/scale", scale)
    assert code == 200 and out["spec"] == {"replicas": 4}
    code, after = await http.get(base + "/web")
    assert after["spec"]["replicas"] == 4 and after["metadata"]["generation"] == 2
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"user": "root"}}
    code, s = await http.post("/api/v1/namespaces/default/secrets", secret)
    assert code == 201 and s["data"] == {"user": "cm9vdA=="} and "stringData" not in s and s["type"] == "Opaque"


async def test_object_meta_rules_are_the_kinds_own(server: APIServer, http: Http) -> None:
    """Each kind's strategy alone validates ObjectMeta, with the real server's per-kind rules."""
    code, err = await http.post("/api/v1/namespaces/default/services",
                                {"metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}})
    assert code == 422 and "DNS-1035 label" in err["details"]["causes"][0]["message"]
    assert len(err["details"]["causes"]) == 1
    # core/v1 Events do not validate ObjectMeta; events.k8s.io errors name the internal (core) kind
    code, _ = await http.post("/api/v1/namespaces/default/events",
                              {"metadata": {"name": "Not_A_Subdomain"}, "involvedObject": {"namespace": "default"}})
    assert code == 201
    new = {"metadata": {"name": "Bad_Name"}, "eventTime": "2024-01-01T00:00:00.000000Z",
           "reportingController": "c", "reportingInstance": "i", "action": "a", "reason": "r", "type": "Normal"}
    code, err = await http.post("/apis/events.k8s.io/v1/namespaces/default/events", new)
    assert code == 422 and "group" not in err["details"] and err["details"]["kind"] == "Event"
    # an update reports the ObjectMeta cause four times: BeforeUpdate's validateCommonFields (the
    # generic create and update rules), then ValidateConfigMapUpdate (the update rules and
    # ValidateConfigMap); recorded from a real server for Service and ServiceAccount, same shape
    code, obj = await http.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    obj["metadata"]["labels"] = {"bad key": "v"}
    code, err = await http.req("PUT", "/api/v1/namespaces/default/configmaps/c", obj)
    assert code == 422 and [c["field"] for c in err["details"]["causes"]] == ["metadata.labels"] * 4
    assert err["message"].count("bad key") == 1  # identical causes are shown once, as ToAggregate does


async def test_network_policy_status_with_its_feature_gate_off(server: APIServer, http: Http) -> None:
    """1.24 serves networkpolicies/status with `NetworkPolicyStatus` off (checked on a real 1.24
    server): a create keeps the status sent, an update replaces a status without conditions and
    keeps one with them, and a status write keeps the old status or, without conditions, clears it."""
    def status(kind: str) -> dict:
        return {"conditions": [{"type": kind, "status": "True", "reason": "R", "message": "m",
                                "lastTransitionTime": "2023-01-01T00:00:00Z"}]}
    base = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies"
    merge = "application/merge-patch+json"
    code, made = await http.post(base, {"metadata": {"name": "np"}, "spec": {"podSelector": {}},
                                        "status": status("Ready")})
    assert code == 201 and made["status"] == status("Ready"), made
    code, out = await http.req("PATCH", base + "/np", {"status": status("X")}, ctype=merge)
    assert code == 200 and out["status"] == status("Ready")
    code, out = await http.req("PATCH", base + "/np/status", {"status": status("X")}, ctype=merge)
    assert code == 200 and out["status"] == status("Ready")
    code, out = await http.req("PATCH", base + "/np/status", [{"op": "remove", "path": "/status/conditions"}],
                               ctype="application/json-patch+json")
    assert code == 200 and out["status"] == {}
    code, out = await http.req("PATCH", base + "/np", {"status": status("Y")}, ctype=merge)
    assert code == 200 and out["status"] == status("Y")
