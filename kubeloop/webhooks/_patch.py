"""The JSON patch (RFC 6902) a mutating webhook answers with, computed from the object it returns.

Two pure functions:

- `diff(old, new)`: `add`/`remove`/`replace` operations turning `old` into `new`. Objects are
  compared key by key; a list changed in place (same length) item by item, grown or shrunk at its
  end by `add`/`remove` there, and otherwise replaced whole. No `move`/`copy`/`test`: the API
  server applies any valid patch, and a patch of these three operations is easy to read in an audit
  log. Keys are escaped (`~0`, `~1`), so a label like `example.com/managed` is `/metadata/labels/
  example.com~1managed`.
- `rebase(raw, before, after)`: a typed handler sees the object as its model reads it (defaults
  filled, fields it does not model dropped), so its output is compared with that reading, and only
  the difference is carried onto the object the API server sent: what the model drops or defaults
  is never removed or written by the patch.

Why not the `jsonpatch` package: its `make_patch` emits `move`/`copy` operations computed by a
longest-common-subsequence search (correct, but slower on the lists of a Kubernetes object and
harder to read), and the rebase step above would still be needed. This module is ~80 lines,
property-tested against the emulator's RFC 6902 implementation (`tests/webhooks/test_patch.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["diff", "pointer", "rebase"]

_MISSING: Any = object()


def pointer(path: tuple[str | int, ...]) -> str:
    """The JSON pointer (RFC 6901) of `path`."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `1`, `1.0` and `True` are three different values."""
    if type(a) is not type(b):
        if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool) \
                and not isinstance(b, bool):
            return a == b  # 3 and 3.0 are the same JSON number
        return False
    return bool(a == b)


def diff(old: Any, new: Any) -> list[dict[str, Any]]:
    """RFC 6902 operations that turn `old` into `new` (both plain JSON values)."""
    ops: list[dict[str, Any]] = []
    _diff(old, new, (), ops)
    return ops


def _diff(old: Any, new: Any, path: tuple[str | int, ...], ops: list[dict[str, Any]]) -> None:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": pointer((*path, key))})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": pointer((*path, key)), "value": value})
            else:
                _diff(old[key], value, (*path, key), ops)
        return
    if isinstance(old, list) and isinstance(new, list):
        n, m = len(old), len(new)
        if n == m:
            for i in range(n):
                _diff(old[i], new[i], (*path, i), ops)
            return
        shorter = min(n, m)
        if all(_deep_same(old[i], new[i]) for i in range(shorter)):
            for i in range(n - 1, m - 1, -1):  # shrunk at the end: remove from the back
                ops.append({"op": "remove", "path": pointer((*path, i))})
            for i in range(n, m):  # grown at the end
                ops.append({"op": "add", "path": pointer((*path, i)), "value": new[i]})
            return
    if not _deep_same(old, new):
        ops.append({"op": "replace", "path": pointer(path), "value": new})


def _deep_same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_deep_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_deep_same(x, y) for x, y in zip(a, b, strict=True))
    return _same(a, b)


def rebase(raw: Any, before: Any, after: Any) -> Any:
    """`raw` with the changes that turn `before` into `after` (a new value; inputs are not changed).

    Objects are merged key by key (a key `after` removed is removed, one it added or changed is
    set); anything else that changed is taken from `after` whole.
    """
    if _deep_same(before, after):
        return raw
    if isinstance(before, Mapping) and isinstance(after, Mapping) and isinstance(raw, Mapping):
        out = dict(raw)
        for key in before:
            if key not in after:
                out.pop(key, None)
        for key, value in after.items():
            old = before.get(key, _MISSING)
            if old is _MISSING:
                out[key] = value
            elif not _deep_same(old, value):
                out[key] = rebase(raw.get(key, _MISSING), old, value)
        return out
    return after
