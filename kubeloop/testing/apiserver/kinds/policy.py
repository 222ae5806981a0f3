"""policy: PodSecurityPolicy (policy/v1beta1, cluster-scoped) and the policy/v1beta1 view of
PodDisruptionBudgets.

A PodSecurityPolicy is stored and validated; no admission enforces it (1.24's PodSecurityPolicy
admission plugin is not in the default chain). In policy/v1beta1 an empty PDB selector matches no
pod, where policy/v1's matches every pod: kube-apiserver stores a v1beta1 `{}` as a selector that
cannot match, and shows that one as `{}` again in v1beta1.
"""

from __future__ import annotations

import copy

from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .extra import GenericStrategy

RUN_AS_USER = ("MustRunAs", "MustRunAsNonRoot", "RunAsAny")
SE_LINUX = ("MustRunAs", "RunAsAny")
GROUP_RULES = ("MayRunAs", "MustRunAs", "RunAsAny")
#: what a policy/v1beta1 `selector: {}` is stored as (`policy.V1beta1MatchNoneSelector`)
MATCH_NONE = {"matchExpressions": [{"key": "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match",
                                    "operator": "Exists"}]}


class PodSecurityPolicyStrategy(GenericStrategy):
    #: the validation errors name the kind's old home (`PodSecurityPolicy.extensions`)
    error_group = "extensions"

    def default(self, info: ServedResource, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("allowPrivilegeEscalation") is None:
            spec["allowPrivilegeEscalation"] = True

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        for key, valid in (("runAsUser", RUN_AS_USER), ("seLinux", SE_LINUX), ("supplementalGroups", GROUP_RULES),
                           ("fsGroup", GROUP_RULES)):
            rule = (spec.get(key) or {}).get("rule") or ""
            if rule not in valid:
                causes.append(m.not_supported_cause(f"spec.{key}.rule", rule, valid))
        return causes


def pdb_v1beta1(base: GenericStrategy) -> GenericStrategy:
    """The policy/v1beta1 PodDisruptionBudget strategy: `base`'s rules, the selector converted."""

    class PodDisruptionBudgetV1beta1(type(base)):  # type: ignore[misc]
        def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
            spec = obj.get("spec")
            if isinstance(spec, dict) and spec.get("selector") == {}:
                obj = dict(obj)
                obj["spec"] = dict(spec, selector=copy.deepcopy(MATCH_NONE))
            return super().to_storage(info, obj)

        def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
            stored = super().from_storage(info, stored)
            spec = stored.get("spec")
            if isinstance(spec, dict) and spec.get("selector") == MATCH_NONE:
                stored = dict(stored)
                stored["spec"] = dict(spec, selector={})
            return stored

    strategy = copy.copy(base)
    strategy.__class__ = PodDisruptionBudgetV1beta1
    return strategy
