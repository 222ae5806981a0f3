"""Status conditions (`metav1.Condition`): set, find and remove them on a status dict or a list.

The semantics are apimachinery's `meta.SetStatusCondition`: `lastTransitionTime` moves only when
the condition's `status` changes, so a reconcile that sets the same condition on every run
writes nothing new (and a no-op-skipping apply really skips). Reads accept read-only cache views
(any `Mapping`/`Sequence`); writes need a mutable dict or list (a thawed copy). Conditions may be
plain (dicts, camelCase keys) or typed (`kubeloop.resources.Condition`): every function works on
both, and refuses anything else with a `ConditionError`. Imports only `kubeloop.meta` (not pydantic:
a typed condition is recognised by its fields).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, overload

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


class TypedCondition(Protocol):
    """A typed condition (`kubeloop.resources.Condition`, or a model with the same fields)."""

    @property
    def type(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def reason(self) -> str: ...

    @property
    def message(self) -> str: ...


class TypedConditions(Protocol):
    """A typed status (a model with a ``conditions`` field of typed conditions)."""

    @property
    def conditions(self) -> Sequence[TypedCondition]: ...


Target = Mapping[str, Any] | Sequence[Any] | TypedConditions | None


def _is_typed(c: Any) -> bool:
    """True for a typed condition: a (pydantic) model with the condition fields, not a mapping."""
    return not isinstance(c, Mapping) and all(hasattr(c, f) for f in ("type", "status", "reason", "model_copy"))


def _check(c: Any) -> Any:
    """``c`` if it is a condition (a mapping or a typed one); a typed error for anything else."""
    if isinstance(c, Mapping) or _is_typed(c):
        return c
    raise ConditionError(f"a condition must be a mapping or a kubeloop.resources.Condition, got {type(c).__name__} "
                         f"{c!r:.80}")


def _get(c: Any, field: str) -> Any:
    """A field of a plain (camelCase key) or typed (snake_case attribute) condition."""
    if isinstance(c, Mapping):
        return c.get(field)
    return getattr(c, _SNAKE.get(field, field), None)


_SNAKE = {"lastTransitionTime": "last_transition_time", "observedGeneration": "observed_generation"}


def _conditions_of(target: Target) -> Sequence[Any]:
    if target is None:
        return ()
    if isinstance(target, Mapping):
        conds = target.get("conditions")
        return conds if conds is not None else ()
    if isinstance(target, Sequence) and not isinstance(target, str | bytes):
        return target
    conds = getattr(target, "conditions", _MISSING)
    if conds is not _MISSING:  # a typed status
        return conds if conds is not None else ()
    raise ConditionError(f"expected a status (a mapping or a typed status with `conditions`) or a list of conditions, "
                         f"got {type(target).__name__}")


_MISSING = object()


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
    if hasattr(target, "conditions"):
        raise ConditionError(
            f"{type(target).__name__} is a typed status, which is frozen: change a copy of its list and put it "
            "back, e.g. conds = list(status.conditions); set_condition(conds, ...); "
            "status.model_copy(update={'conditions': conds})")
    raise ConditionError(
        f"expected a mutable status dict or list of conditions, got {type(target).__name__} "
        "(read-only cache views must be thawed first)")


@overload
def find_condition(target: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None,
                   type: str) -> Mapping[str, Any] | None: ...


@overload
def find_condition(target: TypedConditions | Sequence[TypedCondition], type: str) -> TypedCondition | None: ...


def find_condition(target: Target, type: str) -> Any:
    """The condition of `type` in a status (`{"conditions": [...]}` or a typed status) or a list of
    conditions, or None. Plain conditions are found as mappings, typed ones
    (`kubeloop.resources.Condition`) as themselves; anything else in the list is a `ConditionError`."""
    for c in _conditions_of(target):
        if _get(_check(c), "type") == type:
            return c
    return None


def is_condition_true(target: Target, type: str) -> bool:
    """Whether the condition of `type` exists and its status is "True"."""
    c = find_condition(target, type)
    return c is not None and _get(c, "status") == "True"


def is_condition_false(target: Target, type: str) -> bool:
    """Whether the condition of `type` exists and its status is "False" (missing is neither true nor false)."""
    c = find_condition(target, type)
    return c is not None and _get(c, "status") == "False"


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

    `target` is a status dict (its `conditions` list is created if missing) or the list itself;
    the list may hold plain conditions (dicts) or typed ones (`kubeloop.resources.Condition`,
    replaced by an updated copy: they are frozen). A new condition is added in the list's form
    (typed if the list holds typed ones). A typed status is frozen and refused with a
    `ConditionError` saying how to change a copy.
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
    for c in conds:
        _check(c)
    when = at or now()
    for i, old in enumerate(conds):
        if _get(old, "type") != type:
            continue
        if _is_typed(old):
            update: dict[str, Any] = {"status": status, "reason": reason, "message": message}
            if old.status != status or not getattr(old, "last_transition_time", None):
                update["last_transition_time"] = when
            if observed_generation is not None:
                update["observed_generation"] = observed_generation
            if all(semantically_equal(getattr(old, k, None), v) for k, v in update.items()):
                return False
            conds[i] = old.model_copy(update=update)
            return True
        new = dict(old)
        if old.get("status") != status or not old.get("lastTransitionTime"):
            new["lastTransitionTime"] = format_time(when)
        new["status"] = status
        new["reason"] = reason
        new["message"] = message
        if observed_generation is not None:
            new["observedGeneration"] = observed_generation
        if semantically_equal(new, old):
            return False
        conds[i] = new
        return True
    typed = next((c for c in conds if _is_typed(c)), None)
    if typed is not None:
        conds.append(typed.__class__(type=type, status=status, last_transition_time=when, reason=reason,
                                     message=message, observed_generation=observed_generation))
        return True
    cond: dict[str, Any] = {"type": type, "status": status}
    if observed_generation is not None:
        cond["observedGeneration"] = observed_generation
    cond.update(lastTransitionTime=format_time(when), reason=reason, message=message)
    conds.append(cond)
    return True


def remove_condition(target: MutableMapping[str, Any] | list[Any], type: str) -> bool:
    """Remove the condition of `type` in place; return whether there was one."""
    if isinstance(target, MutableMapping) and target.get("conditions") is None:
        return False
    conds = _mutable_list(target)
    keep = [c for c in conds if _get(_check(c), "type") != type]
    if len(keep) == len(conds):
        return False
    conds[:] = keep
    return True
