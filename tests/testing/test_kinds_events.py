"""core/v1 and events.k8s.io/v1 Events: one storage, conversions, validation, field selectors."""

from __future__ import annotations

import copy

import pytest

from kubeloop.testing.apiserver.errors import StatusError

from .test_kinds_core import create, info, invalid_fields

REF = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "namespace": "ns", "uid": "u-1"}


def core_event(**extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "cfg.1"}, "involvedObject": REF, **extra}


def new_event(**extra: object) -> dict:
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "cfg.4"},
          "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl",
          "reportingInstance": "ctl-1", "action": "Reconcile", "reason": "Synced", "regarding": REF,
          "note": "synced it", "type": "Normal"}
    ev.update(extra)
    return ev


def test_core_event_rendering() -> None:
    ev = create(info("", "events"), core_event())
    assert ev["eventTime"] is None and ev["firstTimestamp"] is None and ev["lastTimestamp"] is None
    assert ev["reportingComponent"] == "" and ev["reportingInstance"] == "" and ev["source"] == {}
    assert "count" not in ev and "type" not in ev
    # core/v1 does not validate type
    assert create(info("", "events"), core_event(type="Strange"))["type"] == "Strange"


def test_new_event_stored_as_core_and_read_back() -> None:
    new = info("events.k8s.io", "events")
    core = info("", "events")
    assert new.storage_key == core.storage_key
    obj = create(new, new_event())
    assert obj["deprecatedSource"] == {} and obj["deprecatedFirstTimestamp"] is None
    stored = new.strategy.to_storage(new, copy.deepcopy(obj))
    assert stored["apiVersion"] == "v1" and stored["message"] == "synced it"
    assert stored["involvedObject"] == REF and stored["reportingComponent"] == "example.com/ctl"
    assert stored["source"] == {} and stored["eventTime"] == "2024-01-01T00:00:00.000000Z"
    assert "count" not in stored and "note" not in stored
    back = new.strategy.from_storage(new, stored)
    assert back == obj


def test_core_event_read_through_events_api() -> None:
    new = info("events.k8s.io", "events")
    stored = create(info("", "events"), core_event(
        reason="Created", message="created it", type="Normal", count=1, firstTimestamp="2024-01-01T00:00:00Z",
        lastTimestamp="2024-01-01T00:00:00Z", source={"component": "kc"}))
    out = new.strategy.from_storage(new, stored)
    assert out["note"] == "created it" and out["deprecatedCount"] == 1
    assert out["deprecatedSource"] == {"component": "kc"} and out["eventTime"] is None
    assert "reportingController" not in out and "reportingInstance" not in out
    assert out["regarding"] == REF and out["apiVersion"] == "events.k8s.io/v1"


def test_new_event_validation() -> None:
    new = info("events.k8s.io", "events")
    with pytest.raises(StatusError) as e:
        create(new, new_event(eventTime=None))
    assert e.value.details == {"name": "cfg.4", "kind": "Event", "causes": [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "eventTime"}]}
    assert invalid_fields(create, new, new_event(reportingController=None)) == [
        ("reportingController", "FieldValueInvalid"), ("reportingController", "FieldValueInvalid"),
        ("reportingController", "FieldValueRequired")]
    assert ("type", "FieldValueInvalid") in invalid_fields(create, new, new_event(type="Strange"))


def test_event_field_selectors() -> None:
    core, new = info("", "events"), info("events.k8s.io", "events")
    stored = create(core, core_event(reason="Created", source={"component": "kc"}))
    values = core.strategy.field_values(core, stored)
    assert values["involvedObject.name"] == "cfg" and values["reason"] == "Created" and values["source"] == "kc"
    nv = new.strategy.field_values(new, new.strategy.from_storage(new, stored))
    assert nv["regarding.name"] == "cfg" and nv["regarding.uid"] == "u-1"
    new.strategy.check_field_label(new, "regarding.kind")
    with pytest.raises(StatusError) as e:
        new.strategy.check_field_label(new, "involvedObject.kind")
    assert e.value.code == 400
