"""What the store keeps per object and what it reports: `_Entry` (the compact form plus what is
read without decoding: packed uid and resourceVersion, interned labels, index keys), `Change` and
`ReplaceResult` (the difference a write or relist made), and the selector helpers reads share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from kubeloop.cache._codec import Codec
from kubeloop.cache._frozen import FrozenDict
from kubeloop.cache._index import Keys
from kubeloop.meta import ADDED, DELETED, MODIFIED, EventType

__all__ = ["Change", "Key", "ReplaceResult", "field_value"]

Key = tuple[str, str]
"""(namespace, name); namespace is "" for cluster-scoped objects."""


def _pack_uid(uid: str) -> str | bytes:
    """A canonical (lower-case) UUID as its 16 bytes (49 bytes instead of 85); others as is."""
    if len(uid) == 36 and uid[8] == uid[13] == uid[18] == uid[23] == "-":
        digits = uid.replace("-", "")
        try:
            b = bytes.fromhex(digits)
        except ValueError:
            return uid
        if len(b) == 16 and b.hex() == digits:  # canonical: 32 lower-case hex digits, dashes in place
            return b
    return uid


def _unpack_uid(uid: str | bytes) -> str:
    return str(UUID(bytes=uid)) if type(uid) is bytes else uid  # type: ignore[return-value]


_Entry = tuple[str, str, str | bytes, str | int, tuple[str, ...], tuple[Keys, ...], Any]
"""One stored object: (namespace, name, uid, rv, labels, ikeys, data), read with the indexes below.

- uid: see `_pack_uid`; rv: see `kubeloop.meta.pack_rv`;
- labels: flat (k1, v1, k2, v2, ...), interned and shared between objects;
- ikeys: the object's keys in each index, in index order (packed);
- data: the codec's compact form.

A plain tuple, not a class: the cyclic garbage collector stops tracking a tuple that holds only
strings, bytes, ints and such tuples, so stored objects add nothing to its full collections (a class
instance is always tracked: with 1,000,000 objects stored, each full collection paused the event
loop for ~250 ms; as tuples, ~5 ms). A write replaces the object's tuple; nothing holds an entry but
its namespace's bucket and the compaction queue (the indexes hold names).
"""

NS: Final = 0
NAME: Final = 1
UID: Final = 2
RV: Final = 3
LABELS: Final = 4
IKEYS: Final = 5
DATA: Final = 6


def labels_dict(e: _Entry) -> dict[str, str]:
    """The entry's labels as a dict."""
    lab = e[LABELS]
    return dict(zip(lab[::2], lab[1::2], strict=True))


class Change:
    """What an ``apply``/``replace`` did to one key: ``old`` and ``new`` read-only views.

    ``old`` is decoded only when first read (most subscribers look only at ``new``).
    ``old`` is None for an added object, ``new`` is None for a deleted one.
    """

    __slots__ = ("_codec", "_old", "_old_data", "name", "namespace", "new")

    def __init__(
        self,
        namespace: str,
        name: str,
        new: FrozenDict | None,
        *,
        old: FrozenDict | None = None,
        old_data: Any = None,
        codec: Codec | None = None,
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.new = new
        self._old = old
        self._old_data = old_data
        self._codec = codec

    @property
    def key(self) -> Key:
        """(namespace, name)."""
        return (self.namespace, self.name)

    @property
    def old(self) -> FrozenDict | None:
        """The object before the change (None if it did not exist)."""
        if self._old is None and self._codec is not None:
            self._old = FrozenDict(self._codec.decode(self._old_data))
            self._old_data = self._codec = None
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
