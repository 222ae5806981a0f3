"""Behaviour the differential fuzz recorded from a real kube-apiserver 1.24, one test per divergence
class the emulator once had (the full recordings run in test_conformance_fuzz.py)."""

from __future__ import annotations

from typing import Any

from tests.testing.conftest import Http, cm

NS = "/api/v1/namespaces/default"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, **spec,
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}}


def causes(status: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((c["field"], c["reason"]) for c in status["details"]["causes"])


async def test_zero_values_are_not_kept_so_omitting_them_is_no_change(http: Http) -> None:
    code, obj = await http.post(f"{NS}/configmaps", {"metadata": {"name": "zero"}, "data": {}})
    assert code == 201 and "data" not in obj
    code, dep = await http.post(DEPLOYS, deployment("zero", minReadySeconds=0, paused=False, replicas=0))
    assert code == 201 and "minReadySeconds" not in dep["spec"] and "paused" not in dep["spec"]
    assert dep["spec"]["replicas"] == 0  # a pointer field keeps its zero
    body = deployment("zero", replicas=0)
    body["metadata"]["resourceVersion"] = dep["metadata"]["resourceVersion"]
    code, same = await http.req("PUT", f"{DEPLOYS}/zero", body)
    assert code == 200 and same["metadata"]["resourceVersion"] == dep["metadata"]["resourceVersion"]


async def test_held_delete_bumps_generation_and_jobs_orphan_by_default(http: Http) -> None:
    job = {"metadata": {"name": "orphaned"}, "spec": {"template": {"spec": {
        "containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}}}}
    code, created = await http.post("/apis/batch/v1/namespaces/default/jobs", job)
    assert code == 201 and created["metadata"]["labels"]["job-name"] == "orphaned"
    code, held = await http.req("DELETE", "/apis/batch/v1/namespaces/default/jobs/orphaned", dryRun="All")
    assert code == 200 and held["metadata"]["finalizers"] == ["orphan"]
    assert held["metadata"]["generation"] == created["metadata"]["generation"] + 1
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0


async def test_delete_returns_the_object_where_the_registry_says_so(http: Http) -> None:
    await http.post(f"{NS}/serviceaccounts", {"metadata": {"name": "returned"}})
    code, gone = await http.req("DELETE", f"{NS}/serviceaccounts/returned")
    assert code == 200 and gone["kind"] == "ServiceAccount" and gone["metadata"]["name"] == "returned"
    await http.post(f"{NS}/configmaps", cm("status-only"))
    code, status = await http.req("DELETE", f"{NS}/configmaps/status-only")
    assert code == 200 and status["kind"] == "Status"


async def test_uid_precondition_is_checked_before_the_object_is_looked_up(http: Http) -> None:
    body = cm("never-created")
    body["metadata"]["uid"] = "6f1f0d6e-0000-0000-0000-000000000000"
    code, err = await http.req("PUT", f"{NS}/configmaps/never-created", body)
    assert code == 409 and err["reason"] == "Conflict" and "Precondition failed" in err["message"]


async def test_service_node_ports_are_allocated_then_validated(http: Http) -> None:
    svc = {"metadata": {"name": "dup"}, "spec": {"type": "NodePort", "ports": [
        {"name": "http", "port": 8080}, {"name": "http", "port": 8080}]}}
    code, err = await http.post(f"{NS}/services", svc)
    assert code == 422 and causes(err) == [("spec.ports[1]", "FieldValueDuplicate"),
                                           ("spec.ports[1].name", "FieldValueDuplicate"),
                                           ("spec.ports[1].nodePort", "FieldValueDuplicate")]
    svc = {"metadata": {"name": "range"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}}
    code, err = await http.post(f"{NS}/services", svc)
    assert code == 422 and causes(err) == [("spec.ports[0].nodePort", "FieldValueInvalid")]
    svc = {"metadata": {"name": "dry"}, "spec": {"type": "NodePort", "sessionAffinity": "ClientIP",
                                                 "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]}}
    code, dry = await http.post(f"{NS}/services", svc, dryRun="All")
    assert code == 201 and [p["nodePort"] for p in dry["spec"]["ports"]] == [32769, 32770]
    assert dry["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


async def test_a_cluster_ip_or_node_port_another_service_holds_is_refused_until_it_is_freed(http: Http) -> None:
    # the messages and the dry-run behaviour as kube-apiserver 1.24 answered `kubectl create service
    # clusterip|nodeport ... --clusterip=|--node-port=` on the real cluster
    def service(name: str, ip: str | None = None, node_port: int | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}
        if ip is not None:
            spec["clusterIP"] = ip
        if node_port is not None:
            spec["type"] = "NodePort"
            spec["ports"][0]["nodePort"] = node_port
        return {"metadata": {"name": name}, "spec": spec}

    code, held = await http.post(f"{NS}/services", service("held-ip", ip="10.96.200.10"))
    assert code == 201 and held["spec"]["clusterIPs"] == ["10.96.200.10"]
    code, err = await http.post(f"{NS}/services", service("wants-ip", ip="10.96.200.10"))
    assert code == 422 and err["message"] == (
        'Service "wants-ip" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.200.10"}: '
        "failed to allocate IP 10.96.200.10: provided IP is already allocated")
    code, _ = await http.post(f"{NS}/services", service("wants-ip", ip="10.96.200.10"), dryRun="All")
    assert code == 201  # the dry-run IP allocator checks the range only

    code, _ = await http.post(f"{NS}/services", service("held-port", node_port=30555))
    assert code == 201
    refused = ('Service "wants-port" is invalid: spec.ports[0].nodePort: Invalid value: 30555: '
               "provided port is already allocated")
    for dry in ({}, {"dryRun": "All"}):  # the dry-run port allocator reads the real one's
        code, err = await http.post(f"{NS}/services", service("wants-port", node_port=30555), **dry)
        assert code == 422 and err["message"] == refused, dry
    code, _ = await http.post(f"{NS}/services", service("moves-port", node_port=30556))
    assert code == 201
    ports = {"spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80, "nodePort": 30555}]}}
    code, err = await http.req("PATCH", f"{NS}/services/moves-port", ports, ctype="application/merge-patch+json")
    assert code == 422 and err["message"] == refused.replace("wants-port", "moves-port")
    code, _ = await http.req("PATCH", f"{NS}/services/held-port", ports, ctype="application/merge-patch+json")
    assert code == 200  # a Service keeps what it holds

    for name in ("held-ip", "held-port"):  # freed once no stored Service holds them
        code, _ = await http.req("DELETE", f"{NS}/services/{name}")
        assert code == 200
    code, _ = await http.post(f"{NS}/services", service("wants-ip", ip="10.96.200.10"))
    assert code == 201
    code, _ = await http.req("PATCH", f"{NS}/services/moves-port", ports, ctype="application/merge-patch+json")
    assert code == 200


async def test_a_patch_that_does_not_fit_the_kind_is_invalid_on_patch(http: Http) -> None:
    await http.post(f"{NS}/configmaps", cm("typed"))
    code, err = await http.req("PATCH", f"{NS}/configmaps/typed", {"metadata": {"labels": ["x"]}},
                               ctype="application/strategic-merge-patch+json")
    assert code == 422 and err["details"] == {"causes": [
        {"reason": "FieldValueInvalid", "field": "patch", "message": err["details"]["causes"][0]["message"]}]}


async def test_scale_writes_own_replicas_unless_scaled_to_zero(http: Http) -> None:
    await http.post(DEPLOYS, deployment("scaled", replicas=2))
    patch = {"spec": {"replicas": 3}}
    code, _ = await http.req("PATCH", f"{DEPLOYS}/scaled/scale", patch, ctype="application/merge-patch+json")
    assert code == 200
    _, dep = await http.get(f"{DEPLOYS}/scaled")
    # the ScaleHandler takes each entry's time from the parent's entries: a new `scale` entry has none,
    # so it sorts first (kube-apiserver 1.24 answers the same)
    assert [e.get("subresource", "") for e in dep["metadata"]["managedFields"]] == ["scale", ""]
    assert "time" not in dep["metadata"]["managedFields"][0]
    code, _ = await http.req("PATCH", f"{DEPLOYS}/scaled/scale", {"spec": {"replicas": 0}},
                             ctype="application/merge-patch+json")
    _, dep = await http.get(f"{DEPLOYS}/scaled")
    assert code == 200 and [e.get("subresource", "") for e in dep["metadata"]["managedFields"]] == [""]
    code, err = await http.req("PUT", f"{DEPLOYS}/scaled/scale", {"metadata": {"name": "other"}})
    assert code == 400 and "does not match the name on the URL" in err["message"]


async def test_legacy_watch_path_and_field_manager_validation(http: Http) -> None:
    await http.post(f"{NS}/configmaps", cm("watched"))
    events = await http.watch("/api/v1/watch/namespaces/default/configmaps/watched", 1)
    assert events and events[0]["object"]["metadata"]["name"] == "watched"
    code, err = await http.post(f"{NS}/configmaps", cm("managed"), fieldManager="m" * 129)
    assert code == 422 and err["details"]["kind"] == "CreateOptions"
    assert causes(err) == [("fieldManager", "FieldValueTooLong")]
