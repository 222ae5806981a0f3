"""Status conditions: set/find/remove with apimachinery's SetStatusCondition semantics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

import pytest

from kubeloop.resources import (
    ConditionError,
    find_condition,
    is_condition_false,
    is_condition_true,
    remove_condition,
    set_condition,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)


def test_set_adds_then_keeps_transition_time_while_status_is_unchanged() -> None:
    status: dict[str, Any] = {}
    assert set_condition(status, "Ready", False, "Starting", "waiting", observed_generation=1, at=T0)
    assert status["conditions"] == [{"type": "Ready", "status": "False", "observedGeneration": 1,
                                     "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Starting",
                                     "message": "waiting"}]
    # same status, new reason and generation: updated, but the transition time stays
    assert set_condition(status, "Ready", "False", "Pulling", "image", observed_generation=2, at=T1)
    ready = find_condition(status, "Ready")
    assert ready is not None
    assert (ready["reason"], ready["observedGeneration"], ready["lastTransitionTime"]) == (
        "Pulling", 2, "2026-01-01T00:00:00Z")
    # nothing changes: reported as such (so the caller can skip the write)
    assert not set_condition(status, "Ready", False, "Pulling", "image", observed_generation=2, at=T1)
    # the status flips: the transition time moves
    assert set_condition(status, "Ready", True, "Running", at=T1)
    assert find_condition(status, "Ready")["lastTransitionTime"] == "2026-01-01T00:05:00Z"  # type: ignore[index]
    assert is_condition_true(status, "Ready") and not is_condition_false(status, "Ready")
    assert find_condition(status, "Ready")["observedGeneration"] == 2  # type: ignore[index]  # kept when not given


def test_several_conditions_in_a_list_keep_their_order() -> None:
    conds: list[Any] = []
    set_condition(conds, "Ready", "Unknown", "Init", at=T0)
    set_condition(conds, "example.com/Synced", True, "Synced", at=T0)
    set_condition(conds, "Ready", True, "Up", at=T1)
    assert [c["type"] for c in conds] == ["Ready", "example.com/Synced"]
    assert remove_condition(conds, "Ready") and not remove_condition(conds, "Ready")
    assert [c["type"] for c in conds] == ["example.com/Synced"]
    assert not remove_condition({}, "Ready")


def test_reads_work_on_read_only_views_and_missing_status() -> None:
    view = MappingProxyType({"conditions": (MappingProxyType({"type": "Ready", "status": "False"}),)})
    assert is_condition_false(view, "Ready") and not is_condition_true(view, "Ready")
    assert find_condition(None, "Ready") is None and find_condition({}, "Ready") is None
    assert not is_condition_false({}, "Ready")
    with pytest.raises(ConditionError, match="thawed"):
        set_condition(view, "Ready", True, "Up")  # type: ignore[arg-type]
    with pytest.raises(ConditionError, match="not a list"):
        set_condition({"conditions": view["conditions"]}, "Ready", True, "Up")


def test_default_time_is_now_in_kubernetes_format() -> None:
    status: dict[str, Any] = {}
    set_condition(status, "Ready", True, "Up")
    stamp = status["conditions"][0]["lastTransitionTime"]
    assert len(stamp) == 20 and stamp.endswith("Z")
    assert abs(datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) - datetime.now(UTC)) < \
        timedelta(minutes=1)


@pytest.mark.parametrize(("args", "match"), [
    (("Ready", "Yes", "Up"), "status must be one of"),
    (("Ready", True, "not camel"), "reason"),
    (("Ready", True, ""), "reason"),
    (("bad type!", True, "Up"), "condition type"),
    (("Ready", True, "Up", "x" * 32769), "message"),
])
def test_conditions_the_api_server_would_reject_are_errors(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(ConditionError, match=match):
        set_condition({}, *args)
    with pytest.raises(ConditionError, match="observedGeneration"):
        set_condition({}, "Ready", True, "Up", observed_generation=-1)


def test_typed_conditions_are_found_updated_and_added_in_their_own_form() -> None:
    from kubeloop.resources import Condition

    from .models import WebAppStatus

    status = WebAppStatus.model_validate({"conditions": [
        {"type": "Ready", "status": "False", "reason": "Starting", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    ready = find_condition(status, "Ready")
    assert isinstance(ready, Condition) and ready.reason == "Starting"
    assert find_condition(status.conditions, "Ready") is ready and find_condition(status, "Synced") is None
    assert is_condition_false(status, "Ready") and not is_condition_true(status.conditions, "Ready")
    with pytest.raises(ConditionError, match=r"typed status, which is frozen.*model_copy"):
        set_condition(status, "Ready", True, "Up")  # type: ignore[arg-type]
    conds = list(status.conditions)
    assert set_condition(conds, "Ready", True, "Up", at=T1)
    assert set_condition(conds, "Synced", True, "Synced", at=T1)
    assert not set_condition(conds, "Ready", True, "Up", at=T1 + timedelta(hours=1))  # nothing changed
    assert [type(c) for c in conds] == [Condition, Condition]  # updated in place, not appended as a dict
    assert [(c.type, c.status, c.reason, c.last_transition_time) for c in conds] == [
        ("Ready", "True", "Up", T1), ("Synced", "True", "Synced", T1)]
    assert status.conditions[0].status == "False"  # the frozen original is untouched
    written = status.model_copy(update={"conditions": conds}).model_dump(mode="json", by_alias=True)
    assert written["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:05:00Z"
    assert remove_condition(conds, "Synced") and [c.type for c in conds] == ["Ready"]


def test_anything_but_a_condition_is_refused_loudly() -> None:
    with pytest.raises(ConditionError, match=r"must be a mapping or a kubeloop\.resources\.Condition, got str"):
        find_condition(["Ready"], "Ready")  # type: ignore[list-item]
    with pytest.raises(ConditionError, match="got int"):
        set_condition([3], "Ready", True, "Up")
    with pytest.raises(ConditionError, match="expected a status"):
        find_condition(42, "Ready")  # type: ignore[call-overload]
