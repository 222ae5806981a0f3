"""Services: ClusterIP and clusterIPs, NodePort, LoadBalancer, headless, ExternalName, type changes."""

from __future__ import annotations

from typing import Any

from ..harness import Run
from .common import JSONPATCH, MERGE, SMP, namespace


def svc(name: str, **spec: Any) -> dict[str, Any]:
    ports = spec.pop("ports", [{"port": 80}])
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": ports, **spec}}


async def scenario_services_cluster_ip(run: Run) -> None:
    ns = await namespace(run, "svc")
    base = f"/api/v1/namespaces/{ns}/services"
    await run.req("create ClusterIP (defaults)", "POST", base, svc("a"))
    await run.req("create ports with names and targetPort", "POST", base, svc("b", ports=[
        {"name": "http", "port": 80, "targetPort": "web"}, {"name": "dns", "port": 53, "protocol": "UDP"}]))
    await run.req("create two unnamed ports", "POST", base, svc("c", ports=[{"port": 80}, {"port": 81}]))
    await run.req("create duplicate port", "POST", base, svc("d", ports=[
        {"name": "a", "port": 80}, {"name": "b", "port": 80}]))
    await run.req("create port 0", "POST", base, svc("e", ports=[{"port": 0}]))
    await run.req("create bad protocol", "POST", base, svc("f", ports=[{"port": 80, "protocol": "HTTP"}]))
    await run.req("create clusterIP outside the range", "POST", base, svc("g", clusterIP="1.2.3.4"))
    await run.req("create clusterIP not an IP", "POST", base, svc("h", clusterIP="nope"))
    await run.req("create clusterIPs not matching clusterIP", "POST", base,
                  svc("i", clusterIP="10.96.200.1", clusterIPs=["10.96.200.2"]))
    await run.req("create session affinity ClientIP", "POST", base, svc("j", sessionAffinity="ClientIP"))
    await run.req("create bad session affinity", "POST", base, svc("k", sessionAffinity="Sticky"))
    await run.req("create ipFamilyPolicy RequireDualStack", "POST", base, svc("l", ipFamilyPolicy="RequireDualStack"))
    await run.req("create no ports", "POST", base, svc("m", ports=[]))
    await run.req("create externalTrafficPolicy on ClusterIP", "POST", base, svc("n", externalTrafficPolicy="Local"))
    await run.req("change clusterIP (immutable)", "PATCH", f"{base}/a", {"spec": {"clusterIP": "10.96.123.123"}},
                  ctype=MERGE)
    current = await run.raw("GET", f"{base}/a")
    body = current.obj
    body["spec"].pop("clusterIP", None)
    body["spec"].pop("clusterIPs", None)
    body["spec"]["ports"][0]["port"] = 8080
    await run.req("put without clusterIP keeps it", "PUT", f"{base}/a", body)
    await run.req("add a port (strategic merge)", "PATCH", f"{base}/a",
                  {"spec": {"ports": [{"name": "extra", "port": 9090}]}}, ctype=SMP)
    await run.req("remove a port by json patch", "PATCH", f"{base}/a",
                  [{"op": "remove", "path": "/spec/ports/1"}], ctype=JSONPATCH)
    await run.req("put missing service creates it", "PUT", f"{base}/created-by-put", svc("created-by-put"))
    await run.req("status loadBalancer ingress on ClusterIP", "PATCH", f"{base}/a/status",
                  {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}, ctype=MERGE)
    await run.req("delete returns the service", "DELETE", f"{base}/a")


async def scenario_services_types(run: Run) -> None:
    ns = await namespace(run, "svct")
    base = f"/api/v1/namespaces/{ns}/services"
    await run.req("create headless", "POST", base, svc("hl", clusterIP="None"))
    await run.req("create headless without ports", "POST", base, svc("hl2", clusterIP="None", ports=[]))
    await run.req("create NodePort", "POST", base, svc("np", type="NodePort"))
    await run.req("create NodePort with a port out of range", "POST", base,
                  svc("np2", type="NodePort", ports=[{"port": 80, "nodePort": 80}]))
    await run.req("create LoadBalancer", "POST", base, svc("lb", type="LoadBalancer"))
    await run.req("create LoadBalancer Local policy", "POST", base,
                  svc("lb2", type="LoadBalancer", externalTrafficPolicy="Local"))
    await run.req("create ExternalName", "POST", base,
                  {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}})
    await run.req("create ExternalName without name", "POST", base,
                  {"metadata": {"name": "ext2"}, "spec": {"type": "ExternalName"}})
    await run.req("create bad type", "POST", base, svc("bad", type="Internal"))
    await run.req("ClusterIP headless to NodePort", "PATCH", f"{base}/hl", {"spec": {"type": "NodePort"}},
                  ctype=MERGE)
    await run.req("NodePort to ClusterIP keeping nodePort", "PATCH", f"{base}/np", {"spec": {"type": "ClusterIP"}},
                  ctype=MERGE)
    await run.req("NodePort to ClusterIP (strategic, nodePort removed)", "PATCH", f"{base}/np",
                  {"spec": {"type": "ClusterIP", "externalTrafficPolicy": None,
                            "ports": [{"port": 80, "nodePort": None}]}}, ctype=SMP)
    await run.req("ClusterIP to ExternalName keeping the clusterIP", "PATCH", f"{base}/np",
                  {"spec": {"type": "ExternalName", "externalName": "example.org"}}, ctype=MERGE)
    await run.req("ClusterIP to ExternalName", "PATCH", f"{base}/np",
                  {"spec": {"type": "ExternalName", "externalName": "example.org", "clusterIP": "",
                            "clusterIPs": None, "ipFamilies": None, "ipFamilyPolicy": None,
                            "internalTrafficPolicy": None, "selector": None}}, ctype=MERGE)
    await run.req("ExternalName to ClusterIP", "PATCH", f"{base}/ext",
                  {"spec": {"type": "ClusterIP", "externalName": None, "ports": [{"port": 443}]}}, ctype=MERGE)
    await run.req("LoadBalancer to ClusterIP", "PATCH", f"{base}/lb",
                  {"spec": {"type": "ClusterIP", "externalTrafficPolicy": None,
                            "allocateLoadBalancerNodePorts": None,
                            "ports": [{"port": 80, "nodePort": None}]}}, ctype=SMP)
    await run.req("list services", "GET", base)


async def scenario_services_validation(run: Run) -> None:
    ns = await namespace(run, "svcv")
    base = f"/api/v1/namespaces/{ns}/services"
    await run.req("two ports without names", "POST", base,
                  {"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}, {"port": 81}]}})
    await run.req("bad targetPort name", "POST", base,
                  {"metadata": {"name": "b"}, "spec": {"ports": [{"port": 80, "targetPort": "Not_A_Name"}]}})
    await run.req("externalIPs invalid and loopback", "POST", base,
                  {"metadata": {"name": "c"}, "spec": {"ports": [{"port": 80}],
                                                        "externalIPs": ["nope", "127.0.0.1"]}})
    await run.req("sessionAffinity ClientIP timeout too big", "POST", base,
                  {"metadata": {"name": "d"}, "spec": {"ports": [{"port": 80}], "sessionAffinity": "ClientIP",
                                                        "sessionAffinityConfig": {"clientIP": {
                                                            "timeoutSeconds": 100000}}}})
    await run.req("LoadBalancer on the kubelet port", "POST", base,
                  {"metadata": {"name": "e"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 10250}]}})
    await run.req("allocateLoadBalancerNodePorts on ClusterIP", "POST", base,
                  {"metadata": {"name": "f"}, "spec": {"ports": [{"port": 80}], "allocateLoadBalancerNodePorts": False}})
    await run.req("healthCheckNodePort on ClusterIP", "POST", base,
                  {"metadata": {"name": "g"}, "spec": {"ports": [{"port": 80}], "healthCheckNodePort": 30500}})
    await run.req("loadBalancerSourceRanges on ClusterIP", "POST", base,
                  {"metadata": {"name": "h"}, "spec": {"ports": [{"port": 80}],
                                                        "loadBalancerSourceRanges": ["10.0.0.0/8"]}})
    await run.req("IPv6 family not configured", "POST", base,
                  {"metadata": {"name": "i"}, "spec": {"ports": [{"port": 80}], "ipFamilies": ["IPv6"]}})
    await run.req("ExternalName with a bad name", "POST", base,
                  {"metadata": {"name": "j"}, "spec": {"type": "ExternalName", "externalName": "Not_Valid"}})
    await run.req("LoadBalancer without node ports", "POST", base,
                  {"metadata": {"name": "k"}, "spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": False,
                                                        "ports": [{"port": 80}]}})
    await run.req("port protocol bad", "POST", base,
                  {"metadata": {"name": "l"}, "spec": {"ports": [{"port": 80, "protocol": "ICMP"}]}})
    await run.req("name not a DNS-1035 label", "POST", base,
                  {"metadata": {"name": "1abc"}, "spec": {"ports": [{"port": 80}]}})
    await run.req("status ingress hostname an IP", "PATCH", f"{base}/k/status", {"status": {"loadBalancer": {
        "ingress": [{"hostname": "10.0.0.1"}]}}}, ctype=MERGE)
