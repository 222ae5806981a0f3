"""Configuration kinds, each with a few rules of its own (1.24's defaults and validation): APIService,
PriorityClass, RuntimeClass, and API Priority and Fairness's FlowSchema and PriorityLevelConfiguration.

The emulator stores them and serves what the control plane creates of them at start (see
`bootstrap.py`); it does not act on them (no aggregation to other API servers, no scheduling,
no request queuing).
"""

from __future__ import annotations

from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .extra import GenericStrategy

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
HIGHEST_USER_PRIORITY = 1000000000
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
DISTINGUISHERS = ("ByNamespace", "ByUser")
PLC_TYPES = ("Exempt", "Limited")
LIMIT_RESPONSES = ("Queue", "Reject")


def _subdomain(fld: str, value: Any) -> list[Cause]:
    text = value if isinstance(value, str) else ""
    return [m.invalid_cause(fld, text, msg) for msg in m.name_is_dns_subdomain(text, False)]


class APIServiceStrategy(GenericStrategy):
    """`ValidateAPIService`: the name is `<version>.<group>`, priorities in range."""

    def __init__(self) -> None:
        super().__init__(status={}, name_fn=lambda name, prefix: [])

    def default(self, info: ServedResource, obj: Obj) -> None:
        service = (obj.get("spec") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        name = (obj.get("metadata") or {}).get("name") or ""
        group, version = spec.get("group") or "", spec.get("version") or ""
        causes: list[Cause] = []
        expected = f"{version}.{group}" if group else version
        if name != expected:
            causes.append(m.invalid_cause("metadata.name", name,
                                          f'must be `spec.version+"."+spec.group`: {m.go_repr(expected)}'))
        if group:
            causes += [m.invalid_cause("spec.group", group, e) for e in m.name_is_dns_subdomain(group, False)]
        if version:
            causes += [m.invalid_cause("spec.version", version, e) for e in m.name_is_dns1035_label(version, False)]
        minimum, priority = spec.get("groupPriorityMinimum") or 0, spec.get("versionPriority") or 0
        if not 0 < minimum <= 20000:
            causes.append(m.invalid_cause("spec.groupPriorityMinimum", minimum, "must be positive and less than 20000"))
        if not 0 < priority <= 1000:
            causes.append(m.invalid_cause("spec.versionPriority", priority, "must be positive and less than 1000"))
        if spec.get("service") is None:
            if spec.get("caBundle"):
                causes.append(m.invalid_cause("spec.caBundle", "<ca bundle>", "local APIServices may not have a "
                                                                              "caBundle"))
            if spec.get("insecureSkipTLSVerify"):
                causes.append(m.invalid_cause("spec.insecureSkipTLSVerify", True,
                                              "local APIServices may not have insecureSkipTLSVerify"))
        else:
            service = spec["service"]
            for key in ("namespace", "name"):
                if not service.get(key):
                    causes.append(m.required_cause(f"spec.service.{key}"))
            if spec.get("insecureSkipTLSVerify") and spec.get("caBundle"):
                causes.append(m.invalid_cause("spec.insecureSkipTLSVerify", True,
                                              "may not be true if caBundle is present"))
        return causes


class PriorityClassStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(generation=True)

    def default(self, info: ServedResource, obj: Obj) -> None:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        name = (obj.get("metadata") or {}).get("name") or ""
        value = obj.get("value") or 0
        causes: list[Cause] = []
        if name.startswith("system-"):
            known = SYSTEM_PRIORITY_CLASSES.get(name)
            if known is None:
                causes.append(m.forbidden_cause("metadata.name", "priority class names with 'system-' prefix are "
                                                "reserved for system use only. error: "
                                                f"{name} is not a known system priority class"))
            elif known != value:
                causes.append(m.forbidden_cause("metadata.name", "priority class names with 'system-' prefix are "
                                                "reserved for system use only. error: value of "
                                                f"{name} PriorityClass must be {known}"))
        elif isinstance(value, int) and value > HIGHEST_USER_PRIORITY:
            causes.append(m.forbidden_cause("value", "maximum allowed value of a user defined priority is "
                                                     f"{HIGHEST_USER_PRIORITY}"))
        policy = obj.get("preemptionPolicy")
        if policy is not None and policy not in PREEMPTION_POLICIES:
            causes.append(m.not_supported_cause("preemptionPolicy", policy, PREEMPTION_POLICIES))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        if new.get("value") != old.get("value"):
            causes.append(m.forbidden_cause("Value", "may not be changed in an update."))
        causes += m.immutable_causes("preemptionPolicy", new.get("preemptionPolicy"), old.get("preemptionPolicy"))
        return causes


class RuntimeClassStrategy(GenericStrategy):
    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        handler = obj.get("handler") or ""
        causes = [m.invalid_cause("handler", handler, e) for e in m.name_is_dns_label(handler, False)]
        for resource, qty in ((obj.get("overhead") or {}).get("podFixed") or {}).items():
            if str(qty).startswith("-"):
                causes.append(m.invalid_cause(f"overhead.podFixed[{resource}]", qty,
                                              "must be greater than or equal to 0"))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + m.immutable_causes("handler", new.get("handler"), old.get("handler"))


class FlowSchemaStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(generation=True, status={})

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not spec.get("matchingPrecedence"):
            spec["matchingPrecedence"] = 1000

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        name = (obj.get("metadata") or {}).get("name") or ""
        causes: list[Cause] = []
        precedence = spec.get("matchingPrecedence") or 0
        if precedence <= 0:
            causes.append(m.invalid_cause("spec.matchingPrecedence", precedence, "must be a positive value"))
        if precedence > 10000:
            causes.append(m.invalid_cause("spec.matchingPrecedence", precedence, "must not be greater than 10000"))
        if precedence == 1 and name != "exempt":
            causes.append(m.invalid_cause("spec.matchingPrecedence", precedence,
                                          "only the schema named 'exempt' may have matchingPrecedence 1"))
        method = (spec.get("distinguisherMethod") or {}).get("type")
        if spec.get("distinguisherMethod") is not None and method not in DISTINGUISHERS:
            causes.append(m.not_supported_cause("spec.distinguisherMethod.type", method or "", DISTINGUISHERS))
        plc = (spec.get("priorityLevelConfiguration") or {}).get("name") or ""
        if plc:
            causes += [m.invalid_cause("spec.priorityLevelConfiguration.name", plc, e)
                       for e in m.validate_path_segment_name(plc, False)]
        else:
            causes.append(m.required_cause("spec.priorityLevelConfiguration.name", "must reference a priority level"))
        for i, rule in enumerate(spec.get("rules") or []):
            rule = rule if isinstance(rule, dict) else {}
            fld = f"spec.rules[{i}]"
            if not rule.get("subjects"):
                causes.append(m.required_cause(f"{fld}.subjects", "subjects must contain at least one value"))
            if not rule.get("resourceRules") and not rule.get("nonResourceRules"):
                causes.append(m.required_cause(fld, "at least one of resourceRules and nonResourceRules has to be "
                                                    "non-empty"))
        return causes


class PriorityLevelConfigurationStrategy(GenericStrategy):
    def __init__(self) -> None:
        super().__init__(generation=True, status={})

    def default(self, info: ServedResource, obj: Obj) -> None:
        limited = (obj.get("spec") or {}).get("limited")
        if not isinstance(limited, dict):
            return
        if not limited.get("assuredConcurrencyShares"):
            limited["assuredConcurrencyShares"] = 30
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if isinstance(queuing, dict):
            for key, value in (("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)):
                if not queuing.get(key):
                    queuing[key] = value

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        kind = spec.get("type") or ""
        causes: list[Cause] = []
        if kind not in PLC_TYPES:
            causes.append(m.not_supported_cause("spec.type", kind, PLC_TYPES))
            return causes
        limited = spec.get("limited")
        if kind == "Exempt":
            if limited is not None:
                causes.append(m.forbidden_cause("spec.limited", "must be nil if the type is not Limited"))
            return causes
        if limited is None:
            causes.append(m.required_cause("spec.limited", "must not be empty when type is Limited"))
            return causes
        shares = limited.get("assuredConcurrencyShares") or 0
        if shares <= 0:
            causes.append(m.invalid_cause("spec.limited.assuredConcurrencyShares", shares, "must be positive"))
        response = limited.get("limitResponse") or {}
        rtype = response.get("type") or ""
        if rtype not in LIMIT_RESPONSES:
            causes.append(m.not_supported_cause("spec.limited.limitResponse.type", rtype, LIMIT_RESPONSES))
        elif rtype == "Queue" and response.get("queuing") is None:
            causes.append(m.required_cause("spec.limited.limitResponse.queuing",
                                           "must not be empty if limited.limitResponse.type is Limited"))
        elif rtype == "Reject" and response.get("queuing") is not None:
            causes.append(m.forbidden_cause("spec.limited.limitResponse.queuing",
                                            "must be nil if limited.limitResponse.type is not Limited"))
        return causes
