"""Object storage with one global resourceVersion and a bounded history of changes.

Like etcd behind kube-apiserver: every committed write gets the next resourceVersion (a decimal
integer), and the store remembers recent changes per resource ("bucket"). The history serves three
readers: watches resuming from a resourceVersion, `continue` pages of a list (which must read the
snapshot of page 1), and `resourceVersionMatch=Exact` lists. A request older than the retained
history gets 410 Expired, as on the real server after compaction.

Each stored object is also kept as pre-encoded orjson bytes *without* `kind`/`apiVersion`, so GET,
LIST and watch responses are assembled from bytes instead of re-encoding every object each time.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubeloop.meta import DELETED

from .shapes import Obj

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


def encode_body(obj: Obj) -> bytes:
    """orjson bytes of `obj` without `kind`/`apiVersion` (they are prefixed per served version)."""
    if "kind" in obj or "apiVersion" in obj:
        obj = {k: v for k, v in obj.items() if k != "kind" and k != "apiVersion"}
    return orjson.dumps(obj)


def key_range(keys: list[Key], namespace: str | None) -> tuple[int, int]:
    """The slice of sorted `keys` in `namespace` (all of them for None), found by bisection."""
    if namespace is None:
        return 0, len(keys)
    lo = bisect_left(keys, (namespace,))  # (ns,) sorts before every (ns, name)
    return lo, bisect_left(keys, (namespace + "\x00",), lo)


class Stored:
    """One committed object version: the dict (never mutated after commit) and its encoded bytes."""

    __slots__ = ("body", "obj", "rv")

    def __init__(self, obj: Obj, rv: int, body: bytes | None = None) -> None:
        self.obj = obj
        self.rv = rv
        self.body = body if body is not None else encode_body(obj)

    @property
    def key(self) -> Key:
        meta = self.obj["metadata"]
        return (meta.get("namespace", ""), meta["name"])


@dataclass(slots=True, eq=False)
class Commit:
    """One committed write, as a watch event source.

    `new` is what a watcher sees (for DELETED: the last state with the deletion's resourceVersion);
    `old` is the state before the write (None for ADDED), used for selector enter/leave and to rewind
    snapshots. `lines` caches encoded watch lines per (prefix, mode) so N watchers cost one encoding.
    """

    type: str
    rv: int
    key: Key
    new: Stored
    old: Stored | None
    lines: dict[Any, bytes] = field(default_factory=dict)


class Bucket:
    """All objects of one storage identity (e.g. `/configmaps`), with their recent history."""

    def __init__(self, name: str, start_rv: int, history_size: int) -> None:
        self.name = name
        self.objects: dict[Key, Stored] = {}
        self.history: deque[Commit] = deque()
        self.history_size = history_size
        #: watches and snapshots can be served from any RV >= oldest_rv
        self.oldest_rv = start_rv
        self.watchers: set[Any] = set()
        self._sorted: list[Key] | None = None
        self._rewound: tuple[int, dict[Key, Stored], list[Key]] | None = None  # see sorted_snapshot

    def sorted_keys(self) -> list[Key]:
        """Keys sorted by namespace/name (the order etcd returns); cached until a create/delete."""
        if self._sorted is None:
            self._sorted = sorted(self.objects)
        return self._sorted

    def sorted_snapshot(self, rv: int) -> tuple[dict[Key, Stored], list[Key]] | None:
        """The objects as they were at `rv` and their sorted keys; None when `rv` is older than the
        retained history.

        Rewinding history copies every object and sorts the keys: the last rewound snapshot is kept,
        so the pages of one list (all read at the first page's RV) cost that once, not once per
        page, as etcd serves each page as a range read.
        """
        if rv < self.oldest_rv:
            self._rewound = None
            return None
        if not self.history or self.history[-1].rv <= rv:
            return self.objects, self.sorted_keys()
        if self._rewound is not None and self._rewound[0] == rv:
            return self._rewound[1], self._rewound[2]
        state = dict(self.objects)
        for ch in reversed(self.history):
            if ch.rv <= rv:
                break
            if ch.old is None:
                state.pop(ch.key, None)
            else:
                state[ch.key] = ch.old
        keys = sorted(state)
        self._rewound = (rv, state, keys)
        return state, keys

    def changes_since(self, rv: int) -> list[Commit] | None:
        """Changes with RV > `rv`, oldest first; None when history no longer reaches back to `rv`."""
        if rv < self.oldest_rv:
            return None
        out: list[Commit] = []
        for ch in reversed(self.history):
            if ch.rv <= rv:
                break
            out.append(ch)
        out.reverse()
        return out


class VersionedStore:
    """The buckets and the global resourceVersion counter."""

    def __init__(self, history_size: int = 10_000) -> None:
        self.rv = 0
        self.history_size = history_size
        self.buckets: dict[str, Bucket] = {}
        #: called with (bucket, change) after every commit (the watch hub's fan-out)
        self.listeners: list[Callable[[Bucket, Commit], None]] = []

    def bucket(self, name: str) -> Bucket:
        b = self.buckets.get(name)
        if b is None:
            b = self.buckets[name] = Bucket(name, self.rv, self.history_size)
        return b

    def drop_bucket(self, name: str) -> None:
        """Forget a bucket (a CRD went away); its watchers are closed by the caller."""
        self.buckets.pop(name, None)

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def commit(self, bucket: Bucket, type_: str, obj: Obj, old: Stored | None) -> Commit:
        """Write `obj` (ADDED/MODIFIED) or delete (DELETED, `obj` = the state to report) with a new RV."""
        rv = self.next_rv()
        meta = obj["metadata"]
        meta["resourceVersion"] = str(rv)
        new = Stored(obj, rv)
        key = (meta.get("namespace", ""), meta["name"])
        if type_ == DELETED:
            bucket.objects.pop(key, None)
            bucket._sorted = None
        else:
            if key not in bucket.objects:
                bucket._sorted = None
            bucket.objects[key] = new
        ch = Commit(type_, rv, key, new, old)
        bucket.history.append(ch)
        while len(bucket.history) > bucket.history_size:
            gone = bucket.history.popleft()
            bucket.oldest_rv = gone.rv
            if bucket._rewound is not None and bucket._rewound[0] < gone.rv:
                bucket._rewound = None  # expired: its pages get 410 now
        for listener in self.listeners:
            listener(bucket, ch)
        return ch

    def compact(self, names: Iterable[str] | None = None) -> None:
        """Drop all history (like etcd compaction): older RVs get 410 Expired."""
        for name in names if names is not None else list(self.buckets):
            b = self.buckets.get(name)
            if b is not None:
                b.history.clear()
                b.oldest_rv = self.rv
                b._rewound = None
