"""networking.k8s.io/v1 Ingress, NetworkPolicy and IngressClass: their defaults and 1.24's validation
(`pkg/apis/networking/validation`). Ingress and NetworkPolicy errors name the internal kind's group,
`extensions` (`Ingress.extensions "x" is invalid`), as the real server's do."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from kubeloop import meta as kv

from ..resources import ServedResource
from ..shapes import Cause, Obj, copy_json
from . import meta as m
from .base import KindStrategy
from .service import parse_ip, validate_load_balancer_status

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
POLICY_TYPES = ("Ingress", "Egress")
_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD = re.compile(r"^\*\." + _SUBDOMAIN + "$")
WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character "
                "(e.g. '*.example.com', regex used for validation is '\\*\\." + _SUBDOMAIN + "')")


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """`validation.IsWildcardDNS1123Subdomain`."""
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    return errs + ([] if _WILDCARD.match(value) else [WILDCARD_MSG])


class IngressStrategy(KindStrategy):
    has_generation = True
    error_group = "extensions"

    def initial_status(self, info: ServedResource, obj: Obj) -> Any:
        return {"loadBalancer": {}}

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        return obj.get("spec") or {}

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        """`ValidateIngressCreate`."""
        causes = super().validate(info, obj) + _validate_ingress_spec(obj.get("spec") or {}, False, False)
        annotation = ((obj.get("metadata") or {}).get("annotations") or {}).get(INGRESS_CLASS_ANNOTATION)
        if annotation is not None and (obj.get("spec") or {}).get("ingressClassName") is not None:
            causes.append(m.invalid_cause(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                                          "can not be set when the class field is also set"))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateIngressUpdate`: stored objects that were already invalid in a way older servers
        accepted keep being accepted."""
        old_spec = old.get("spec") or {}
        allow_secret = any(_tls_secret_errors((t or {}).get("secretName") or "") for t in old_spec.get("tls") or [])
        allow_wildcard = any("*" in ((r or {}).get("host") or "") and _validate_rule_value(r or {}, "")
                             for r in old_spec.get("rules") or [])
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += super().validate(info, new)
        return causes + _validate_ingress_spec(new.get("spec") or {}, allow_secret, allow_wildcard)

    def validate_status(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return validate_load_balancer_status(obj)


def _tls_secret_errors(name: str) -> list[str]:
    return kv.is_dns1123_subdomain(name) if name else []


def _validate_ingress_spec(spec: Obj, allow_secret: bool, allow_wildcard: bool) -> list[Cause]:
    """`ValidateIngressSpec`."""
    causes: list[Cause] = []
    rules = spec.get("rules") or []
    if not rules and spec.get("defaultBackend") is None:
        causes.append(m.invalid_typed("spec", "[]k8s.io/kubernetes/pkg/apis/networking.IngressRule", spec.get("rules"),
                                      "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        causes += _validate_backend(spec["defaultBackend"], "spec.defaultBackend")
    for i, rule in enumerate(rules):
        rule = rule if isinstance(rule, dict) else {}
        fld = f"spec.rules[{i}]"
        host = rule.get("host") or ""
        wildcard = False
        if host:
            if parse_ip(host) is not None:
                causes.append(m.invalid_cause(f"{fld}.host", host, "must be a DNS name, not an IP address"))
            if "*" in host:
                causes += [m.invalid_cause(f"{fld}.host", host, msg) for msg in is_wildcard_dns1123_subdomain(host)]
                wildcard = True
            else:
                causes += [m.invalid_cause(f"{fld}.host", host, msg) for msg in kv.is_dns1123_subdomain(host)]
        if not wildcard or not allow_wildcard:
            causes += _validate_rule_value(rule, fld)
    for t, tls in enumerate(spec.get("tls") or []):
        tls = tls if isinstance(tls, dict) else {}
        for i, host in enumerate(tls.get("hosts") or []):
            check = is_wildcard_dns1123_subdomain if "*" in host else kv.is_dns1123_subdomain
            causes += [m.invalid_cause(f"spec.tls[{t}].hosts[{i}]", host, msg) for msg in check(host)]
        if not allow_secret:
            secret = tls.get("secretName") or ""
            causes += [m.invalid_cause(f"spec.tls[{t}].secretName", secret, msg) for msg in _tls_secret_errors(secret)]
    cls = spec.get("ingressClassName")
    if cls is not None:
        causes += [m.invalid_cause("spec.ingressClassName", cls, msg) for msg in m.name_is_dns_subdomain(cls, False)]
    return causes


def _validate_rule_value(rule: Obj, fld: str) -> list[Cause]:
    http = rule.get("http")
    if not isinstance(http, dict):
        return []
    causes: list[Cause] = []
    paths = http.get("paths") or []
    if not paths:
        causes.append(m.required_cause(f"{fld}.http.paths"))
    for i, path in enumerate(paths):
        causes += _validate_path(path if isinstance(path, dict) else {}, f"{fld}.http.paths[{i}]")
    return causes


def _validate_path(path: Obj, fld: str) -> list[Cause]:
    """`validateHTTPIngressPath`."""
    path_type = path.get("pathType")
    if path_type is None:
        return [m.required_cause(f"{fld}.pathType", "pathType must be specified")]
    causes: list[Cause] = []
    text = path.get("path") or ""
    if path_type in ("Exact", "Prefix"):
        if not text.startswith("/"):
            causes.append(m.invalid_cause(f"{fld}.path", text, "must be an absolute path"))
        if text:
            causes += [m.invalid_cause(f"{fld}.path", text, f"must not contain '{seq}'")
                       for seq in INVALID_PATH_SEQUENCES if seq in text]
            causes += [m.invalid_cause(f"{fld}.path", text, f"cannot end with '{suffix}'")
                       for suffix in INVALID_PATH_SUFFIXES if text.endswith(suffix)]
    elif path_type == "ImplementationSpecific":
        if text and not text.startswith("/"):
            causes.append(m.invalid_cause(f"{fld}.path", text, "must be an absolute path"))
    else:
        causes.append(m.not_supported_cause(f"{fld}.pathType", path_type, PATH_TYPES))
    return causes + _validate_backend(path.get("backend") or {}, f"{fld}.backend")


def _validate_backend(backend: Any, fld: str) -> list[Cause]:
    """`validateIngressBackend`."""
    backend = backend if isinstance(backend, dict) else {}
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [m.invalid_cause(fld, "", "cannot set both resource and service backends")]
    if resource is not None:
        return _validate_typed_reference(resource if isinstance(resource, dict) else {}, f"{fld}.resource")
    if service is None:
        return [m.invalid_cause(fld, "", "resource or service backend is required")]
    service = service if isinstance(service, dict) else {}
    causes: list[Cause] = []
    name = service.get("name") or ""
    if not name:
        causes.append(m.required_cause(f"{fld}.service.name"))
    else:
        causes += [m.invalid_cause(f"{fld}.service.name", name, msg) for msg in m.name_is_dns1035_label(name, False)]
    port: Obj = service["port"] if isinstance(service.get("port"), dict) else {}
    port_name, number = port.get("name") or "", int(port.get("number") or 0)
    if port_name and number:
        causes.append(m.invalid_cause(fld, "", "cannot set both port name & port number"))
    elif port_name:
        causes += [m.invalid_cause(f"{fld}.service.port.name", port_name, msg)
                   for msg in m.is_valid_port_name(port_name)]
    elif number:
        if not 0 < number < 65536:
            causes.append(m.invalid_cause(f"{fld}.service.port.number", number,
                                          "must be between 1 and 65535, inclusive"))
    else:
        causes.append(m.required_cause(fld, "port name or number is required"))
    return causes


def _validate_typed_reference(ref: Obj, fld: str) -> list[Cause]:
    """`validateIngressTypedLocalObjectReference`."""
    causes: list[Cause] = []
    group = ref.get("apiGroup")
    if group is not None:
        causes += [m.invalid_cause(f"{fld}.apiGroup", group, msg) for msg in kv.is_dns1123_subdomain(group)]
    kind, name = ref.get("kind") or "", ref.get("name") or ""
    if not kind:
        causes.append(m.required_cause(f"{fld}.kind"))
    else:
        causes += [m.invalid_cause(f"{fld}.kind", kind, msg) for msg in m.validate_path_segment_name(kind, False)]
    if not name:
        causes.append(m.required_cause(f"{fld}.name"))
    else:
        causes += [m.invalid_cause(f"{fld}.name", name, msg) for msg in m.validate_path_segment_name(name, False)]
    return causes


class NetworkPolicyStrategy(KindStrategy):
    """1.24's gates: `NetworkPolicyEndPort` on, `NetworkPolicyStatus` off. Nothing enforces a policy
    (no network plugin). With the status gate off, 1.24 serves `/status` but keeps what a create
    sends, lets an update replace a status without conditions, and makes a status write either
    keep the old status (when it has conditions) or clear it."""

    has_generation = True
    error_group = "extensions"

    def prepare_for_create(self, info: ServedResource, obj: Obj) -> None:
        status = obj.get("status")
        super().prepare_for_create(info, obj)
        if status is not None:
            obj["status"] = status

    def prepare_for_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        status = new.get("status")
        super().prepare_for_update(info, new, old)
        if not (old.get("status") or {}).get("conditions"):
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status

    def prepare_for_status_update(self, info: ServedResource, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(info, new, old)
        has_conditions = bool((new.get("status") or {}).get("conditions"))
        new["status"] = copy_json(old.get("status") or {}) if has_conditions else {}

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
        for direction in ("ingress", "egress"):
            for rule in spec.get(direction) or []:
                for port in (rule or {}).get("ports") or [] if isinstance(rule, dict) else []:
                    if isinstance(port, dict) and port.get("protocol") is None:
                        port["protocol"] = "TCP"

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        return obj.get("spec") or {}

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return _validate_network_policy_spec(obj.get("spec") or {})

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        """`ValidateNetworkPolicy` then `ValidateNetworkPolicyUpdate` (the spec twice)."""
        causes = self.validate(info, new) + self.validate_spec(info, new)
        causes += m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + self.validate_spec(info, new)


def _validate_network_policy_spec(spec: Obj) -> list[Cause]:
    """`ValidateNetworkPolicySpec`."""
    causes = m.validate_label_selector(spec.get("podSelector") or {}, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            rule = rule if isinstance(rule, dict) else {}
            fld = f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.get("ports") or []):
                causes += _validate_port(port if isinstance(port, dict) else {}, f"{fld}.ports[{j}]")
            for j, peer in enumerate(rule.get(peers) or []):
                causes += _validate_peer(peer if isinstance(peer, dict) else {}, f"{fld}.{peers}[{j}]")
    types = spec.get("policyTypes") or []
    if len(types) > 2:
        causes.append(m.invalid_typed("spec.policyTypes", "*[]k8s.io/kubernetes/pkg/apis/networking.PolicyType",
                                      types, "may not specify more than two policyTypes"))
        return causes
    for i, ptype in enumerate(types):
        if ptype not in POLICY_TYPES:
            causes.append(m.not_supported_cause(f"spec.policyTypes[{i}]", ptype, POLICY_TYPES))
    return causes


def _validate_port(port: Obj, fld: str) -> list[Cause]:
    """`ValidateNetworkPolicyPort`."""
    causes: list[Cause] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
        causes.append(m.not_supported_cause(f"{fld}.protocol", protocol, ("TCP", "UDP", "SCTP")))
    number, end = port.get("port"), port.get("endPort")
    if number is not None:
        if isinstance(number, int):
            if not 0 < number < 65536:
                causes.append(m.invalid_cause(f"{fld}.port", number, "must be between 1 and 65535, inclusive"))
            if end is not None:
                if end < number:
                    causes.append(m.invalid_cause(f"{fld}.endPort", number, "must be greater than or equal to `port`"))
                if not 0 < end < 65536:
                    causes.append(m.invalid_cause(f"{fld}.endPort", end, "must be between 1 and 65535, inclusive"))
        else:
            if end is not None:
                causes.append(m.invalid_cause(f"{fld}.endPort", end, "may not be specified when `port` is non-numeric"))
            causes += [m.invalid_cause(f"{fld}.port", number, msg) for msg in m.is_valid_port_name(str(number))]
    elif end is not None:
        causes.append(m.invalid_cause(f"{fld}.endPort", end, "may not be specified when `port` is not specified"))
    return causes


def _validate_peer(peer: Obj, fld: str) -> list[Cause]:
    """`ValidateNetworkPolicyPeer`."""
    causes: list[Cause] = []
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            causes += m.validate_label_selector(peer[key], f"{fld}.{key}")
    block = peer.get("ipBlock")
    if block is not None:
        count += 1
        causes += _validate_ip_block(block if isinstance(block, dict) else {}, f"{fld}.ipBlock")
    if count == 0:
        causes.append(m.required_cause(fld, "must specify a peer"))
    elif count > 1 and block is not None:
        causes.append(m.forbidden_cause(fld, "may not specify both ipBlock and another peer"))
    return causes


def _parse_cidr(text: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """`netutils.ParseCIDRSloppy`: an address with a prefix length (host bits allowed)."""
    if not isinstance(text, str) or "/" not in text:
        return None
    address, _, length = text.partition("/")
    ip = parse_ip(address)
    if ip is None or not length.isdigit():
        return None
    try:
        return ipaddress.ip_network(f"{ip}/{int(length)}", strict=False)
    except ValueError:
        return None


def _validate_ip_block(block: Obj, fld: str) -> list[Cause]:
    """`ValidateIPBlock`."""
    cidr = block.get("cidr") or ""
    if not cidr:
        return [m.required_cause(f"{fld}.cidr")]
    net = _parse_cidr(cidr)
    if net is None:
        return [m.invalid_cause(f"{fld}.cidr", cidr, "not a valid CIDR")]
    causes: list[Cause] = []
    for i, text in enumerate(block.get("except") or []):
        sub = _parse_cidr(text)
        if sub is None:
            causes.append(m.invalid_cause(f"{fld}.except[{i}]", text, "not a valid CIDR"))
            return causes
        address = parse_ip(text.partition("/")[0])
        if address is None or address.version != net.version or address not in net or \
                net.prefixlen >= sub.prefixlen:
            causes.append(m.invalid_cause(f"{fld}.except[{i}]", text, "must be a strict subset of `cidr`"))
    return causes


class IngressClassStrategy(KindStrategy):
    """`ValidateIngressClass`: a controller name and optional parameters; the controller is immutable."""

    has_generation = True

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        controller = spec.get("controller") or ""
        causes: list[Cause] = []
        if not controller:
            causes.append(m.required_cause("spec.controller"))
        elif len(controller) > 250:
            causes.append(m.too_long_cause("spec.controller", 250))
        else:
            domain = controller.split("/", 1)[0]
            causes += [m.invalid_cause("spec.controller", domain, e) for e in m.name_is_dns_subdomain(domain, False)]
        params = spec.get("parameters")
        if isinstance(params, dict):
            fld = "spec.parameters"
            if not params.get("kind"):
                causes.append(m.required_cause(f"{fld}.kind", "kind is required"))
            if not params.get("name"):
                causes.append(m.required_cause(f"{fld}.name", "name is required"))
            scope = params.get("scope")
            if scope is not None and scope not in ("Cluster", "Namespace"):
                causes.append(m.not_supported_cause(f"{fld}.scope", scope, ("Cluster", "Namespace")))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = super().validate_update_causes(info, new, old)
        return causes + m.immutable_causes("spec.controller", (new.get("spec") or {}).get("controller"),
                                           (old.get("spec") or {}).get("controller"))
