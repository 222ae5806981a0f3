"""Field sets of Kubernetes objects, as structured-merge-diff computes them for managedFields.

A field set is a plain Python `set` of paths; a path is a tuple of `fieldsV1` path elements:
`"f:<field>"` (a map field), `"k:{...}"` (an item of a keyed list, its key fields as compact
JSON), `"v:<json>"` (an item of a set list) and `"i:<n>"` (an item by index). Working on flat
sets keeps ownership arithmetic trivial (union, difference, intersection); `encode_fields` /
`decode_fields` convert to and from the nested `fieldsV1` JSON the server returns.

Walks never look into the fields kube-apiserver strips from every field set (`apiVersion`,
`kind`, `metadata.name`, `metadata.uid`, `metadata.resourceVersion`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import orjson

from .govalues import SMD, equal
from .listtypes import ELEMENT, FieldPath, ListType, ListTypes

Path = tuple[str, ...]
FieldSet = set[Path]

TOP_SKIP = frozenset({"apiVersion", "kind"})
META_SKIP = frozenset({"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
                       "generation", "managedFields", "resourceVersion"})
_NO_SKIP: frozenset[str] = frozenset()
_META_PATH: Path = ("f:metadata",)


def _meta_view(d: dict[str, Any]) -> dict[str, Any]:
    """Object metadata as the server's typed objects see it: ObjectMeta's fields are `omitempty`,
    so an empty `labels: {}`, `finalizers: []` or `generateName: ""` is no field at all."""
    for v in d.values():
        if v is None or v == "" or v == {} or v == []:
            return {k: v for k, v in d.items() if not (v is None or v == "" or v == {} or v == [])}
    return d


def _skip(path: Path) -> frozenset[str]:
    if not path:
        return TOP_SKIP
    if path == _META_PATH:
        return META_SKIP
    return _NO_SKIP


_JSON_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def to_json(value: Any) -> str:
    """Compact JSON with sorted keys, as used inside `k:` and `v:` path elements."""
    try:
        return orjson.dumps(value, option=_JSON_OPTS).decode()
    except TypeError:  # e.g. an integer beyond 64 bits from a YAML body
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def item_element(item: Any, index: int, lt: ListType) -> str:
    """The path element naming one item of a merged (`map` or `set`) list."""
    if lt.type == "set":
        return "v:" + to_json(item)
    if isinstance(item, dict):
        if lt.key_defaults:
            key = {k: item[k] if k in item else lt.key_defaults.get(k) for k in lt.keys}
            key = {k: v for k, v in key.items() if v is not None}
        else:
            key = {k: item[k] for k in lt.keys if k in item}
        if key:
            return "k:" + to_json(key)
    return f"i:{index}"


def _merged(lt: ListType | None) -> bool:
    return lt is not None and lt.type in ("set", "map")


def atomic_map(lt: ListTypes, tpath: FieldPath) -> bool:
    """Whether the object at `tpath` is an atomic struct or map (`+structType=atomic`, a label
    selector; `x-kubernetes-map-type: atomic`): owned and replaced as one value."""
    t = lt(tpath)
    return t is not None and t.type == "atomic"


# ---- the set of fields an applied configuration specifies (typed.ToFieldSet) ----------------------
def applied_fields(obj: dict[str, Any], lt: ListTypes) -> FieldSet:
    """The fields an apply configuration sets: its leaves, empty maps, nulls, atomic lists and the
    items of keyed/set lists (non-empty maps are not members themselves). Raises `ValueError` when
    a keyed or set list names the same item twice."""
    out: FieldSet = set()
    _applied_map(obj, (), (), lt, out)
    return out


def _applied_map(obj: dict[str, Any], path: Path, tpath: FieldPath, lt: ListTypes, out: FieldSet) -> None:
    skip = _skip(path)
    for k, v in obj.items():
        if k in skip:
            continue
        p = (*path, f"f:{k}")
        tp = (*tpath, k)
        if isinstance(v, dict):
            if v and not atomic_map(lt, tp):
                if lt(tp) is ELEMENT:  # an element of a map, not a declared field: a member too
                    out.add(p)
                _applied_map(v, p, tp, lt, out)
            elif p != _META_PATH:
                out.add(p)
        elif isinstance(v, list):
            ltype = lt(tp)
            if not _merged(ltype):
                out.add(p)
                continue
            assert ltype is not None
            for i, item in enumerate(v):
                q = (*p, item_element(item, i, ltype))
                if q[-1].startswith("i:"):
                    raise ValueError(f"{path_string(p)}: element {i}: associative list with keys has an element "
                                     f"that omits key field {to_json(ltype.keys[0] if ltype.keys else '')}")
                if q in out:
                    raise ValueError(f"{path_string(p)}: duplicate entries for key {path_string(q[-1:])}")
                out.add(q)
                if isinstance(item, dict) and ltype.type == "map":
                    _applied_map(item, q, tp, lt, out)
        else:
            out.add(p)


# ---- every field of a subtree, Update style (maps are members too) -----------------------------
def _all_fields(v: Any, path: Path, tpath: FieldPath, lt: ListTypes, out: FieldSet, member: bool,
                added: bool = False) -> None:
    """`added`: the subtree is new (structured-merge-diff's comparison also names every list it adds)."""
    if isinstance(v, dict):
        if member and path and path != _META_PATH:
            out.add(path)
            if atomic_map(lt, tpath):
                return
        skip = _skip(path)
        if path == _META_PATH:
            v = _meta_view(v)
        for k, x in v.items():
            if k not in skip:
                _all_fields(x, (*path, f"f:{k}"), (*tpath, k), lt, out, True, added)
    elif isinstance(v, list):
        ltype = lt(tpath)
        if not _merged(ltype):
            if member:
                out.add(path)
            return
        assert ltype is not None
        if member and (added or not v):  # an added list is named itself; an empty one is a leaf
            out.add(path)
        seen: set[str] = set()
        for i, item in enumerate(v):
            pe = item_element(item, i, ltype)
            if pe in seen:  # a duplicate key: the first item names it
                continue
            seen.add(pe)
            q = (*path, pe)
            out.add(q)
            if isinstance(item, dict) and ltype.type == "map" and not ltype.elem_atomic:
                _all_fields(item, q, tpath, lt, out, False, added)
    elif member:
        out.add(path)


def has_duplicate_keys(value: Any, lt: ListTypes, tpath: FieldPath = ()) -> bool:
    """Whether an associative list anywhere in `value` holds two items with the same key (which
    structured-merge-diff refuses to type, so the field manager gives up on the object)."""
    if isinstance(value, dict):
        return any(has_duplicate_keys(v, lt, (*tpath, k)) for k, v in value.items() if isinstance(v, dict | list))
    if isinstance(value, list):
        ltype = lt(tpath)
        if _merged(ltype):
            assert ltype is not None
            seen: set[str] = set()
            for i, item in enumerate(value):
                pe = item_element(item, i, ltype)
                if pe in seen:
                    return True
                seen.add(pe)
        return any(has_duplicate_keys(item, lt, tpath) for item in value if isinstance(item, dict | list))
    return False


def update_fields_v1(obj: dict[str, Any], lt: ListTypes, zero: dict[str, Any] | None = None) -> dict[str, Any]:
    """`encode_fields` of what a create gives its writer, built directly (the fast path of every
    create): the fields of `obj` that differ from `zero`, the kind's zero value as Go encodes it
    (structured-merge-diff compares the new object with an empty one of its type, so a struct the
    zero value already holds is no member, and a null `creationTimestamp` no field). Without a zero
    value (custom resources), `metadata` is never a member itself, `spec` and `status` are like any
    other field."""
    return _fv1_map(obj, 0, (), lt, zero)


_ABSENT: Any = object()


def _fv1_map(d: dict[str, Any], level: int, tpath: FieldPath, lt: ListTypes,
             zero: dict[str, Any] | None) -> dict[str, Any]:
    # level: 0 the object root, 1 the root's metadata, 2 anything else
    skip = TOP_SKIP if level == 0 else META_SKIP if level == 1 else _NO_SKIP
    if level == 1:
        d = _meta_view(d)
    out: dict[str, Any] = {}
    for k in sorted(d):
        if k in skip:
            continue
        v = d[k]
        z = zero.get(k, _ABSENT) if zero is not None else _ABSENT
        if z is not _ABSENT and equal(z, v, SMD):
            continue  # as the zero value has it: not a change
        if isinstance(v, dict):
            if atomic_map(lt, (*tpath, k)):
                out[f"f:{k}"] = {}
                continue
            sub = z if isinstance(z, dict) else None
            ch = _fv1_map(v, 1 if level == 0 and k == "metadata" else 2, (*tpath, k), lt, sub)
            if sub is not None or (level == 0 and k == "metadata"):
                if ch:
                    out[f"f:{k}"] = ch
            else:
                out[f"f:{k}"] = {".": {}, **ch} if ch else {}
        elif isinstance(v, list):
            tp = (*tpath, k)
            ltype = lt(tp)
            if not _merged(ltype):
                out[f"f:{k}"] = {}
                continue
            assert ltype is not None
            items: dict[str, Any] = {}
            for i, item in enumerate(v):
                pe = item_element(item, i, ltype)
                if pe in items:
                    continue
                if isinstance(item, dict) and ltype.type == "map" and not ltype.elem_atomic:
                    ch = _fv1_map(item, 2, tp, lt, None)
                    items[pe] = {".": {}, **ch} if ch else {}
                else:
                    items[pe] = {}
            if not items:
                out[f"f:{k}"] = {}  # an empty list is a leaf
            else:
                # a list the zero value does not hold is itself added (a null one in the zero value is not)
                member: dict[str, Any] = {".": {}} if z is _ABSENT else {}
                out[f"f:{k}"] = {**member, **{pe: items[pe] for pe in sorted(items)}}
        else:
            out[f"f:{k}"] = {}
    return out


def object_fields(obj: dict[str, Any], lt: ListTypes) -> FieldSet:
    """Every field of an object the way an Update manager owns them (what a create gives its writer)."""
    out: FieldSet = set()
    _all_fields(obj, (), (), lt, out, False)
    return out


# ---- comparison (typed.Compare) ------------------------------------------------------------------
def compare(old: dict[str, Any], new: dict[str, Any], lt: ListTypes) -> tuple[FieldSet, FieldSet, FieldSet]:
    """(added, modified, removed) field sets going from `old` to `new`."""
    added: FieldSet = set()
    modified: FieldSet = set()
    removed: FieldSet = set()
    _cmp_map(old, new, (), (), lt, added, modified, removed)
    return added, modified, removed


def _cmp_map(o: dict[str, Any], n: dict[str, Any], path: Path, tpath: FieldPath, lt: ListTypes,
             a: FieldSet, m: FieldSet, r: FieldSet) -> None:
    skip = _skip(path)
    if path == _META_PATH:
        o, n = _meta_view(o), _meta_view(n)
    for k, nv in n.items():
        if k in skip:
            continue
        p = (*path, f"f:{k}")
        tp = (*tpath, k)
        if k not in o:
            _all_fields(nv, p, tp, lt, a, True, added=True)
            continue
        ov = o[k]
        if ov is nv or (type(ov) is type(nv) and ov == nv):
            continue
        _cmp_value(ov, nv, p, tp, lt, a, m, r)
    for k, ov in o.items():
        if k not in n and k not in skip:
            _all_fields(ov, (*path, f"f:{k}"), (*tpath, k), lt, r, True, added=True)


def _cmp_value(ov: Any, nv: Any, p: Path, tp: FieldPath, lt: ListTypes,
               a: FieldSet, m: FieldSet, r: FieldSet) -> None:
    # a null holds no fields: null -> a map or list compares as an empty one to it (its own path is
    # neither added nor modified), and back; an empty one against null is a changed leaf
    if ov is None and isinstance(nv, dict | list) and nv:
        ov = {} if isinstance(nv, dict) else []
    elif nv is None and isinstance(ov, dict | list) and ov:
        nv = {} if isinstance(ov, dict) else []
    if isinstance(ov, dict) and isinstance(nv, dict):
        if ov != nv:
            if atomic_map(lt, tp):
                if not _deep_strict_equal(ov, nv):
                    m.add(p)
            else:
                _cmp_map(ov, nv, p, tp, lt, a, m, r)
        return
    if isinstance(ov, list) and isinstance(nv, list):
        ltype = lt(tp)
        if not _merged(ltype):
            if ov != nv or not _deep_strict_equal(ov, nv):
                m.add(p)
            return
        assert ltype is not None
        oi = _index_items(ov, ltype)
        ni = _index_items(nv, ltype)
        atomic_items = ltype.elem_atomic
        for pe, item in ni.items():
            q = (*p, pe)
            if pe not in oi:
                a.add(q)
                if isinstance(item, dict) and ltype.type == "map" and not atomic_items:
                    _all_fields(item, q, tp, lt, a, False, added=True)
                continue
            old_item = oi[pe]
            if isinstance(old_item, dict) and isinstance(item, dict) and not atomic_items:
                if old_item != item:
                    _cmp_map(old_item, item, q, tp, lt, a, m, r)
            elif not _deep_strict_equal(old_item, item):
                m.add(q)
        for pe, item in oi.items():
            if pe not in ni:
                q = (*p, pe)
                r.add(q)
                if isinstance(item, dict) and ltype.type == "map" and not atomic_items:
                    _all_fields(item, q, tp, lt, r, False, added=True)
        return
    if isinstance(ov, dict | list) or isinstance(nv, dict | list):
        m.add(p)
        _all_fields(ov, p, tp, lt, r, False)
        _all_fields(nv, p, tp, lt, a, False)
        return
    if not equal(ov, nv, SMD):
        m.add(p)


def _index_items(items: list[Any], lt: ListType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        out.setdefault(item_element(item, i, lt), item)
    return out


def _deep_strict_equal(a: Any, b: Any) -> bool:
    """structured-merge-diff's `value.Equals` (govalues.SMD): numbers by value, bool apart."""
    return equal(a, b, SMD)


# ---- fieldsV1 encoding ---------------------------------------------------------------------------
# children are emitted in plain string order: fields (f:) come first, and the items of one list
# are all k:, all v: or all i:, so this matches structured-merge-diff's element order


def encode_fields(paths: Iterable[Path]) -> dict[str, Any]:
    """The nested `fieldsV1` JSON of a field set (`{}` marks a member leaf, `"."` a member that
    also has children), keys in structured-merge-diff's order."""
    root: dict[str, list[Any]] = {}
    for path in paths:
        node = root
        for el in path[:-1]:
            ent = node.get(el)
            if ent is None:
                ent = node[el] = [False, {}]
            node = ent[1]
        ent = node.get(path[-1])
        if ent is None:
            node[path[-1]] = [True, {}]
        else:
            ent[0] = True
    return _emit(root)


def _emit(children: dict[str, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for el in sorted(children):
        member, ch = children[el]
        if ch:
            inner = _emit(ch)
            out[el] = {".": {}, **inner} if member else inner
        else:
            out[el] = {}
    return out


def decode_fields(fields_v1: Any) -> FieldSet:
    """The field set of a `fieldsV1` JSON object; raises `ValueError` on a malformed one."""
    out: FieldSet = set()
    if not isinstance(fields_v1, dict):
        raise ValueError("fieldsV1 must be an object")
    _decode(fields_v1, (), out)
    return out


def _decode(node: dict[str, Any], path: Path, out: FieldSet) -> None:
    for k, sub in node.items():
        if k == ".":
            if path:
                out.add(path)
            continue
        if not isinstance(sub, dict) or k[:2] not in ("f:", "k:", "v:", "i:"):
            raise ValueError(f"invalid fieldsV1 element {k!r}")
        q = (*path, k)
        if sub:
            _decode(sub, q, out)
        else:
            out.add(q)


def path_string(path: Path) -> str:
    """A path the way kube-apiserver prints it in conflicts: `.spec.containers[name="a"].image`."""
    parts: list[str] = []
    for el in path:
        kind, body = el[:2], el[2:]
        if kind == "f:":
            parts.append("." + body)
        elif kind == "k:":
            try:
                key = orjson.loads(body)
                parts.append("[" + ",".join(f"{k}={to_json(v)}" for k, v in sorted(key.items())) + "]")
            except (orjson.JSONDecodeError, AttributeError):
                parts.append("[" + body + "]")
        elif kind == "v:":
            parts.append("[=" + body + "]")
        else:
            parts.append("[" + body + "]")
    return "".join(parts)


def with_prefixes(paths: Iterable[Path]) -> set[Path]:
    """Every path and every ancestor of it (to ask "does anyone own something under here?")."""
    out: set[Path] = set()
    for p in paths:
        for i in range(len(p), 0, -1):
            q = p[:i]
            if q in out:
                break
            out.add(q)
    return out


def drop_under(paths: FieldSet, roots: Iterable[FieldPath]) -> FieldSet:
    """`paths` without those at or below any of `roots` (field-name paths, e.g. `("status",)`)."""
    prefixes = [tuple("f:" + f for f in r) for r in roots]
    if not prefixes:
        return paths
    return {p for p in paths if not any(p[:len(q)] == q for q in prefixes)}


def present_paths(obj: dict[str, Any], lt: ListTypes) -> set[Path]:
    """Every path that has a value in `obj` (maps, lists, list items and leaves alike)."""
    out: set[Path] = set()
    _present(obj, (), (), lt, out)
    return out


def _present(v: Any, path: Path, tpath: FieldPath, lt: ListTypes, out: set[Path]) -> None:
    if path:
        out.add(path)
    if isinstance(v, dict):
        skip = _skip(path)
        for k, x in v.items():
            if k not in skip:
                _present(x, (*path, f"f:{k}"), (*tpath, k), lt, out)
    elif isinstance(v, list):
        ltype = lt(tpath)
        if not _merged(ltype):
            return
        assert ltype is not None
        for i, item in enumerate(v):
            q = (*path, item_element(item, i, ltype))
            out.add(q)
            if isinstance(item, dict) and ltype.type == "map":
                _present(item, q, tpath, lt, out)


def remove_paths(obj: dict[str, Any], paths: Iterable[Path], lt: ListTypes,
                 keep: frozenset[Path] | set[Path] = frozenset()) -> None:
    """Remove the values at `paths` from `obj` in place, in one walk (paths under a removed one are
    moot). A map or list the removal empties goes too, unless its path is in `keep` (a field some
    manager still owns: structured-merge-diff adds those back after pruning)."""
    trie: dict[str, Any] = {}
    for p in sorted(paths, key=len):
        node = trie
        for el in p[:-1]:
            nxt = node.get(el)
            if nxt is None:
                nxt = node[el] = {}
            elif nxt is _GONE:
                break
            node = nxt
        else:
            node[p[-1]] = _GONE
    if trie:
        _remove_walk(obj, trie, (), lt, (), keep)


_GONE: dict[str, Any] = {}


def _remove_walk(v: Any, trie: dict[str, Any], tpath: FieldPath, lt: ListTypes, path: Path,
                 keep: frozenset[Path] | set[Path]) -> None:
    if isinstance(v, dict):
        for el, sub in trie.items():
            if not el.startswith("f:"):
                continue
            name = el[2:]
            if name not in v:
                continue
            if sub is _GONE:
                del v[name]
            else:
                _remove_walk(v[name], sub, (*tpath, name), lt, (*path, el), keep)
                if (v[name] == {} or v[name] == []) and (*path, el) not in keep:
                    del v[name]
    elif isinstance(v, list):
        ltype = lt(tpath)
        if not _merged(ltype):
            return
        assert ltype is not None
        drop: set[int] = set()
        seen: set[str] = set()
        for i, item in enumerate(v):
            pe = item_element(item, i, ltype)
            sub = trie.get(pe)
            if sub is None or pe in seen:
                continue
            seen.add(pe)
            if sub is _GONE:
                drop.add(i)
            elif isinstance(item, dict):
                _remove_walk(item, sub, tpath, lt, (*path, pe), keep)
        if drop:
            v[:] = [x for i, x in enumerate(v) if i not in drop]
