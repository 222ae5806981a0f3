"""discovery.k8s.io EndpointSlice in v1 (stored) and v1beta1.

v1beta1 keeps an endpoint's node and zone in `topology`; v1 has `nodeName`, `zone` and keeps the
other keys in `deprecatedTopology`. The conversion is 1.24's (`discovery/v1beta1/conversion.go`):
a hostname that equals `nodeName` is not repeated, one that differs survives the round trip.
"""

from __future__ import annotations

import copy
from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .extra import GenericStrategy

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
PROTOCOLS = ("SCTP", "TCP", "UDP")


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


class EndpointSliceStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(generation=True)

    def default(self, info: ServedResource, obj: Obj) -> None:
        for key in ("endpoints", "ports"):
            obj.setdefault(key, None)  # not omitempty: written as null when unset
        for endpoint in obj.get("endpoints") or []:
            if isinstance(endpoint, dict) and endpoint.get("conditions") is None:
                endpoint["conditions"] = {}  # a struct, not a pointer: always written
        for port in obj.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("name", "")
                port.setdefault("protocol", "TCP")

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        kind = obj.get("addressType") or ""
        if not kind:
            causes.append(m.required_cause("addressType"))
        elif kind not in ADDRESS_TYPES:
            causes.append(m.not_supported_cause("addressType", kind, ADDRESS_TYPES))
        for i, ep in enumerate(obj.get("endpoints") or []):
            addresses = (ep or {}).get("addresses") or []
            if not addresses:
                causes.append(m.required_cause(f"endpoints[{i}].addresses", "must contain at least 1 address"))
        for i, port in enumerate(obj.get("ports") or []):
            protocol = (port or {}).get("protocol")
            if protocol not in PROTOCOLS:
                causes.append(m.not_supported_cause(f"ports[{i}].protocol", protocol or "", PROTOCOLS))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = super().validate_update_causes(info, new, old)
        return causes + m.immutable_causes("addressType", new.get("addressType"), old.get("addressType"))



class EndpointSliceV1beta1Strategy(EndpointSliceStrategy):
    """The v1beta1 view: `topology` converted to and from the stored v1 fields."""

    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        return _convert(obj, endpoint_from_v1beta1)

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        return _convert(stored, endpoint_to_v1beta1)
