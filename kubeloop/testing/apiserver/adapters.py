"""Thin adapters to the patch, server-side-apply and selector modules owned elsewhere.

The registry calls these few functions only, so the modules behind them can change shape without
touching the request flow; each falls back to a minimal local implementation while the full module
is not available.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from . import errors
from .objectmeta import now_rfc3339
from .resources import ResourceInfo

Obj = dict[str, Any]


# ---- patches ---------------------------------------------------------------------------------
def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def merge_patch(doc: Obj, patch: Any) -> Obj:
    """RFC 7386 JSON merge patch."""
    try:
        from .patch import json_merge_patch
    except ImportError:
        return _merge(doc, patch)
    return json_merge_patch(doc, patch)


def json_patch(doc: Obj, ops: Any) -> Obj:
    """RFC 6902 JSON patch; failures raise 422 Invalid with empty details (as the real server)."""
    from .patch import json_patch as jp

    return jp(doc, ops)


def strategic_merge_patch(info: ResourceInfo, doc: Obj, patch: Any) -> Obj:
    """Strategic merge patch with the merge keys of `info`'s kind."""
    try:
        from .patch import strategic_merge_patch as smp
    except ImportError:
        return _merge(doc, patch)
    return smp(doc, patch, info)


# ---- managedFields ---------------------------------------------------------------------------
def record_update(info: ResourceInfo, new: Obj, old: Obj | None, manager: str, subresource: str) -> None:
    """Update `new.metadata.managedFields` for an ordinary (non-apply) write by `manager`."""
    try:
        from .managedfields import record_update as rec
    except ImportError:
        _fallback_record(info, new, manager, subresource)
        return
    rec(info, new, old, manager, subresource)


def _fallback_record(info: ResourceInfo, new: Obj, manager: str, subresource: str) -> None:
    meta = new.setdefault("metadata", {})
    mf = [e for e in meta.get("managedFields") or [] if isinstance(e, dict)]
    for e in mf:
        if e.get("manager") == manager and e.get("operation") == "Update" and (
                e.get("subresource", "") == subresource):
            break
    else:
        entry: Obj = {"manager": manager, "operation": "Update", "apiVersion": info.api_version,
                      "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": {}}
        if subresource:
            entry["subresource"] = subresource
        mf.append(entry)
    meta["managedFields"] = mf


def apply(info: ResourceInfo, live: Obj | None, config: Obj, manager: str, force: bool,
          subresource: str) -> Obj:
    """Server-side apply of `config` onto `live` (None: create); returns the merged object with
    managedFields, or raises a 409 Conflict StatusError listing the conflicting fields."""
    try:
        from .managedfields import apply as ssa
    except ImportError:
        merged = _merge(live or {}, config)
        _fallback_record(info, merged, manager, subresource)
        for e in merged["metadata"]["managedFields"]:
            if e.get("manager") == manager:
                e["operation"] = "Apply"
        return merged
    return ssa(info, live, config, manager, force, subresource)


# ---- selectors -------------------------------------------------------------------------------
_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_VAL = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class _Req:
    def __init__(self, key: str, op: str, values: tuple[str, ...]) -> None:
        self.key, self.op, self.values = key, op, values

    def ok(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if self.op in ("=", "=="):
            return has and labels[self.key] == self.values[0]
        if self.op == "!=":
            return not has or labels[self.key] != self.values[0]
        if self.op == "in":
            return has and labels[self.key] in self.values
        return not has or labels[self.key] not in self.values  # notin


class _Selector:
    """Minimal selector used only while kubeloop.client.selectors is unavailable."""

    def __init__(self, reqs: list[_Req]) -> None:
        self.requirements = reqs

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.ok(labels) for r in self.requirements)


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _fallback_parse(text: str, field: bool) -> _Selector:
    reqs: list[_Req] = []
    for part in _split_top(text):
        m = re.match(r"^(\S+)\s+(in|notin)\s+\((.*)\)$", part) if not field else None
        if m:
            vals = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(_Req(m.group(1), m.group(2), vals))
        elif m := re.match(r"^([^=!\s]+)\s*(==|!=|=)\s*([^=!]*)$", part):
            reqs.append(_Req(m.group(1), m.group(2), (m.group(3).strip(),)))
        elif not field and (m := re.match(r"^!\s*(\S+)$", part)):
            reqs.append(_Req(m.group(1), "!", ()))
        elif not field and re.match(r"^\S+$", part):
            reqs.append(_Req(part, "exists", ()))
        else:
            raise ValueError(f"unable to parse requirement: {part!r}")
        if not field:
            if not _KEY.match(reqs[-1].key):
                raise ValueError(f"invalid label key {reqs[-1].key!r}")
            for v in reqs[-1].values:
                if not _VAL.match(v):
                    raise ValueError(f"invalid label value: {v!r}")
    return _Selector(reqs)


def parse_label_selector(text: str) -> Any:
    """A matcher with `.matches(labels)`; raises 400 BadRequest on bad syntax."""
    try:
        from kubeloop.client.selectors import LabelSelector
    except ImportError:
        parse: Any = lambda t: _fallback_parse(t, False)  # noqa: E731
    else:
        parse = LabelSelector.parse
    try:
        return parse(text)
    except ValueError as e:
        raise errors.bad_request(f"unable to parse requirement: {e}") from e


def parse_field_selector(text: str) -> Any:
    """A matcher with `.matches(fields)`; raises 400 BadRequest on bad syntax."""
    try:
        from kubeloop.client.selectors import FieldSelector
    except ImportError:
        parse: Any = lambda t: _fallback_parse(t, True)  # noqa: E731
    else:
        parse = FieldSelector.parse
    try:
        return parse(text)
    except ValueError as e:
        raise errors.bad_request(f"invalid field selector: {e}") from e


def field_requirements(sel: Any) -> list[str]:
    """The field names a parsed field selector mentions (to reject unsupported fields)."""
    for attr in ("fields", "keys"):
        v = getattr(sel, attr, None)
        if callable(v):
            v = v()
        if v is not None:
            return list(v)
    reqs = getattr(sel, "requirements", None) or []
    return [getattr(r, "key", getattr(r, "field", "")) for r in reqs]
