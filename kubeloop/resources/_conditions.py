"""Status conditions (`metav1.Condition`): set, find and remove them on a status dict or a list.

The semantics are apimachinery's `meta.SetStatusCondition`: `lastTransitionTime` moves only when
the condition's `status` changes, so a reconcile that sets the same condition on every run
writes nothing new (and a no-op-skipping apply really skips). Reads accept read-only cache views
(any `Mapping`/`Sequence`); writes need a mutable dict or list (a thawed copy). Imports nothing of
kubeloop, so any layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from datetime import datetime
from typing import Any, Literal

from kubeloop.meta import format_time, now, semantically_equal

__all__ = [
    "ConditionError", "find_condition", "is_condition_false", "is_condition_true", "remove_condition",
    "set_condition",
]

ConditionStatus = Literal["True", "False", "Unknown"]

#: metav1.Condition's validation (the API server rejects anything else with 422)
CONDITION_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
CONDITION_TYPE = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                   r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
_STATUSES = ("True", "False", "Unknown")


class ConditionError(ValueError):
    """A condition the API server would reject (bad type, status or reason), or a target that holds none."""


def _conditions_of(target: Mapping[str, Any] | Sequence[Any] | None) -> Sequence[Any]:
    if target is None:
        return ()
    if isinstance(target, Mapping):
        conds = target.get("conditions")
        return conds if conds is not None else ()
    if isinstance(target, Sequence) and not isinstance(target, str | bytes):
        return target
    raise ConditionError(f"expected a status mapping or a list of conditions, got {type(target).__name__}")


def _mutable_list(target: MutableMapping[str, Any] | list[Any]) -> list[Any]:
    if isinstance(target, list):
        return target
    if isinstance(target, MutableMapping):
        conds = target.get("conditions")
        if conds is None:
            conds = target["conditions"] = []
        if not isinstance(conds, list):
            raise ConditionError(
                f"status.conditions is a {type(conds).__name__}, not a list; read-only cache views must be "
                "thawed (kubeloop.cache.thaw) before they are changed")
        return conds
    raise ConditionError(
        f"expected a mutable status dict or list of conditions, got {type(target).__name__} "
        "(read-only cache views must be thawed first)")


def find_condition(target: Mapping[str, Any] | Sequence[Any] | None, type: str) -> Mapping[str, Any] | None:
    """The condition of `type` in a status (`{"conditions": [...]}`) or a list of conditions, or None."""
    for c in _conditions_of(target):
        if isinstance(c, Mapping) and c.get("type") == type:
            return c
    return None


def is_condition_true(target: Mapping[str, Any] | Sequence[Any] | None, type: str) -> bool:
    """Whether the condition of `type` exists and its status is "True"."""
    c = find_condition(target, type)
    return c is not None and c.get("status") == "True"


def is_condition_false(target: Mapping[str, Any] | Sequence[Any] | None, type: str) -> bool:
    """Whether the condition of `type` exists and its status is "False" (missing is neither true nor false)."""
    c = find_condition(target, type)
    return c is not None and c.get("status") == "False"


def set_condition(
    target: MutableMapping[str, Any] | list[Any],
    type: str,
    status: ConditionStatus | bool,
    reason: str,
    message: str = "",
    *,
    observed_generation: int | None = None,
    at: datetime | None = None,
) -> bool:
    """Add or update the condition of `type` in place; return whether anything changed.

    `target` is a status dict (its `conditions` list is created if missing) or the list itself.
    `status` may be a bool. `lastTransitionTime` is set to `at` (default: now) when the condition is
    new or its status changes, and kept otherwise; reason, message and observedGeneration always
    follow the arguments (observedGeneration is left as is when not given). Pass `at` from the
    reconcile's clock to make tests deterministic.
    """
    if isinstance(status, bool):
        status = "True" if status else "False"
    if status not in _STATUSES:
        raise ConditionError(f"condition status must be one of True, False, Unknown; got {status!r}")
    if not isinstance(type, str) or len(type) > 316 or not CONDITION_TYPE.match(type):
        raise ConditionError(f"condition type {type!r} must be a (optionally prefixed) name like 'Ready' or "
                             "'example.com/Synced'")
    if not isinstance(reason, str) or len(reason) > 1024 or not CONDITION_REASON.match(reason):
        raise ConditionError(f"condition reason {reason!r} must be CamelCase: a letter, then letters, digits, "
                             "'_', ',' or ':' (at most 1024 characters), e.g. 'MinimumReplicasAvailable'")
    if len(message) > 32768:
        raise ConditionError(f"condition message is {len(message)} characters, at most 32768 are allowed")
    if observed_generation is not None and observed_generation < 0:
        raise ConditionError(f"observedGeneration must be >= 0, got {observed_generation}")
    conds = _mutable_list(target)
    for i, old in enumerate(conds):
        if isinstance(old, Mapping) and old.get("type") == type:
            new = dict(old)
            if old.get("status") != status or not old.get("lastTransitionTime"):
                new["lastTransitionTime"] = format_time(at or now())
            new["status"] = status
            new["reason"] = reason
            new["message"] = message
            if observed_generation is not None:
                new["observedGeneration"] = observed_generation
            if semantically_equal(new, old):
                return False
            conds[i] = new
            return True
    cond: dict[str, Any] = {"type": type, "status": status}
    if observed_generation is not None:
        cond["observedGeneration"] = observed_generation
    cond.update(lastTransitionTime=format_time(at or now()), reason=reason, message=message)
    conds.append(cond)
    return True


def remove_condition(target: MutableMapping[str, Any] | list[Any], type: str) -> bool:
    """Remove the condition of `type` in place; return whether there was one."""
    if isinstance(target, MutableMapping) and target.get("conditions") is None:
        return False
    conds = _mutable_list(target)
    keep = [c for c in conds if not (isinstance(c, Mapping) and c.get("type") == type)]
    if len(keep) == len(conds):
        return False
    conds[:] = keep
    return True
