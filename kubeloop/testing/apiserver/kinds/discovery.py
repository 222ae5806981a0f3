"""discovery.k8s.io EndpointSlice in v1 (stored) and v1beta1: port defaults (`name: ""`, `protocol:
TCP`), a generation that also moves when labels change, and 1.24's `ValidateEndpointSlice`.

v1beta1 keeps an endpoint's node and zone in `topology`; v1 has `nodeName`, `zone` and keeps the
other keys in `deprecatedTopology`. The conversion is 1.24's (`discovery/v1beta1/conversion.go`):
a hostname that equals `nodeName` is not repeated, one that differs survives the round trip.
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop import meta as kv

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from . import podspec
from .base import KindStrategy, without
from .service import parse_ip, validate_non_special_ip

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_ENDPOINTS, MAX_ADDRESSES, MAX_PORTS, MAX_TOPOLOGY_LABELS, MAX_ZONE_HINTS = 1000, 100, 20000, 16, 8


class EndpointSliceStrategy(KindStrategy):
    has_generation = True

    def default(self, info: ServedResource, obj: Obj) -> None:
        for port in obj.get("ports") or []:
            if isinstance(port, dict):
                if port.get("name") is None:
                    port["name"] = ""
                if port.get("protocol") is None:
                    port["protocol"] = "TCP"

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        """Anything but metadata, and the labels: a change to either is a new generation."""
        return {**without(obj, "metadata", "apiVersion", "kind"), " labels": (obj.get("metadata") or {}).get("labels")}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateEndpointSlice` after ObjectMeta."""
        address_type = obj.get("addressType") or ""
        causes: list[Cause] = []
        if not address_type:
            causes.append(m.required_cause("addressType"))
        elif address_type not in ADDRESS_TYPES:
            causes.append(m.not_supported_cause("addressType", address_type, ADDRESS_TYPES))
        causes += _validate_endpoints(obj.get("endpoints") or [], address_type)
        return causes + _validate_ports(obj.get("ports") or [])

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(info, new) + self.validate_spec(info, new)
        return causes + m.immutable_causes("addressType", new.get("addressType") or "", old.get("addressType") or "")


class EndpointSliceV1beta1Strategy(EndpointSliceStrategy):
    """The v1beta1 view: `topology` converted to and from the stored v1 fields."""

    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        return _convert(obj, endpoint_from_v1beta1)

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        return _convert(stored, endpoint_to_v1beta1)


def endpoint_from_v1beta1(ep: Obj) -> Obj:
    out = {k: copy.deepcopy(v) for k, v in ep.items() if k != "topology"}
    topology = ep.get("topology")
    if isinstance(topology, dict):
        deprecated = dict(topology)
        if ZONE in deprecated:
            out["zone"] = deprecated.pop(ZONE)
        if HOSTNAME in deprecated and out.get("nodeName") is not None and deprecated[HOSTNAME] == out["nodeName"]:
            del deprecated[HOSTNAME]
        if deprecated:
            out["deprecatedTopology"] = deprecated
    return out


def endpoint_to_v1beta1(ep: Obj) -> Obj:
    out = {k: copy.deepcopy(v) for k, v in ep.items() if k not in ("deprecatedTopology", "zone")}
    if ep.get("deprecatedTopology") is None and ep.get("zone") is None and ep.get("nodeName") is None:
        return out
    topology = dict(ep.get("deprecatedTopology") or {})
    if ep.get("zone") is not None:
        topology[ZONE] = ep["zone"]
    if ep.get("nodeName") is not None and not topology.get(HOSTNAME):
        topology[HOSTNAME] = ep["nodeName"]
    out["topology"] = topology
    return out


def _convert(obj: Obj, fn: Any) -> Obj:
    if not isinstance(obj.get("endpoints"), list):
        return obj
    out = dict(obj)
    out["endpoints"] = [fn(e) if isinstance(e, dict) else e for e in obj["endpoints"]]
    return out


def _validate_endpoints(endpoints: list[object], address_type: str) -> list[Cause]:
    if len(endpoints) > MAX_ENDPOINTS:
        return [m.cause_too_many("endpoints", len(endpoints), MAX_ENDPOINTS)]
    causes: list[Cause] = []
    for i, endpoint in enumerate(endpoints):
        endpoint = endpoint if isinstance(endpoint, dict) else {}
        fld = f"endpoints[{i}]"
        addresses = endpoint.get("addresses") or []
        if not addresses:
            causes.append(m.required_cause(f"{fld}.addresses", "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            causes.append(m.cause_too_many(f"{fld}.addresses", len(addresses), MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            path = f"{fld}.addresses[{j}]"
            if address_type in ("IPv4", "IPv6"):
                ip = parse_ip(address)
                want = 4 if address_type == "IPv4" else 6
                if ip is None or (ip.version == 4 or ip.ipv4_mapped is not None) != (want == 4):
                    causes.append(m.invalid_cause(path, address, f"must be a valid {address_type} address"))
                causes += validate_non_special_ip(address, path)
            elif address_type == "FQDN":
                causes += _fully_qualified_domain_name(str(address), path)
        node = endpoint.get("nodeName")
        if node is not None:
            causes += [m.invalid_cause(f"{fld}.nodeName", node, msg) for msg in kv.is_dns1123_subdomain(node)]
        topology = endpoint.get("deprecatedTopology") or {}
        if len(topology) > MAX_TOPOLOGY_LABELS:
            causes.append(m.cause_too_many(f"{fld}.deprecatedTopology", len(topology), MAX_TOPOLOGY_LABELS))
        causes += m.validate_labels(topology, f"{fld}.deprecatedTopology")
        hostname = endpoint.get("hostname")
        if hostname is not None:
            causes += [m.invalid_cause(f"{fld}.hostname", hostname, msg) for msg in kv.is_dns1123_label(hostname)]
        hints = endpoint.get("hints")
        if isinstance(hints, dict):
            causes += _validate_hints(hints, f"{fld}.hints")
    return causes


def _fully_qualified_domain_name(name: str, fld: str) -> list[Cause]:
    """`validation.IsFullyQualifiedDomainName`."""
    if not name:
        return [m.required_cause(fld)]
    name = name.removesuffix(".")
    errs = kv.is_dns1123_subdomain(name)
    if errs:
        return [m.invalid_cause(fld, name, ",".join(errs))]
    if len(name.split(".")) < 2:
        return [m.invalid_cause(fld, name, "should be a domain with at least two segments separated by dots")]
    for label in name.split("."):
        errs = kv.is_dns1123_label(label)
        if errs:
            return [m.invalid_cause(fld, label, ",".join(errs))]
    return []


def _validate_hints(hints: Obj, fld: str) -> list[Cause]:
    zones = hints.get("forZones") or []
    if len(zones) > MAX_ZONE_HINTS:
        return [m.cause_too_many(f"{fld}.forZones", len(zones), MAX_ZONE_HINTS)]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, zone in enumerate(zones):
        name = (zone or {}).get("name") or "" if isinstance(zone, dict) else ""
        path = f"{fld}.forZones[{i}].name"
        if name in seen:
            causes.append(m.duplicate_cause(path, name))
        seen.add(name)
        causes += [m.invalid_cause(path, name, msg) for msg in kv.is_label_value(name)]
    return causes


def _validate_ports(ports: list[object]) -> list[Cause]:
    if len(ports) > MAX_PORTS:
        return [m.cause_too_many("ports", len(ports), MAX_PORTS)]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        port = port if isinstance(port, dict) else {}
        fld = f"ports[{i}]"
        name = port.get("name") or ""
        if name:
            causes += [m.invalid_cause(f"{fld}.name", name, msg) for msg in kv.is_dns1123_label(name)]
        if name in names:
            causes.append(m.duplicate_cause(f"{fld}.name", name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            causes.append(m.required_cause(f"{fld}.protocol"))
        elif protocol not in podspec.PORT_PROTOCOLS:
            causes.append(m.not_supported_cause(f"{fld}.protocol", protocol, podspec.PORT_PROTOCOLS))
        app = port.get("appProtocol")
        if app is not None:
            causes += [m.invalid_cause(f"{fld}.appProtocol", app, msg) for msg in kv.is_qualified_name(app)]
    return causes
