"""Events: core/v1 `Event` and events.k8s.io/v1 `Event`, one storage, converted both ways.

The stored form is the core/v1 rendering (with the `null`/`""` fields the real server always
prints). events.k8s.io/v1 reads convert it (`message` -> `note`, `involvedObject` -> `regarding`,
`source`/`firstTimestamp`/`lastTimestamp`/`count` -> `deprecated*`, `reportingComponent` ->
`reportingController`); writes convert back.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubeloop import meta as kv

from ..errors import bad_request
from ..resources import ServedResource
from ..shapes import Cause, Obj
from . import meta as m
from .base import KindStrategy
from .schema import INT32, MICROTIME, OBJECT_REFERENCE, OMIT_INT32, STRING, TIME, struct, top_level

EVENT_SOURCE = struct("EventSource", component=STRING, host=STRING)
EVENT_SERIES = struct("EventSeries", count=INT32, lastObservedTime=MICROTIME)
CORE_EVENT = top_level(
    "Event", involvedObject=OBJECT_REFERENCE, reason=STRING, message=STRING, source=EVENT_SOURCE,
    firstTimestamp=TIME, lastTimestamp=TIME, count=OMIT_INT32, type=STRING, eventTime=MICROTIME,
    series=EVENT_SERIES, action=STRING, related=OBJECT_REFERENCE, reportingComponent=STRING,
    reportingInstance=STRING,
)
NEW_EVENT = top_level(
    "Event", eventTime=MICROTIME, series=EVENT_SERIES, reportingController=STRING, reportingInstance=STRING,
    action=STRING, reason=STRING, regarding=OBJECT_REFERENCE, related=OBJECT_REFERENCE, note=STRING,
    type=STRING, deprecatedSource=EVENT_SOURCE, deprecatedFirstTimestamp=TIME, deprecatedLastTimestamp=TIME,
    deprecatedCount=OMIT_INT32,
)

#: core field <-> events.k8s.io field
_RENAMES = (
    ("involvedObject", "regarding"), ("message", "note"), ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"), ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"), ("reportingComponent", "reportingController"),
)
_SAME = ("eventTime", "series", "reportingInstance", "action", "reason", "related", "type")

REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024


def _null() -> None:
    return None


@dataclass(frozen=True)
class _GoPrinting:
    """The fields Go always prints for one Event version (with their zero value, in this order),
    the strings printed empty rather than null, and the `omitempty` ones dropped when empty or 0."""

    always: tuple[tuple[str, Callable[[], Any]], ...]
    none_as_empty: tuple[str, ...]
    omit_empty: tuple[str, ...]
    omit_zero: str

    def render(self, ev: Obj) -> Obj:
        for key, zero in self.always:
            if key not in ev:
                ev[key] = zero()
        for key in self.none_as_empty:
            if ev.get(key) is None:
                ev[key] = ""
        for key in self.omit_empty:
            if ev.get(key) == "":
                del ev[key]
        if ev.get(self.omit_zero) == 0:
            del ev[self.omit_zero]
        return ev


_CORE_PRINTING = _GoPrinting(
    always=(("involvedObject", dict), ("source", dict), ("firstTimestamp", _null), ("lastTimestamp", _null),
            ("eventTime", _null)),
    none_as_empty=("reportingComponent", "reportingInstance"),
    omit_empty=("reason", "message", "type", "action"),
    omit_zero="count",
)
_NEW_PRINTING = _GoPrinting(
    always=(("eventTime", _null), ("regarding", dict), ("deprecatedSource", dict),
            ("deprecatedFirstTimestamp", _null), ("deprecatedLastTimestamp", _null)),
    none_as_empty=(),
    omit_empty=("reportingController", "reportingInstance", "action", "reason", "note", "type"),
    omit_zero="deprecatedCount",
)
render_core = _CORE_PRINTING.render
render_new = _NEW_PRINTING.render


def _convert(ev: Obj, api_version: str, fields: tuple[tuple[str, str], ...], render: Callable[[Obj], Obj]) -> Obj:
    out: Obj = {"apiVersion": api_version, "kind": "Event"}
    if "metadata" in ev:
        out["metadata"] = ev["metadata"]
    for src, dst in fields:
        if src in ev:
            out[dst] = ev[src]
    return render(out)


# (core field, events.k8s.io field), renamed ones first (the order the fields are written in)
_FIELDS = _RENAMES + tuple((key, key) for key in _SAME)
_NEW_TO_CORE = tuple((new, old) for old, new in _FIELDS)


def core_to_new(ev: Obj, api_version: str = "events.k8s.io/v1") -> Obj:
    return _convert(ev, api_version, _FIELDS, render_new)


def new_to_core(ev: Obj) -> Obj:
    return _convert(ev, "v1", _NEW_TO_CORE, render_core)


def legacy_validate(ev: Obj) -> list[Cause]:
    """`legacyValidateEvent` on a core-form event."""
    causes: list[Cause] = []
    ns = (ev.get("metadata") or {}).get("namespace") or ""
    inv_ns = (ev.get("involvedObject") or {}).get("namespace") or ""
    if not ev.get("eventTime"):
        if not inv_ns:
            if ns not in ("", "default"):
                causes.append(m.invalid_cause("involvedObject.namespace", inv_ns, "does not match event.namespace"))
        elif ns != inv_ns:
            causes.append(m.invalid_cause("involvedObject.namespace", inv_ns, "does not match event.namespace"))
    else:
        if not inv_ns and ns not in ("default", "kube-system"):
            causes.append(m.invalid_cause("involvedObject.namespace", inv_ns, "does not match event.namespace"))
        controller = ev.get("reportingComponent") or ""
        if not controller:
            causes.append(m.required_cause("reportingController"))
        for msg in kv.is_qualified_name(controller):
            causes.append(m.invalid_cause("reportingController", controller, msg))
        instance = ev.get("reportingInstance") or ""
        if not instance:
            causes.append(m.required_cause("reportingInstance"))
        if len(instance) > REPORTING_INSTANCE_LIMIT:
            causes.append(m.invalid_cause_raw("reportingInstance", '""',
                                              f"can have at most {REPORTING_INSTANCE_LIMIT} characters"))
        action = ev.get("action") or ""
        if not action:
            causes.append(m.required_cause("action"))
        if len(action) > ACTION_LIMIT:
            causes.append(m.invalid_cause_raw("action", '""', f"can have at most {ACTION_LIMIT} characters"))
        reason = ev.get("reason") or ""
        if not reason:
            causes.append(m.required_cause("reason"))
        if len(reason) > REASON_LIMIT:
            causes.append(m.invalid_cause_raw("reason", '""', f"can have at most {REASON_LIMIT} characters"))
        if len(ev.get("message") or "") > NOTE_LIMIT:
            causes.append(m.invalid_cause_raw("message", '""', f"can have at most {NOTE_LIMIT} characters"))
    for msg in kv.is_dns1123_subdomain(ns):
        causes.append(m.invalid_cause("namespace", ns, msg))
    return causes


def strict_validate(ev: Obj, namespaced: bool) -> list[Cause]:
    """The extra rules for events created through events.k8s.io/v1 (core form)."""
    causes = m.validate_object_meta(ev.get("metadata") or {}, namespaced)
    if not ev.get("eventTime"):
        causes.append(m.required_cause("eventTime"))
    if ev.get("type") not in ("Normal", "Warning"):
        causes.append(m.invalid_cause_raw("type", '""', f"has invalid value: {ev.get('type') or ''}"))
    if ev.get("firstTimestamp"):
        causes.append(m.invalid_cause_raw("firstTimestamp", '""', "needs to be unset"))
    if ev.get("lastTimestamp"):
        causes.append(m.invalid_cause_raw("lastTimestamp", '""', "needs to be unset"))
    if ev.get("count"):
        causes.append(m.invalid_cause_raw("count", '""', "needs to be unset"))
    src = ev.get("source") or {}
    if src.get("component") or src.get("host"):
        causes.append(m.invalid_cause_raw("source", '""', "needs to be unset"))
    return causes


_IMMUTABLE_ON_UPDATE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp",
                        "count", "type", "eventTime", "action", "related", "reportingComponent",
                        "reportingInstance")


class CoreEventStrategy(KindStrategy):
    """core/v1 Event: legacy validation only; the stored form."""

    schema = CORE_EVENT
    validates_meta = False

    def default(self, info: ServedResource, obj: Obj) -> None:
        render_core(obj)

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        return legacy_validate(obj)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        return legacy_validate(new)

    def check_field_label(self, info: ServedResource, label: str) -> None:
        if label not in self.field_labels(info):
            raise bad_request(f"field label not supported: {label}")

    def field_labels(self, info: ServedResource) -> tuple[str, ...]:
        return ("metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
                "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
                "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent",
                "source", "type")

    def field_values(self, info: ServedResource, obj: Obj) -> dict[str, str]:
        return core_field_values(obj)


def core_field_values(ev: Obj) -> dict[str, str]:
    meta = ev.get("metadata") or {}
    inv = ev.get("involvedObject") or {}
    source = (ev.get("source") or {}).get("component") or ev.get("reportingComponent") or ""
    values = {"metadata.name": str(meta.get("name") or ""), "metadata.namespace": str(meta.get("namespace") or "")}
    for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"):
        values[f"involvedObject.{key}"] = str(inv.get(key) or "")
    values["reason"] = str(ev.get("reason") or "")
    values["reportingComponent"] = str(ev.get("reportingComponent") or "")
    values["source"] = str(source)
    values["type"] = str(ev.get("type") or "")
    return values


class NewEventStrategy(KindStrategy):
    """events.k8s.io/v1 Event: strict validation on create, stored as core/v1."""

    schema = NEW_EVENT
    validates_meta = False
    error_group = ""

    def default(self, info: ServedResource, obj: Obj) -> None:
        render_new(obj)

    def validate(self, info: ServedResource, obj: Obj) -> list[Cause]:
        core = new_to_core(copy.copy(obj))
        return legacy_validate(core) + strict_validate(core, info.namespaced)

    def validate_update_causes(self, info: ServedResource, new: Obj, old: Obj) -> list[Cause]:
        core_new, core_old = new_to_core(copy.copy(new)), new_to_core(copy.copy(old))
        causes = legacy_validate(core_new)
        causes += m.validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        renames = dict(_RENAMES)
        for key in _IMMUTABLE_ON_UPDATE:
            causes += m.immutable_causes(renames.get(key, key), core_new.get(key), core_old.get(key))
        return causes

    def to_storage(self, info: ServedResource, obj: Obj) -> Obj:
        return new_to_core(obj)

    def from_storage(self, info: ServedResource, stored: Obj) -> Obj:
        return core_to_new(stored, info.api_version)

    def check_field_label(self, info: ServedResource, label: str) -> None:
        if label not in self.field_labels(info):
            raise bad_request(f"field label not supported: {label}")

    def field_labels(self, info: ServedResource) -> tuple[str, ...]:
        return ("metadata.name", "metadata.namespace", "regarding.kind", "regarding.namespace", "regarding.name",
                "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath",
                "reason", "reportingController", "type")

    def field_values(self, info: ServedResource, obj: Obj) -> dict[str, str]:
        core = core_field_values(new_to_core(copy.copy(obj)))
        values = {k.replace("involvedObject.", "regarding."): v for k, v in core.items()}
        values["reportingController"] = core["reportingComponent"]
        return values
