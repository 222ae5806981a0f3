"""Leases, Events (core/v1 and events.k8s.io/v1) and EndpointSlices."""

from __future__ import annotations

from ..harness import Run
from .common import APPLY, MERGE, namespace

T = "2024-05-06T07:08:09.123456Z"


async def scenario_leases(run: Run) -> None:
    ns = await namespace(run, "lease")
    base = f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
    await run.req("create lease", "POST", base, {"metadata": {"name": "l1"}, "spec": {
        "holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": T, "renewTime": T}})
    await run.req("create lease negative duration", "POST", base, {"metadata": {"name": "l2"}, "spec": {
        "leaseDurationSeconds": 0}})
    await run.req("create lease negative transitions", "POST", base, {"metadata": {"name": "l3"}, "spec": {
        "leaseTransitions": -1}})
    await run.req("create lease bad time", "POST", base, {"metadata": {"name": "l4"}, "spec": {
        "renewTime": "2024-05-06T07:08:09Z"}})
    await run.req("create lease offset time", "POST", base, {"metadata": {"name": "l5"}, "spec": {
        "renewTime": "2024-05-06T09:08:09.000001+02:00"}})
    await run.req("renew", "PATCH", f"{base}/l1", {"spec": {"renewTime": "2024-05-06T07:08:19.000000Z",
                                                            "leaseTransitions": 1}}, ctype=MERGE)
    got = await run.raw("GET", f"{base}/l1")
    stale = got.obj
    stale["metadata"]["resourceVersion"] = "1"
    await run.req("update with a stale resourceVersion", "PUT", f"{base}/l1", stale)
    await run.req("put creates a lease", "PUT", f"{base}/l6", {"metadata": {"name": "l6"}, "spec": {
        "holderIdentity": "b"}})
    await run.req("apply lease", "PATCH", f"{base}/l7", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l7"},
        "spec": {"holderIdentity": "c", "leaseDurationSeconds": 10}}, ctype=APPLY, query={"fieldManager": "elector"})
    await run.req("list leases", "GET", base)


async def scenario_events(run: Run) -> None:
    ns = await namespace(run, "ev")
    core = f"/api/v1/namespaces/{ns}/events"
    new = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
    involved = {"kind": "Pod", "namespace": ns, "name": "p", "apiVersion": "v1"}
    await run.req("create core event", "POST", core, {
        "metadata": {"name": "e1"}, "involvedObject": involved, "reason": "Started", "message": "started",
        "type": "Normal", "count": 1, "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z",
        "source": {"component": "kubelet"}})
    await run.req("read core event as events.k8s.io", "GET", f"{new}/e1")
    await run.req("create core event in another namespace than its object", "POST", core, {
        "metadata": {"name": "e2"}, "involvedObject": {**involved, "namespace": "elsewhere"}, "reason": "X"})
    await run.req("create core event without involvedObject", "POST", core, {"metadata": {"name": "e3"}})
    await run.req("create new event", "POST", new, {
        "metadata": {"name": "e4"}, "eventTime": T, "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "regarding": involved, "type": "Normal",
        "note": "synced"})
    await run.req("read new event as core", "GET", f"{core}/e4")
    await run.req("create new event without eventTime", "POST", new, {
        "metadata": {"name": "e5"}, "reportingController": "example.com/ctl", "reportingInstance": "i",
        "action": "A", "reason": "R", "type": "Normal", "regarding": involved})
    await run.req("create new event bad type", "POST", new, {
        "metadata": {"name": "e6"}, "eventTime": T, "reportingController": "example.com/ctl",
        "reportingInstance": "i", "action": "A", "reason": "R", "type": "Loud", "regarding": involved})
    await run.req("create new event note too long", "POST", new, {
        "metadata": {"name": "e7"}, "eventTime": T, "reportingController": "example.com/ctl",
        "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal", "regarding": involved,
        "note": "n" * 1100})
    await run.req("series update", "PATCH", f"{new}/e4", {"series": {"count": 2, "lastObservedTime": T}}, ctype=MERGE)
    await run.req("list core events", "GET", core)


async def scenario_endpoint_slices(run: Run) -> None:
    ns = await namespace(run, "eps")
    base = f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices"
    await run.req("create slice", "POST", base, {
        "metadata": {"name": "s1", "labels": {"kubernetes.io/service-name": "web"}}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}, "nodeName": "n1"}],
        "ports": [{"name": "http", "port": 80}]})
    await run.req("create slice bad address type", "POST", base, {"metadata": {"name": "s2"}, "addressType": "IPv5",
                                                                 "endpoints": []})
    await run.req("create slice without address type", "POST", base, {"metadata": {"name": "s3"}, "endpoints": []})
    await run.req("create slice bad address", "POST", base, {"metadata": {"name": "s4"}, "addressType": "IPv4",
                                                             "endpoints": [{"addresses": ["nope"]}]})
    await run.req("create slice no addresses", "POST", base, {"metadata": {"name": "s5"}, "addressType": "IPv4",
                                                             "endpoints": [{"addresses": []}]})
    await run.req("create slice FQDN", "POST", base, {"metadata": {"name": "s6"}, "addressType": "FQDN",
                                                     "endpoints": [{"addresses": ["web.example.com"]}],
                                                     "ports": [{"port": 443, "protocol": "TCP", "appProtocol": "https"}]})
    await run.req("create slice duplicate port names", "POST", base, {"metadata": {"name": "s7"}, "addressType": "IPv4",
                                                                     "endpoints": [],
                                                                     "ports": [{"name": "a", "port": 1},
                                                                               {"name": "a", "port": 2}]})
    await run.req("change address type (immutable)", "PATCH", f"{base}/s1", {"addressType": "IPv6"}, ctype=MERGE)
    await run.req("add an endpoint", "PATCH", f"{base}/s1", {"endpoints": [
        {"addresses": ["10.1.2.3"]}, {"addresses": ["10.1.2.4"], "zone": "z1"}]}, ctype=MERGE)
    await run.req("list slices by service", "GET", base, query={"labelSelector": "kubernetes.io/service-name=web"})
