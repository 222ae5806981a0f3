"""managedFields and server-side apply, with kube-apiserver's (structured-merge-diff's) semantics.

Two entry points, both pure (no I/O, no clock: the caller passes `now`):

- `update_managed_fields(old, new, ...)` for ordinary writes (create, update, JSON/merge/strategic
  patch): the writer (operation `Update`) takes every field it added or changed; other managers
  lose those fields and any field the write removed; managers left owning nothing disappear.
- `apply(live, applied, ...)` for `application/apply-patch+yaml`: merges the configuration into the
  live object, removes the fields this applier owned alone and no longer applies, and raises a
  409 Conflict when the merge would change a field another manager owns (unless `force`).

A write that changes nothing leaves `managedFields` exactly as it was (same entries, same times),
so the registry can detect the no-op by comparing objects and skip the write, as the real server does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import smd
from .errors import StatusError
from .fieldpath import (
    FieldSet,
    Path,
    applied_fields,
    atomic_map,
    compare,
    decode_fields,
    drop_under,
    encode_fields,
    has_duplicate_keys,
    item_element,
    object_fields,
    path_string,
    present_paths,
    remove_paths,
    update_fields_v1,
    with_prefixes,
)
from .listtypes import FieldPath, ListTypes, list_types_for
from .objectmeta import now_rfc3339
from .patch import deep_copy
from .resources import ServedResource
from .shapes import Obj

__all__ = ["apply", "conflict_error", "record_apply", "record_scale", "record_update", "update_managed_fields"]

_ManagerId = tuple[str, str, str, str]  # manager, operation, apiVersion (Update only), subresource


@dataclass
class _Manager:
    manager: str
    operation: str
    api_version: str
    subresource: str
    time: str | None
    fields: FieldSet
    entry: Obj | None = None  # the original entry, reused verbatim while nothing about it changes
    changed: bool = False
    extra: Obj = field(default_factory=dict)
    entry_fields: FieldSet | None = None
    """The fields `entry` encodes, when its `fieldsV1` is the server's own encoding: a manager whose
    write changed only its time keeps that encoding (the common case: the same fields rewritten)."""

    @property
    def ident(self) -> _ManagerId:
        return _ident(self.manager, self.operation, self.api_version, self.subresource)

    def to_entry(self) -> Obj:
        if not self.changed and self.entry is not None:
            return self.entry
        e: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            e["time"] = self.time
        e["fieldsType"] = "FieldsV1"
        entry = self.entry
        if entry is not None and self.entry_fields is not None and self.fields == self.entry_fields:
            e["fieldsV1"] = entry["fieldsV1"]  # only the time changed: the stored encoding stands
        else:
            e["fieldsV1"] = encode_fields(self.fields)
        if self.subresource:
            e["subresource"] = self.subresource
        return e

    def who(self) -> str:
        """How conflict messages name this manager (`"editor" using v1` for Update managers)."""
        s = _go_quote(self.manager)
        if self.subresource:
            s += f" with subresource {_go_quote(self.subresource)}"
        if self.operation == "Update":
            s += f" using {self.api_version}"
        return s


def _ident(manager: str, operation: str, api_version: str, subresource: str) -> _ManagerId:
    return (manager, operation, api_version if operation == "Update" else "", subresource)


def _go_quote(s: str) -> str:
    return orjson.dumps(s).decode()


def _decode_managers(entries: Any, ours: bool = True) -> dict[_ManagerId, _Manager]:
    """Parse `managedFields`; raises ValueError on a malformed list. `ours`: the entries are the
    server's own (stored), so an unchanged field set may keep its encoding."""
    out: dict[_ManagerId, _Manager] = {}
    if not entries:
        return out
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    for e in entries:
        if not isinstance(e, dict):
            raise ValueError("managedFields entries must be objects")
        op = e.get("operation") or "Update"
        if op not in ("Apply", "Update"):
            raise ValueError(f"invalid operation {op!r}")
        fv1 = e.get("fieldsV1")
        fields = decode_fields(fv1) if fv1 is not None else set()
        m = _Manager(str(e.get("manager") or ""), op, str(e.get("apiVersion") or ""),
                     str(e.get("subresource") or ""), e.get("time"), fields, e,
                     entry_fields=fields if ours and fv1 is not None else None)
        prev = out.get(m.ident)
        if prev is not None:  # duplicate identity: merge, as the real server does on decode
            prev.fields = prev.fields | fields
            prev.changed = True
        else:
            out[m.ident] = m
    return out


def _sort_key(m: _Manager) -> tuple[str, str, str, str, str]:
    # kube-apiserver: Apply before Update, then by time (1 s resolution), manager, version, subresource
    return (m.operation, (m.time or "")[:19], m.manager, m.api_version, m.subresource)


BEFORE_FIRST_APPLY = "before-first-apply"
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"


def _cap_updaters(managers: dict[_ManagerId, _Manager]) -> None:
    """Keep at most `MAX_UPDATE_MANAGERS` Update entries: the oldest are folded, per apiVersion, into
    one `ancient-changes` entry (kube-apiserver's capManagers), so managedFields cannot grow without
    bound when many clients write an object."""
    updaters = [m for m in managers.values() if m.operation == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: ((m.time or "")[:19], m.ident))
    length = len(updaters)
    first_by_version: dict[str, _Manager] = {}
    for m in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        first = first_by_version.get(m.api_version)
        if first is None:
            first_by_version[m.api_version] = m
            continue
        bucket_id = _ident(ANCIENT_CHANGES, "Update", m.api_version, "")
        bucket = managers.get(bucket_id)
        if bucket is None:
            managers.pop(first.ident, None)
            bucket = managers[bucket_id] = _Manager(ANCIENT_CHANGES, "Update", m.api_version, "", first.time,
                                                   set(first.fields), changed=True)
        bucket.fields = bucket.fields | m.fields
        bucket.time = m.time
        bucket.changed = True
        managers.pop(m.ident, None)
        length -= 1


def _encode(managers: dict[_ManagerId, _Manager]) -> list[Obj]:
    _cap_updaters(managers)
    return [m.to_entry() for m in sorted(managers.values(), key=_sort_key)]


def _is_reset(entries: Any) -> bool:
    """`managedFields: [{}]` (every entry empty) asks the server to drop all managedFields."""
    return isinstance(entries, list) and bool(entries) and all(e == {} for e in entries)


def _meta(obj: Obj) -> Obj | None:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else None


def _set_managed(meta: Obj, entries: list[Obj] | None) -> None:
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


# ---- ordinary writes ---------------------------------------------------------------------------------
def update_managed_fields(old: Obj | None, new: Obj, manager: str, api_version: str,
                          subresource: str | None, now: str, list_types: Any = None,
                          reset_fields: Iterable[FieldPath] = (), zero: Obj | None = None) -> None:
    """Record in `new.metadata.managedFields` that `manager` wrote `new` over `old` (None: create).

    Call it after defaulting and the strategy's prepare step, so defaulted fields belong to the
    creator and fields the strategy reset are not attributed. Mutates `new` only. When `new`
    carries managedFields different from `old`'s (a client editing them; ignored for subresource
    writes), those are the starting point; `[{}]` starts from none. `list_types`: a `ListTypes` lookup, a mapping, or a `ServedResource`.
    `zero`: the kind's zero value as Go encodes it, what a create is compared with (see
    `fieldpath.update_fields_v1`).
    """
    meta = _meta(new)
    if meta is None:
        return
    old_meta = _meta(old) if old is not None else None
    old_mf = old_meta.get("managedFields") if old_meta is not None else None
    req_mf = meta.get("managedFields")
    base = old_mf
    from_request = False
    if req_mf and req_mf is not old_mf and req_mf != old_mf and not subresource:
        # a client editing managedFields directly (never through a subresource); `[{}]` resets them
        base, from_request = ([] if _is_reset(req_mf) else req_mf), True
    lt = list_types_for(list_types)
    if has_duplicate_keys(new, lt) or (old is not None and has_duplicate_keys(old, lt)):
        # structured-merge-diff cannot type the object: `UpdateNoErrors` drops managedFields altogether
        meta.pop("managedFields", None)
        return
    resets = tuple(reset_fields)
    if old is None and not from_request and all(len(r) == 1 for r in resets):
        # a create: the writer owns every field (fast path, no set arithmetic)
        fv1 = update_fields_v1(new, lt, zero)
        for r in resets:
            fv1.pop("f:" + r[0], None)
        if not fv1:
            meta.pop("managedFields", None)
            return
        entry: Obj = {"manager": manager, "operation": "Update", "apiVersion": api_version, "time": now,
                      "fieldsType": "FieldsV1", "fieldsV1": fv1}
        if subresource:
            entry["subresource"] = subresource
        meta["managedFields"] = [entry]
        return
    added, modified, removed = compare(old if old is not None else zero or {}, new, lt)
    if resets:
        added, modified, removed = (drop_under(added, resets), drop_under(modified, resets),
                                    drop_under(removed, resets))
    if not (added or modified or removed) and not from_request:
        _set_managed(meta, old_mf)
        return
    try:
        managers = _decode_managers(base, ours=not from_request)
    except (ValueError, TypeError, AttributeError):
        if not from_request:
            raise
        managers = _decode_managers(old_mf)  # unusable managedFields in the request: keep the live ones
    changed = added | modified
    any_change = from_request
    for m in managers.values():
        if m.fields & changed or m.fields & removed:
            m.fields = m.fields - changed - removed
            m.changed = any_change = True
    own = changed - removed
    if own:
        sub = subresource or ""
        ident = _ident(manager, "Update", api_version, sub)
        me = managers.get(ident)
        if me is None:
            me = managers[ident] = _Manager(manager, "Update", api_version, sub, now, set())
        me.fields = me.fields | own
        me.time = now
        me.changed = any_change = True
    if not any_change:
        _set_managed(meta, old_mf)
        return
    for ident in [i for i, m in managers.items() if not m.fields]:
        del managers[ident]
    _set_managed(meta, _encode(managers))


def record_update(info: ServedResource, new: Obj, old: Obj | None, manager: str, subresource: str | None,
                  now: str | None = None) -> None:
    """`update_managed_fields` in the registry's terms: version and list types from `info`
    (a `ServedResource`), `now` from the clock unless given."""
    update_managed_fields(old, new, manager, info.api_version, subresource, now or now_rfc3339(),
                          list_types=info, reset_fields=reset_fields_of(info, subresource),
                          zero=info.strategy.zero_object(info) if old is None else None)


#: how structured-merge-diff prints a named type's reference (`%v` of a `schema.TypeRef`)
_TYPE_REF = "{<ptr> {<nil> <nil> <nil>} <nil>}"


def record_apply(info: ServedResource, live: Obj | None, config: Obj, manager: str, force: bool,
                 subresource: str) -> Obj:
    """`apply` in the registry's terms (version, list types and reset fields from `info`); a
    configuration of another kind has no type to apply with (a plain Go error: 500)."""
    kind = config.get("kind")
    if kind and kind != info.kind:
        version = str(config.get("apiVersion") or info.api_version)
        group, _, ver = version.rpartition("/")
        other = None if info.custom else smd.builtin_type(group, ver, str(kind))
        if other is None:
            raise _typed_patch_error(config, version, f"no corresponding type for {_gv(version)}, Kind={kind}")
        # a kind the type converter knows: it types the configuration, then merging two types fails
        problems = smd.validate(other, _as_json(config))
        if problems:
            raise _typed_patch_error(config, version, smd.format_errors(problems))
        raise StatusError(500, "", "failed to merge config: expected objects of the same type, but got "
                          f"{_TYPE_REF} and {_TYPE_REF}")
    if kind:
        smd_type = info.strategy.apply_type(info)
        if smd_type is not None:
            # the configuration must fit the kind's schema before anything merges (typed.AsTyped)
            problems = smd.validate(smd_type, _as_json(config))
            if problems:
                raise _typed_patch_error(config, str(config.get("apiVersion") or info.api_version),
                                         smd.format_errors(problems))
    return apply(live, config, manager, info.api_version, subresource, force, now_rfc3339(), list_types=info,
                 reset_fields=reset_fields_of(info, subresource))


def record_scale(obj: Obj, field: tuple[str, ...], api_version: str, manager: str | None, changed: bool,
                 zero: bool = False) -> None:
    """managedFields after a `/scale` write of `field` (e.g. `("spec", "replicas")`), as kube-apiserver
    1.24's ScaleHandler rewrites them (ToSubresource, the Scale's own field manager, ToParent).

    Every manager owning the field keeps it on the Scale side. With a field manager (`manager`
    not None: built-in kinds; custom resources have none in 1.24), a write that changes the value
    moves it to `manager`'s `scale` entry (to nobody when the new value is 0, `zero`). Back on the object, a manager that still owns the field
    on the Scale side is left owning *only* that field (upstream's ToParent replaces its set), the
    others lose it, and managers left with nothing are dropped.
    """
    meta = _meta(obj)
    if meta is None:
        return
    path = tuple("f:" + f for f in field)
    try:
        managers = _decode_managers(meta.get("managedFields"))
    except (ValueError, TypeError, AttributeError):
        return
    owners = {i for i, m in managers.items() if path in m.fields}
    me: _ManagerId | None = None
    if manager is not None and changed:
        if zero:  # the Scale's `replicas` is omitempty: scaling to 0 removes the field, owned by nobody
            owners = set()
        else:
            me = _ident(manager, "Update", api_version, "scale")
            owners = {me}
    touched = False
    for i, m in managers.items():
        if path not in m.fields:
            continue
        fields = {path} if i in owners else m.fields - {path}
        if fields != m.fields:
            m.fields, m.changed, touched = fields, True, True
    if me is not None:
        # ToParent takes each entry's time from the parent's entries, where a new `scale` entry has
        # none: it is written without a time (and so sorts first), and keeps the one it had
        mine = managers.get(me)
        if mine is None:
            managers[me] = _Manager(manager or "", "Update", api_version, "scale", None, {path}, changed=True)
        else:
            mine.fields, mine.changed = {path}, True
        touched = True
    if not touched:
        return
    for ident in [i for i, m in managers.items() if not m.fields]:
        del managers[ident]
    _set_managed(meta, _encode(managers))


def reset_fields_of(info: ServedResource, subresource: str | None) -> tuple[FieldPath, ...]:
    """Fields a write cannot own: `status` through the main resource of a kind with a status
    subresource, everything but `status` (and metadata) through `/status`."""
    subs = info.subresources
    if subresource == "status":
        return (("spec",),)
    if not subresource and "status" in subs:
        return (("status",),)
    return ()


# ---- server-side apply -------------------------------------------------------------------------------
def conflict_error(conflicts: list[tuple[str, Path]]) -> StatusError:
    """409 Conflict listing `(manager description, path)` pairs, shaped like kube-apiserver's."""
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {who}", "field": path_string(p)}
              for who, p in conflicts]
    if len(conflicts) == 1:
        who, p = conflicts[0]
        msg = f"Apply failed with 1 conflict: conflict with {who}: {path_string(p)}"
    else:
        by: dict[str, list[Path]] = {}
        for who, p in conflicts:
            by.setdefault(who, []).append(p)
        lines: list[str] = []
        for who in sorted(by):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path_string(p)}" for p in by[who])
        msg = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", msg, {"causes": causes})


def apply(live: Obj | None, applied: Obj, manager: str, api_version: str | None = None,
          subresource: str | None = None, force: bool = False, now: str | None = None,
          list_types: Any = None, reset_fields: Iterable[FieldPath] = ()) -> Obj:
    """Server-side apply of the configuration `applied` by `manager` onto `live` (None: create).

    Returns a fresh object (defaulting and validation still to run) whose managedFields record the
    apply. Raises 409 Conflict (causes `FieldManagerConflict`) when another manager owns a field
    whose value the apply changes and `force` is false; with `force` the applier takes it over.
    """
    if api_version is None:
        api_version = str(applied.get("apiVersion") or "")
    if now is None:
        now = now_rfc3339()
    if not applied.get("kind"):
        raise _typed_patch_error(applied, api_version, "no corresponding type for "
                                 f"{_gv(api_version)}, Kind=")
    applied = _as_json(applied)
    lt = list_types_for(list_types)
    resets = tuple(reset_fields)
    sub = subresource or ""
    try:
        config_set = drop_under(applied_fields(applied, lt), resets)
    except ValueError as e:
        raise _typed_patch_error(applied, api_version, str(e)) from None

    base: Obj = live if live is not None else {}
    merged = deep_copy(base)
    _merge_map(merged, applied, (), (), lt)
    live_mf = (_meta(base) or {}).get("managedFields")
    managers = _decode_managers(live_mf)
    if live is not None and not managers:
        # an object nobody manages yet: its current fields go to "before-first-apply" (an Update),
        # so the first apply conflicts where it would change them, as on the real server
        existing = drop_under(object_fields(live, lt), resets)
        if existing:
            first = _Manager(BEFORE_FIRST_APPLY, "Update", api_version, "", now, existing, changed=True)
            managers[first.ident] = first
    ident = _ident(manager, "Apply", "", sub)
    last = managers.get(ident)
    last_set = last.fields if last is not None else set()
    me = _Manager(manager, "Apply", api_version, sub, last.time if last else None, config_set,
                  last.entry if last else None,
                  changed=last is None or last.fields != config_set or last.api_version != api_version)
    managers[ident] = me

    if last_set - config_set:
        # structured-merge-diff's prune: the applier's previous set with its named ancestors
        # (EnsureNamedFieldsAreMembers); whatever of it nobody owns any more goes, subtree and all
        # (so a map the applier created loses the fields defaulting added to it)
        owned = with_prefixes(p for m in managers.values() for p in m.fields)
        footprint = last_set | {p[:i] for p in last_set for i in range(2, len(p)) if p[i - 1].startswith("f:")}
        gone = {p for p in footprint if p not in owned and not _is_key_field(p)}
        if gone:
            # keep what the configuration itself still carries (an empty list, a null)
            present = present_paths(applied, lt)
            gone -= present
            remove_paths(merged, gone, lt, keep=owned | present)

    added, modified, removed = compare(base, merged, lt)
    if resets:
        added, modified, removed = (drop_under(added, resets), drop_under(modified, resets),
                                    drop_under(removed, resets))
    changed = added | modified
    conflicts: list[tuple[_Manager, FieldSet]] = []
    for i, m in managers.items():
        if i != ident:
            c = m.fields & changed
            if c:
                conflicts.append((m, c))
    if conflicts and not force:
        raise conflict_error([(m.who(), p) for m, c in sorted(conflicts, key=lambda mc: mc[0].who())
                              for p in sorted(c)])
    for m, c in conflicts:
        m.fields = m.fields - c
        m.changed = True
    for i, m in managers.items():
        if i != ident and m.fields & removed:
            m.fields = m.fields - removed
            m.changed = True
    if added or modified or removed:
        me.time = now
        me.changed = True
    elif last is None and live is None:
        me.time = now
    mmeta = merged.get("metadata")
    if not isinstance(mmeta, dict):
        mmeta = merged["metadata"] = {}
    if not any(m.changed for m in managers.values()):
        _set_managed(mmeta, live_mf)
        return merged
    for i in [i for i, m in managers.items() if not m.fields]:
        del managers[i]
    _set_managed(mmeta, _encode(managers))
    return merged


def _as_json(value: Obj) -> Obj:
    """The configuration as JSON would carry it: YAML's non-string keys and timestamps become strings."""
    try:
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except TypeError:
        import json

        return json.loads(json.dumps(value, default=str))


def _gv(api_version: str) -> str:
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}"


def _typed_patch_error(applied: Obj, api_version: str, why: str) -> StatusError:
    """An apply configuration that does not fit the kind: a plain Go error (500, no reason) in 1.24."""
    am = _meta(applied) or {}
    return StatusError(500, "", f"failed to create typed patch object ({am.get('namespace', '')}/"
                       f"{am.get('name', '')}; {_gv(api_version)}, Kind={applied.get('kind') or ''}): {why}")


def _is_key_field(p: Path) -> bool:
    """A key field of a keyed-list item: removed only with its item, never alone."""
    if len(p) < 2 or not p[-2].startswith("k:") or not p[-1].startswith("f:"):
        return False
    try:
        return p[-1][2:] in orjson.loads(p[-2][2:])
    except (orjson.JSONDecodeError, TypeError):
        return False


# ---- merging a configuration into a live object (typed.Merge) -----------------------------------
def _merge_map(dst: Obj, src: Obj, path: Path, tpath: FieldPath, lt: ListTypes) -> None:
    top_meta = path == ("f:metadata",)
    for k, sv in src.items():
        if top_meta and k == "managedFields":
            continue
        dv = dst.get(k)
        tp = (*tpath, k)
        if isinstance(sv, dict):
            if isinstance(dv, dict) and not atomic_map(lt, tp):
                _merge_map(dv, sv, (*path, f"f:{k}"), tp, lt)
            else:
                dst[k] = deep_copy(sv)
        elif isinstance(sv, list):
            ltype = lt(tp)
            if isinstance(dv, list) and ltype is not None and ltype.type in ("set", "map"):
                dst[k] = _merge_list(dv, sv, path, tp, lt)
            else:
                dst[k] = deep_copy(sv)
        else:
            dst[k] = sv


def _merge_list(lhs: list[Any], rhs: list[Any], path: Path, tp: FieldPath, lt: ListTypes) -> list[Any]:
    """structured-merge-diff's associative list merge: live items keep their places, applied items
    follow the configuration's order, items only in the live list stay where they were."""
    ltype = lt(tp)
    assert ltype is not None
    lpe = [item_element(x, i, ltype) for i, x in enumerate(lhs)]
    rpe = [item_element(x, i, ltype) for i, x in enumerate(rhs)]
    lmap: dict[str, Any] = {}
    for pe, x in zip(lpe, lhs, strict=True):
        lmap.setdefault(pe, x)
    rmap: dict[str, Any] = {}
    for pe, x in zip(rpe, rhs, strict=True):
        rmap.setdefault(pe, x)
    shared = [pe for pe in rpe if pe in lmap]
    si = 0

    def next_shared() -> str | None:
        nonlocal si
        if si < len(shared):
            si += 1
            return shared[si - 1]
        return None

    nxt = next_shared()
    done: set[str] = set()
    out: list[Any] = []

    def merge_item(pe: str) -> Any:
        r = rmap[pe]
        left = lmap.get(pe)
        if isinstance(left, dict) and isinstance(r, dict) and ltype.type == "map":
            _merge_map(left, r, path, tp, lt)
            return left
        return deep_copy(r)

    li = ri = 0
    while li < len(lpe) or ri < len(rpe):
        if li < len(lpe) and ri < len(rpe):
            pe = lpe[li]
            if pe == rpe[ri]:
                if pe not in done:
                    done.add(pe)
                    out.append(merge_item(pe))
                li += 1
                ri += 1
                nxt = next_shared()
                continue
            if pe in rmap and nxt is not None and nxt != pe:
                li += 1
                continue
        if li < len(lpe):
            pe = lpe[li]
            if pe not in rmap:
                out.append(lhs[li])
                li += 1
                continue
            if pe in done:
                li += 1
                continue
        if ri < len(rpe):
            pe = rpe[ri]
            if pe not in done:
                done.add(pe)
                out.append(merge_item(pe))
            ri += 1
            if nxt is not None and nxt == pe:
                nxt = next_shared()
    return out
