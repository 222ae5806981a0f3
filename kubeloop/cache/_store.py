"""The object store: objects by (namespace, name), compactly held, with indexes.

Sans-IO: a writer calls the writer API (``apply``, ``delete``, ``replace``, ``load``; an informer's
is `kubeloop.cache.StoreWriter`) as list/watch results arrive; readers call ``get``, ``list``,
``by_index``. Readers always get read-only views (:mod:`kubeloop.cache._frozen`). A `Store` object is
the readers' handle on its contents: a relist is built in a store of its own and its contents are
exchanged with the readers' store in one step (`_exchange`), so a reader never needs to look the
store up again. Time (when a watched write was made) is read from an injected `kubeloop.meta.Clock`.

What the store needs to answer without decoding an object is kept beside its
compact form (`kubeloop.cache._entry`): the key, resourceVersion (in the same bytes object as the
form), labels (interned, for label selectors) and every index key (so updates and deletes touch
only what changed).
A small LRU keeps the views of recently read objects decoded.

Deferred compaction, one time-ordered queue: with a codec that can defer (the default zstd one),
an object is first held in the codec's cheap form (exact-size JSON) and queued; `compact` compresses
what is due. Listed objects (`load`) are due at once: a list costs little more than decoding it,
and the informer compacts it in small batches after it synced (a large object, where compressing
costs little next to decoding, is compressed as it loads: see `LOAD_COMPACT_SIZE`; so is every
object once a long list holds `LOAD_CHEAP_LIMIT` bytes uncompressed, bounding its peak). Watched
writes (`apply` with ``defer_writes``) are due once they stayed unchanged for the caller's delay:
an object that changes again soon, the usual case under churn, is never compressed for a version
nobody keeps, and a read right after a change decodes JSON, not a compressed form.

This module is over 450 lines because `Store` is one unit: its entries, indexes, hot views and
compaction queue change together in every write (two-phase, all-or-nothing), and splitting the
class would spread that invariant over files; what is not the class lives in `_entry.py`.
"""

from __future__ import annotations

import math
import sys
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from kubeloop.cache._codec import Codec, make_codec
from kubeloop.cache._entry import (
    IKEYS,
    LABELS,
    NAME,
    NS,
    REC,
    Change,
    Key,
    KeySnapshot,
    ReplaceResult,
    _Entry,
    decode,
    field_value,
    labels_dict,
    record,
    record_form,
    record_rv,
    with_form,
)
from kubeloop.cache._frozen import FrozenDict
from kubeloop.cache._index import (
    NAMESPACE_INDEX,
    OWNER_INDEX,
    OWNER_REF_INDEX,
    Index,
    IndexFunc,
    Keys,
    owner_ref_index,
    owner_uid_index,
    unpack,
)
from kubeloop.cache._values import value_index
from kubeloop.meta import (
    REAL_CLOCK,
    Clock,
    FieldSelectorLike,
    LabelSelectorLike,
    as_field_selector,
    as_label_selector,
)

__all__ = ["Change", "IndexFunctionError", "Key", "ReplaceResult", "Store"]

Replaced = FrozenDict | _Entry | None
"""What a write replaced or a removal took away: the object's decoded view if the LRU held one, else
its entry (decoded only if a subscriber reads it); None when there was nothing (an added object)."""

_intern = sys.intern
_list = list  # `Store.list` shadows the builtin in annotations

_OWNER_FNS = (owner_uid_index, owner_ref_index)
_OWNER, _TRUSTED, _VIEW = 0, 1, 2  # how `_index_keys` computes an index's keys (see `_replan`)


_LISTED = -math.inf
"""The write time `load` queues listed objects with: due at once."""

LOAD_COMPACT_SIZE = 2048
"""`Store.load` compresses a listed object at once when its cheap form is this many bytes or more.

Deferring compaction keeps a list about as cheap as decoding it, but holds every object as JSON
until the list is in: the peak. Compressing costs a fixed ~4 us per call plus ~3 us per KiB, where
decoding the object (with its managedFields) costs ~7 us per KiB: measured on `benchmarks.versus`'
objects, a ConfigMap (1.2 KiB) compresses in 8 us against ~14 us to list it, a Pod (4.3 KiB) in
16 us against ~90 us. Large objects are compressed as they arrive (the peak of a list of Pods is
then about its compacted size, for a sixth more list time); small ones, whose compression would
cost half their list time, wait for the compactor. (`Store.load_compact_size` changes it per store.)
"""

LOAD_CHEAP_LIMIT = 64 * 1024 * 1024
"""Bytes of listed objects `Store.load` holds uncompressed, waiting for the compactor, before it
compresses the rest as they load.

Small objects are not compressed as they load (see `LOAD_COMPACT_SIZE`), so without a limit a
list of a million ConfigMaps would peak at its whole JSON plus the per-object structure (~1.7x the
compacted size), and a relist after a 410 at that plus the store it replaces. With it, a list
holds at most this much more than its compacted size whatever its length: lists up to this size
(~55,000 ConfigMaps of 1.2 KiB) cost what they did, larger ones ~4-5 us more per further small
object. (`Store.load_cheap_limit` changes it per store, `Informer.load_cheap_limit` per informer.)
"""


def _due(item: _Entry | tuple[float, _Entry]) -> float:
    """When a queued object was written (-inf for a listed one)."""
    return item[0] if len(item) == 2 else _LISTED


class IndexFunctionError(Exception):
    """An index function raised on an object (the write is not made; see `Store.apply`)."""

    def __init__(self, index: str, fn: Any, exc: BaseException) -> None:
        self.index = index
        self.function = f"index {index!r} ({getattr(fn, '__qualname__', None) or fn!r})"
        super().__init__(f"{self.function} raised {type(exc).__name__}: {exc}")


class _Prepared:
    """An object checked, encoded and indexed, ready to be committed (phase 1 of a write)."""

    __slots__ = ("ikeys", "labels", "name", "namespace", "obj", "rec", "rv")

    def __init__(self, store: Store, obj: dict[str, Any], encode: Callable[[dict[str, Any]], Any]) -> None:
        md = obj.get("metadata")
        if not isinstance(md, dict) or not md.get("name"):
            raise ValueError("cannot store an object without metadata.name")
        rv = md.get("resourceVersion") or ""
        if type(rv) is not str:
            raise ValueError(f"metadata.resourceVersion must be a string, not {type(rv).__name__}")
        self.obj = obj
        self.name: str = md["name"]
        self.namespace: str = _intern(md.get("namespace") or "")
        self.rv: str = rv
        self.labels = store._intern_labels(md.get("labels"))
        self.ikeys = store._index_keys(obj, md)  # the all-empty tuple is shared
        self.rec: Any = record(rv, encode(obj))


class Store:
    """Objects of one resource by (namespace, name), read-only to readers, with indexes.

    ``codec`` chooses the in-memory form (default ``"zstd"``; ``"zlib"``, ``"json"``, ``"dict"`` or a
    :class:`~kubeloop.cache.Codec`). The ``hot_size`` most recently read objects stay decoded in
    an LRU (written objects do not enter it: a kept view outlives the young GC generation, and the
    collector's extra work measured more than the decodes saved). ``owner_index`` adds the built-in
    OWNER_INDEX and OWNER_REF_INDEX. With ``defer_writes`` (and a codec that can defer, such as the
    default), `apply` stores the cheap form and queues the object for `compact` (module docstring);
    ``clock`` (`kubeloop.meta.Clock`, only its ``monotonic()``) says when each write was made.

    A written object becomes the store's: the caller must not change it afterwards.
    """

    def __init__(
        self,
        *,
        codec: Codec | str | None = None,
        hot_size: int = 64,
        defer_writes: bool = False,
        owner_index: bool = True,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.codec: Codec = make_codec(codec)
        self.clock = clock
        self._monotonic = clock.monotonic  # looked up once: read on every deferred write
        self._by_ns: dict[str, dict[str, _Entry]] = {}
        self._count = 0
        self._indexes: dict[str, Index] = {}
        self._no_keys: tuple[Keys, ...] = ()  # one () per index: shared by objects with no index keys
        self._labels: dict[tuple[str, ...], tuple[str, ...]] = {}  # label sets, shared (see _shared)
        self._label_sets: dict[tuple[tuple[str, str], ...], tuple[str, ...]] = {}  # labels.items() -> shared set
        self._plan: tuple[tuple[Index, int], ...] = ()  # (index, how its keys are computed): _index_keys
        self._ikeys: dict[tuple[Keys, ...], tuple[Keys, ...]] = {}  # index keys per object, shared
        self._hot: OrderedDict[Key, FrozenDict] = OrderedDict()
        self._hot_size = 0 if self.codec.shares_objects else hot_size
        self._encode_deferred = getattr(self.codec, "encode_deferred", None)
        self._compact = getattr(self.codec, "compact", None)
        if self._encode_deferred is None or self._compact is None:
            self._encode_deferred = self._compact = None
        self._defer_writes = defer_writes and self._encode_deferred is not None
        self.load_compact_size: float = LOAD_COMPACT_SIZE
        """`load` compresses an object this large at once (``math.inf``: never; see LOAD_COMPACT_SIZE)."""
        self.load_cheap_limit: float = LOAD_CHEAP_LIMIT
        """Once this many bytes of listed objects wait uncompressed, `load` compresses each further
        object as it arrives (``math.inf``: never; see LOAD_CHEAP_LIMIT)."""
        self._cheap_listed = 0  # bytes of the listed objects queued in the cheap form
        # objects held in the cheap form, oldest first: a listed entry (due at once) or a watched
        # write (written when, entry). A listed entry is queued bare: a tuple per listed object,
        # freed once compacted, measured ~5% more RSS (fragmentation).
        self._queue: deque[_Entry | tuple[float, _Entry]] = deque()
        self.resource_version: str = ""
        if owner_index:
            self.add_index(OWNER_INDEX, owner_uid_index, trusted=True)
            self.add_index(OWNER_REF_INDEX, owner_ref_index, trusted=True)

    # ------------------------------------------------------------------ internals

    def _intern_labels(self, labels: Mapping[str, str] | None) -> tuple[str, ...]:
        if not labels:
            return ()
        items = tuple(labels.items())
        got = self._label_sets.get(items)  # most objects carry a label set some other object has
        if got is not None:
            return got
        if self._outgrown(self._label_sets):
            self._prune_pools()  # (before this set joins a pool: pruning keeps only what objects hold)
        flat = tuple(chain.from_iterable(sorted(items) if len(items) > 1 else items))
        got = self._labels.get(flat)
        if got is None:
            got = self._shared(self._labels, tuple(_intern(s) if isinstance(s, str) else str(s) for s in flat))
        self._label_sets[items] = got
        return got

    def _shared(self, pool: dict[Any, Any], t: tuple[Any, ...]) -> Any:
        """``t``, or the equal tuple an object already holds (label sets and index keys repeat:
        one tuple for all of them saves ~64 bytes per object)."""
        got = pool.get(t)
        if got is not None:
            return got
        if self._outgrown(pool):
            self._prune_pools()
        pool[t] = t
        return t

    def _outgrown(self, pool: dict[Any, Any]) -> bool:
        """A sharing pool holds more entries than twice the objects stored (+1024): prune."""
        return len(pool) > 2 * self._count + 1024

    def _prune_pools(self) -> None:
        """Forget shared tuples no stored object holds any more (in place)."""
        labels: dict[tuple[str, ...], tuple[str, ...]] = {}
        ikeys: dict[tuple[Keys, ...], tuple[Keys, ...]] = {}
        for bucket in self._by_ns.values():
            for e in bucket.values():
                labels[e[LABELS]] = e[LABELS]
                ikeys[e[IKEYS]] = e[IKEYS]
        self._labels.clear()
        self._labels.update(labels)
        self._label_sets.clear()
        self._ikeys.clear()
        self._ikeys.update(ikeys)

    def _view(self, e: _Entry) -> FrozenDict:
        if self._hot_size:
            hot = self._hot
            key = (e[NS], e[NAME])
            v = hot.get(key)
            if v is not None:
                hot.move_to_end(key)
                return v
            v = FrozenDict(decode(self.codec, e[REC]))
            hot[key] = v
            if len(hot) > self._hot_size:
                hot.popitem(last=False)
            return v
        return FrozenDict(decode(self.codec, e[REC]))

    def _index_keys(self, obj: dict[str, Any], md: dict[str, Any]) -> tuple[Keys, ...]:
        """The object's keys in every index (``_no_keys`` when it has none)."""
        owned = None
        view: Any = None
        out: _list[Keys] = []
        found = False
        for ix, how in self._plan:
            if how == _OWNER:
                if owned is None:
                    owned = bool(md.get("ownerReferences"))
                if not owned:  # the built-in owner indexes give nothing for an object without owners
                    out.append(())
                    continue
                keys = ix.keys_for(obj)
            elif how == _TRUSTED:
                keys = ix.keys_for(obj)
            else:
                if view is None:
                    view = FrozenDict(obj)
                try:
                    keys = ix.keys_for(view)
                except Exception as exc:
                    raise IndexFunctionError(ix.name, ix.fn, exc) from exc
            out.append(keys)
            if keys:
                found = True
        return self._shared(self._ikeys, tuple(out)) if found else self._no_keys

    def _replan(self) -> None:
        """Recompute `_plan` and `_no_keys` after the set of indexes changed."""
        self._plan = tuple((ix, _OWNER if ix.trusted and ix.fn in _OWNER_FNS else _TRUSTED if ix.trusted else _VIEW)
                           for ix in self._indexes.values())
        self._no_keys = tuple(() for _ in self._indexes)

    def _prepare(self, obj: dict[str, Any], deferred: bool = False) -> _Prepared:
        """Phase 1 of every write: check, index and encode (``deferred``: the cheap form, if the
        codec has one). Raises on a bad object or a failing index function; changes nothing."""
        encode = self._encode_deferred if deferred and self._encode_deferred is not None else self.codec.encode
        return _Prepared(self, obj, encode)

    def _commit(self, p: _Prepared, when: float | None = None) -> Replaced:
        """Phase 2 of every write: cannot fail. ``when`` queues the object for `compact` (if it was
        encoded in the cheap form). Returns what it replaced (see `Replaced`)."""
        ns, name = p.namespace, p.name
        bucket = self._by_ns.get(ns)
        if bucket is None:
            bucket = self._by_ns[ns] = {}
        old = bucket.get(name)
        e = bucket[name] = (ns, name, p.labels, p.ikeys, p.rec)
        replaced: Replaced = old
        if old is None:
            self._count += 1
            if p.ikeys is not self._no_keys:
                for ix, keys in zip(self._indexes.values(), p.ikeys, strict=True):
                    if keys:
                        ix.add(ns, name, keys)
        else:
            if self._hot:
                hot = self._hot.pop((ns, name), None)
                if hot is not None:
                    replaced = hot
            if p.ikeys is not old[IKEYS]:  # index keys are shared tuples: unchanged keys are the same one
                for ix, old_keys, new_keys in zip(self._indexes.values(), old[IKEYS], p.ikeys, strict=True):
                    ix.move(ns, name, old_keys, new_keys)
        if when is not None and self._compact is not None:
            self._queue.append(e if when == _LISTED else (when, e))
        return replaced

    def _change(self, namespace: str, name: str, new: FrozenDict | None, replaced: Replaced) -> Change:
        """The `Change` that replaced (or removed) ``replaced``; its ``old`` is decoded only if read."""
        if replaced is None or type(replaced) is FrozenDict:
            return Change(namespace, name, new, old=replaced)
        return Change(namespace, name, new, old_rec=replaced[REC], codec=self.codec)  # type: ignore[index]

    def _decoded(self, replaced: Replaced) -> FrozenDict | None:
        """The view of what a write replaced (`Replaced`), decoding an entry."""
        if replaced is None or type(replaced) is FrozenDict:
            return replaced
        return FrozenDict(decode(self.codec, replaced[REC]))  # type: ignore[index]

    def _drop(self, e: _Entry) -> None:
        ns, name = e[NS], e[NAME]
        bucket = self._by_ns[ns]
        del bucket[name]
        if not bucket:
            del self._by_ns[ns]
        self._count -= 1
        if e[IKEYS] is not self._no_keys:
            for ix, keys in zip(self._indexes.values(), e[IKEYS], strict=True):
                ix.remove(ns, name, keys)
        if self._hot:
            self._hot.pop((ns, name), None)

    def _entry(self, namespace: str, name: str) -> _Entry | None:
        bucket = self._by_ns.get(namespace)
        return None if bucket is None else bucket.get(name)

    def _entries(self, namespace: str | None = None) -> Iterator[_Entry]:
        if namespace is not None:
            yield from (self._by_ns.get(namespace) or {}).values()
            return
        for bucket in self._by_ns.values():
            yield from bucket.values()

    # ------------------------------------------------------------------ writer API

    def apply(self, obj: dict[str, Any]) -> Change:
        """Insert or replace one object (takes ownership of ``obj``).

        If an index function raises, nothing changes. An object with the same non-empty
        resourceVersion as the stored one is not re-encoded (the change has old == new).
        """
        md = obj.get("metadata")
        if isinstance(md, dict):
            e = self._entry(md.get("namespace") or "", md.get("name") or "")
            rv = md.get("resourceVersion") or ""
            if e is not None and rv and rv == record_rv(e[REC]):
                self.resource_version = rv
                view = self._view(e)
                return Change(e[NS], e[NAME], view, old=view)
        deferred = self._defer_writes
        p = self._prepare(obj, deferred)
        replaced = self._commit(p, self._monotonic() if deferred else None)
        if p.rv:
            self.resource_version = p.rv
        return self._change(p.namespace, p.name, FrozenDict(obj), replaced)

    def _write(self, obj: dict[str, Any]) -> Replaced:
        """`apply` for a writer that reports changes its own way (an informer's, as subscriber
        events): no same-version check, no `Change`; returns what the write replaced."""
        deferred = self._defer_writes
        p = self._prepare(obj, deferred)
        replaced = self._commit(p, self._monotonic() if deferred else None)
        if p.rv:
            self.resource_version = p.rv
        return replaced

    def load(self, obj: dict[str, Any]) -> None:
        """Insert one object of a list being loaded: `apply` without the report, made cheap.

        Takes ownership of ``obj``. With a codec that can defer (the default zstd one), the
        object is held in its cheap form (exact-size JSON) and queued for `compact`, due at once;
        the informer compacts in small batches after it synced; reads are correct in either form.
        An object whose cheap form is `load_compact_size` bytes or more is compressed at once
        instead (see `LOAD_COMPACT_SIZE`), and so is every object once `load_cheap_limit` bytes of
        listed objects wait uncompressed (see `LOAD_CHEAP_LIMIT`). If the object is invalid or an
        index function raises, nothing changes.
        """
        p = self._prepare(obj, deferred=True)
        cheap = p.rec
        if self._compact is not None and (len(cheap) >= self.load_compact_size
                                          or self._cheap_listed >= self.load_cheap_limit):
            try:
                p.rec = self._compacted(cheap)
            except Exception:  # kept cheap and queued: `compact` reports the codec's fault
                p.rec = cheap
        queued = p.rec is cheap
        self._commit(p, _LISTED if queued else None)
        if queued and self._compact is not None:
            self._cheap_listed += len(cheap)
        if p.rv:
            self.resource_version = p.rv

    @property
    def pending_compaction(self) -> int:
        """Objects queued for `compact` (an object written twice counts twice; 0: fully compact)."""
        return len(self._queue)

    def compact(self, before: float = math.inf, limit: int | None = None) -> float | None:
        """Compress up to ``limit`` (default: all) queued objects written at or before ``before`` (a
        value of the store's ``clock.monotonic()``; listed objects are always due) and not written again since.

        Returns when the oldest object still queued was written (-inf for a listed one; None when
        the queue is empty): the caller comes back once that is old enough. The queue is in write
        order (a name listed twice, after its first write, waits behind that write). Safe at any
        time: deleted objects and written versions replaced meanwhile are skipped (the newer write
        is queued itself); readers see no difference. If the codec
        fails, the queue is dropped (objects stay readable in the form they have) and the error
        propagates.
        """
        queue = self._queue
        compact = self._compact
        if compact is None:
            queue.clear()
            self._cheap_listed = 0
            return None
        n = 0
        popleft = queue.popleft
        by_ns = self._by_ns
        try:
            while queue and (limit is None or n < limit):
                item = queue[0]
                if len(item) == 2:
                    when, e = item
                    if when > before:
                        return when
                    listed = False
                else:  # listed: compacted as it is now (a write made while the codec still trains
                    e, listed = item, True  # its dictionary is stored as JSON and not queued)
                    self._cheap_listed -= len(e[REC])
                popleft()
                bucket = by_ns.get(e[NS])
                cur = None if bucket is None else bucket.get(e[NAME])
                # a watched write counts if not written again since (the same record: `_set_ikeys`
                # may have replaced its tuple); a newer write is queued itself
                if cur is not None and (listed or cur[REC] is e[REC]):
                    ns, name, labels, ikeys, rec = cur
                    small = self._compacted(rec)
                    if small is not rec:
                        bucket[name] = (ns, name, labels, ikeys, small)  # type: ignore[index]
                    n += 1
        except Exception:
            queue.clear()
            self._cheap_listed = 0
            raise
        return _due(queue[0]) if queue else None

    def _compacted(self, rec: Any) -> Any:
        """``rec`` with its form compacted by the codec (``rec`` itself if that changed nothing)."""
        form = record_form(rec)
        small = self._compact(form)  # type: ignore[misc]
        return rec if small is form else with_form(rec, small)

    def delete(self, namespace: str, name: str, resource_version: str | None = None) -> FrozenDict | None:
        """Remove one object; returns what was stored (None if absent)."""
        return self._decoded(self._remove(namespace, name, resource_version))

    def _remove(self, namespace: str, name: str, resource_version: str | None = None) -> Replaced:
        """`delete`, returning what it took away undecoded (see `Replaced`): an informer's delete
        events decode it only if a subscriber reads it (most only need the key)."""
        e = self._entry(namespace, name)
        if resource_version:
            self.resource_version = resource_version
        return None if e is None else self._take(e)

    def _take(self, e: _Entry) -> Replaced:
        """Drop a stored entry, returning it (or its hot view: decoded already)."""
        hot = self._hot.get((e[NS], e[NAME])) if self._hot else None
        self._drop(e)
        return e if hot is None else hot

    def replace(self, objs: Iterable[dict[str, Any]], resource_version: str = "") -> ReplaceResult:
        """Make the store hold exactly ``objs`` (a relist); returns the difference.

        Objects whose resourceVersion is unchanged are kept as they are (not re-encoded,
        not reported). All-or-nothing: if any object is invalid or an index function
        raises, the store is left untouched.
        """
        prepared: dict[Key, _Prepared | _Entry] = {}
        for obj in objs:
            md = obj.get("metadata") if isinstance(obj, dict) else None
            if isinstance(md, dict):
                e = self._entry(md.get("namespace") or "", md.get("name") or "")
                rv = md.get("resourceVersion") or ""
                if e is not None and rv and rv == record_rv(e[REC]):
                    prepared[(e[NS], e[NAME])] = e
                    continue
            p = self._prepare(obj)
            prepared[(p.namespace, p.name)] = p
        # ---- commit: nothing below can fail
        result = ReplaceResult()
        for e in list(self._entries()):
            if (e[NS], e[NAME]) not in prepared:
                result.deleted.append(self._change(e[NS], e[NAME], None, self._take(e)))
        for item in prepared.values():
            if type(item) is _Prepared:
                replaced = self._commit(item)
                c = self._change(item.namespace, item.name, FrozenDict(item.obj), replaced)
                (result.added if replaced is None else result.modified).append(c)
        self.resource_version = resource_version or self.resource_version
        return result

    def _exchange(self, other: Store) -> None:
        """Swap contents with ``other``: objects, indexes, codec, compaction queue, settings, all of it.

        The one-step swap of a relist built in a store of its own: readers holding this store read
        the new contents from the next call on, and ``other`` holds the previous ones (for the
        writer's difference, then dropped). Like every write, only the store's writer calls it.
        """
        self.__dict__, other.__dict__ = other.__dict__, self.__dict__

    def set_resource_version(self, resource_version: str) -> None:
        """Record the latest resourceVersion seen (e.g. from a bookmark)."""
        self.resource_version = resource_version

    # ------------------------------------------------------------------ reader API

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object, as a read-only view, or None."""
        e = self._entry(namespace, name)
        return None if e is None else self._view(e)

    def get_key(self, key: Key) -> FrozenDict | None:
        """``get`` by (namespace, name)."""
        return self.get(key[1], key[0])

    def resource_version_of(self, name: str, namespace: str = "") -> str | None:
        """The stored object's resourceVersion without decoding it."""
        e = self._entry(namespace, name)
        return None if e is None else record_rv(e[REC])

    def uid_of(self, name: str, namespace: str = "") -> str | None:
        """The stored object's uid ("" if it has none). Decodes the object: the store keeps no uid
        beside it, as nothing it does needs one."""
        e = self._entry(namespace, name)
        if e is None:
            return None
        uid = self._view(e)["metadata"].get("uid")
        return uid if isinstance(uid, str) else ""

    def labels_of(self, name: str, namespace: str = "") -> dict[str, str] | None:
        """The stored object's labels without decoding it."""
        e = self._entry(namespace, name)
        return None if e is None else labels_dict(e)

    def list(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
             field_selector: FieldSelectorLike | None = None) -> _list[FrozenDict]:
        """Objects (optionally in one namespace, matching the selectors), in store order.

        Label selectors and ``metadata.name`` / ``metadata.namespace`` field selectors are
        answered without decoding non-matching objects.
        """
        return [self._view(e) for e in self._select(namespace, label_selector, field_selector)]

    def list_keys(self, namespace: str | None = None, label_selector: LabelSelectorLike | None = None,
                  field_selector: FieldSelectorLike | None = None) -> _list[Key]:
        """Like :meth:`list` but only the keys (no decoding unless a field selector needs it)."""
        return [(e[NS], e[NAME]) for e in self._select(namespace, label_selector, field_selector)]

    def _select(
        self,
        namespace: str | None,
        label_selector: LabelSelectorLike | None,
        field_selector: FieldSelectorLike | None,
    ) -> Iterator[_Entry]:
        lsel = None if label_selector is None else as_label_selector(label_selector)
        fsel = None if field_selector is None else as_field_selector(field_selector)
        if lsel is not None and lsel.empty:
            lsel = None
        cheap: list[Any] = []
        costly: list[Any] = []
        if fsel is not None:
            for r in fsel.requirements:
                (cheap if r.field in ("metadata.name", "metadata.namespace") else costly).append(r)
            pinned = fsel.equals_value("metadata.namespace")
            if pinned is not None:
                if namespace is not None and namespace != pinned:
                    return
                namespace = pinned
        for e in self._entries(namespace):
            if lsel is not None and not lsel.matches(labels_dict(e) if e[LABELS] else {}):
                continue
            if cheap:
                fields = {"metadata.name": e[NAME], "metadata.namespace": e[NS]}
                if not all(r.matches(fields) for r in cheap):
                    continue
            if costly:
                view = self._view(e)
                if not all(r.matches({r.field: field_value(view, r.field)}) for r in costly):
                    continue
            yield e

    def keys(self) -> _list[Key]:
        """Every (namespace, name)."""
        return [(e[NS], e[NAME]) for e in self._entries()]

    def key_snapshot(self) -> KeySnapshot:
        """Every (namespace, name) now, as a `KeySnapshot` (a sequence that makes each key when
        read, where `keys` makes them all at once)."""
        return KeySnapshot(self._by_ns)

    def namespaces(self) -> _list[str]:
        """Namespaces that hold at least one object."""
        return list(self._by_ns)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        if isinstance(key, tuple) and len(key) == 2:
            return self._entry(key[0], key[1]) is not None
        return False

    def __iter__(self) -> Iterator[Key]:
        return iter(self.keys())

    # ------------------------------------------------------------------ indexes

    def add_index(self, name: str, fn: IndexFunc, *, trusted: bool = False) -> None:
        """Register an index; built from the current contents if objects exist already.

        ``fn(view)`` returns the keys the object is found under (an iterable of str, one str,
        or None). If ``fn`` raises on an existing object, the index is not added.
        ``trusted`` functions (the built-in ones) get the plain object instead of a view:
        faster, and they must not change it.
        """
        if name in self._indexes or name == NAMESPACE_INDEX:
            raise ValueError(f"index {name!r} already exists")
        ix: Index = Index(name, fn, trusted=trusted)
        entries = list(self._entries())
        computed = [ix.keys_for(self._view(e)._raw if ix.trusted else self._view(e)) for e in entries]
        self._indexes[name] = ix
        self._ikeys.clear()  # every entry's keys change shape (they are no longer shared)
        old_none = self._no_keys
        self._replan()
        for e, keys in zip(entries, computed, strict=True):
            self._set_ikeys(e, self._no_keys if e[IKEYS] is old_none and not keys else (*e[IKEYS], keys))
            if keys:
                ix.add(e[NS], e[NAME], keys)

    def remove_index(self, name: str) -> None:
        """Drop an index and the keys remembered for it."""
        names = list(self._indexes)
        pos = names.index(name)
        del self._indexes[name]
        self._ikeys.clear()
        old_none = self._no_keys
        self._replan()
        for e in list(self._entries()):
            self._set_ikeys(e, self._no_keys if e[IKEYS] is old_none else e[IKEYS][:pos] + e[IKEYS][pos + 1 :])

    def _set_ikeys(self, e: _Entry, ikeys: tuple[Keys, ...]) -> None:
        """Replace a stored entry's index keys (its tuple; a queued compaction still finds it by data)."""
        ns, name, labels, _, rec = e
        self._by_ns[ns][name] = (ns, name, labels, ikeys, rec)

    @property
    def indexes(self) -> _list[str]:
        """Names of the registered indexes (NAMESPACE_INDEX is always available)."""
        return [NAMESPACE_INDEX, *self._indexes]

    def _index(self, index: str) -> Index:
        ix = self._indexes.get(index)
        if ix is None:
            raise KeyError(f"no index named {index!r}")
        return ix

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """The objects filed under ``key`` in ``index`` (read-only views)."""
        if index == NAMESPACE_INDEX:
            return [self._view(e) for e in (self._by_ns.get(key) or {}).values()]
        by_ns = self._by_ns
        return [self._view(by_ns[ns][name]) for ns, name in self._index(index).members(key)]

    def index_keys(self, index: str, key: str) -> set[Key]:
        """The (namespace, name) of the objects filed under ``key`` in ``index`` (no decoding)."""
        if index == NAMESPACE_INDEX:
            return {(key, name) for name in self._by_ns.get(key) or ()}
        return set(self._index(index).members(key))

    def index_values(self, index: str) -> _list[str]:
        """Every key that currently has objects in ``index``."""
        if index == NAMESPACE_INDEX:
            return list(self._by_ns)
        return list(self._index(index).buckets)

    def object_index_keys(self, index: str, name: str, namespace: str = "") -> tuple[str, ...]:
        """The keys one stored object is filed under in ``index``."""
        e = self._entry(namespace, name)
        if e is None:
            return ()
        if index == NAMESPACE_INDEX:
            return (e[NS],)
        pos = list(self._indexes).index(index)
        return unpack(e[IKEYS][pos])

    def index_function(self, index: str) -> IndexFunc | None:
        """The function of ``index`` (None for the built-in NAMESPACE_INDEX); KeyError if unknown."""
        if index == NAMESPACE_INDEX:
            return None
        return self._index(index).fn

    def values(self, index: str, key: str) -> _list[Any]:
        """The values a `ValueIndex` gives for ``key``, one per object filed under it (see `_values`)."""
        return value_index(index, self.index_function(index)).values(self.by_index(index, key), key)

    # ------------------------------------------------------------------ statistics

    def stats(self) -> dict[str, Any]:
        """Object count, payload bytes held by the codec, decoded views cached."""
        payload = sum(self.codec.stored_size(record_form(e[REC])) for e in self._entries())
        return {
            "objects": self._count,
            "codec": self.codec.name,
            "payload_bytes": payload,
            "pending_compaction": len(self._queue),
            "hot_views": len(self._hot),
            "label_sets": len(self._labels),
            "indexes": {n: len(ix.buckets) for n, ix in self._indexes.items()},
        }

    def clear_hot(self) -> None:
        """Forget the decoded views kept in the LRU."""
        self._hot.clear()
