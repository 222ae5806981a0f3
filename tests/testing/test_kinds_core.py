"""Strategies of core/v1 kinds, called directly (no server)."""

from __future__ import annotations

import base64
import copy

import pytest

from kubeloop.testing.apiserver.catalog import default_catalog
from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.resources import ServedResource

CAT = default_catalog()


def info(group: str, resource: str, version: str = "v1") -> ServedResource:
    found = CAT.lookup(group, version, resource)
    assert found is not None
    return found


def create(inf: ServedResource, obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    meta.setdefault("uid", "uid-1")
    meta.setdefault("creationTimestamp", "2024-01-01T00:00:00Z")
    if inf.namespaced:
        meta.setdefault("namespace", "ns")
    inf.strategy.decode(inf, obj)  # the registry decodes before the strategy's hooks
    inf.strategy.prepare_for_create(inf, obj)
    inf.strategy.validate_create(inf, obj)
    return obj


def update(inf: ServedResource, new: dict, old: dict, status: bool = False) -> dict:
    new = copy.deepcopy(new)
    inf.strategy.decode(inf, new)
    if status:
        inf.strategy.prepare_for_status_update(inf, new, old)
        inf.strategy.validate_status_update(inf, new, old)
    else:
        inf.strategy.prepare_for_update(inf, new, old)
        inf.strategy.validate_update(inf, new, old)
    return new


def invalid_fields(fn, *args) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    with pytest.raises(StatusError) as e:
        fn(*args)
    assert e.value.code == 422, e.value.message
    return sorted((c["field"], c["reason"]) for c in e.value.details["causes"])  # type: ignore[index]


def test_namespace_defaults_and_delete() -> None:
    ns = info("", "namespaces")
    obj = create(ns, {"metadata": {"name": "team-a"}, "status": {"phase": "Terminating"}})
    assert obj["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert obj["spec"] == {"finalizers": ["kubernetes"]}
    assert obj["status"] == {"phase": "Active"}
    # an update cannot change spec.finalizers or status, and the label is enforced
    new = copy.deepcopy(obj)
    new["spec"]["finalizers"] = []
    new["status"]["phase"] = "Terminating"
    new["metadata"]["labels"] = {"x": "y"}
    out = update(ns, new, obj)
    assert out["spec"] == {"finalizers": ["kubernetes"]} and out["status"] == {"phase": "Active"}
    assert out["metadata"]["labels"] == {"x": "y", "kubernetes.io/metadata.name": "team-a"}
    kept = copy.deepcopy(obj)
    assert ns.strategy.prepare_for_delete(ns, kept) is True
    assert kept["status"]["phase"] == "Terminating"
    assert invalid_fields(create, ns, {"metadata": {"name": "a.b"}}) == [("metadata.name", "FieldValueInvalid")]


def test_namespace_field_selector_labels() -> None:
    ns = info("", "namespaces")
    ns.strategy.check_field_label(ns, "status.phase")
    with pytest.raises(StatusError) as e:
        ns.strategy.check_field_label(ns, "spec.x")
    assert e.value.code == 400 and e.value.message == "field label not supported: spec.x"
    cm = info("", "configmaps")
    with pytest.raises(StatusError) as e:
        cm.strategy.check_field_label(cm, "data.i")
    assert e.value.message == '"data.i" is not a known field selector: only "metadata.name", "metadata.namespace"'


def test_configmap_validation_and_immutability() -> None:
    cm = info("", "configmaps")
    assert invalid_fields(create, cm, {"metadata": {"name": "c"}, "data": {"bad key!": "v"}}) == [
        ("data[bad key!]", "FieldValueInvalid")]
    assert invalid_fields(create, cm, {"metadata": {"name": "c"}, "data": {"k": "v"},
                                       "binaryData": {"k": "dg=="}}) == [("data[k]", "FieldValueInvalid")]
    old = create(cm, {"metadata": {"name": "im"}, "data": {"k": "v"}, "immutable": True})
    changed = copy.deepcopy(old)
    changed["data"]["k"] = "w"
    assert invalid_fields(update, cm, changed, old) == [("data", "FieldValueForbidden")]
    unset = copy.deepcopy(old)
    unset["immutable"] = False
    assert invalid_fields(update, cm, unset, old) == [("immutable", "FieldValueForbidden")]
    relabel = copy.deepcopy(old)
    relabel["metadata"]["labels"] = {"l": "1"}
    assert update(cm, relabel, old)["metadata"]["labels"] == {"l": "1"}


def test_secret_string_data_type_and_base64() -> None:
    sec = info("", "secrets")
    obj = create(sec, {"metadata": {"name": "s"}, "data": {"pw": base64.b64encode(b"old").decode()},
                       "stringData": {"pw": "new", "extra": "plain"}})
    assert "stringData" not in obj and obj["type"] == "Opaque"
    assert obj["data"] == {"pw": "bmV3", "extra": "cGxhaW4="}
    with pytest.raises(StatusError) as e:
        create(sec, {"metadata": {"name": "s2"}, "data": {"k": "%%%notbase64"}})
    assert e.value.code == 400
    assert e.value.message == ('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
                               "input byte 0")
    changed = copy.deepcopy(obj)
    changed["type"] = "kubernetes.io/basic-auth"
    assert invalid_fields(update, sec, changed, obj) == [
        ("data[password]", "FieldValueRequired"), ("data[username]", "FieldValueRequired"),
        ("type", "FieldValueInvalid")]
    assert sec.strategy.field_values(sec, obj)["type"] == "Opaque"


def test_service_cluster_ip_allocated_and_kept() -> None:
    svc = info("", "services")
    obj = create(svc, {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    spec = obj["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["clusterIP"] and spec["clusterIPs"] == [spec["clusterIP"]]
    assert obj["status"] == {"loadBalancer": {}}
    other = create(svc, {"metadata": {"name": "web2"}, "spec": {"ports": [{"port": 81}]}})
    assert other["spec"]["clusterIP"] != spec["clusterIP"]
    new = copy.deepcopy(obj)
    del new["spec"]["clusterIP"]
    assert update(svc, new, obj)["spec"]["clusterIP"] == spec["clusterIP"]
    assert invalid_fields(create, svc, {"metadata": {"name": "1bad"}, "spec": {"ports": [{"port": 1}]}}) == [
        ("metadata.name", "FieldValueInvalid")]


def test_pod_defaults_status_and_field_values() -> None:
    pod = info("", "pods")
    obj = create(pod, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                       "status": {"phase": "Running"}})
    spec = obj["spec"]
    assert spec["containers"][0]["imagePullPolicy"] == "Always"
    assert spec["restartPolicy"] == "Always" and spec["dnsPolicy"] == "ClusterFirst"
    assert spec["enableServiceLinks"] is True and spec["priority"] == 0
    assert obj["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    values = pod.strategy.field_values(pod, obj)
    assert values["status.phase"] == "Pending" and values["spec.restartPolicy"] == "Always"
    assert values["spec.nodeName"] == ""
    changed = copy.deepcopy(obj)
    changed["spec"]["containers"][0]["image"] = "busybox:2"
    assert update(pod, changed, obj)["spec"]["containers"][0]["image"] == "busybox:2"
    changed["spec"]["restartPolicy"] = "Never"
    assert ("spec", "FieldValueForbidden") in invalid_fields(update, pod, changed, obj)
    st = copy.deepcopy(obj)
    st["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    st["spec"]["nodeName"] = "ignored"
    out = update(pod, st, obj, status=True)
    assert out["status"]["phase"] == "Running" and "nodeName" not in out["spec"]


def test_pod_qos_classes() -> None:
    pod = info("", "pods")
    guaranteed = create(pod, {"metadata": {"name": "g"}, "spec": {"containers": [
        {"name": "c", "image": "i:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}})
    assert guaranteed["status"]["qosClass"] == "Guaranteed"
    assert guaranteed["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    burstable = create(pod, {"metadata": {"name": "b"}, "spec": {"containers": [
        {"name": "c", "image": "i:1", "resources": {"requests": {"cpu": "1"}}}]}})
    assert burstable["status"]["qosClass"] == "Burstable"


def test_endpoints_and_leases_create_on_update() -> None:
    assert info("", "endpoints").allow_create_on_update
    assert info("coordination.k8s.io", "leases").allow_create_on_update
    assert not info("", "configmaps").allow_create_on_update


def test_generic_kinds() -> None:
    role = info("rbac.authorization.k8s.io", "roles")
    assert create(role, {"metadata": {"name": "system:controller:x"}, "rules": []})["metadata"]["name"]
    ing = info("networking.k8s.io", "ingresses")
    obj = create(ing, {"metadata": {"name": "i"}, "spec": {"rules": [{"http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}})
    assert obj["metadata"]["generation"] == 1 and obj["status"] == {"loadBalancer": {}}
    changed = copy.deepcopy(obj)
    changed["spec"]["rules"][0]["host"] = "example.com"
    assert update(ing, changed, obj)["metadata"]["generation"] == 2
    bad = copy.deepcopy(obj)
    del bad["spec"]["rules"][0]["http"]["paths"][0]["pathType"]
    assert invalid_fields(create, ing, bad) == [("spec.rules[0].http.paths[0].pathType", "FieldValueRequired")]
    assert CAT.api_group("autoscaling") is not None


def test_namespace_finalize_subresource() -> None:
    ns = info("", "namespaces")
    obj = create(ns, {"metadata": {"name": "gone"}})
    new = copy.deepcopy(obj)
    new["spec"]["finalizers"] = []
    new["status"] = {"phase": "Terminating"}
    ns.strategy.decode(ns, new)
    ns.strategy.prepare_for_subresource_update(ns, "finalize", new, obj)
    assert new["spec"] == {} and new["status"] == {"phase": "Active"}
    st = copy.deepcopy(obj)
    st["status"] = {"phase": "Terminating"}
    st["spec"]["finalizers"] = []
    ns.strategy.decode(ns, st)
    ns.strategy.prepare_for_subresource_update(ns, "status", st, obj)
    assert st["status"] == {"phase": "Terminating"} and st["spec"] == {"finalizers": ["kubernetes"]}


def test_pod_template_defaults() -> None:
    pt = info("", "podtemplates")
    obj = create(pt, {"metadata": {"name": "t"}, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}})
    assert obj["template"]["metadata"] == {"creationTimestamp": None}
    assert obj["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"
