"""Record what a real kube-apiserver 1.24 answers (by hand; CI replays the recording).

    python tests/testing/record_surface.py --kubeconfig /tmp/realk8s/kubeconfig \
        [--ca-key /tmp/realk8s/pki/ca.key] [--out tests/testing/data/surface-1.24.json]

Writes the discovery documents of every built-in group, the scenarios of `SCENARIOS` with the
records `surface.normalize` makes of each response, and the Table of one object of every kind
(`surface_samples.SAMPLES`, with the object the Table was made from). Everything it creates lives in
one namespace or has the run's suffix in its name, and is deleted at the end.

`--bootstrap FILE` also writes the objects the control plane creates for itself (bootstrap RBAC,
PriorityClasses, API Priority and Fairness defaults) as the emulator's package data.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import json
import secrets
import ssl
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from surface import KUBECTL_GET, TABLE, TABLE_V1BETA1, Obj, Step, fill, request_of, run_steps
from surface_samples import INVALID, SAMPLES

DATA = Path(__file__).resolve().parent / "data" / "surface-1.24.json"
RBAC = "rbac.authorization.k8s.io"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
NOW = "2024-01-01T00:00:00Z"


def _pod(name: str, labels: dict[str, str] | None = None, node: str = "", containers: tuple[str, ...] = ("c",)) -> Obj:
    spec: Obj = {"containers": [{"name": c, "image": "busybox"} for c in containers]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def _running() -> Obj:
    return {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": NOW}]}}


def scenarios() -> dict[str, list[Step]]:
    """Every recorded scenario: name -> steps (`{ns}` and `{sfx}` are filled in per run)."""
    ns = "/api/v1/namespaces/{ns}"
    pods = f"{ns}/pods"
    out: dict[str, list[Step]] = {}

    out["samples"] = [Step("POST", path, body, name=f"create {path.rsplit('/', 1)[-1]}") for path, body in SAMPLES]
    out["invalid"] = [Step("POST", path, body, name=f"invalid {path.rsplit('/', 1)[-1]}") for path, body in INVALID]

    out["status_bodies"] = [
        Step("GET", f"{ns}/configmaps/nope", name="404 Status"),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "rv-num", "resourceVersion": "123"}},
             name="numeric resourceVersion on create: 500 without reason"),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "rv-text", "resourceVersion": "abc"}},
             name="non-numeric resourceVersion on create: accepted"),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "rv-zero", "resourceVersion": "0"}},
             name="resourceVersion 0 on create: accepted"),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "rv-neg", "resourceVersion": "-5"}},
             name="negative resourceVersion on create: accepted"),
        Step("GET", f"{ns}/configmaps/rv-text", name="read back"),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "rv-text"}}, name="409 AlreadyExists"),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "Bad_Name"}}, name="422 Invalid"),
        Step("POST", f"{ns}/configmaps", "{not json", name="400 BadRequest"),
        Step("PUT", "/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "x"}}, name="405"),
        Step("DELETE", f"{ns}/configmaps/rv-text", name="200 Success Status"),
        Step("GET", f"{ns}/configmaps/nope", headers={"Accept": TABLE}, name="404 asked as Table"),
        Step("GET", f"{ns}/configmaps/nope", headers={"Accept": "application/json;as=PartialObjectMetadata;"
                                                             "v=v1;g=meta.k8s.io"}, name="404 asked as metadata"),
    ]

    out["tables"] = [
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "t1", "labels": {"a": "b"}}, "data": {"k": "v"}},
             compare=False),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "t2"}}, compare=False),
        Step("GET", f"{ns}/configmaps", headers={"Accept": TABLE}, name="list as Table (default: metadata)"),
        Step("GET", f"{ns}/configmaps?includeObject=None", headers={"Accept": TABLE}, name="includeObject=None"),
        Step("GET", f"{ns}/configmaps?includeObject=Object&labelSelector=a%3Db", headers={"Accept": TABLE},
             name="includeObject=Object, selector"),
        Step("GET", f"{ns}/configmaps?limit=1", headers={"Accept": TABLE}, name="paged Table"),
        Step("GET", f"{ns}/configmaps/t1", headers={"Accept": TABLE_V1BETA1}, name="v1beta1 Table"),
        Step("GET", f"{ns}/configmaps/t1", headers={"Accept": KUBECTL_GET}, name="kubectl get's Accept"),
        Step("GET", f"{ns}/configmaps/t1?includeObject=Bogus", headers={"Accept": TABLE}, name="bad includeObject"),
        Step("GET", f"{ns}/configmaps/t1", headers={"Accept": "application/json;as=Table;v=v2;g=meta.k8s.io"},
             name="unknown Table version"),
        Step("GET", "/api/v1/componentstatuses/etcd-0", headers={"Accept": TABLE}, name="a computed kind's Table"),
        Step("GET", "/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas?includeObject=None",
             headers={"Accept": TABLE}, name="FlowSchemas print in matching order"),
        Step("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
            "metadata": {"name": "widgets.sfc{sfx}.example.com"}, "spec": {
                "group": "sfc{sfx}.example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "description": "its color"},
                        {"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"},
                        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "priority": 1},
                        {"name": "Tags", "type": "string", "jsonPath": ".spec.tags"},
                        {"name": "When", "type": "date", "jsonPath": ".spec.when"},
                        {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"}]},
                    {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}},
             compare=False),
        Step("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.sfc{sfx}.example.com",
             poll=True, name="CRD established", save={}),
        Step("POST", "/apis/sfc{sfx}.example.com/v1/namespaces/{ns}/widgets", {
            "apiVersion": "sfc{sfx}.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 3, "color": "red", "ratio": 0.5, "tags": ["a", "b"], "when": "2024-01-01T00:00:00Z"},
            "status": {"ready": True}}, compare=False),
        Step("GET", "/apis/sfc{sfx}.example.com/v1/namespaces/{ns}/widgets", headers={"Accept": TABLE},
             name="custom resource Table: additionalPrinterColumns"),
        Step("GET", "/apis/sfc{sfx}.example.com/v2/namespaces/{ns}/widgets/w1", headers={"Accept": TABLE},
             name="custom resource Table without printer columns"),
        Step("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.sfc{sfx}.example.com",
             compare=False),
    ]

    out["pod_subresources"] = [
        Step("POST", pods, _pod("p"), compare=False),
        Step("POST", pods, _pod("p2", containers=("a", "b")), compare=False),
        Step("GET", f"{pods}/p/log", name="log of a Pending pod"),
        Step("GET", f"{pods}/p/log?container=zz", name="log of an unknown container"),
        Step("GET", f"{pods}/p2/log", name="log without a container of a two-container pod"),
        Step("GET", f"{pods}/p/log?tailLines=-1", name="log with a negative tailLines"),
        Step("GET", f"{pods}/p/log?tailLines=x", name="log with a bad tailLines"),
        Step("GET", f"{pods}/nope/log", name="log of a missing pod"),
        Step("GET", f"{pods}/p/exec?command=ls", name="exec (GET) without a node"),
        Step("POST", f"{pods}/p/exec?command=ls", name="exec without a node"),
        Step("POST", f"{pods}/p/attach", name="attach without a node"),
        Step("POST", f"{pods}/p/portforward", name="portforward without a node"),
        Step("GET", f"{pods}/p/proxy", name="proxy without an IP"),
        Step("GET", f"{pods}/p/proxy/some/path", name="proxy path without an IP"),
        Step("GET", f"{pods}/p/ephemeralcontainers", name="ephemeralcontainers read"),
        Step("POST", f"{pods}/p/binding", {"metadata": {"name": "p"}, "target": {"kind": "Node",
                                                                                   "name": "sfc-n-{sfx}"}},
             name="bind"),
        Step("POST", f"{pods}/p/binding", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "other"}},
             name="bind again"),
        Step("POST", f"{ns}/bindings", {"metadata": {"name": "p2"}, "target": {"kind": "Node",
                                                                              "name": "sfc-n-{sfx}"}},
             name="bindings resource"),
        Step("POST", f"{ns}/bindings", {"metadata": {"name": "nope"}, "target": {"kind": "Node", "name": "n"}},
             name="bind a missing pod"),
        Step("GET", f"{pods}/p", name="bound pod"),
        Step("GET", f"{pods}/p/log", name="log on a missing node"),
        Step("POST", f"{pods}/p/exec?command=ls", name="exec on a missing node"),
        Step("POST", "/api/v1/nodes", {"metadata": {"name": "sfc-n-{sfx}"}}, compare=False),
        Step("GET", f"{pods}/p/log", name="log on a node without addresses"),
        Step("POST", f"{pods}/p/attach", name="attach on a node without addresses"),
        Step("GET", "/api/v1/nodes/sfc-n-{sfx}/proxy/healthz", name="node proxy without addresses"),
        Step("GET", "/api/v1/nodes/nope-{sfx}/proxy/", name="node proxy of a missing node"),
        Step("GET", f"{ns}/services/nope/proxy/", name="service proxy of a missing service"),
        Step("DELETE", f"{pods}/p?gracePeriodSeconds=0", compare=False),
        Step("DELETE", f"{pods}/p2?gracePeriodSeconds=0", compare=False),
        Step("DELETE", "/api/v1/nodes/sfc-n-{sfx}", compare=False),
    ]

    hpa = "/apis/autoscaling/{v}/namespaces/{ns}/horizontalpodautoscalers"
    out["versions"] = [
        Step("POST", hpa.format(v="v2", ns="{ns}"), {"metadata": {"name": "h"}, "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                   "averageUtilization": 50}}},
                        {"type": "Resource", "resource": {"name": "memory", "target": {
                            "type": "AverageValue", "averageValue": "100Mi"}}},
                        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {
                            "type": "AverageValue", "averageValue": "10"}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}, name="an HPA in v2"),
        *[Step("GET", hpa.format(v=v, ns="{ns}") + "/h", name=f"read in {v}") for v in ("v1", "v2beta1", "v2beta2")],
        Step("POST", hpa.format(v="v1", ns="{ns}"), {"metadata": {"name": "h1"}, "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3}},
             name="an HPA in v1 without a CPU target"),
        Step("GET", hpa.format(v="v2", ns="{ns}") + "/h1", name="v1's implicit CPU target in v2"),
        Step("PATCH", hpa.format(v="v1", ns="{ns}") + "/h", {"spec": {"maxReplicas": 6}}, headers=MERGE,
             name="a v1 client changes an HPA written in v2"),
        Step("GET", hpa.format(v="v2", ns="{ns}") + "/h", name="nothing v1 cannot show was lost"),
        Step("POST", "/apis/discovery.k8s.io/v1beta1/namespaces/{ns}/endpointslices", {
            "metadata": {"name": "s"}, "addressType": "IPv4", "endpoints": [
                {"addresses": ["10.0.0.1"], "nodeName": "n1", "topology": {
                    "kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "z", "rack": "r1"}},
                {"addresses": ["10.0.0.2"], "nodeName": "n1", "topology": {"kubernetes.io/hostname": "other"}}]},
             name="an EndpointSlice in v1beta1"),
        Step("GET", "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/s", name="its topology in v1"),
        Step("POST", "/apis/policy/v1beta1/namespaces/{ns}/poddisruptionbudgets", {
            "metadata": {"name": "none"}, "spec": {"minAvailable": 1, "selector": {}}},
             name="a v1beta1 PDB with an empty selector"),
        Step("GET", "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/none", name="matches nothing in v1"),
        Step("GET", "/apis/policy/v1beta1/namespaces/{ns}/poddisruptionbudgets/none", name="still {} in v1beta1"),
        Step("GET", "/apis/batch/v1beta1/namespaces/{ns}/cronjobs", name="an empty list in another version"),
    ]

    pdbs = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    evict = {"apiVersion": "policy/v1", "kind": "Eviction"}
    out["eviction"] = [
        Step("POST", "/api/v1/nodes", {"metadata": {"name": "sfc-e-{sfx}"}}, compare=False),
        Step("POST", pods, _pod("pending", {"app": "e"}), compare=False),
        Step("POST", f"{pods}/pending/eviction", {**evict, "metadata": {"name": "pending"}},
             name="evict a Pending pod: no budget applies"),
        Step("GET", f"{pods}/pending", name="the evicted Pending pod is gone"),
        Step("POST", f"{pods}/zz/eviction", {**evict, "metadata": {"name": "zz"}}, name="evict a missing pod"),
        Step("POST", f"{pods}/x/eviction", {**evict, "metadata": {"name": "y"}}, name="name mismatch"),
        *[s for n in ("r1", "r2", "r3") for s in (
            Step("POST", pods, _pod(n, {"app": "e"}, node="sfc-e-{sfx}"), compare=False),
            Step("PATCH", f"{pods}/{n}/status", _running(), headers=MERGE, compare=False))],
        Step("POST", pdbs, {"metadata": {"name": "budget"}, "spec": {"minAvailable": 2,
                                                                     "selector": {"matchLabels": {"app": "e"}}}},
             name="create the budget"),
        Step("GET", f"{pdbs}/budget", poll=True, name="the disruption controller's status"),
        Step("POST", f"{pods}/r1/eviction", {**evict, "metadata": {"name": "r1"}},
             name="evict one Running pod: allowed"),
        Step("GET", f"{pdbs}/budget", poll=True, name="the budget after the eviction (the controller synced)"),
        Step("POST", f"{pods}/r2/eviction", {"apiVersion": "policy/v1beta1", "kind": "Eviction",
                                              "metadata": {"name": "r2"}},
             name="evict a second one (policy/v1beta1): refused"),
        Step("POST", f"{pods}/r2/eviction", {**evict, "metadata": {"name": "r2"}, "deleteOptions": {
            "dryRun": ["All"]}}, name="dry run: refused too"),
        Step("POST", pdbs, {"metadata": {"name": "budget2"}, "spec": {"maxUnavailable": 1,
                                                                      "selector": {"matchLabels": {"app": "e"}}}},
             compare=False),
        Step("POST", f"{pods}/r3/eviction", {**evict, "metadata": {"name": "r3"}},
             name="two budgets: 500"),
        *[Step("DELETE", f"{pods}/{n}?gracePeriodSeconds=0", compare=False) for n in ("r1", "r2", "r3")],
        Step("DELETE", "/api/v1/nodes/sfc-e-{sfx}", compare=False),
    ]

    csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    approved = {"type": "Approved", "status": "True", "reason": "ByTest", "message": "approved by the test"}
    out["csr"] = [
        Step("POST", csrs, SAMPLES_BY_RESOURCE["certificatesigningrequests"] | {
            "metadata": {"name": "sfc-csr2-{sfx}"}}, name="create"),
        Step("GET", f"{csrs}/sfc-csr2-{{sfx}}/approval", name="read approval"),
        Step("PUT", f"{csrs}/sfc-csr2-{{sfx}}/status", {"metadata": {"name": "sfc-csr2-{sfx}"}, "spec": {},
                                                         "status": {"conditions": [approved]}},
             name="approval through /status is dropped"),
        Step("PATCH", f"{csrs}/sfc-csr2-{{sfx}}/approval", {"status": {"conditions": [
            {**approved, "type": "Bogus"}]}}, headers=MERGE, name="an unknown condition type"),
        Step("PATCH", f"{csrs}/sfc-csr2-{{sfx}}/approval", {"status": {"conditions": [approved]}},
             headers=MERGE, name="approve"),
        Step("PATCH", f"{csrs}/sfc-csr2-{{sfx}}/approval", {"status": {"conditions": [
            approved, {**approved, "type": "Denied"}]}}, headers=MERGE, name="approve and deny"),
        Step("PATCH", f"{csrs}/sfc-csr2-{{sfx}}/status", {"status": {"certificate": "bm90IGEgY2VydA=="}},
             headers=MERGE, name="a certificate that is not PEM"),
        Step("PATCH", f"{csrs}/sfc-csr2-{{sfx}}", {"spec": {"usages": ["server auth"]}}, headers=MERGE,
             name="spec is immutable"),
        Step("GET", f"{csrs}/sfc-csr2-{{sfx}}", name="approved"),
        Step("DELETE", f"{csrs}/sfc-csr2-{{sfx}}", compare=False),
    ]

    rbac_api = f"/apis/{RBAC}/v1"
    reviews = "/apis/authorization.k8s.io/v1"
    out["authn_authz"] = [
        Step("POST", f"{ns}/serviceaccounts", {"metadata": {"name": "robot"}}, compare=False),
        Step("POST", f"{ns}/configmaps", {"metadata": {"name": "cm"}, "data": {"a": "1"}}, compare=False),
        Step("POST", f"{ns}/secrets", {"metadata": {"name": "sec"}, "stringData": {"a": "b"}}, compare=False),
        Step("POST", f"{ns}/serviceaccounts/robot/token", {"spec": {"audiences": ["https://kubernetes.default.svc"],
                                                                    "expirationSeconds": 3600}},
             save={"sa_token": "status.token"}, name="TokenRequest"),
        Step("POST", f"{ns}/serviceaccounts/robot/token", {"spec": {"expirationSeconds": 60}},
             name="TokenRequest too short"),
        Step("POST", f"{ns}/serviceaccounts/nobody/token", {"spec": {}}, name="TokenRequest for a missing SA"),
        Step("GET", f"{ns}/configmaps", as_=("token", "{sa_token}"), name="a service account is not allowed"),
        Step("GET", "/api", as_=("token", "{sa_token}"), name="discovery is allowed"),
        Step("GET", "/version", as_=("token", "{sa_token}"), compare=False),
        Step("GET", f"{ns}/configmaps", as_=("anonymous",), name="anonymous"),
        Step("GET", f"{ns}/configmaps", as_=("token", "not-a-token"), name="a bad token"),
        Step("GET", "/healthz", as_=("anonymous",), name="anonymous health"),
        Step("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": "{sa_token}"}},
             name="TokenReview of a service-account token"),
        Step("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": "{sa_token}", "audiences": [
            "other"]}}, name="TokenReview for another audience"),
        Step("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": "nope"}},
             name="TokenReview of a bad token"),
        Step("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": "{admin_token}"}},
             name="TokenReview of a static token"),
        Step("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {}}, name="TokenReview without a token"),
        Step("POST", f"{rbac_api}/namespaces/{{ns}}/roles", {"metadata": {"name": "cm-reader"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}, compare=False),
        Step("POST", f"{rbac_api}/namespaces/{{ns}}/rolebindings", {"metadata": {"name": "robot-reads"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "cm-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "{ns}"}]}, compare=False),
        Step("POST", f"{rbac_api}/namespaces/{{ns}}/rolebindings", {"metadata": {"name": "group-edits"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "Group", "name": "sfc-group", "apiGroup": RBAC}]}, compare=False),
        Step("POST", f"{rbac_api}/namespaces/{{ns}}/rolebindings", {"metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "gone"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "{ns}"}]}, compare=False),
        Step("GET", f"{ns}/configmaps", as_=("token", "{sa_token}"), poll=True, name="granted"),
        Step("DELETE", f"{ns}/configmaps/x", as_=("token", "{sa_token}"), name="not granted: the reason names the "
                                                                             "dangling binding"),
        Step("POST", f"{reviews}/selfsubjectaccessreviews", {"spec": {"resourceAttributes": {
            "namespace": "{ns}", "verb": "list", "resource": "configmaps"}}}, as_=("token", "{sa_token}"),
             name="SelfSubjectAccessReview allowed"),
        Step("POST", f"{reviews}/selfsubjectaccessreviews", {"spec": {"resourceAttributes": {
            "namespace": "{ns}", "verb": "delete", "resource": "configmaps"}}}, as_=("token", "{sa_token}"),
             name="SelfSubjectAccessReview denied"),
        Step("POST", f"{reviews}/selfsubjectaccessreviews", {"spec": {"nonResourceAttributes": {
            "path": "/apis", "verb": "get"}}}, as_=("token", "{sa_token}"), name="SSAR non-resource"),
        Step("POST", f"{reviews}/selfsubjectaccessreviews", {"spec": {}}, as_=("token", "{sa_token}"),
             name="SSAR without attributes"),
        Step("POST", f"{reviews}/selfsubjectrulesreviews", {"spec": {"namespace": "{ns}"}}, as_=("token", "{sa_token}"),
             name="SelfSubjectRulesReview"),
        Step("POST", f"{reviews}/selfsubjectrulesreviews", {"spec": {}}, as_=("token", "{sa_token}"),
             name="SSRR without a namespace"),
        Step("POST", f"{reviews}/subjectaccessreviews", {"spec": {"user": "someone", "groups": ["sfc-group"],
            "resourceAttributes": {"namespace": "{ns}", "verb": "create", "resource": "deployments",
                                   "group": "apps"}}}, name="SubjectAccessReview through an aggregated role"),
        Step("POST", f"{reviews}/subjectaccessreviews", {"spec": {"user": "someone", "resourceAttributes": {
            "namespace": "{ns}", "verb": "create", "resource": "deployments", "group": "apps"}}},
             name="SubjectAccessReview denied"),
        Step("POST", f"{reviews}/subjectaccessreviews", {"spec": {"resourceAttributes": {"verb": "get"}}},
             name="SubjectAccessReview without a user"),
        Step("POST", f"{reviews}/namespaces/{{ns}}/localsubjectaccessreviews", {"spec": {
            "user": "system:serviceaccount:{ns}:robot", "resourceAttributes": {"namespace": "{ns}", "verb": "get",
                                                                               "resource": "configmaps"}}},
             name="LocalSubjectAccessReview"),
        Step("POST", f"{reviews}/namespaces/{{ns}}/localsubjectaccessreviews", {"spec": {
            "user": "u", "resourceAttributes": {"namespace": "other", "verb": "get", "resource": "configmaps"}}},
             name="LocalSubjectAccessReview for another namespace"),
        Step("POST", f"{reviews}/selfsubjectrulesreviews", {"spec": {"namespace": "{ns}"}},
             as_=("cert", "sfc-user", ["sfc-group", "other-group"]),
             name="a client certificate: CN is the user, O the groups"),
        Step("POST", f"{reviews}/selfsubjectaccessreviews", {"spec": {"resourceAttributes": {
            "namespace": "{ns}", "verb": "create", "resource": "deployments", "group": "apps"}}},
             as_=("cert", "sfc-user", ["sfc-group"]), name="SSAR as a certificate's group"),
        Step("GET", f"{ns}/secrets", as_=("cert", "sfc-user", ["sfc-group"]), name="edit allows secrets"),
        Step("GET", "/api/v1/nodes", as_=("cert", "sfc-user", ["sfc-group"]), name="but not nodes"),
        Step("DELETE", f"{ns}/serviceaccounts/robot", compare=False),
        Step("GET", f"{ns}/configmaps", as_=("token", "{sa_token}"), poll=True, settle=11.0,
             name="the token of a deleted service account (after the 10 s token cache)"),
    ]
    return out


SAMPLES_BY_RESOURCE = {path.rsplit("/", 1)[-1]: body for path, body in SAMPLES}

#: the scenarios the recording keeps (and the emulator replays) in cluster mode
CLUSTER = ("eviction", "authn_authz")


# ---------------------------------------------------------------------- the real server

class Real:
    """HTTP to the real server as the admin, as a client certificate, or anonymously."""

    def __init__(self, kubeconfig: str, ca_key: str) -> None:
        cfg = yaml.safe_load(Path(kubeconfig).read_text())
        cluster = cfg["clusters"][0]["cluster"]
        self.server = cluster["server"]
        self.token = cfg["users"][0]["user"]["token"]
        self.ca_pem = base64.b64decode(cluster["certificate-authority-data"])
        self.ca_key = Path(ca_key).read_bytes()
        self.session: aiohttp.ClientSession | None = None
        self._tmp = tempfile.TemporaryDirectory()

    def context(self, cert: tuple[str, list[str]] | None = None) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        if cert is not None:
            cert_pem, key_pem = mint_client_cert(self.ca_pem, self.ca_key, cert[0], cert[1])
            path = Path(self._tmp.name) / f"{secrets.token_hex(4)}.pem"
            path.write_bytes(cert_pem + key_pem)
            ctx.load_cert_chain(str(path))
        return ctx

    async def send(self, step: Step) -> tuple[int, str, bytes]:
        assert self.session is not None
        headers, data, cert = request_of(step, self.token)
        ctx = self.context(cert)
        async with self.session.request(step.method, self.server + step.path, data=data, headers=headers,
                                        ssl=ctx) as r:
            return r.status, r.headers.get("Content-Type", ""), await r.read()


def mint_client_cert(ca_pem: bytes, ca_key_pem: bytes, user: str, groups: list[str]) -> tuple[bytes, bytes]:
    """A client certificate for `user` (CN) in `groups` (O), signed by the given CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca = x509.load_pem_x509_certificate(ca_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups),
                         x509.NameAttribute(NameOID.COMMON_NAME, user)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))  # type: ignore[arg-type]
    pem = serialization.Encoding.PEM
    return cert.public_bytes(pem), key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption())


async def _discovery(real: Real) -> dict[str, Any]:
    async def get(path: str) -> Any:
        code, _, raw = await real.send(Step("GET", path))
        assert code == 200, (path, code)
        return json.loads(raw)

    # the built-in groups: those kube-apiserver registered its own APIServices for at start
    services = await get("/apis/apiregistration.k8s.io/v1/apiservices")
    builtin = {(a["spec"].get("group") or "") for a in services["items"]
               if (a["metadata"].get("labels") or {}).get("kube-aggregator.kubernetes.io/automanaged") == "onstart"}
    builtin.add("apiregistration.k8s.io")  # the aggregator's own group has no APIService
    out: dict[str, Any] = {"/api": await get("/api"), "/api/v1": await get("/api/v1")}
    apis = await get("/apis")
    apis["groups"] = [g for g in apis["groups"] if g["name"] in builtin]
    out["/apis"] = apis
    for group in apis["groups"]:
        out[f"/apis/{group['name']}"] = await get(f"/apis/{group['name']}")
        for v in group["versions"]:
            out[f"/apis/{v['groupVersion']}"] = await get(f"/apis/{v['groupVersion']}")
    out["/api"]["serverAddressByClientCIDRs"] = [{"clientCIDR": "0.0.0.0/0", "serverAddress": "<server>"}]
    return out


async def _tables(real: Real, env: dict[str, str]) -> list[Obj]:
    """The Table (with the object it was made from) of each sample, after the controllers settled."""
    out = []
    for path, body in SAMPLES:
        name = fill(body["metadata"]["name"], env)
        code, _, raw = await real.send(Step("GET", f"{fill(path, env)}/{name}?includeObject=Object",
                                            headers={"Accept": TABLE}))
        assert code == 200, (path, code, raw[:300])
        text = raw.decode().replace(env["ns"], "{ns}").replace(env["sfx"], "{sfx}")
        out.append({"path": path, "name": body["metadata"]["name"], "table": json.loads(text)})
    return out


async def _cleanup(real: Real, env: dict[str, str]) -> None:
    for path, body in [*SAMPLES, *INVALID]:
        if "{ns}" in path:
            continue
        name = fill(body["metadata"]["name"], env)
        await real.send(Step("DELETE", f"{fill(path, env)}/{name}"))
    await real.send(Step("DELETE", f"/api/v1/namespaces/{env['ns']}"))


async def _bootstrap(real: Real) -> dict[str, Any]:
    """What the control plane creates for itself, as stored objects without server-set fields."""
    async def items(path: str) -> list[Obj]:
        code, _, raw = await real.send(Step("GET", path))
        assert code == 200, path
        out = []
        for item in json.loads(raw)["items"]:
            meta = item["metadata"]
            if "openshift" in meta["name"]:
                continue  # OpenShift's one addition to bootstrap RBAC (see ../shared/real-cluster)
            for k in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
                meta.pop(k, None)
            if item.get("aggregationRule") is not None:
                item["rules"] = None  # filled by kube-controller-manager's aggregation controller
            out.append(item)
        return out

    rbac_api = f"/apis/{RBAC}/v1"
    flow = "/apis/flowcontrol.apiserver.k8s.io/v1beta2"
    return {
        "clusterroles": await items(f"{rbac_api}/clusterroles"),
        "clusterrolebindings": await items(f"{rbac_api}/clusterrolebindings"),
        "roles": await items(f"{rbac_api}/roles"),
        "rolebindings": await items(f"{rbac_api}/rolebindings"),
        "priorityclasses": await items("/apis/scheduling.k8s.io/v1/priorityclasses"),
        "prioritylevelconfigurations": await items(f"{flow}/prioritylevelconfigurations"),
        "flowschemas": await items(f"{flow}/flowschemas"),
    }


async def record(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any] | None]:
    real = Real(args.kubeconfig, args.ca_key)
    async with aiohttp.ClientSession() as session:
        real.session = session
        bootstrap = await _bootstrap(real) if args.bootstrap else None
        _code, _, raw = await real.send(Step("GET", "/version"))
        version = json.loads(raw)["gitVersion"]
        result: dict[str, Any] = {"recorded_from": version, "discovery": await _discovery(real), "scenarios": {}}
        envs: dict[str, dict[str, str]] = {}
        try:
            # "tables" first: it lists cluster-wide objects, before other scenarios add their own
            ordered = sorted(scenarios().items(), key=lambda item: item[0] != "tables")
            for name, steps in ordered:
                # each scenario in a namespace of its own (and its own name suffix), as the replay runs it
                sfx = secrets.token_hex(3)
                env = envs[name] = {"ns": f"sfc-{sfx}", "sfx": sfx, "admin_token": real.token}
                await real.send(Step("POST", "/api/v1/namespaces", {"metadata": {"name": env["ns"]}}))
                await asyncio.sleep(1)  # its default ServiceAccount (the replay waits for it too)
                records = await run_steps(steps, real.send, env, recording=True)
                result["scenarios"][name] = {"cluster": name in CLUSTER, "steps": [s.to_json() for s in steps],
                                             "records": records}
            await asyncio.sleep(3)  # the controllers settle (Deployment status, PDB status, ...)
            result["tables"] = await _tables(real, envs["samples"])
        finally:
            for env in envs.values():
                await _cleanup(real, env)
    return result, bootstrap


def write(args: argparse.Namespace, result: dict[str, Any], bootstrap: dict[str, Any] | None) -> None:
    text = json.dumps(result, indent=1, sort_keys=False)
    Path(args.out).write_text(text + "\n")
    if bootstrap is not None:
        Path(args.bootstrap).write_text(json.dumps(bootstrap, indent=1, sort_keys=True) + "\n")
    version = result["recorded_from"]
    print(f"recorded {sum(len(s['steps']) for s in result['scenarios'].values())} steps, "
          f"{len(result['tables'])} tables, {len(result['discovery'])} discovery documents from {version}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--ca-key", default="/tmp/realk8s/pki/ca.key", help="the cluster CA's key (client certificates)")
    p.add_argument("--out", default=str(DATA))
    p.add_argument("--bootstrap", default="", help="also write the control plane's own objects here")
    args = p.parse_args()
    write(args, *asyncio.run(record(args)))


if __name__ == "__main__":
    main()
