"""Ingress, NetworkPolicy, PodDisruptionBudget and HorizontalPodAutoscaler: defaults, validation
causes, status, generation."""

from __future__ import annotations

from ..harness import Run
from .common import APPLY, MERGE, namespace


async def scenario_ingresses(run: Run) -> None:
    ns = await namespace(run, "ing")
    base = f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses"
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    rule = {"host": "example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}
    await run.req("create ingress (defaults)", "POST", base, {"metadata": {"name": "i1"}, "spec": {"rules": [rule]}})
    await run.req("create without pathType", "POST", base, {"metadata": {"name": "i2"}, "spec": {"rules": [
        {"http": {"paths": [{"path": "/", "backend": backend}]}}]}})
    await run.req("create bad pathType", "POST", base, {"metadata": {"name": "i3"}, "spec": {"rules": [
        {"http": {"paths": [{"path": "/", "pathType": "Glob", "backend": backend}]}}]}})
    await run.req("create relative path", "POST", base, {"metadata": {"name": "i4"}, "spec": {"rules": [
        {"http": {"paths": [{"path": "api", "pathType": "Prefix", "backend": backend}]}}]}})
    await run.req("create backend with port name and number", "POST", base, {"metadata": {"name": "i5"}, "spec": {
        "defaultBackend": {"service": {"name": "web", "port": {"number": 80, "name": "http"}}}}})
    await run.req("create wildcard host", "POST", base, {"metadata": {"name": "i6"}, "spec": {"rules": [
        {"host": "*.example.com", "http": {"paths": [{"path": "/", "pathType": "Exact", "backend": backend}]}}]}})
    await run.req("create bad host", "POST", base, {"metadata": {"name": "i7"}, "spec": {"rules": [
        {"host": "Example.COM", "http": {"paths": [{"path": "/", "pathType": "Exact", "backend": backend}]}}]}})
    await run.req("create no rules no default", "POST", base, {"metadata": {"name": "i8"}, "spec": {}})
    await run.req("create tls", "POST", base, {"metadata": {"name": "i9"}, "spec": {
        "tls": [{"hosts": ["example.com"], "secretName": "cert"}], "defaultBackend": backend}})
    await run.req("change rules bumps generation", "PATCH", f"{base}/i1",
                  {"spec": {"rules": [{**rule, "host": "example.org"}]}}, ctype=MERGE)
    await run.req("status load balancer", "PATCH", f"{base}/i1/status",
                  {"status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}}, ctype=MERGE)
    await run.req("status bad ip", "PATCH", f"{base}/i1/status",
                  {"status": {"loadBalancer": {"ingress": [{"ip": "not-an-ip"}]}}}, ctype=MERGE)
    await run.req("apply ingress", "PATCH", f"{base}/i10", {
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i10"},
        "spec": {"ingressClassName": "nginx", "defaultBackend": backend}}, ctype=APPLY, query={"fieldManager": "ops"})


async def scenario_network_policies(run: Run) -> None:
    ns = await namespace(run, "np")
    base = f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"
    await run.req("create deny-all (defaults)", "POST", base, {"metadata": {"name": "deny"}, "spec": {
        "podSelector": {}}})
    await run.req("create ingress rule (port protocol default)", "POST", base, {"metadata": {"name": "web"}, "spec": {
        "podSelector": {"matchLabels": {"app": "web"}},
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}], "ports": [{"port": 80}]}]}})
    await run.req("create egress only", "POST", base, {"metadata": {"name": "egress"}, "spec": {
        "podSelector": {}, "policyTypes": ["Egress"],
        "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}]}})
    await run.req("create bad policy type", "POST", base, {"metadata": {"name": "bad1"}, "spec": {
        "podSelector": {}, "policyTypes": ["Sideways"]}})
    await run.req("create bad cidr", "POST", base, {"metadata": {"name": "bad2"}, "spec": {
        "podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0"}}]}]}})
    await run.req("create except outside cidr", "POST", base, {"metadata": {"name": "bad3"}, "spec": {
        "podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["11.0.0.0/24"]}}]}]}})
    await run.req("create ipBlock with selector", "POST", base, {"metadata": {"name": "bad4"}, "spec": {
        "podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"},
                                                  "podSelector": {}}]}]}})
    await run.req("create endPort below port", "POST", base, {"metadata": {"name": "bad5"}, "spec": {
        "podSelector": {}, "ingress": [{"ports": [{"port": 100, "endPort": 90}]}]}})
    await run.req("create named port with endPort", "POST", base, {"metadata": {"name": "bad6"}, "spec": {
        "podSelector": {}, "ingress": [{"ports": [{"port": "http", "endPort": 90}]}]}})
    await run.req("change spec bumps generation", "PATCH", f"{base}/web", {"spec": {"ingress": []}}, ctype=MERGE)
    await run.req("get policy", "GET", f"{base}/egress")


async def scenario_disruption_budgets(run: Run) -> None:
    ns = await namespace(run, "pdb")
    base = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    await run.req("create minAvailable", "POST", base, {"metadata": {"name": "p1"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}})
    await run.req("create maxUnavailable percent", "POST", base, {"metadata": {"name": "p2"}, "spec": {
        "maxUnavailable": "30%", "selector": {"matchLabels": {"app": "a"}}}})
    await run.req("create both", "POST", base, {"metadata": {"name": "p3"}, "spec": {
        "minAvailable": 1, "maxUnavailable": 1}})
    await run.req("create negative", "POST", base, {"metadata": {"name": "p4"}, "spec": {"minAvailable": -1}})
    await run.req("create percent over 100", "POST", base, {"metadata": {"name": "p5"}, "spec": {
        "maxUnavailable": "150%"}})
    await run.req("create bad percent", "POST", base, {"metadata": {"name": "p6"}, "spec": {
        "minAvailable": "half"}})
    await run.req("create without selector", "POST", base, {"metadata": {"name": "p7"}, "spec": {"minAvailable": 2}})
    await run.req("change selector (allowed in policy/v1)", "PATCH", f"{base}/p1",
                  {"spec": {"selector": {"matchLabels": {"app": "b"}}}}, ctype=MERGE)
    await run.req("status write", "PATCH", f"{base}/p1/status", {"status": {
        "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3, "disruptionsAllowed": 1, "observedGeneration": 2}},
        ctype=MERGE)
    await run.req("status write negative", "PATCH", f"{base}/p1/status", {"status": {"disruptionsAllowed": -1}},
                  ctype=MERGE)
    await run.req("status conditions", "PATCH", f"{base}/p1/status", {"status": {"conditions": [
        {"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods", "message": "",
         "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}, ctype=MERGE)


async def scenario_autoscalers(run: Run) -> None:
    ns = await namespace(run, "hpa")
    base = f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    await run.req("create hpa (defaults)", "POST", base, {"metadata": {"name": "h1"}, "spec": {
        "scaleTargetRef": target, "maxReplicas": 5}})
    await run.req("create with cpu metric", "POST", base, {"metadata": {"name": "h2"}, "spec": {
        "scaleTargetRef": target, "minReplicas": 2, "maxReplicas": 10, "metrics": [{
            "type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}})
    await run.req("create min above max", "POST", base, {"metadata": {"name": "h3"}, "spec": {
        "scaleTargetRef": target, "minReplicas": 6, "maxReplicas": 5}})
    await run.req("create minReplicas 0", "POST", base, {"metadata": {"name": "h4"}, "spec": {
        "scaleTargetRef": target, "minReplicas": 0, "maxReplicas": 5}})
    await run.req("create without target kind", "POST", base, {"metadata": {"name": "h5"}, "spec": {
        "scaleTargetRef": {"name": "web"}, "maxReplicas": 5}})
    await run.req("create bad metric type", "POST", base, {"metadata": {"name": "h6"}, "spec": {
        "scaleTargetRef": target, "maxReplicas": 5, "metrics": [{"type": "Magic"}]}})
    await run.req("create behavior", "POST", base, {"metadata": {"name": "h7"}, "spec": {
        "scaleTargetRef": target, "maxReplicas": 5, "behavior": {"scaleDown": {"policies": [
            {"type": "Pods", "value": 1, "periodSeconds": 60}]}}}})
    await run.req("change maxReplicas", "PATCH", f"{base}/h1", {"spec": {"maxReplicas": 7}}, ctype=MERGE)
    await run.req("status write", "PATCH", f"{base}/h1/status", {"status": {
        "currentReplicas": 2, "desiredReplicas": 3}}, ctype=MERGE)
    await run.req("read hpa", "GET", f"{base}/h2")


async def scenario_networking_more(run: Run) -> None:
    ns = await namespace(run, "netm")
    ing = f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses"
    backend = {"service": {"name": "web", "port": {"number": 80}}}

    def rule(host: str, path: str = "/", path_type: str = "Prefix") -> dict[str, object]:
        return {"host": host, "http": {"paths": [{"path": path, "pathType": path_type, "backend": backend}]}}

    await run.req("wildcard host", "POST", ing, {"metadata": {"name": "w1"}, "spec": {"rules": [rule("*.example.com")]}})
    await run.req("bad wildcard host", "POST", ing, {"metadata": {"name": "w2"}, "spec": {"rules": [rule("a.*.com")]}})
    await run.req("host is an IP", "POST", ing, {"metadata": {"name": "w3"}, "spec": {"rules": [rule("10.0.0.1")]}})
    await run.req("path with a double slash", "POST", ing,
                  {"metadata": {"name": "w4"}, "spec": {"rules": [rule("a.example.com", "/a//b")]}})
    await run.req("tls host invalid", "POST", ing, {"metadata": {"name": "w5"}, "spec": {
        "defaultBackend": backend, "tls": [{"hosts": ["Bad_Host"], "secretName": "x"}]}})
    await run.req("class annotation and field both", "POST", ing, {"metadata": {
        "name": "w6", "annotations": {"kubernetes.io/ingress.class": "nginx"}}, "spec": {
        "ingressClassName": "nginx", "defaultBackend": backend}})
    await run.req("resource backend", "POST", ing, {"metadata": {"name": "w7"}, "spec": {"defaultBackend": {
        "resource": {"apiGroup": "example.com", "kind": "Bucket", "name": "b"}}}})
    await run.req("backend without port", "POST", ing, {"metadata": {"name": "w8"}, "spec": {"defaultBackend": {
        "service": {"name": "web"}}}})
    await run.req("ImplementationSpecific relative path", "POST", ing,
                  {"metadata": {"name": "w9"}, "spec": {"rules": [rule("a.example.com", "x", "ImplementationSpecific")]}})
    await run.req("change a rule bumps generation", "PATCH", f"{ing}/w1", {"spec": {"defaultBackend": backend}},
                  ctype=MERGE)
    np = f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"
    await run.req("egress policy (types defaulted)", "POST", np, {"metadata": {"name": "e1"}, "spec": {
        "podSelector": {}, "egress": [{"to": [{"namespaceSelector": {}}], "ports": [{"port": 53, "protocol": "UDP"}]}]}})
    await run.req("peer without anything", "POST", np, {"metadata": {"name": "e2"}, "spec": {
        "podSelector": {}, "ingress": [{"from": [{}]}]}})
    await run.req("three policy types", "POST", np, {"metadata": {"name": "e3"}, "spec": {
        "podSelector": {}, "policyTypes": ["Ingress", "Egress", "Ingress"]}})
    await run.req("endPort without port", "POST", np, {"metadata": {"name": "e4"}, "spec": {
        "podSelector": {}, "ingress": [{"ports": [{"endPort": 90}]}]}})
    await run.req("except not a cidr", "POST", np, {"metadata": {"name": "e5"}, "spec": {
        "podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["x"]}}]}]}})
