"""The three PATCH bodies kube-apiserver accepts, as pure functions on JSON documents.

- `json_merge_patch`: RFC 7386 (`application/merge-patch+json`).
- `json_patch`: RFC 6902 (`application/json-patch+json`).
- `strategic_merge_patch`: Kubernetes' strategic merge patch (`application/strategic-merge-patch+json`),
  which merges lists by their merge key and understands the `$patch`, `$retainKeys`,
  `$deleteFromPrimitiveList/...` and `$setElementOrder/...` directives.

Every function leaves its inputs untouched and returns a fresh document sharing nothing mutable
with them, so callers may mutate the result (defaulting, status reset) freely. Errors are
`StatusError`s with the real server's codes, reasons and messages.
"""

from __future__ import annotations

from typing import Any

import orjson

from .errors import StatusError, bad_request
from .govalues import json_kind, sprint_v
from .kinds.meta import GO_JSON_TYPES
from .listtypes import FieldPath, ListType, ListTypes, list_types_for
from .shapes import Obj

__all__ = [
    "deep_copy",
    "json_equal",
    "json_merge_patch",
    "json_patch",
    "strategic_merge_patch",
]


# ---- helpers ------------------------------------------------------------------------------------
def deep_copy(value: Any) -> Any:
    """A copy of a JSON value sharing no dict or list with it (orjson round trip: fast in C)."""
    if not isinstance(value, dict | list):
        return value
    try:
        return orjson.loads(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return _py_copy(value)


def _py_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _py_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_py_copy(v) for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: `true` is not `1`, but `1` equals `1.0` (Go decodes both as float64)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and len(a) == len(b) and all(
            k in b and json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


# ---- RFC 7386 merge patch -----------------------------------------------------------------------
def json_merge_patch(target: Any, patch: Any, *, copy: bool = True) -> Any:
    """RFC 7386: objects merge recursively, `null` deletes a key, anything else replaces.

    A top-level `null` patch is rejected like the real server does ("Invalid JSON Patch", 400).
    The result shares nothing with `patch`; with ``copy=False`` an object `target` is merged into
    in place (for a caller that owns it: saves a deep copy per write).
    """
    if patch is None:
        raise bad_request("Invalid JSON Patch")
    if not isinstance(patch, dict):
        return deep_copy(patch)
    out = (deep_copy(target) if copy else target) if isinstance(target, dict) else {}
    _merge_into(out, patch)
    return out


def _merge_into(out: Obj, patch: Obj) -> None:
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            cur = out.get(k)
            if not isinstance(cur, dict):
                cur = {}
                out[k] = cur
            _merge_into(cur, v)
        else:
            out[k] = deep_copy(v)


# ---- RFC 6902 JSON patch ------------------------------------------------------------------------
def _rejected() -> StatusError:
    """What kube-apiserver answers for any JSON patch that fails to apply: a generic 422."""
    return StatusError(422, "Invalid", "the server rejected our request due to an error in our request", {})


class _PatchFailed(Exception):
    pass


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise _PatchFailed("path is not a string")
    if path == "":
        return []
    if not path.startswith("/"):
        raise _PatchFailed(f"invalid pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(token: str, length: int, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return length
    digits = token[1:] if token.startswith("-") else token
    if not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
        raise _PatchFailed(f"invalid array index {token!r}")
    i = int(token)
    if i < 0:  # evanphx/json-patch (kube-apiserver's) counts negative indices from the end
        if i < -length:
            raise _PatchFailed(f"array index {i} out of bounds")
        i += length
    if i > length or (i == length and not allow_end):
        raise _PatchFailed(f"array index {i} out of bounds")
    return i


def _slot(container: Any, token: str) -> Any:
    """The key or index `token` names in `container`, which must hold it."""
    if isinstance(container, dict):
        if token not in container:
            raise _PatchFailed("doc is missing key")
        return token
    if isinstance(container, list):
        return _index(token, len(container), allow_end=False)
    raise _PatchFailed("doc is missing path")


def _parent(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for t in tokens[:-1]:
        cur = cur[_slot(cur, t)]
    return cur


def _existing(doc: Any, tokens: list[str]) -> tuple[Any, Any]:
    """The container of the value a non-empty pointer names, and its key or index there."""
    parent = _parent(doc, tokens)
    return parent, _slot(parent, tokens[-1])


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent, key = _existing(doc, tokens)
    return parent[key]


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), allow_end=True), value)
    else:
        raise _PatchFailed("doc is missing path")
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise _PatchFailed("cannot remove the whole document")
    parent, key = _existing(doc, tokens)
    return parent.pop(key)


def _replace(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    if isinstance(parent, dict):
        # evanphx/json-patch v4 (kube-apiserver 1.24): an object's missing key is not an error, it is set
        parent[tokens[-1]] = value
        return doc
    parent, key = _existing(doc, tokens)
    parent[key] = value
    return doc


def _value(op: Obj) -> Any:
    if "value" not in op:
        raise _PatchFailed("missing value")
    return deep_copy(op["value"])


def _apply_op(doc: Any, op: Any) -> Any:
    if not isinstance(op, dict):
        raise _PatchFailed("operation is not an object")
    kind = op.get("op")
    if kind == "add":
        return _add(doc, _pointer(op.get("path")), _value(op))
    if kind == "remove":
        _remove(doc, _pointer(op.get("path")))
        return doc
    if kind == "replace":
        return _replace(doc, _pointer(op.get("path")), _value(op))
    if kind == "move":
        src, dst = _pointer(op.get("from")), _pointer(op.get("path"))
        if src == dst:
            _get(doc, src)
            return doc
        if dst[:len(src)] == src:
            raise _PatchFailed("cannot move a value into one of its children")
        moved = _remove(doc, src) if src else doc
        return _add(doc, dst, moved)
    if kind == "copy":
        src, dst = _pointer(op.get("from")), _pointer(op.get("path"))
        return _add(doc, dst, deep_copy(_get(doc, src)))
    if kind == "test":
        tokens = _pointer(op.get("path"))
        expected = op.get("value")
        try:
            actual = _get(doc, tokens)
        except _PatchFailed:
            if expected is None and "value" in op and isinstance(_parent(doc, tokens), dict):
                return doc  # evanphx/json-patch: a missing key equals null
            raise
        if not json_equal(actual, expected):
            raise _PatchFailed("testing value failed")
        return doc
    raise _PatchFailed(f"unexpected kind: {kind!r}")


MAX_JSON_PATCH_OPERATIONS = 10000  # kube-apiserver's limit


def decoded_paths(ptype: str, patch: Any) -> frozenset[tuple[str, ...]]:
    """The objects of a document that applying a JSON patch or merge patch decodes on the way (the
    root, and every container a path or the patch's own maps go through); evanphx/json-patch keeps
    the rest as the raw bytes it was given (see `gostruct.go_json`)."""
    out: set[tuple[str, ...]] = {()}
    if ptype == "json" and isinstance(patch, list):
        for op in patch:
            for key in ("path", "from"):
                text = op.get(key) if isinstance(op, dict) else None
                if isinstance(text, str) and text.startswith("/"):
                    tokens = [t.replace("~1", "/").replace("~0", "~") for t in text[1:].split("/")]
                    out.update(tuple(tokens[:i]) for i in range(len(tokens)))
    elif ptype == "merge" and isinstance(patch, dict):
        def walk(value: Obj, path: tuple[str, ...]) -> None:
            out.add(path)
            for k, v in value.items():
                if isinstance(v, dict):
                    walk(v, (*path, k))
        walk(patch, ())
    return frozenset(out)


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902: apply `ops` in order, atomically (a failing op leaves the input untouched).

    A body that is not an array → 400 BadRequest (Go's unmarshal message); an operation that cannot
    be applied (failed `test`, missing path, unknown `op`, bad index) → 422 Invalid with empty
    details, as kube-apiserver answers.
    """
    if not isinstance(ops, list):
        raise bad_request(
            f"json: cannot unmarshal {GO_JSON_TYPES[json_kind(ops)]} into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise StatusError(413, "RequestEntityTooLarge",
                          f"Request entity too large: The allowed operations in a JSON patch is "
                          f"{MAX_JSON_PATCH_OPERATIONS}, but found {len(ops)}", {})
    for op in ops:
        if not isinstance(op, dict):
            raise bad_request(
                f"json: cannot unmarshal {GO_JSON_TYPES[json_kind(op)]} into Go value of type jsonpatch.Operation")
    out = deep_copy(doc)
    try:
        for op in ops:
            out = _apply_op(out, op)
    except _PatchFailed:
        raise _rejected() from None
    return out


# ---- strategic merge patch ----------------------------------------------------------------------
_PATCH = "$patch"
_RETAIN = "$retainKeys"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"


class _Delete:
    """Marker: `$patch: delete` on a map removes the map from its parent."""


_DELETED = _Delete()


def strategic_merge_patch(doc: Any, patch: Any, kind: Any = None) -> Any:
    """Kubernetes strategic merge patch of `doc` with `patch`.

    `kind` tells which lists merge and by which key: a `ListTypes` lookup, a mapping of field
    paths, or a `ServedResource` (see `listtypes.list_types_for`). Lists without a merge strategy
    are replaced, as are lists of unknown kinds. New items of a keyed list come *first*, items
    already present keep their order (kube-apiserver's `normalizeElementOrder`).
    """
    if not isinstance(patch, dict):
        raise bad_request("Invalid JSON Patch")
    lookup = list_types_for(kind)
    out = deep_copy(doc) if isinstance(doc, dict) else {}
    res = _smp_map(out, patch, (), lookup)
    if isinstance(res, _Delete):
        return {}
    return res


def _directive_error(msg: str) -> StatusError:
    return bad_request(msg)


def _smp_map(orig: Obj, patch: Obj, path: FieldPath, lt: ListTypes) -> Obj | _Delete:
    """Merge `patch` into `orig` (owned by us: mutated in place and returned)."""
    directive = patch.get(_PATCH)
    if directive is not None:
        if directive == "replace":
            return _clean(patch, path, lt)
        if directive == "delete":
            return _DELETED
        if directive != "merge":
            # mergepatch.ErrBadPatchType is no error the handler interprets: a plain 500
            raise StatusError(500, "", f"unknown patch type: {directive} in map: {_short(patch)}")
    retain = patch.get(_RETAIN)
    if retain is not None:
        if not isinstance(retain, list):
            raise _directive_error("invalid patch: $retainKeys must be a list")
        keep = {str(k) for k in retain}
        for k in [k for k in orig if k not in keep]:
            del orig[k]
    orders: dict[str, list[Any]] = {}
    for k, pv in patch.items():
        if k.startswith("$"):
            if k.startswith(_DELETE_PRIMITIVE):
                field = k[len(_DELETE_PRIMITIVE):]
                if not isinstance(pv, list):
                    raise _directive_error("invalid patch: $deleteFromPrimitiveList must be a list")
                cur = orig.get(field)
                if isinstance(cur, list):
                    orig[field] = [x for x in cur if not any(json_equal(x, d) for d in pv)]
            elif k.startswith(_SET_ORDER):
                if not isinstance(pv, list):
                    raise _directive_error("invalid patch: $setElementOrder must be a list")
                orders[k[len(_SET_ORDER):]] = pv
            elif k not in (_PATCH, _RETAIN):
                raise _directive_error(f"unknown directive {k!r} in strategic merge patch")
            continue
        if pv is None:
            orig.pop(k, None)
            continue
        cpath = (*path, k)
        ov = orig.get(k)
        if isinstance(pv, dict):
            res = _smp_map(ov if isinstance(ov, dict) else {}, pv, cpath, lt)
            if isinstance(res, _Delete):
                orig.pop(k, None)
            else:
                orig[k] = res
        elif isinstance(pv, list):
            orig[k] = _smp_list(ov if isinstance(ov, list) else [], pv, cpath, lt(cpath), lt,
                                orders.pop(k, None) if k in orders else _pending_order(patch, k))
        else:
            orig[k] = pv
    for field, order in orders.items():
        cur = orig.get(field)
        if isinstance(cur, list) and field not in patch:
            ltype = lt((*path, field))
            orig[field] = _reorder(cur, [], order, ltype.merge_key if ltype else None)
    return orig


def _pending_order(patch: Obj, field: str) -> list[Any] | None:
    v = patch.get(_SET_ORDER + field)
    return v if isinstance(v, list) else None


def _short(v: Any) -> str:
    try:
        s = orjson.dumps(v, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        s = repr(v)
    return s if len(s) < 200 else s[:200] + "..."


def _clean(value: Any, path: FieldPath, lt: ListTypes) -> Any:
    """A copy of a patch value with directives resolved against nothing (a new field)."""
    if isinstance(value, dict):
        out: Obj = {}
        for k, v in value.items():
            if k.startswith("$") or v is None:
                continue
            if isinstance(v, dict):
                if v.get(_PATCH) == "delete":
                    continue
                out[k] = _clean(v, (*path, k), lt)
            elif isinstance(v, list):
                out[k] = _clean_list(v, (*path, k), lt)
            else:
                out[k] = v
        return out
    if isinstance(value, list):
        return _clean_list(value, path, lt)
    return value


def _clean_list(items: list[Any], path: FieldPath, lt: ListTypes) -> list[Any]:
    out = []
    for it in items:
        if isinstance(it, dict) and it.get(_PATCH) is not None:
            if it[_PATCH] == "replace" or it[_PATCH] == "delete":
                continue
        out.append(_clean(it, path, lt))
    return out


def _item_key(item: Any, merge_key: str | None) -> Any:
    if merge_key is None:
        return _hashable(item)
    if isinstance(item, dict):
        return _hashable(item.get(merge_key))
    return None


def _hashable(v: Any) -> Any:
    if isinstance(v, dict | list):
        try:
            return orjson.dumps(v, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return repr(v)
    if isinstance(v, bool):
        return ("bool", v)
    return v


def _smp_list(orig: list[Any], patch: list[Any], path: FieldPath, ltype: ListType | None,
              lt: ListTypes, order: list[Any] | None) -> list[Any]:
    if ltype is None or ltype.strategy != "merge":
        return _clean_list(patch, path, lt)
    is_maps = any(isinstance(x, dict) for x in patch) or any(isinstance(x, dict) for x in orig)
    if order is not None:
        _check_order_covers(patch, order, ltype.merge_key if is_maps else None)
    if not is_maps:
        merged = list(orig)
        seen = {_hashable(x) for x in merged}
        for x in patch:
            h = _hashable(x)
            if h not in seen:
                seen.add(h)
                merged.append(x)
        return _reorder(merged, patch, order, None, orig)
    mk = ltype.merge_key
    if not mk:
        raise _directive_error(f"cannot merge lists without merge key for {'.'.join(path)}")
    # special elements: `$patch: replace` replaces the list, `$patch: delete` removes an item
    plain: list[Obj] = []
    for it in patch:
        if not isinstance(it, dict):
            raise _directive_error(f"invalid list item in {'.'.join(path)}: expected an object")
        d = it.get(_PATCH)
        if d == "replace":
            return _clean_list([x for x in patch if x is not it], path, lt)
        if d == "delete":
            if mk not in it:
                raise _directive_error(f"map: {_short(it)} does not contain declared merge key: {mk}")
            key = _item_key(it, mk)
            orig = [o for o in orig if _item_key(o, mk) != key]
            continue
        if d is not None and d != "merge":
            raise _directive_error(f"unknown patch type: {d} in map: {_short(it)}")
        if mk not in it:
            raise _directive_error(f"map: {_short(it)} does not contain declared merge key: {mk}")
        plain.append(it)
    merged = list(orig)
    index: dict[Any, int] = {}
    for i, o in enumerate(merged):
        index.setdefault(_item_key(o, mk), i)
    for it in plain:
        key = _item_key(it, mk)
        found = index.get(key)
        if found is not None and isinstance(merged[found], dict):
            res = _smp_map(merged[found], it, path, lt)
            if isinstance(res, _Delete):  # pragma: no cover - delete handled above
                continue
            merged[found] = res
        else:
            res = _smp_map({}, it, path, lt)
            if not isinstance(res, _Delete):
                index[key] = len(merged)
                merged.append(res)
    return _reorder(merged, plain, order, mk, orig)


def _check_order_covers(patch: list[Any], order: list[Any], mk: str | None) -> None:
    """`normalizeElementOrder`: every item the patch list names must be in its `$setElementOrder`
    list; otherwise a plain Go error, which kube-apiserver answers with a 500."""
    named = {_item_key(x, mk) for x in order}
    items = [x for x in patch if not (isinstance(x, dict) and _PATCH in x)]
    if all(_item_key(x, mk) in named for x in items):
        return
    raise StatusError(500, "", f"The order in patch list:\n{sprint_v(items)}\n doesn't match $setElementOrder "
                               f"list:\n{sprint_v(order)}\n")


def _reorder(merged: list[Any], patch: list[Any], order: list[Any] | None, mk: str | None,
             server: list[Any] | None = None) -> list[Any]:
    """kube-apiserver's order: items named by the patch (in `$setElementOrder`, else patch order)
    interleaved with server-only items (in server order); a new item goes before the server items
    it cannot be placed relative to."""
    wanted = order if order is not None else patch
    if not wanted:
        return merged
    rank: dict[Any, int] = {}
    for i, x in enumerate(wanted):
        rank.setdefault(_item_key(x, mk), i)
    patch_items = [x for x in merged if _item_key(x, mk) in rank]
    if not patch_items:
        return merged
    patch_items.sort(key=lambda x: rank[_item_key(x, mk)])
    server_only = [x for x in merged if _item_key(x, mk) not in rank]
    srv = server if server is not None else merged
    pos: dict[Any, int] = {}
    for i, x in enumerate(srv):
        pos.setdefault(_item_key(x, mk), i)
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            li = pos.get(_item_key(server_only[i], mk), -1)
            ri = pos.get(_item_key(patch_items[j], mk), -1)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out
