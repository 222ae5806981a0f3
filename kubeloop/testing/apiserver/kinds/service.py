"""core/v1 Service as kube-apiserver 1.24 serves it on a single-stack IPv4 cluster whose service
range is 10.96.0.0/16 and node-port range 30000-32767 (the recorded cluster's flags).

The order is the real server's: scheme defaults while decoding (`SetDefaults_Service`), then the
service storage's `beginCreate`/`beginUpdate`, which allocates cluster IPs, node ports and the
health-check node port *before* validation (so an IP outside the range is refused by the
allocator, naming `spec.clusterIPs`), then `PrepareForUpdate` (a type change drops the fields the
new type cannot hold when the request left them as they were), then `ValidateService`. Reads go
through the storage's decorator (`defaultOnRead`: an ExternalName service shows no
`internalTrafficPolicy`).

Allocation: a requested IP or node port is checked against the range, then against what the
stored Services hold ("provided IP is already allocated", "provided port is already allocated"; a
dry run checks an IP against the range only, a port against both, as 1.24's dry-run allocators
do; an update allocates only values its stored version did not hold). A value is free again once
no stored Service holds it, so nothing needs releasing on delete or on a failed write. The next
free value is taken from a counter, skipping held ones (the real allocator picks at random).
"""

from __future__ import annotations

import copy
import ipaddress
import itertools
import re
from typing import Any

from kubeloop import meta as kv

from .. import gostruct
from ..errors import internal_error, invalid
from ..resources import DRY_RUN, PEERS, ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import podspec
from .base import KindStrategy

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
IP_FAMILIES = ("IPv4", "IPv6")
TRAFFIC_POLICIES = ("Cluster", "Local")
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/16")
NODE_PORT_RANGE = (30000, 32767)
DEFAULT_CLIENT_IP_TIMEOUT = 10800
MAX_CLIENT_IP_TIMEOUT = 86400
KUBELET_PORT = 10250
VALID_IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
_SERVICE_PORT_GO = "k8s.io/kubernetes/pkg/apis/core.ServicePort"
_POLICY_GO = "*k8s.io/kubernetes/pkg/apis/core.IPFamilyPolicy"
_DOTTED = re.compile(r"^[0-9]+(\.[0-9]+){3}$")


def parse_ip(text: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`netutils.ParseIPSloppy`: IPv4 parts may have leading zeros (read as decimal)."""
    if not isinstance(text, str) or not text:
        return None
    if _DOTTED.match(text):
        parts = [int(p) for p in text.split(".")]
        if all(p < 256 for p in parts):
            return ipaddress.IPv4Address(".".join(map(str, parts)))
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _is_v6(text: Any) -> bool:
    ip = parse_ip(text)
    return ip is not None and ip.version == 6 and ip.ipv4_mapped is None


def _needs_cluster_ip(spec: Obj) -> bool:
    return spec.get("type") != "ExternalName"


def _needs_node_port(spec: Obj) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer")


def needs_health_check(spec: Obj) -> bool:
    """`apiservice.NeedsHealthCheck`."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _headless(spec: Obj) -> bool:
    ips = spec.get("clusterIPs") or []
    return len(ips) == 1 and ips[0] == "None"


def _ports(spec: Obj) -> list[Obj]:
    return [p for p in spec.get("ports") or [] if isinstance(p, dict)]


class ServiceStrategy(KindStrategy):
    name_fn = staticmethod(m.name_is_dns1035_label)

    def __init__(self) -> None:
        self._next_ip = itertools.count(2)  # 10.96.0.1 is the `kubernetes` Service's
        self._next_node_port = itertools.count(NODE_PORT_RANGE[0])
        #: the dry-run allocator's placeholders of the request being served (32769, 32770, ...)
        self._dry_ports = itertools.count(NODE_PORT_RANGE[1] + 2)
        #: the cluster IPs and node ports taken: by the stored Services (`_take_held`, at the start of
        #: each request; an update's own stored version included, whose values it keeps without
        #: allocating them again) and by the request being served
        self._held_ips: set[str] = set()
        self._held_ports: set[int] = set()

    def _take_held(self) -> None:
        """Read what the stored Services hold (`PEERS`), before allocating for a request."""
        ips: set[str] = set()
        ports: set[int] = set()
        for stored in PEERS.get().values():
            spec = stored.obj.get("spec") or {}
            ips.update(ip for ip in spec.get("clusterIPs") or () if isinstance(ip, str) and ip not in ("", "None"))
            ports.update(p["nodePort"] for p in _ports(spec) if isinstance(p.get("nodePort"), int))
            if isinstance(spec.get("healthCheckNodePort"), int):
                ports.add(spec["healthCheckNodePort"])
        self._held_ips, self._held_ports = ips, ports

    # -- decoding and reading --------------------------------------------------------------------
    def default(self, info: ServedResource, obj: Obj) -> None:
        """`SetDefaults_Service` (ServiceInternalTrafficPolicy and ServiceLBNodePortControl on)."""
        spec = obj.setdefault("spec", {})
        if not spec.get("sessionAffinity"):
            spec["sessionAffinity"] = "None"
        if spec["sessionAffinity"] == "None":
            spec.pop("sessionAffinityConfig", None)
        if spec["sessionAffinity"] == "ClientIP":
            cfg = spec.get("sessionAffinityConfig")
            if not isinstance(cfg, dict) or not isinstance(cfg.get("clientIP"), dict) or \
                    cfg["clientIP"].get("timeoutSeconds") is None:
                spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}}
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        for port in _ports(spec):
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = int(port.get("port") or 0)
        if _needs_node_port(spec) and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if spec.get("internalTrafficPolicy") is None and spec["type"] in ("NodePort", "LoadBalancer", "ClusterIP"):
            spec["internalTrafficPolicy"] = "Cluster"
        if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True

    def decorate(self, info: ServedResource, stored: Obj) -> Obj:
        """The storage's decorator (`defaultOnReadInternalTrafficPolicy`)."""
        spec = stored.get("spec")
        if isinstance(spec, dict) and spec.get("type") == "ExternalName" and "internalTrafficPolicy" in spec:
            stored = dict(stored)
            stored["spec"] = {k: v for k, v in spec.items() if k != "internalTrafficPolicy"}
        return stored

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"loadBalancer": {}}

    # -- create ----------------------------------------------------------------------------------
    def prepare_create(self, info: ServedResource, obj: Obj) -> None:
        """`beginCreate`: `normalizeClusterIPs`, then `allocateCreate`."""
        spec = obj.setdefault("spec", {})
        self._dry_ports = itertools.count(NODE_PORT_RANGE[1] + 2)
        self._take_held()
        if spec.get("clusterIP") and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]
        name = (obj.get("metadata") or {}).get("name")
        self._init_ip_family_fields(name, spec, None)
        self._alloc_cluster_ips(name, spec)
        if _needs_node_port(spec):
            self._init_node_ports(name, spec)
        if needs_health_check(spec):
            self._alloc_health_check_port(spec)

    # -- update ----------------------------------------------------------------------------------
    def prepare_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        """`beginUpdate` (`patchAllocatedValues`, `normalizeClusterIPs`, `allocateUpdate`), then the
        strategy's `dropTypeDependentFields`."""
        spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
        name = (new.get("metadata") or {}).get("name")
        self._dry_ports = itertools.count(NODE_PORT_RANGE[1] + 2)
        self._take_held()
        _patch_allocated_values(spec, old_spec)
        _normalize_cluster_ips(spec, old_spec)
        self._init_ip_family_fields(name, spec, old_spec)
        self._update_cluster_ips(name, spec, old_spec)
        if _needs_node_port(spec):
            self._update_node_ports(name, spec, old_spec)
        if not needs_health_check(old_spec) and needs_health_check(spec):
            self._alloc_health_check_port(spec)
        _drop_type_dependent_fields(new, old)

    # -- allocation ------------------------------------------------------------------------------
    def _init_ip_family_fields(self, name: Any, spec: Obj, old: Obj | None) -> None:
        """`initIPFamilyFields` on a single-stack IPv4 cluster."""
        if spec.get("type") == "ExternalName" or _matching_prefer_dual_stack(spec, old):
            return
        if spec.get("ipFamilyPolicy") is None:
            if old is not None and old.get("ipFamilyPolicy") is not None:
                spec["ipFamilyPolicy"] = old["ipFamilyPolicy"]
            elif spec.get("clusterIP") == "None" and not spec.get("selector"):
                spec["ipFamilyPolicy"] = "RequireDualStack"
            else:
                spec["ipFamilyPolicy"] = "SingleStack"
        causes = validate_cluster_ips_related_fields(spec)
        if causes:
            raise invalid("Service", name, causes)
        policy = spec["ipFamilyPolicy"]
        ips, families = spec.get("clusterIPs") or [], spec.get("ipFamilies") or []
        if old is not None:
            if policy == "SingleStack":
                if ips == (old.get("clusterIPs") or []) and len(ips) > 1:
                    spec["clusterIPs"] = ips = ips[:1]
                if families == (old.get("ipFamilies") or []) and len(families) > 1:
                    spec["ipFamilies"] = families = families[:1]
            else:
                if ips and len(ips) < len(old.get("clusterIPs") or []):
                    causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, policy,
                                                  "must be 'SingleStack' to release the secondary cluster IP"))
                if families and len(families) < len(old.get("ipFamilies") or []):
                    causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, policy,
                                                  "must be 'SingleStack' to release the secondary IP family"))
        if policy == "SingleStack":
            if len(ips) == 2:
                causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, policy, "must be 'RequireDualStack' "
                                              "or 'PreferDualStack' when multiple cluster IPs are specified"))
            if len(families) == 2:
                causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, policy, "must be 'RequireDualStack' "
                                              "or 'PreferDualStack' when multiple IP families are specified"))
        families = list(families)
        for i, ip in enumerate(ips):
            if ip == "None":
                break
            family = "IPv6" if _is_v6(ip) else "IPv4" if parse_ip(ip) else "unknown"
            if i >= len(families):
                if family != "IPv4":
                    causes.append(m.invalid_typed(f"spec.clusterIPs[{i}]", "[]string", ips,
                                                  f"{family} is not configured on this cluster"))
                else:
                    families.append(family)
        if causes:
            raise invalid("Service", name, causes)
        if families != (spec.get("ipFamilies") or []):
            spec["ipFamilies"] = families
        if spec.get("clusterIP") == "None" and not spec.get("selector"):
            if not families:
                spec["ipFamilies"] = families = ["IPv4"]
            if len(families) < 2 and policy != "SingleStack":
                spec["ipFamilies"] = [*families, "IPv6" if families[0] == "IPv4" else "IPv4"]
            return
        if policy == "RequireDualStack":
            causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, policy,
                                          "this cluster is not configured for dual-stack services"))
        for i, family in enumerate(families):
            if family != "IPv4":
                causes.append(m.invalid_typed(f"spec.ipFamilies[{i}]", "k8s.io/kubernetes/pkg/apis/core.IPFamily",
                                              family, "not configured on this cluster"))
        if causes:
            raise invalid("Service", name, causes)
        if not families:
            spec["ipFamilies"] = ["IPv4"]

    def _alloc_cluster_ips(self, name: Any, spec: Obj) -> None:
        """`allocClusterIPs`: the primary family's IP, requested or the next free one."""
        if spec.get("type") == "ExternalName":
            return
        ips = list(spec.get("clusterIPs") or [])
        if ips and ips[0] == "None":
            return
        families = spec.get("ipFamilies") or []
        while len(ips) < len(families):
            ips.append("")
        for i, _family in enumerate(families):
            ips[i] = self._alloc_ip(name, ips[i], ips)
            if i == 0:
                spec["clusterIP"] = ips[0]
        spec["clusterIPs"] = ips

    def _alloc_ip(self, name: Any, requested: str, shown: list[str]) -> str:
        if not requested:
            if DRY_RUN.get():
                return str(SERVICE_CIDR.network_address + 2)
            while True:
                candidate = str(SERVICE_CIDR.network_address + next(self._next_ip))
                if candidate not in self._held_ips:
                    return candidate
        ip = parse_ip(requested)
        if ip is None:
            raise internal_error(f'failed to parse service IP "{requested}"')
        if ip not in SERVICE_CIDR or ip in (SERVICE_CIDR.network_address, SERVICE_CIDR.broadcast_address):
            raise invalid("Service", name, [m.invalid_typed(
                "spec.clusterIPs", "[]string", shown, f"failed to allocate IP {requested}: the provided IP ({ip}) is "
                f"not in the valid range. The range of valid IPs is {SERVICE_CIDR}")])
        if str(ip) in self._held_ips and not DRY_RUN.get():  # the dry-run IP allocator takes any IP in range
            raise invalid("Service", name, [m.invalid_typed(
                "spec.clusterIPs", "[]string", shown, f"failed to allocate IP {requested}: provided IP is already allocated")])
        self._held_ips.add(str(ip))
        return requested

    def _update_cluster_ips(self, name: Any, spec: Obj, old: Obj) -> None:
        """`updateClusterIPs` (single stack: only a change from ExternalName allocates)."""
        if _matching_prefer_dual_stack(spec, old):
            return
        if old.get("type") == "ExternalName" and spec.get("type") != "ExternalName":
            self._alloc_cluster_ips(name, spec)

    def _next_port(self) -> int:
        if DRY_RUN.get():
            return next(self._dry_ports)
        while True:
            port = next(self._next_node_port)
            if port not in self._held_ports:
                return port

    def _allocate_port(self, name: Any, fld: str, port: int) -> None:
        if not NODE_PORT_RANGE[0] <= port <= NODE_PORT_RANGE[1]:
            raise invalid("Service", name, [m.invalid_cause(
                fld, port, "provided port is not in the valid range. The range of valid ports is "
                f"{NODE_PORT_RANGE[0]}-{NODE_PORT_RANGE[1]}")])
        if port in self._held_ports:  # a dry run too (its port allocator reads the real one's bitmap)
            raise invalid("Service", name, [m.invalid_cause(fld, port, "provided port is already allocated")])
        self._held_ports.add(port)

    def _init_node_ports(self, name: Any, spec: Obj) -> None:
        """`initNodePorts`: ports sharing a port number share one node port."""
        ports = _ports(spec)
        by_port: dict[Any, int] = {}
        for i, port in enumerate(ports):
            if not port.get("nodePort") and not _should_allocate_node_ports(spec):
                continue
            number = port.get("port")
            have = by_port.get(number)
            if not have:
                requested = next((p["nodePort"] for p in ports if p.get("port") == number and p.get("nodePort")), 0)
                if requested:
                    self._allocate_port(name, f"spec.ports[{i}].nodePort", requested)
                    port["nodePort"] = requested
                else:
                    port["nodePort"] = self._next_port()
                by_port[number] = port["nodePort"]
            elif port.get("nodePort") != have:
                if not port.get("nodePort"):
                    port["nodePort"] = have
                else:
                    self._allocate_port(name, f"spec.ports[{i}].nodePort", port["nodePort"])

    def _update_node_ports(self, name: Any, spec: Obj, old: Obj) -> None:
        """`updateNodePorts`."""
        old_ports = {p.get("nodePort") for p in _ports(old) if p.get("nodePort")}
        for i, port in enumerate(_ports(spec)):
            if not port.get("nodePort") and not _should_allocate_node_ports(spec):
                continue
            if port.get("nodePort"):
                if port["nodePort"] not in old_ports:
                    self._allocate_port(name, f"spec.ports[{i}].nodePort", port["nodePort"])
            else:
                port["nodePort"] = self._next_port()

    def _alloc_health_check_port(self, spec: Obj) -> None:
        if spec.get("healthCheckNodePort"):
            self._held_ports.add(int(spec["healthCheckNodePort"]))
        else:
            spec["healthCheckNodePort"] = self._next_port()

    # -- validation ------------------------------------------------------------------------------
    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateService` after ObjectMeta."""
        return validate_service_spec(obj)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateServiceUpdate`: the update rules, then `ValidateService` whole."""
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        causes += _validate_upgrade_downgrade_cluster_ips(old_spec, spec)
        causes += _validate_upgrade_downgrade_ip_families(old_spec, spec)
        causes += _validate_load_balancer_class(old_spec, spec)
        if needs_health_check(old_spec) and needs_health_check(spec) and \
                spec.get("healthCheckNodePort") != old_spec.get("healthCheckNodePort"):
            causes.append(m.forbidden_cause("spec.healthCheckNodePort", "field is immutable"))
        return causes + self.validate(info, new) + self.validate_spec(info, new)

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return validate_load_balancer_status(obj)


def validate_load_balancer_status(obj: Obj) -> list[Cause]:
    """`ValidateLoadBalancerStatus` of `status.loadBalancer` (Services and Ingresses)."""
    causes: list[Cause] = []
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    for i, item in enumerate(ingress if isinstance(ingress, list) else []):
        item = item if isinstance(item, dict) else {}
        fld = f"status.loadBalancer.ingress[{i}]"
        ip, host = item.get("ip") or "", item.get("hostname") or ""
        if ip and parse_ip(ip) is None:
            causes.append(m.invalid_cause(f"{fld}.ip", ip, "must be a valid IP address"))
        if host:
            causes += [m.invalid_cause(f"{fld}.hostname", host, msg) for msg in kv.is_dns1123_subdomain(host)]
            if parse_ip(host) is not None:
                causes.append(m.invalid_cause(f"{fld}.hostname", host, "must be a DNS name, not an IP address"))
    return causes


def _should_allocate_node_ports(spec: Obj) -> bool:
    if spec.get("type") == "NodePort":
        return True
    return spec.get("type") == "LoadBalancer" and bool(spec.get("allocateLoadBalancerNodePorts"))


def _matching_prefer_dual_stack(spec: Obj, old: Obj | None) -> bool:
    """`isMatchingPreferDualStackClusterIPFields`."""
    if old is None or spec.get("ipFamilyPolicy") is None or old.get("type") != spec.get("type"):
        return False
    if spec.get("type") not in ("ClusterIP", "NodePort", "LoadBalancer"):
        return False
    if spec.get("ipFamilyPolicy") != "PreferDualStack" or old.get("ipFamilyPolicy") not in (None, "PreferDualStack"):
        return False
    return (spec.get("clusterIPs") or []) == (old.get("clusterIPs") or []) and \
        (spec.get("ipFamilies") or []) == (old.get("ipFamilies") or [])


def _patch_allocated_values(spec: Obj, old: Obj) -> None:
    """`patchAllocatedValues`: what an update leaves out keeps what was allocated."""
    if _needs_cluster_ip(old) and _needs_cluster_ip(spec):
        if not spec.get("clusterIP") and old.get("clusterIP"):
            spec["clusterIP"] = old["clusterIP"]
        if not spec.get("clusterIPs") and old.get("clusterIPs"):
            spec["clusterIPs"] = copy.deepcopy(old["clusterIPs"])
    if _needs_node_port(old) and _needs_node_port(spec):
        used = {p.get("nodePort") for p in _ports(old) if p.get("nodePort")} & \
            {p.get("nodePort") for p in _ports(spec) if p.get("nodePort")}
        by_name: dict[str, Any] = {}
        for p in _ports(old):
            by_name[p.get("name") or ""] = p.get("nodePort") or 0
        for p in _ports(spec):
            if not p.get("nodePort"):
                old_value = by_name.get(p.get("name") or "", 0)
                if old_value not in used and old_value:
                    p["nodePort"] = old_value
    if needs_health_check(old) and needs_health_check(spec) and not spec.get("healthCheckNodePort"):
        if old.get("healthCheckNodePort"):
            spec["healthCheckNodePort"] = old["healthCheckNodePort"]


def _same_cluster_ips(a: Obj, b: Obj) -> bool:
    return (a.get("clusterIP") or "") == (b.get("clusterIP") or "") and \
        (a.get("clusterIPs") or []) == (b.get("clusterIPs") or [])


def _normalize_cluster_ips(spec: Obj, old: Obj) -> None:
    """`normalizeClusterIPs` on update: `clusterIP` and `clusterIPs` follow each other."""
    if old.get("clusterIPs") and not spec.get("clusterIPs") and old.get("clusterIP") == spec.get("clusterIP"):
        spec["clusterIPs"] = copy.deepcopy(old["clusterIPs"])
    if (old.get("clusterIP") or "") != (spec.get("clusterIP") or ""):
        same = (old.get("clusterIPs") or []) == (spec.get("clusterIPs") or [])
        if old.get("clusterIP") and not spec.get("clusterIP"):
            if same:
                spec.pop("clusterIPs", None)
        elif same:
            spec["clusterIPs"] = [spec.get("clusterIP") or ""]


def _drop_type_dependent_fields(new: Obj, old: Obj) -> None:
    """The strategy's `dropTypeDependentFields`: what the old type needed and the request left as it
    was goes when the new type does not need it."""
    spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
    if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
        if _same_cluster_ips(old_spec, spec):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if (old_spec.get("ipFamilies") or None) == (spec.get("ipFamilies") or None):
            spec.pop("ipFamilies", None)
        if old_spec.get("ipFamilyPolicy") == spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    if _needs_node_port(old_spec) and not _needs_node_port(spec):
        old_ports = {p.get("nodePort") for p in _ports(old_spec) if p.get("nodePort")}
        if {p.get("nodePort") for p in _ports(spec) if p.get("nodePort")} <= old_ports:
            for p in _ports(spec):
                p.pop("nodePort", None)
    if needs_health_check(old_spec) and not needs_health_check(spec) and \
            spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is not None and \
                spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == old_spec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    if _needs_node_port(old_spec) and not _needs_node_port(spec) and \
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != "LoadBalancer":
        new["status"] = {**(new.get("status") or {}), "loadBalancer": {}}


# -- ValidateService --------------------------------------------------------------------------------

def validate_service_spec(obj: Obj) -> list[Cause]:
    """`ValidateService` after ObjectMeta, in the source's order."""
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    causes: list[Cause] = []
    stype = spec.get("type") or ""
    ports = _ports(spec)
    headless = _headless(spec)
    if not ports and not headless and stype != "ExternalName":
        causes.append(m.required_cause("spec.ports"))
    if stype == "LoadBalancer":
        for i, port in enumerate(ports):
            if port.get("port") == KUBELET_PORT:
                causes.append(m.invalid_cause(f"spec.ports[{i}]", KUBELET_PORT,
                                              f"may not expose port {KUBELET_PORT} externally since it is used by kubelet"))
    if stype in ("LoadBalancer", "NodePort") and headless:
        causes.append(m.invalid_cause("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {stype} services"))
    if stype == "ExternalName":
        for key, what in (("clusterIPs", "clusterIPs"), ("ipFamilies", "ipFamilies")):
            if spec.get(key):
                causes.append(m.forbidden_cause(f"spec.{what}", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            causes.append(m.forbidden_cause("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = (spec.get("externalName") or "").removesuffix(".")
        if cname:
            causes += [m.invalid_cause("spec.externalName", cname, msg) for msg in kv.is_dns1123_subdomain(cname)]
        else:
            causes.append(m.required_cause("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        causes += _validate_service_port(port, len(ports) > 1, names, f"spec.ports[{i}]")
    if spec.get("selector") is not None:
        causes += m.validate_labels(spec["selector"], "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        causes.append(m.required_cause("spec.sessionAffinity"))
    elif affinity not in ("ClientIP", "None"):
        causes.append(m.not_supported_cause("spec.sessionAffinity", affinity, ("ClientIP", "None")))
    cfg = spec.get("sessionAffinityConfig")
    if affinity == "ClientIP":
        causes += _validate_client_ip_affinity(cfg)
    elif affinity == "None" and cfg is not None:
        causes.append(m.forbidden_cause("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    causes += validate_cluster_ips_related_fields(spec)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        causes += _validate_external_ip(ip, f"spec.externalIPs[{i}]")
    if not stype:
        causes.append(m.required_cause("spec.type"))
    elif stype not in SERVICE_TYPES:
        causes.append(m.not_supported_cause("spec.type", stype, SERVICE_TYPES))
    if stype == "ClusterIP":
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                causes.append(m.forbidden_cause(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"))
    seen_node: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        if not port.get("nodePort"):
            continue
        node_key = (port.get("protocol"), port.get("nodePort"))
        if node_key in seen_node:
            causes.append(m.duplicate_cause(f"spec.ports[{i}].nodePort", port.get("nodePort")))
        seen_node.add(node_key)
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        port_key = (port.get("protocol") or "", port.get("port") or 0)
        if port_key in seen:
            shown = gostruct.field_value(_SERVICE_PORT_GO, {"protocol": port_key[0], "port": port_key[1]})
            causes.append(m.cause_raw("FieldValueDuplicate", f"spec.ports[{i}]", f"Duplicate value: {shown}"))
        seen.add(port_key)
    causes += _validate_source_ranges(spec, meta)
    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
        causes.append(m.forbidden_cause("spec.allocateLoadBalancerNodePorts",
                                        "may only be used when `type` is 'LoadBalancer'"))
    if stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        causes.append(m.required_cause("allocateLoadBalancerNodePorts"))  # sic: the source's path
    causes += _validate_load_balancer_class(None, spec)
    causes += _validate_external_traffic_policy(spec)
    return causes + _validate_internal_traffic_policy(spec)


def _validate_service_port(port: Obj, require_name: bool, names: set[str], fld: str) -> list[Cause]:
    """`validateServicePort`."""
    causes: list[Cause] = []
    name = port.get("name") or ""
    if require_name and not name:
        causes.append(m.required_cause(f"{fld}.name"))
    elif name:
        causes += [m.invalid_cause(f"{fld}.name", name, msg) for msg in kv.is_dns1123_label(name)]
        if name in names:
            causes.append(m.duplicate_cause(f"{fld}.name", name))
        names.add(name)
    number = int(port.get("port") or 0)
    if not 0 < number < 65536:
        causes.append(m.invalid_cause(f"{fld}.port", number, "must be between 1 and 65535, inclusive"))
    protocol = port.get("protocol") or ""
    if not protocol:
        causes.append(m.required_cause(f"{fld}.protocol"))
    elif protocol not in podspec.PORT_PROTOCOLS:
        causes.append(m.not_supported_cause(f"{fld}.protocol", protocol, podspec.PORT_PROTOCOLS))
    causes += validate_port_num_or_name(port.get("targetPort"), f"{fld}.targetPort")
    app = port.get("appProtocol")
    if app is not None:
        causes += [m.invalid_typed(f"{fld}.appProtocol", "*string", app, msg) for msg in kv.is_qualified_name(app)]
    return causes


def validate_port_num_or_name(value: Any, fld: str) -> list[Cause]:
    """`ValidatePortNumOrName`: a number in 1-65535 or an IANA_SVC_NAME."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 < value < 65536:
            return [m.invalid_cause(fld, value, "must be between 1 and 65535, inclusive")]
        return []
    if not isinstance(value, str):
        return []
    return [m.invalid_cause(fld, value, msg) for msg in m.is_valid_port_name(value)]


def _validate_client_ip_affinity(cfg: Any) -> list[Cause]:
    fld = "spec.sessionAffinityConfig"
    detail = "when session affinity type is ClientIP"
    if not isinstance(cfg, dict):
        return [m.required_cause(fld, detail)]
    client = cfg.get("clientIP")
    if not isinstance(client, dict):
        return [m.required_cause(f"{fld}.clientIP", detail)]
    timeout = client.get("timeoutSeconds")
    if timeout is None:
        return [m.required_cause(f"{fld}.clientIP.timeoutSeconds", detail)]
    if not 0 < timeout <= MAX_CLIENT_IP_TIMEOUT:
        return [m.invalid_cause(f"{fld}.clientIP.timeoutSeconds", timeout,
                                f"must be greater than 0 and less than {MAX_CLIENT_IP_TIMEOUT}")]
    return []


def validate_cluster_ips_related_fields(spec: Obj) -> list[Cause]:
    """`ValidateServiceClusterIPsRelatedFields`."""
    if spec.get("type") == "ExternalName":
        return []
    causes: list[Cause] = []
    cluster_ip, ips = spec.get("clusterIP") or "", list(spec.get("clusterIPs") or [])
    families = spec.get("ipFamilies") or []
    if cluster_ip:
        if not ips:
            causes.append(m.required_cause("spec.clusterIPs"))
        elif ips[0] != cluster_ip:
            causes.append(m.invalid_typed("spec.clusterIPs", "[]string", ips, "first value must match `clusterIP`"))
    elif ips:
        causes.append(m.invalid_typed("spec.clusterIPs", "[]string", ips,
                                      "must be empty when `clusterIP` is not specified"))
    seen: set[str] = set()
    for i, family in enumerate(families):
        if family not in IP_FAMILIES:
            causes.append(m.not_supported_typed(f"spec.ipFamilies[{i}]", "k8s.io/kubernetes/pkg/apis/core.IPFamily",
                                                family, IP_FAMILIES))
        if family in seen:
            causes.append(m.duplicate_cause(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        causes.append(m.not_supported_typed("spec.ipFamilyPolicy", _POLICY_GO, policy, IP_FAMILY_POLICIES))
    bad = False
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                bad = True
                causes.append(m.invalid_typed("spec.clusterIPs", "[]string", ips,
                                              "'None' must be the first and only value"))
            continue
        if parse_ip(ip) is None:
            bad = True
            causes.append(m.invalid_cause(f"spec.clusterIPs[{i}]", ip, VALID_IP_MSG))
    if len(ips) > 2:
        causes.append(m.invalid_typed("spec.clusterIPs", "[]string", ips, "may only hold up to 2 values"))
    if bad:
        return causes
    if len(ips) > 1 and len({_is_v6(ip) for ip in ips}) != len(ips):
        causes.append(m.invalid_typed("spec.clusterIPs", "[]string", ips, "may specify no more than one IP for each IP "
                                      "family"))
    if not _headless(spec) and ips and families:
        for i, ip in enumerate(ips[:len(families)]):
            if families[i] == "IPv4" and _is_v6(ip):
                causes.append(m.invalid_cause(f"spec.clusterIPs[{i}]", ip,
                                              f"expected an IPv4 value as indicated by `ipFamilies[{i}]`"))
            if families[i] == "IPv6" and not _is_v6(ip):
                causes.append(m.invalid_cause(f"spec.clusterIPs[{i}]", ip,
                                              f"expected an IPv6 value as indicated by `ipFamilies[{i}]`"))
    return causes


def _validate_external_ip(ip: Any, fld: str) -> list[Cause]:
    """`IsValidIP`, then `ValidateNonSpecialIP`."""
    if parse_ip(ip) is None:
        return [m.invalid_cause(fld, ip, VALID_IP_MSG)]
    return validate_non_special_ip(ip, fld)


def validate_non_special_ip(ip: Any, fld: str) -> list[Cause]:
    """`ValidateNonSpecialIP`."""
    parsed = parse_ip(ip)
    if parsed is None:
        return [m.invalid_cause(fld, ip, "must be a valid IP address")]
    causes: list[Cause] = []
    if parsed.is_unspecified:
        causes.append(m.invalid_cause(fld, ip, f"may not be unspecified ({ip})"))
    if parsed.is_loopback:
        causes.append(m.invalid_cause(fld, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if parsed.is_link_local:
        causes.append(m.invalid_cause(fld, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if parsed in ipaddress.ip_network("224.0.0.0/24") or parsed in ipaddress.ip_network("ff02::/16"):
        causes.append(m.invalid_cause(fld, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
    return causes


def _validate_source_ranges(spec: Obj, meta: Obj) -> list[Cause]:
    ranges = spec.get("loadBalancerSourceRanges") or []
    annotation = (meta.get("annotations") or {}).get(SOURCE_RANGES_ANNOTATION)
    if not ranges and annotation is None:
        return []
    if ranges:
        fld, shown, values = "spec.LoadBalancerSourceRanges", "[" + " ".join(ranges) + "]", list(ranges)
    else:
        fld, shown = f"metadata.annotations[{SOURCE_RANGES_ANNOTATION}]", str(annotation)
        values = [v.strip() for v in shown.split(",") if v.strip()]
    causes: list[Cause] = []
    if spec.get("type") != "LoadBalancer":
        causes.append(m.forbidden_cause(fld, "may only be used when `type` is 'LoadBalancer'"))
    for value in values:
        try:
            ipaddress.ip_network(value.strip(), strict=False)
        except ValueError:
            causes.append(m.invalid_cause(fld, shown, "must be a list of IP ranges. For example, "
                                          "10.240.0.0/24,10.250.0.0/24 "))
            break
    return causes


def _validate_load_balancer_class(old: Obj | None, spec: Obj) -> list[Cause]:
    causes: list[Cause] = []
    cls = spec.get("loadBalancerClass")
    if old is not None and old.get("type") == "LoadBalancer" and spec.get("type") == "LoadBalancer" and \
            old.get("loadBalancerClass") != cls:
        causes.append(m.invalid_typed("spec.loadBalancerClass", "*string", cls, "may not change once set"))
    if spec.get("type") == "LoadBalancer":
        if cls is not None:
            causes += [m.invalid_cause("spec.loadBalancerClass", cls, msg) for msg in kv.is_qualified_name(cls)]
    elif cls is not None:
        causes.append(m.forbidden_cause("spec.loadBalancerClass", "may only be used when `type` is 'LoadBalancer'"))
    return causes


def _validate_external_traffic_policy(spec: Obj) -> list[Cause]:
    causes: list[Cause] = []
    policy = spec.get("externalTrafficPolicy") or ""
    if not _needs_node_port(spec):
        if policy:
            causes.append(m.invalid_cause("spec.externalTrafficPolicy", policy,
                                          "may only be set when `type` is 'NodePort' or 'LoadBalancer'"))
    elif not policy:
        causes.append(m.required_cause("spec.externalTrafficPolicy"))
    elif policy not in TRAFFIC_POLICIES:
        causes.append(m.not_supported_cause("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES))
    hc = int(spec.get("healthCheckNodePort") or 0)
    if not needs_health_check(spec):
        if hc:
            causes.append(m.invalid_cause("spec.healthCheckNodePort", hc, "may only be set when `type` is "
                                          "'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
    elif not hc:
        causes.append(m.required_cause("spec.healthCheckNodePort"))
    elif not 0 < hc < 65536:
        causes.append(m.invalid_cause("spec.healthCheckNodePort", hc, "must be between 1 and 65535, inclusive"))
    return causes


def _validate_internal_traffic_policy(spec: Obj) -> list[Cause]:
    policy = spec.get("internalTrafficPolicy")
    if policy is None:
        if spec.get("type") in ("NodePort", "LoadBalancer", "ClusterIP"):
            return [m.required_cause("spec.internalTrafficPolicy")]
        return []
    if policy not in TRAFFIC_POLICIES:
        return [m.not_supported_cause("spec.internalTrafficPolicy", policy, TRAFFIC_POLICIES)]
    return []


def _validate_upgrade_downgrade_cluster_ips(old: Obj, spec: Obj) -> list[Cause]:
    """`validateUpgradeDowngradeClusterIPs`."""
    if "ExternalName" in (spec.get("type"), old.get("type")) or (_headless(old) and _headless(spec)):
        return []
    old_ips, ips = old.get("clusterIPs") or [], list(spec.get("clusterIPs") or [])
    causes: list[Cause] = []
    if len(old_ips) == len(ips):
        for i, ip in enumerate(old_ips):
            if ip != ips[i]:
                causes.append(m.invalid_typed(f"spec.clusterIPs[{i}]", "[]string", ips, "may not change once set"))
    elif len(old_ips) > len(ips):
        if not ips:
            causes.append(m.invalid_typed("spec.clusterIPs[0]", "[]string", None, "primary clusterIP can not be unset"))
        if old_ips and ips and ips[0] != old_ips[0]:
            causes.append(m.invalid_typed("spec.clusterIPs[0]", "[]string", ips, "may not change once set"))
        if len(ips) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, spec.get("ipFamilyPolicy"),
                                          "must be set to 'SingleStack' when releasing the secondary clusterIP"))
    elif old_ips and ips[0] != old_ips[0]:
        causes.append(m.invalid_typed("spec.clusterIPs[0]", "[]string", ips, "may not change once set"))
    return causes


def _validate_upgrade_downgrade_ip_families(old: Obj, spec: Obj) -> list[Cause]:
    """`validateUpgradeDowngradeIPFamilies`."""
    if "ExternalName" in (spec.get("type"), old.get("type")) or _headless(old) != _headless(spec) or _headless(spec):
        return []
    old_families, families = old.get("ipFamilies") or [], spec.get("ipFamilies") or []
    ips = spec.get("clusterIPs") or []
    go = "[]k8s.io/kubernetes/pkg/apis/core.IPFamily"
    causes: list[Cause] = []
    if len(old_families) == len(families):
        for i, family in enumerate(old_families):
            if family != families[i]:
                causes.append(m.invalid_typed("spec.ipFamilies[0]", go, families, "may not change once set"))
    elif len(old_families) > len(families):
        if not ips:
            causes.append(m.invalid_typed("spec.ipFamilies[0]", go, families, "primary ipFamily can not be unset"))
        if families and families[0] != old_families[0]:
            causes.append(m.invalid_typed("spec.ipFamilies[0]", "[]string", ips, "may not change once set"))
        if len(families) == 1 and spec.get("ipFamilyPolicy") != "SingleStack":
            causes.append(m.invalid_typed("spec.ipFamilyPolicy", _POLICY_GO, spec.get("ipFamilyPolicy"),
                                          "must be set to 'SingleStack' when releasing the secondary ipFamily"))
    elif old_families and families and families[0] != old_families[0]:
        causes.append(m.invalid_typed("spec.ipFamilies[0]", "[]string", ips, "may not change once set"))
    return causes
