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
        for key in ("privileged", "hostNetwork", "hostPID", "hostIPC", "readOnlyRootFilesystem"):
            if spec.get(key) is False:
                del spec[key]  # Go's omitempty

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        for key, valid in (("runAsUser", RUN_AS_USER), ("seLinux", SE_LINUX), ("supplementalGroups", GROUP_RULES),
                           ("fsGroup", GROUP_RULES)):
            rule = (spec.get(key) or {}).get("rule") or ""
            if rule not in valid:
                causes.append(m.not_supported_cause(f"spec.{key}.rule", rule, valid))
        return causes


def _int_or_percent(fld: str, value: object) -> list[Cause]:
    """`ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return [m.invalid_cause(fld, value, "must be an integer or percentage (e.g '5%%')")]
    if isinstance(value, int):
        return [m.invalid_cause(fld, value, "must be greater than or equal to 0")] if value < 0 else []
    shown = f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}'
    if not value.endswith("%") or not value[:-1].isdigit():
        return [m.invalid_cause_raw(fld, shown, "a valid percent string must be a numeric string followed by an "
                                                "ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                                                "'[0-9]+%')")]
    if int(value[:-1]) > 100:
        return [m.invalid_cause_raw(fld, shown, "must not be greater than 100%")]
    return []


def _pointer(value: object) -> str:
    return "(nil)" if value is None else "(0xc000000000)"


class PodDisruptionBudgetStrategy(GenericStrategy):
    """policy/v1 PodDisruptionBudget (`ValidatePodDisruptionBudgetSpec`); its status is the
    disruption controller's (`disruption.py`), decremented by evictions."""

    def __init__(self) -> None:
        super().__init__(generation=True, status={"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                                  "expectedPods": 0})

    def validate_spec(self, info: ServedResource, obj: Obj) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        minimum, maximum, selector = spec.get("minAvailable"), spec.get("maxUnavailable"), spec.get("selector")
        if minimum is not None and maximum is not None:
            shown = (f"policy.PodDisruptionBudgetSpec{{MinAvailable:(*intstr.IntOrString){_pointer(minimum)}, "
                     f"Selector:(*v1.LabelSelector){_pointer(selector)}, "
                     f"MaxUnavailable:(*intstr.IntOrString){_pointer(maximum)}}}")
            causes.append(m.invalid_cause_raw("spec", shown, "minAvailable and maxUnavailable cannot be both set"))
        for key, value in (("minAvailable", minimum), ("maxUnavailable", maximum)):
            if value is not None:
                causes += _int_or_percent(f"spec.{key}", value)
        if isinstance(selector, dict):
            causes += m.validate_labels(selector.get("matchLabels"), "spec.selector.matchLabels")
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
