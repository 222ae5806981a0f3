"""What the store keeps per object and what it reports: `_Entry` (the object's record plus what is
read without decoding: interned labels, index keys), the record (`record`: the resourceVersion and
the codec's form in one object), `Change` and `ReplaceResult` (the difference a write or relist
made), and the selector helpers reads share."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, overload

from kubeloop.cache._codec import Codec
from kubeloop.cache._frozen import FrozenDict
from kubeloop.cache._index import Keys
from kubeloop.meta import ADDED, DELETED, MODIFIED, EventType

__all__ = ["Change", "Key", "KeySnapshot", "ReplaceResult", "field_value"]

Key = tuple[str, str]
"""(namespace, name); namespace is "" for cluster-scoped objects."""

_Entry = tuple[str, str, tuple[str, ...], tuple[Keys, ...], Any]
"""One stored object: (namespace, name, labels, ikeys, record), read with the indexes below.

- labels: flat (k1, v1, k2, v2, ...), interned and shared between objects;
- ikeys: the object's keys in each index, in index order (packed);
- record: its resourceVersion and the codec's form in one object (see `record`).

A plain tuple, not a class: the cyclic garbage collector stops tracking a tuple that holds only
strings, bytes, ints and such tuples, so stored objects add nothing to its full collections (a class
instance is always tracked: with 1,000,000 objects stored, each full collection paused the event
loop for ~250 ms; as tuples, ~5 ms). A write replaces the object's tuple; nothing holds an entry but
its namespace's bucket and the compaction queue (the indexes hold names).

The uid is not kept beside the form: nothing the store does needs it (`Store.uid_of` decodes).
"""

NS: Final = 0
NAME: Final = 1
LABELS: Final = 2
IKEYS: Final = 3
REC: Final = 4

_LONG = 255  # a record's first byte for a resourceVersion of 255 bytes or more (a 4-byte length follows)


def record(rv: str, form: Any) -> Any:
    """The record of an object of resourceVersion ``rv`` whose codec form is ``form``.

    A form of bytes (every compressing codec's) gets the resourceVersion as a prefix: one length
    byte and its UTF-8 bytes. One bytes object per stored object, where a separate int for the
    version and a longer tuple cost ~40 bytes more (the version is read on every watch event, so
    it is kept out of the compressed form). Any other form (`DictCodec`'s object) is ``(rv, form)``.
    """
    if type(form) is not bytes:
        return (rv, form)
    head = rv.encode()
    n = len(head)
    if n < _LONG:
        return b"".join((bytes((n,)), head, form))
    return b"".join((bytes((_LONG,)), n.to_bytes(4, "big"), head, form))


def _head_size(rec: bytes) -> int:
    """Bytes before the form in a bytes record."""
    n = rec[0]
    return 1 + n if n < _LONG else 5 + int.from_bytes(rec[1:5], "big")


def record_rv(rec: Any) -> str:
    """The resourceVersion of a record (exactly the text stored)."""
    if type(rec) is not bytes:
        return rec[0]
    n = rec[0]
    if n < _LONG:
        return rec[1 : 1 + n].decode()
    return rec[5 : _head_size(rec)].decode()


def record_form(rec: Any) -> Any:
    """The codec's form in a record (the bytes ``encode`` returned, as a copy of that part)."""
    if type(rec) is not bytes:
        return rec[1]
    return rec[_head_size(rec) :]


def with_form(rec: Any, form: Any) -> Any:
    """The record ``rec`` with another form of the same object (compaction), its version kept."""
    if type(rec) is not bytes or type(form) is not bytes:
        return record(record_rv(rec), form)
    return rec[: _head_size(rec)] + form


def decode(codec: Codec, rec: Any) -> dict[str, Any]:
    """The object a record holds (a fresh dict unless the codec shares objects)."""
    return codec.decode(record_form(rec))


def labels_dict(e: _Entry) -> dict[str, str]:
    """The entry's labels as a dict."""
    lab = e[LABELS]
    return dict(zip(lab[::2], lab[1::2], strict=True))


class KeySnapshot(Sequence[Key]):
    """The keys a store held at one moment, as a sequence of (namespace, name) made when read.

    What an informer's subscribers get as their initial batch (and a replay, a resync): one list of
    names per namespace, where a list of keys costs a tuple per object, allocated at once and
    freed only once the subscriber has read them all (for 10,000 objects ~0.6 MB, which the
    allocator then kept: it lay between the objects compacted meanwhile).
    """

    __slots__ = ("_groups", "_len", "_starts")

    def __init__(self, by_ns: Mapping[str, Mapping[str, Any]]) -> None:
        self._groups = [(ns, list(bucket)) for ns, bucket in by_ns.items()]  # (namespace, its names)
        self._starts: list[int] = []  # the position of each group's first key
        n = 0
        for _, names in self._groups:
            self._starts.append(n)
            n += len(names)
        self._len = n

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> Key: ...

    @overload
    def __getitem__(self, i: slice) -> list[Key]: ...

    def __getitem__(self, i: int | slice) -> Key | list[Key]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("key snapshot index out of range")
        g = bisect_right(self._starts, i) - 1
        ns, names = self._groups[g]
        return (ns, names[i - self._starts[g]])

    def __iter__(self) -> Iterator[Key]:
        for ns, names in self._groups:
            for name in names:
                yield (ns, name)


class Change:
    """What an ``apply``/``replace`` did to one key: ``old`` and ``new`` read-only views.

    ``old`` is decoded only when first read (most subscribers look only at ``new``).
    ``old`` is None for an added object, ``new`` is None for a deleted one.
    """

    __slots__ = ("_codec", "_old", "_old_rec", "name", "namespace", "new")

    def __init__(
        self,
        namespace: str,
        name: str,
        new: FrozenDict | None,
        *,
        old: FrozenDict | None = None,
        old_rec: Any = None,
        codec: Codec | None = None,
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.new = new
        self._old = old
        self._old_rec = old_rec
        self._codec = codec

    @property
    def key(self) -> Key:
        """(namespace, name)."""
        return (self.namespace, self.name)

    @property
    def old(self) -> FrozenDict | None:
        """The object before the change (None if it did not exist)."""
        if self._old is None and self._codec is not None:
            self._old = FrozenDict(decode(self._codec, self._old_rec))
            self._old_rec = self._codec = None
        return self._old

    @property
    def kind(self) -> EventType:
        """``ADDED``, ``MODIFIED`` or ``DELETED``."""
        if self.new is None:
            return DELETED
        if self._old is None and self._codec is None:
            return ADDED
        return MODIFIED

    def __repr__(self) -> str:
        return f"Change({self.kind} {self.namespace}/{self.name})"


@dataclass
class ReplaceResult:
    """The difference a relist made: what appeared, changed (resourceVersion differs) and vanished."""

    added: list[Change] = field(default_factory=list)
    modified: list[Change] = field(default_factory=list)
    deleted: list[Change] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The field-selector string for a dotted path (missing -> "", bools as true/false)."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return ""
        cur = cur[part]
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)
