"""admissionregistration.k8s.io/v1 Mutating- and ValidatingWebhookConfiguration, stored and validated.

Defaults and validation follow 1.24 (`pkg/apis/admissionregistration`: v1 defaults, the
`validateValidatingWebhook` rules in their order). These objects are data here; the webhook calls
they describe are made by the emulator's admission chain, which reads them from the store.
"""

from __future__ import annotations

import json
from typing import Any

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .extra import GenericStrategy

OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
SIDE_EFFECTS = ("None", "NoneOnDryRun")
SCOPES = ("*", "Cluster", "Namespaced")
REINVOCATION = ("IfNeeded", "Never")
REVIEW_VERSIONS = ("v1", "v1beta1")


class WebhookConfigurationStrategy(GenericStrategy):
    """Both kinds; `mutating` adds `reinvocationPolicy`."""

    def __init__(self, mutating: bool) -> None:
        super().__init__(generation=True)
        self.mutating = mutating

    def spec_of(self, info: ServedResource, obj: Obj) -> Obj:
        return {"webhooks": obj.get("webhooks")}

    def default(self, info: ServedResource, obj: Obj) -> None:
        for hook in obj.get("webhooks") or []:
            if not isinstance(hook, dict):
                continue
            hook.setdefault("failurePolicy", "Fail")
            hook.setdefault("matchPolicy", "Equivalent")
            hook.setdefault("namespaceSelector", {})
            hook.setdefault("objectSelector", {})
            hook.setdefault("timeoutSeconds", 10)
            if self.mutating:
                hook.setdefault("reinvocationPolicy", "Never")
            service = (hook.get("clientConfig") or {}).get("service")
            if isinstance(service, dict):
                service.setdefault("port", 443)
            for rule in hook.get("rules") or []:
                if isinstance(rule, dict):
                    rule.setdefault("scope", "*")

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        seen: set[str] = set()
        for i, hook in enumerate(obj.get("webhooks") or []):
            hook = hook if isinstance(hook, dict) else {}
            fld = f"webhooks[{i}]"
            name = hook.get("name") or ""
            if name in seen:
                causes.append(m.duplicate_cause(f"{fld}.name", name))
            seen.add(name)
            causes += _validate_webhook(hook, fld, self.mutating)
            causes += _review_versions(hook.get("admissionReviewVersions"), f"{fld}.admissionReviewVersions")
        return causes


def _fully_qualified(name: str, fld: str) -> list[Cause]:
    if not name:
        return [m.required_cause(fld)]
    errs = m.name_is_dns_subdomain(name, False)
    if errs:
        return [m.invalid_cause(fld, name, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                           "characters, '-' or '.', and must start and end with an alphanumeric "
                                           "character (e.g. 'example.com', regex used for validation is "
                                           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    if len(name.split(".")) < 3:
        return [m.invalid_cause(fld, name, "should be a domain with at least three segments separated by dots")]
    return []


def _validate_webhook(hook: Obj, fld: str, mutating: bool) -> list[Cause]:
    causes = _fully_qualified(hook.get("name") or "", f"{fld}.name")
    for i, rule in enumerate(hook.get("rules") or []):
        causes += _validate_rule(rule if isinstance(rule, dict) else {}, f"{fld}.rules[{i}]")
    for key, valid in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        value = hook.get(key)
        if value is not None and value not in valid:
            causes.append(m.not_supported_cause(f"{fld}.{key}", value, valid))
    effects = hook.get("sideEffects")
    if effects is None:
        causes.append(m.required_cause(f"{fld}.sideEffects", f"must specify one of {', '.join(SIDE_EFFECTS)}"))
    elif effects not in SIDE_EFFECTS:
        causes.append(m.not_supported_cause(f"{fld}.sideEffects", effects, SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        causes.append(m.invalid_cause(f"{fld}.timeoutSeconds", timeout,
                                      "the timeout value must be between 1 and 30 seconds"))
    cc = hook.get("clientConfig") or {}
    if (cc.get("url") is None) == (cc.get("service") is None):
        causes.append(m.required_cause(f"{fld}.clientConfig", "exactly one of url or service is required"))
    elif cc.get("url") is not None:
        causes += _validate_url(str(cc["url"]), f"{fld}.clientConfig.url")
    else:
        service = cc.get("service") or {}
        for key in ("name", "namespace"):
            if not service.get(key):
                causes.append(m.required_cause(f"{fld}.clientConfig.service.{key}", f"service {key} is required"))
        port = service.get("port")
        if isinstance(port, int) and not 1 <= port <= 65535:
            causes.append(m.invalid_cause(f"{fld}.clientConfig.service.port", port,
                                          "port is not valid: must be between 1 and 65535, inclusive"))
    if mutating:
        policy = hook.get("reinvocationPolicy")
        if policy is not None and policy not in REINVOCATION:
            causes.append(m.not_supported_cause(f"{fld}.reinvocationPolicy", policy, REINVOCATION))
    return causes


def _validate_url(url: str, fld: str) -> list[Cause]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    causes: list[Cause] = []
    if parts.scheme != "https":
        causes.append(m.invalid_cause(fld, url, f"'https' is the only allowed URL scheme{_given(parts.scheme)}"))
    if not parts.hostname:
        causes.append(m.invalid_cause(fld, url, "host must be specified"))
    if parts.username or parts.password:
        causes.append(m.invalid_cause(fld, url, "user information is not permitted in the URL"))
    if parts.fragment:
        causes.append(m.invalid_cause(fld, url, "fragments are not permitted in the URL"))
    if parts.query:
        causes.append(m.invalid_cause(fld, url, "query parameters are not permitted in the URL"))
    return causes


def _given(scheme: str) -> str:
    return f"; the given URL uses {json.dumps(scheme)}" if scheme else ""


def _validate_rule(rule: Obj, fld: str) -> list[Cause]:
    causes: list[Cause] = []
    operations = rule.get("operations") or []
    if not operations:
        causes.append(m.required_cause(f"{fld}.operations"))
    if len(operations) > 1 and "*" in operations:
        causes.append(m.invalid_cause(f"{fld}.operations", operations,
                                      "if '*' is present, must not specify other operations"))
    for i, op in enumerate(operations):
        if op not in OPERATIONS:
            causes.append(m.not_supported_cause(f"{fld}.operations[{i}]", op, OPERATIONS))
    for key, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = rule.get(key) or []
        if not values:
            causes.append(m.required_cause(f"{fld}.{key}"))
        if len(values) > 1 and "*" in values:
            causes.append(m.invalid_cause(f"{fld}.{key}", values, f"if '*' is present, must not specify other {what}"))
    resources = rule.get("resources") or []
    if not resources:
        causes.append(m.required_cause(f"{fld}.resources"))
    for i, resource in enumerate(resources):
        if resource == "":
            causes.append(m.required_cause(f"{fld}.resources[{i}]"))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        causes.append(m.not_supported_cause(f"{fld}.scope", scope, SCOPES))
    return causes


def _review_versions(versions: Any, fld: str) -> list[Cause]:
    versions = versions or []
    if not versions:
        return [m.required_cause(fld, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, v in enumerate(versions):
        if v in seen:
            causes.append(m.invalid_cause(f"{fld}[{i}]", v, "duplicate version"))
            continue
        seen.add(v)
        causes += [m.invalid_cause(f"{fld}[{i}]", v, e) for e in m.name_is_dns1035_label(str(v), False)]
    if not any(v in REVIEW_VERSIONS for v in versions):
        causes.append(m.invalid_cause(fld, versions, f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))
    return causes

