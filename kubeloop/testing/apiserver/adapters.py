"""Thin adapters to the patch, server-side-apply and selector modules owned elsewhere.

The registry calls these few functions only, so the modules behind them can change shape without
touching the request flow; each falls back to a minimal local implementation while the full module
is not available.
"""

from __future__ import annotations

import copy
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
def parse_label_selector(text: str) -> Any:
    """A matcher with `.matches(labels)`; raises 400 BadRequest on bad syntax."""
    from kubeloop.meta import LabelSelector

    try:
        return LabelSelector.parse(text)
    except ValueError as e:
        raise errors.bad_request(str(e)) from e


def parse_field_selector(text: str) -> Any:
    """A matcher with `.matches(fields)`; raises 400 BadRequest on bad syntax."""
    from kubeloop.meta import FieldSelector

    try:
        return FieldSelector.parse(text)
    except ValueError as e:
        raise errors.bad_request(str(e)) from e


def field_requirements(sel: Any) -> list[str]:
    """The field names a parsed field selector mentions (to reject unsupported fields)."""
    return sorted(sel.fields)
