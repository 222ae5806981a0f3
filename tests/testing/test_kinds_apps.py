"""Workload strategies: defaults, generation, /status, /scale (apps, batch) and Leases."""

from __future__ import annotations

import copy

import pytest

from kubeloop.testing.apiserver.errors import StatusError
from kubeloop.testing.apiserver.kinds.apps import selector_matches, selector_string
from kubeloop.testing.apiserver.kinds.podspec import image_pull_policy

from .test_kinds_core import create, info, invalid_fields, update


def deployment(name: str = "web", image: str = "nginx:1.21") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
                     "spec": {"containers": [{"name": "main", "image": image}]}}}}


def test_deployment_defaults_match_real_server() -> None:
    dep = info("apps", "deployments")
    obj = create(dep, deployment() | {"status": {"replicas": 5}})
    assert obj["metadata"]["generation"] == 1
    assert obj["status"] == {}
    spec = obj["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    template = spec["template"]
    assert template["metadata"] == {"labels": {"app": "web"}, "creationTimestamp": None}
    assert template["spec"] == {
        "containers": [{"name": "main", "image": "nginx:1.21", "imagePullPolicy": "IfNotPresent", "resources": {},
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
        "securityContext": {}, "terminationGracePeriodSeconds": 30}


@pytest.mark.parametrize(("image", "policy"), [
    ("busybox", "Always"), ("busybox:latest", "Always"), ("busybox:1", "IfNotPresent"),
    ("registry:5000/busybox", "Always"), ("registry:5000/busybox:1", "IfNotPresent"),
    ("busybox@sha256:abc", "IfNotPresent"),
])
def test_image_pull_policy(image: str, policy: str) -> None:
    assert image_pull_policy(image) == policy


def test_deployment_generation_rules() -> None:
    dep = info("apps", "deployments")
    v1 = create(dep, deployment())
    v1["metadata"]["resourceVersion"] = "1"
    labels = copy.deepcopy(v1)
    labels["metadata"]["labels"] = {"tier": "web"}
    v2 = update(dep, labels, v1)
    assert v2["metadata"]["generation"] == 1
    ann = copy.deepcopy(v2)
    ann["metadata"]["annotations"] = {"note": "x"}
    v3 = update(dep, ann, v2)
    assert v3["metadata"]["generation"] == 2
    spec = copy.deepcopy(v3)
    spec["spec"]["replicas"] = 2
    spec["status"] = {"replicas": 99}
    v4 = update(dep, spec, v3)
    assert v4["metadata"]["generation"] == 3 and v4["status"] == {}
    st = copy.deepcopy(v4)
    st["status"] = {"replicas": 2}
    st["spec"]["replicas"] = 7
    st["metadata"]["labels"] = {"tier": "changed"}
    v5 = update(dep, st, v4, status=True)
    assert v5["metadata"]["generation"] == 3 and v5["spec"]["replicas"] == 2
    assert v5["status"] == {"replicas": 2} and v5["metadata"]["labels"] == {"tier": "web"}
    # defaults applied on update too: a PUT without strategy keeps it defaulted (no generation bump)
    bare = copy.deepcopy(v5)
    del bare["spec"]["strategy"]
    assert update(dep, bare, v5)["metadata"]["generation"] == 3


def test_deployment_scale() -> None:
    dep = info("apps", "deployments")
    obj = create(dep, deployment())
    obj["metadata"]["resourceVersion"] = "7"
    obj["metadata"]["labels"] = {"not": "copied"}
    scale = dep.strategy.get_scale(dep, obj)
    assert scale == {"kind": "Scale", "apiVersion": "autoscaling/v1",
                     "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1", "resourceVersion": "7",
                                  "creationTimestamp": "2024-01-01T00:00:00Z"},
                     "spec": {"replicas": 1}, "status": {"replicas": 0, "selector": "app=web"}}
    new = copy.deepcopy(obj)
    dep.strategy.apply_scale(dep, new, {"spec": {"replicas": 3}})
    assert update(dep, new, obj)["metadata"]["generation"] == 2
    with pytest.raises(StatusError) as e:
        dep.strategy.apply_scale(dep, new, {"metadata": {"name": "web"}, "spec": {"replicas": -1}})
    assert e.value.code == 422 and e.value.details == {
        "name": "web", "group": "autoscaling", "kind": "Scale", "causes": [
            {"reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or equal to 0",
             "field": "spec.replicas"}]}
    cm = info("", "configmaps")
    with pytest.raises(StatusError) as e:
        cm.strategy.get_scale(cm, {"metadata": {"name": "x"}})
    assert e.value.code == 404


def test_deployment_validation() -> None:
    dep = info("apps", "deployments")
    bad = deployment("bad")
    bad["spec"]["selector"]["matchLabels"] = {"app": "other"}
    with pytest.raises(StatusError) as e:
        create(dep, bad)
    causes = e.value.details["causes"]  # type: ignore[index]
    assert causes == [{"reason": "FieldValueInvalid", "field": "spec.template.metadata.labels", "message":
                       'Invalid value: map[string]string{"app":"bad"}: `selector` does not match template `labels`'}]
    assert e.value.details["group"] == "apps"  # type: ignore[index]
    empty = deployment()
    empty["spec"]["template"]["spec"]["containers"] = []
    assert invalid_fields(create, info("apps", "deployments"), empty) == [
        ("spec.template.spec.containers", "FieldValueRequired")]
    old = create(dep, deployment())
    moved = copy.deepcopy(old)
    moved["spec"]["selector"] = {"matchLabels": {"app": "web", "x": "y"}}
    moved["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    assert ("spec.selector", "FieldValueInvalid") in invalid_fields(update, dep, moved, old)


def test_selectors() -> None:
    sel = {"matchLabels": {"b": "1", "a": "2"}, "matchExpressions": [
        {"key": "c", "operator": "In", "values": ["y", "x"]}, {"key": "d", "operator": "DoesNotExist"}]}
    assert selector_string(sel) == "a=2,b=1,c in (x,y),!d"
    assert selector_matches(sel, {"a": "2", "b": "1", "c": "x"})
    assert not selector_matches(sel, {"a": "2", "b": "1", "c": "x", "d": ""})


def test_other_workload_defaults() -> None:
    sts = create(info("apps", "statefulsets"), deployment("db") | {"kind": "StatefulSet"})
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady" and sts["spec"]["replicas"] == 1
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    rs = create(info("apps", "replicasets"), deployment("rs") | {"kind": "ReplicaSet"})
    assert rs["status"] == {"replicas": 0} and "strategy" not in rs["spec"]
    ds = create(info("apps", "daemonsets"), deployment("ds") | {"kind": "DaemonSet"})
    assert ds["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 0}
    assert ds["status"]["numberReady"] == 0


def test_job_generates_selector_and_requires_restart_policy() -> None:
    job = info("batch", "jobs")
    body = {"metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}}}
    obj = create(job, body)
    assert obj["spec"]["selector"] == {"matchLabels": {"controller-uid": "uid-1"}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {"controller-uid": "uid-1", "job-name": "j"}
    assert (obj["spec"]["parallelism"], obj["spec"]["completions"], obj["spec"]["backoffLimit"]) == (1, 1, 6)
    assert obj["spec"]["completionMode"] == "NonIndexed" and obj["spec"]["suspend"] is False
    always = copy.deepcopy(body)
    del always["spec"]["template"]["spec"]["restartPolicy"]
    assert invalid_fields(create, job, always) == [("spec.template.spec.restartPolicy", "FieldValueRequired")]
    cron = create(info("batch", "cronjobs"), {"metadata": {"name": "c"}, "spec": {
        "schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}})
    assert cron["spec"]["concurrencyPolicy"] == "Allow" and cron["spec"]["successfulJobsHistoryLimit"] == 3
    assert cron["spec"]["jobTemplate"]["metadata"] == {"creationTimestamp": None}


def test_lease_validation_and_micro_time() -> None:
    lease = info("coordination.k8s.io", "leases")
    obj = create(lease, {"metadata": {"name": "l"}, "spec": {"renewTime": "2024-01-01T01:00:00.000000+01:00"}})
    assert obj["spec"]["renewTime"] == "2024-01-01T00:00:00.000000Z"
    assert invalid_fields(create, lease, {"metadata": {"name": "b"}, "spec": {"leaseDurationSeconds": 0}}) == [
        ("spec.leaseDurationSeconds", "FieldValueInvalid")]
    with pytest.raises(StatusError) as e:
        create(lease, {"metadata": {"name": "t"}, "spec": {"renewTime": "2024-01-01T00:00:00Z"}})
    assert e.value.code == 400 and e.value.message.startswith('Lease in version "v1" cannot be handled as a Lease')
    assert create(lease, {"metadata": {"name": "e"}})["spec"] == {}
