"""CRD conversion through a webhook (`spec.conversion.strategy: Webhook`), as kube-apiserver does it.

Objects are stored in the storage version they were written in; serving one in another version
(on read, list, watch, and for the old object of a write), and storing one written in another
version, sends a ConversionReview to the CRD's webhook. One review carries every object of a list
that needs converting (as apiextensions-apiserver's `webhookConverter`); objects already in the
desired version are not sent. The answer is checked as the real server checks it (the review's
uid, the count, each object's apiVersion, kind, name, namespace and uid) and the converted
object keeps the original's metadata except its labels and annotations. Any failure is a 500
`conversion webhook for <gvk> failed: <reason>`.

kube-apiserver 1.24 keeps a watch cache per served version of a custom resource; each one decodes
every write it sees into its version, converting objects stored in another one (one review per
write and per version, in the background, whoever reads). Reads it serves from that cache cost no
review at request time: LISTs with a resourceVersion other than "" unless they page (a `continue`,
or a `limit` with a resourceVersion other than "0") or ask for an `Exact` one (`shouldDelegateList`),
GETs with a resourceVersion, and watches. LISTs without one read etcd and convert each object in a
review of its own (recorded from the real server: `tests/webhooks/data/real-1.24.json`). The
emulator does the same: `WatchCacheCopies` converts each write in the background, and
`from_watch_cache` serves those reads from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import StatusError
from .resources import ServedResource
from .shapes import Obj, copy_json
from .storage import DELETED, Bucket, Commit, Key, Stored, VersionedStore
from .webhookcall import CallError, WebhookCaller

__all__ = ["CRDConversion", "from_watch_cache"]

log = logging.getLogger("kubeloop.testing.apiserver")

CRD_BUCKET = "apiextensions.k8s.io/customresourcedefinitions"
#: a conversion webhook has no timeoutSeconds: the API server's client default
CONVERSION_TIMEOUT = 30.0


def _gvk(api_version: str, kind: str) -> str:
    """Go's `GroupVersionKind.String()`: `group/version, Kind=Kind`."""
    return f"{api_version}, Kind={kind}"


def from_watch_cache(query: Mapping[str, str]) -> bool:
    """Whether kube-apiserver 1.24 serves a LIST with these options from its watch cache
    (`shouldDelegateList` in apiserver/pkg/storage/cacher: not for resourceVersion "", a continue
    token, a limit with a resourceVersion other than "0", or resourceVersionMatch=Exact)."""
    rv = query.get("resourceVersion", "")
    if not rv or query.get("continue") or query.get("resourceVersionMatch") == "Exact":
        return False
    try:
        limit = int(query.get("limit") or 0)
    except ValueError:
        limit = 0
    return not (limit > 0 and rv != "0")


def _webhook_of(crd: Obj) -> Mapping[str, Any] | None:
    """A CRD's `conversion.webhook` when it converts through one, else None."""
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    webhook = conversion.get("webhook")
    return webhook if isinstance(webhook, Mapping) else {}


@dataclass(frozen=True)
class _CRDView:
    """What the watch cache copies need of a CRD: its name, kind, served versions, generation."""

    name: str
    kind: str
    group: str
    plural: str
    served: tuple[str, ...]
    generation: int
    converts: bool

    @classmethod
    def of(cls, crd: Obj) -> _CRDView:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        return cls(str(crd["metadata"]["name"]), str(names.get("kind") or ""), str(spec.get("group") or ""),
                   str(names.get("plural") or ""),
                   tuple(str(v.get("name")) for v in spec.get("versions") or () if isinstance(v, dict)
                         and v.get("served")),
                   int(crd["metadata"].get("generation") or 0), _webhook_of(crd) is not None)

    @property
    def bucket(self) -> str:
        return f"crd:{self.group}/{self.plural}"


Copy = asyncio.Future  # of the converted `Stored`, or None when the conversion failed
#: resourceVersions of one object kept per version (a watch that lags finds the ones it sends)
_KEPT = 8
#: copies kept per bucket beyond twice its live objects before those of deleted objects are dropped
_SLACK = 1000


class _BucketCopies:
    """One custom resource's copies: per (key, apiVersion) the last few, for watch events (found by
    resourceVersion), and per apiVersion by the stored version each was made of, for LISTs (one
    identity lookup per object)."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[Key, str], list[tuple[Stored, Copy[Stored | None]]]] = {}
        self.by_stored: dict[str, dict[Stored, Copy[Stored | None]]] = {}

    def __len__(self) -> int:
        return len(self.by_key)

    def add(self, key: Key, api_version: str, stored: Stored, copy: Copy[Stored | None]) -> None:
        kept = self.by_key.setdefault((key, api_version), [])
        kept.append((stored, copy))
        by_stored = self.by_stored.setdefault(api_version, {})
        by_stored[stored] = copy
        for old, _ in kept[:-_KEPT]:
            by_stored.pop(old, None)
        del kept[:-_KEPT]

    def at(self, key: Key, rv: int, api_version: str) -> Copy[Stored | None] | None:
        for stored, copy in self.by_key.get((key, api_version), ()):
            if stored.rv == rv:
                return copy
        return None

    def drop(self, keys: list[tuple[Key, str]] | None = None) -> None:
        """Forget the copies of `keys` (None: all), releasing whoever waits for one."""
        for k in list(self.by_key) if keys is None else keys:
            for stored, copy in self.by_key.pop(k, ()):
                self.by_stored.get(k[1], {}).pop(stored, None)
                if not copy.done():
                    copy.set_result(None)


class WatchCacheCopies:
    """Per custom resource and served version, the objects as the watch cache of that version holds
    them: converted in the background when written (one review per object and version), in the order
    written, as kube-apiserver's cacher decodes its etcd watch. A copy that is missing (written while
    no event loop ran, or no longer kept) is converted when read."""

    def __init__(self, conversion: CRDConversion) -> None:
        self.conversion = conversion
        self.copies: dict[str, _BucketCopies] = {}  # by bucket
        self._views: dict[str, _CRDView] | None = None  # bucket -> CRD, rebuilt when a CRD changes
        self._queue: deque[tuple[_CRDView, Obj, int, str, Copy[Stored | None]]] = deque()
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    def _view(self, bucket: str) -> _CRDView | None:
        if self._views is None:
            crds = self.conversion.store.buckets.get(CRD_BUCKET)
            views = [_CRDView.of(st.obj) for st in crds.objects.values()] if crds is not None else []
            self._views = {v.bucket: v for v in views}
        return self._views.get(bucket)

    def on_commit(self, bucket: Bucket, change: Commit) -> None:
        """A store listener: queue the conversions the watch caches of the other served versions make."""
        if bucket.name == CRD_BUCKET:
            self._views = None
            old = _CRDView.of(change.old.obj) if change.old is not None else None
            new = _CRDView.of(change.new.obj)
            if (change.type == DELETED or old is None or old.generation != new.generation) \
                    and new.bucket in self.copies:
                self.copies.pop(new.bucket).drop()  # its storage is rebuilt: copies start over
            return
        if not bucket.name.startswith("crd:"):
            return
        view = self._view(bucket.name)
        if view is None or not view.converts:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (a load before start): converted when read
        obj = change.new.obj
        copies = self.copies.get(bucket.name)
        if copies is None:
            copies = self.copies[bucket.name] = _BucketCopies()
        for version in view.served:
            target = f"{view.group}/{version}"
            if target == obj.get("apiVersion"):
                continue
            copy: Copy[Stored | None] = loop.create_future()
            copies.add(change.key, target, change.new, copy)
            self._queue.append((view, obj, change.rv, target, copy))
        if len(copies) > 2 * len(bucket.objects) + _SLACK:
            copies.drop([k for k in copies.by_key if k[0] not in bucket.objects])
        self._start(loop)

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._worker is None or self._worker.done():
            # a context of its own: not the SYNCHRONOUS flag of a write made in `run_sync`
            self._worker = loop.create_task(self._work(), context=contextvars.Context())

    async def _work(self) -> None:
        assert self._wake is not None
        while True:
            while self._queue:
                view, obj, rv, target, copy = self._queue.popleft()
                if copy.done():
                    continue  # dropped (the CRD changed)
                try:
                    converted: Stored | None = Stored(
                        (await self.conversion.review(view.name, view.kind, [obj], target))[0], rv)
                except StatusError as e:
                    log.debug("the watch cache of %s %s: %s", view.name, target, e.message)
                    converted = None
                if not copy.done():
                    copy.set_result(converted)
            self._wake.clear()
            await self._wake.wait()

    async def close(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        for copies in self.copies.values():
            copies.drop()
        self._queue.clear()

    async def read(self, info: ServedResource, items: list[Stored]) -> list[Stored]:
        """`items` as `info`'s watch cache holds them (copies converted when written; the missing
        ones converted now, in one review)."""
        api_version = info.api_version
        copies = self.copies.get(info.storage_key)
        made = copies.by_stored.get(api_version, {}) if copies is not None else {}
        out: list[Stored | None] = []
        missing: list[int] = []
        for st in items:
            if st.obj.get("apiVersion") == api_version:
                out.append(st)
                continue
            pending = made.get(st)
            copy = None if pending is None else pending.result() if pending.done() else await pending
            if copy is None:
                missing.append(len(out))
            out.append(copy)
        if missing:
            converted = await self.conversion.convert(info, [items[i].obj for i in missing], info.api_version)
            for i, obj in zip(missing, converted, strict=True):
                out[i] = Stored(obj, items[i].rv)
        return [st for st in out if st is not None]

    async def event_object(self, info: ServedResource, obj: Obj) -> Obj:
        """A watch event's object (as stored) in `info`'s version, from the copy made when it was written."""
        meta = obj.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        copies = self.copies.get(info.storage_key)
        pending = copies.at(key, int(meta.get("resourceVersion") or 0), info.api_version) if copies else None
        copy = None if pending is None else await pending
        if copy is not None:
            return copy.obj
        return (await self.conversion.convert(info, [obj], info.api_version))[0]


class CRDConversion:
    """Converts custom resources whose CRD says `conversion: Webhook`; counts its calls (tests)."""

    def __init__(self, store: VersionedStore, caller: WebhookCaller) -> None:
        self.store = store
        self.caller = caller
        #: ConversionReviews sent, per CRD name (what a test can assert on)
        self.calls: dict[str, int] = {}
        self.watch_cache = WatchCacheCopies(self)
        store.listeners.append(self.watch_cache.on_commit)

    async def close(self) -> None:
        """Stop the watch caches' background conversions."""
        await self.watch_cache.close()

    def webhook(self, info: ServedResource) -> Mapping[str, Any] | None:
        """The CRD's `conversion.webhook` when it converts through one, else None."""
        if not info.crd_name:
            return None
        bucket = self.store.buckets.get(CRD_BUCKET)
        crd = bucket.objects.get(("", info.crd_name)) if bucket is not None else None
        return _webhook_of(crd.obj) if crd is not None else None

    def needed(self, info: ServedResource, objects: list[Obj], api_version: str) -> bool:
        """Whether serving `objects` as `api_version` calls the webhook."""
        return any(o.get("apiVersion") != api_version for o in objects) and self.webhook(info) is not None

    async def convert(self, info: ServedResource, objects: list[Obj], api_version: str) -> list[Obj]:
        """`objects` (dicts, not changed) as `api_version`: new dicts for those converted, in one review."""
        todo = [i for i, o in enumerate(objects) if o.get("apiVersion") != api_version]
        if not todo or self.webhook(info) is None:
            return [o if o.get("apiVersion") == api_version else dict(o, apiVersion=api_version) for o in objects]
        converted = await self.review(info.crd_name, info.kind, [objects[i] for i in todo], api_version)
        out = list(objects)
        for i, new in zip(todo, converted, strict=True):
            out[i] = new
        return out

    async def review(self, crd_name: str, kind: str, objects: list[Obj], api_version: str) -> list[Obj]:
        """One ConversionReview of `objects` (none already in `api_version`) to the webhook of CRD
        `crd_name`; a `StatusError` (500) for anything that goes wrong."""
        bucket = self.store.buckets.get(CRD_BUCKET)
        crd = bucket.objects.get(("", crd_name)) if bucket is not None else None
        webhook = _webhook_of(crd.obj) if crd is not None else None
        source = _gvk(str(objects[0].get("apiVersion") or ""), kind)
        if webhook is None:
            raise StatusError(500, "", f"conversion webhook for {source} failed: the CRD converts no more "
                                       "through a webhook")
        if "v1" not in (webhook.get("conversionReviewVersions") or ["v1"]):
            raise StatusError(500, "", f"conversion webhook for {source} failed: no supported "
                                                    "conversion review versions")
        uid = str(uuid.uuid4())
        review = {"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
                  "request": {"uid": uid, "desiredAPIVersion": api_version, "objects": objects},
                  "response": {"uid": "", "convertedObjects": None, "result": {"metadata": {}}}}
        self.calls[crd_name] = self.calls.get(crd_name, 0) + 1
        try:
            answer = await self.caller.post(webhook.get("clientConfig") or {}, review, CONVERSION_TIMEOUT)
            converted = _converted(answer, uid)
        except CallError as e:
            raise StatusError(500, "", f"conversion webhook for {source} failed: {e}") from None
        if len(converted) != len(objects):
            raise StatusError(500, "", f"conversion webhook for {source} returned {len(converted)} "
                                                    f"objects, expected {len(objects)}")
        return [_checked(original, new, api_version, source, n, len(objects) > 1)
                for n, (original, new) in enumerate(zip(objects, converted, strict=True))]


def _converted(answer: Any, uid: str) -> list[Any]:
    if not isinstance(answer, dict) or answer.get("kind") != "ConversionReview" \
            or answer.get("apiVersion") != "apiextensions.k8s.io/v1":
        got = f"{(answer or {}).get('apiVersion', '')}, Kind={(answer or {}).get('kind', '')}" \
            if isinstance(answer, dict) else "?"
        raise CallError(f"expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise CallError("no response provided")
    if response.get("uid") != uid:
        raise CallError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise CallError(str(result["message"]))
        raise CallError(f"response.result.status was '{result.get('status', '')}', not 'Success'")
    return list(response.get("convertedObjects") or [])


def _checked(original: Obj, converted: Any, api_version: str, source: str, index: int, list_kind: bool) -> Obj:
    """`validateConvertedObject` + `restoreObjectMeta`: the original's metadata with the converted
    object's labels and annotations."""
    where = f"returned invalid converted object at index {index}" if list_kind else \
        f"returned invalid object at index {index}"
    if not isinstance(converted, dict):
        raise StatusError(500, "", f"conversion webhook for {source} {where}: not an object")
    if converted.get("apiVersion") != api_version:
        raise StatusError(500, "", f"conversion webhook for {source} {where}: invalid groupVersion "
                                                f"(expected {api_version}, received {converted.get('apiVersion')})")
    if converted.get("kind") != original.get("kind"):
        raise StatusError(500, "", f"conversion webhook for {source} {where}: invalid kind (expected "
                                                f"{original.get('kind')}, received {converted.get('kind')})")
    om, cm = original.get("metadata") or {}, converted.get("metadata")
    if not isinstance(cm, dict):
        raise StatusError(500, "", f"conversion webhook for {source} returned invalid metadata: missing "
                                                "metadata in converted object")
    for key in ("name", "namespace", "uid"):
        if (om.get(key) or "") != (cm.get(key) or ""):
            raise StatusError(500, "", f"conversion webhook for {source} {where}: must have the same "
                                                    f"{key}: {om.get(key) or ''} != {cm.get(key) or ''}")
    out = dict(converted)
    meta = copy_json(om)
    for key in ("labels", "annotations"):
        value = cm.get(key)
        if value is None:
            meta.pop(key, None)
        elif not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise StatusError(500, "", f"conversion webhook for {source} returned invalid metadata: "
                                                    f"metadata.{key} must be a map of strings")
        else:
            meta[key] = dict(value)
    out["metadata"] = meta
    return out
