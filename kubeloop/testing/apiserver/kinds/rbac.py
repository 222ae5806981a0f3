"""rbac.authorization.k8s.io/v1 Roles, ClusterRoles and their bindings: 1.24's defaults
(`apiGroup` of a roleRef and of User/Group subjects) and validation
(`pkg/apis/rbac/validation`). Names only need to be valid path segments (`system:controller:x`)."""

from __future__ import annotations

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")
_ROLE_REF_GO = "k8s.io/kubernetes/pkg/apis/rbac.RoleRef"


class RoleStrategy(KindStrategy):
    """Role and ClusterRole (`ValidateRole`, `ValidateClusterRole`)."""

    name_fn = staticmethod(m.validate_path_segment_name)

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        for i, rule in enumerate(obj.get("rules") or []):
            causes += _validate_policy_rule(rule if isinstance(rule, dict) else {}, info.namespaced, f"rules[{i}]")
        aggregation = obj.get("aggregationRule")
        if not info.namespaced and isinstance(aggregation, dict):
            selectors = aggregation.get("clusterRoleSelectors") or []
            if not selectors:
                causes.append(m.required_cause("aggregationRule.clusterRoleSelectors",
                                               "at least one clusterRoleSelector required if aggregationRule is non-nil"))
            for i, selector in enumerate(selectors):
                fld = f"aggregationRule.clusterRoleSelectors[{i}]"
                causes += m.validate_label_selector(selector, fld)
                if not m.label_selector_parses(selector):
                    causes.append(m.invalid_cause(fld, "", "invalid label selector."))
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(info, new) + self.validate_spec(info, new)
        return causes + m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})


def _validate_policy_rule(rule: Obj, namespaced: bool, fld: str) -> list[Cause]:
    """`ValidatePolicyRule`."""
    causes: list[Cause] = []
    if not rule.get("verbs"):
        causes.append(m.required_cause(f"{fld}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            causes.append(m.invalid_typed(f"{fld}.nonResourceURLs", "[]string", urls,
                                          "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            causes.append(m.invalid_typed(f"{fld}.nonResourceURLs", "[]string", urls,
                                          "rules cannot apply to both regular resources and non-resource URLs"))
        return causes
    if not rule.get("apiGroups"):
        causes.append(m.required_cause(f"{fld}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        causes.append(m.required_cause(f"{fld}.resources", "resource rules must supply at least one resource"))
    return causes


class RoleBindingStrategy(KindStrategy):
    """RoleBinding and ClusterRoleBinding (`ValidateRoleBinding`, `ValidateClusterRoleBinding`)."""

    name_fn = staticmethod(m.validate_path_segment_name)

    def default(self, info: ServedResource, obj: Obj) -> None:
        ref = obj.get("roleRef")
        if isinstance(ref, dict) and not ref.get("apiGroup"):
            ref["apiGroup"] = GROUP
        for subject in obj.get("subjects") or []:
            # SetDefaults_Subject (a ServiceAccount's group stays "", which `omitempty` leaves out)
            if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
                subject["apiGroup"] = GROUP

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        causes: list[Cause] = []
        ref: Obj = obj["roleRef"] if isinstance(obj.get("roleRef"), dict) else {}
        if (ref.get("apiGroup") or "") != GROUP:
            causes.append(m.not_supported_cause("roleRef.apiGroup", ref.get("apiGroup") or "", (GROUP,)))
        kinds = ("Role", "ClusterRole") if info.namespaced else ("ClusterRole",)
        if ref.get("kind") not in kinds:
            causes.append(m.not_supported_cause("roleRef.kind", ref.get("kind") or "", kinds))
        name = ref.get("name") or ""
        if not name:
            causes.append(m.required_cause("roleRef.name"))
        else:
            causes += [m.invalid_cause("roleRef.name", name, msg) for msg in m.validate_path_segment_name(name, False)]
        for i, subject in enumerate(obj.get("subjects") or []):
            causes += _validate_subject(subject if isinstance(subject, dict) else {}, info.namespaced, f"subjects[{i}]")
        return causes

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        causes = self.validate(info, new) + self.validate_spec(info, new)
        causes += m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        ref, old_ref = new.get("roleRef") or {}, old.get("roleRef") or {}
        if any((ref.get(k) or "") != (old_ref.get(k) or "") for k in ("apiGroup", "kind", "name")):
            causes.append(m.invalid_typed("roleRef", _ROLE_REF_GO, ref, "cannot change roleRef"))
        return causes


def _validate_subject(subject: Obj, namespaced: bool, fld: str) -> list[Cause]:
    """`ValidateRoleBindingSubject`."""
    causes: list[Cause] = []
    name, kind, group = subject.get("name") or "", subject.get("kind") or "", subject.get("apiGroup") or ""
    if not name:
        causes.append(m.required_cause(f"{fld}.name"))
    if kind == "ServiceAccount":
        if name:
            causes += [m.invalid_cause(f"{fld}.name", name, msg) for msg in m.name_is_dns_subdomain(name, False)]
        if group:
            causes.append(m.not_supported_cause(f"{fld}.apiGroup", group, ("",)))
        if not namespaced and not subject.get("namespace"):
            causes.append(m.required_cause(f"{fld}.namespace"))
    elif kind in ("User", "Group"):
        if group != GROUP:
            causes.append(m.not_supported_cause(f"{fld}.apiGroup", group, (GROUP,)))
    else:
        causes.append(m.not_supported_cause(f"{fld}.kind", kind, SUBJECT_KINDS))
    return causes
