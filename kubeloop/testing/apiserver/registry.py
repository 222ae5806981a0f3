"""The generic request flow shared by every resource (kube-apiserver's generic registry).

get / list / create / update / patch / delete / deletecollection are written once here; what differs
per kind is delegated to `info.strategy` (defaults, validation, generation, status subresource) and
the few kind-specific lifecycles (namespaces, CRDs) are small branches that call `controllers.py`.

A write goes through what kube-apiserver 1.24's handlers and store do: the body decoded as the
kind's Go struct with its defaults (`Strategy.decode`), ownerReferences deduplicated, the field
manager's managedFields, mutating admission (the in-process plugins and the admission webhooks),
the strategy's prepare and validate hooks, validating admission webhooks, then the store. A write
suspends only to call a webhook (admission or conversion) and starts over when the object changed
meanwhile, as GuaranteedUpdate does; otherwise a request runs to completion between two awaits,
which is what makes the store's resourceVersion order and the watch fan-out gap-free. `run_sync`
runs the same flows for in-process callers (the emulator's controllers), which never call webhooks.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
from bisect import bisect_left
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from kubeloop.meta import ADDED, DELETED, MODIFIED

from . import apiwarnings, errors, gostruct, listoptions, ownerrefs
from .catalog import Catalog
from .errors import StatusError, cause
from .features import FeatureGates
from .govalues import GO, equal, sprint_v
from .kinds.schema import DecodeFailure
from .managedfields import record_apply, record_scale, record_update
from .objectmeta import generate_name, new_uid, now_rfc3339
from .patch import decoded_paths, json_merge_patch, json_patch, strategic_merge_patch
from .resources import DRY_RUN, PEERS, ServedResource, Strategy
from .shapes import Obj, copy_json
from .storage import Bucket, Commit, Key, Stored, VersionedStore, key_range
from .webhookcall import SYNCHRONOUS

if TYPE_CHECKING:
    from .admission import Admission, Caller
    from .conversion import CRDConversion

NAMESPACES = ("", "namespaces")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
PROPAGATION = ("Foreground", "Background", "Orphan")
FOREGROUND = "foregroundDeletion"
#: how often a write is retried when the object changed while webhooks were being called
#: (GuaranteedUpdate's retry: a PUT with a resourceVersion then answers 409, a patch re-applies)
STALE_RETRIES = 5
T = TypeVar("T")


class _Stale(Exception):
    """The stored object changed while a write awaited a webhook: the write starts over."""


def run_sync(flow: Coroutine[Any, Any, T]) -> T:
    """Run a registry flow to completion without an event loop step (in-process controllers, bulk
    loads, start-up). Flows only suspend to call webhooks, which `SYNCHRONOUS` makes them refuse."""
    token = SYNCHRONOUS.set(True)
    try:
        flow.send(None)
    except StopIteration as done:
        return done.value
    finally:
        SYNCHRONOUS.reset(token)
    flow.close()
    raise errors.internal_error("a webhook call was needed on a path the emulator runs synchronously")


def is_identity(strategy: Strategy) -> bool:
    """Whether stored objects are served unchanged (so their pre-encoded bytes can be reused)."""
    return type(strategy).from_storage is Strategy.from_storage and type(strategy).decorate is Strategy.decorate


def list_items_carry_kind(info: ServedResource) -> bool:
    """Custom resource lists carry kind/apiVersion on items; built-in lists do not."""
    return info.list_items_have_kind


@dataclass
class ListResult:
    items: list[Stored]
    rv: int
    continue_token: str = ""
    remaining: int | None = None


@dataclass
class Settings:
    """Tunable behaviour (tests shorten the delays)."""

    gc_enabled: bool = True
    #: kube-controller-manager's controllers too (namespace bootstrap and deletion, garbage collector,
    #: workloads); False serves kube-apiserver alone (`--bare`)
    cluster: bool = True
    namespace_delete_delay: float = 2.0
    crd_cleanup_delay: float = 0.2
    future_rv_wait: float = 3.0
    history_size: int = 10_000
    bookmark_interval: float = 60.0
    max_body_bytes: int = 3 * 1024 * 1024
    #: features of later Kubernetes versions switched on (features.py); none by default
    features: FeatureGates = field(default_factory=FeatureGates)


@dataclass
class WriteResult:
    stored: Stored
    created: bool = False
    info: ServedResource | None = None


@dataclass
class Hooks:
    """Callbacks the registry fires after commits (the in-process controllers subscribe)."""

    after_commit: list[Callable[[ServedResource | None, Bucket, Commit], None]] = field(default_factory=list)


class Registry:
    """All resources' request handling on one store and catalog."""

    def __init__(self, store: VersionedStore, catalog: Catalog, settings: Settings | None = None) -> None:
        self.store = store
        self.catalog = catalog
        self.settings = settings or Settings()
        #: mutating admission on create, after defaulting (cluster mode adds the ServiceAccount plugin)
        #: admission plugins run on creates: (info, namespace, object, name), the name "" when the
        #: server generates it (a plugin sees the request before `BeforeCreate` names the object)
        self.admission: list[Callable[[ServedResource, str, Obj, str], None]] = []
        #: admission webhooks and CRD conversion webhooks (`APIServer` sets them when it starts)
        self.webhooks: Admission | None = None
        self.conversion: CRDConversion | None = None

    # ---- helpers ------------------------------------------------------------------------
    def bucket(self, info: ServedResource) -> Bucket:
        return self.store.bucket(info.storage_key)

    def view(self, info: ServedResource, stored: Stored) -> Obj:
        """A fresh, mutable copy of a stored object in `info`'s version (with kind/apiVersion)."""
        return run_sync(self.aview(info, stored))

    async def aview(self, info: ServedResource, stored: Stored) -> Obj:
        """`view`, converting through the CRD's conversion webhook when it has one."""
        obj: Obj = orjson.loads(stored.body)
        out = {"kind": stored.obj.get("kind", info.kind), "apiVersion": stored.obj.get("apiVersion",
                                                                                          info.api_version)}
        out.update(obj)
        if self.conversion is not None and self.conversion.needed(info, [out], info.api_version):
            out = (await self.conversion.convert(info, [out], info.api_version))[0]
        elif type(info.strategy).from_storage is not Strategy.from_storage:
            out = info.strategy.from_storage(info, out)
        out["kind"] = info.kind
        out["apiVersion"] = info.api_version
        return out

    async def served(self, info: ServedResource, items: list[Stored], *, from_cache: bool = False) -> list[Stored]:
        """`items` as served through `info`: those the CRD's conversion webhook must convert are
        converted, the others returned as they are (the renderers convert them). One review per
        object, as kube-apiserver decodes a list read from etcd one item at a time; `from_cache`:
        the watch cache's copies, converted when written (`conversion.from_watch_cache`)."""
        conv = self.conversion
        if conv is None or not info.crd_name or not items or not conv.needed(info, [st.obj for st in items],
                                                                               info.api_version):
            return items
        if from_cache:
            return await conv.watch_cache.read(info, items)
        out = []
        for st in items:
            if st.obj.get("apiVersion") == info.api_version:
                out.append(st)
            else:
                out.append(Stored((await conv.convert(info, [st.obj], info.api_version))[0], st.rv))
        return out

    def to_stored_form(self, info: ServedResource, obj: Obj) -> Obj:
        return run_sync(self.ato_stored_form(info, obj))

    async def ato_stored_form(self, info: ServedResource, obj: Obj) -> Obj:
        """`obj` (in `info`'s version) in the form it is stored in (the storage version)."""
        obj["kind"] = info.kind
        obj["apiVersion"] = info.api_version
        if self.conversion is not None and info.crd_name:
            storage = f"{info.group}/{getattr(info.strategy, 'storage_version', info.version)}"
            if self.conversion.needed(info, [obj], storage):
                return (await self.conversion.convert(info, [obj], storage))[0]
        if is_identity(info.strategy):
            return obj
        return info.strategy.to_storage(info, obj)

    async def aconvert(self, obj: Obj, source: ServedResource, target: ServedResource) -> Obj:
        """`obj` (in `source`'s version) in `target`'s, another version of the same resource."""
        if self.conversion is not None and self.conversion.needed(target, [obj], target.api_version):
            return (await self.conversion.convert(target, [obj], target.api_version))[0]
        out = source.strategy.to_storage(source, dict(obj)) if not is_identity(source.strategy) else dict(obj)
        if not is_identity(target.strategy):
            out = target.strategy.from_storage(target, dict(out))
        out["kind"], out["apiVersion"] = target.kind, target.api_version
        return out

    def _webhooks_for(self, caller: Caller | None) -> Admission | None:
        """The admission webhooks to call for a client's request (None: none configured, or an
        in-process write, which kube-controller-manager would make through the API instead)."""
        hooks = self.webhooks
        if caller is None or hooks is None or not hooks.configured():
            return None
        return hooks

    def _get_stored(self, info: ServedResource, namespace: str, name: str) -> Stored:
        st = self.bucket(info).objects.get((namespace if info.namespaced else "", name))
        if st is None:
            raise errors.not_found(info.resource, name, info.group)
        return st

    def namespace_check(self, info: ServedResource, namespace: str, name: str) -> None:
        """Namespaced creates need an existing, non-terminating namespace (NamespaceLifecycle)."""
        if not info.namespaced:
            return
        ns = self.store.bucket("/namespaces").objects.get(("", namespace))
        if ns is None:
            raise errors.not_found("namespaces", namespace)
        if ns.obj["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(
                f'{errors._qualified(info.resource, info.group)} "{name}" is forbidden: unable to create new '
                f"content in namespace {namespace} because it is being terminated",
                {"name": name, **({"group": info.group} if info.group else {}), "kind": info.resource,
                 "causes": [cause("NamespaceTerminating", f"namespace {namespace} is being terminated",
                                  "metadata.namespace")]})

    @staticmethod
    def check_dry_run(values: list[str], kind: str) -> bool:
        for v in values:
            if v != "All":
                raise StatusError(
                    422, "Invalid",
                    f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{"{v}"}}: '
                    'supported values: "All"',
                    {"group": "meta.k8s.io", "kind": kind, "causes": [cause(
                        "FieldValueNotSupported", f'Unsupported value: []string{{"{v}"}}: supported values: "All"',
                        "dryRun")]})
        return bool(values)

    # ---- reads ---------------------------------------------------------------------------
    def get(self, info: ServedResource, namespace: str, name: str) -> Stored:
        return self._get_stored(info, namespace, name)

    def parse_list_rv(self, query: Mapping[str, str]) -> tuple[int | None, str]:
        listoptions.validate(query, watch=False, gates=self.settings.features)
        return parse_resource_version(query.get("resourceVersion", "")), query.get("resourceVersionMatch", "")

    def future_rv_error(self, rv: int) -> StatusError:
        return errors.server_timeout(
            f"Timeout: Too large resource version: {rv}, current: {self.store.rv}",
            {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
             "retryAfterSeconds": 1}, retry_after=1)

    def list(self, info: ServedResource, namespace: str | None, query: Mapping[str, str],
             match: Callable[[Obj], bool] | None, has_selector: bool) -> ListResult:
        """A list at the current RV, an Exact RV, or a continue token's snapshot (caller waited for
        a future NotOlderThan RV already)."""
        limit_text = query.get("limit", "")
        limit = 0
        if limit_text:
            try:
                limit = int(limit_text)
            except ValueError:
                raise errors.bad_request(f'strconv.ParseInt: parsing "{limit_text}": invalid syntax') from None
        rv, rv_match = self.parse_list_rv(query)
        bucket = self.bucket(info)
        token = query.get("continue", "")
        start: Key | None = None
        snap_rv = self.store.rv
        if token:
            snap_rv, start = _decode_continue(token)
            snap = bucket.sorted_snapshot(snap_rv)
            if snap is None:
                raise errors.expired(
                    "The provided continue parameter is too old to display a consistent list result. You can "
                    "start a new list without the continue parameter, or use the continue token in this "
                    "response to retrieve the remainder of the results. Continuing with the provided token "
                    "results in an inconsistent list - objects that were created, modified, or deleted "
                    "between the time the first chunk was returned and now may show up in the list.")
        elif rv and (rv_match == "Exact" or (not rv_match and limit > 0)):
            # legacy semantics: a non-zero resourceVersion with a limit is an exact read
            if rv > self.store.rv:
                raise self.future_rv_error(rv)
            snap = bucket.sorted_snapshot(rv)
            if snap is None:
                raise errors.expired(f"too old resource version: {rv} ({bucket.oldest_rv})")
            snap_rv = rv
        else:
            snap = bucket.objects, bucket.sorted_keys()
            if rv == 0:
                limit = 0  # served from the watch cache: the real server ignores limit
        objects, keys = snap
        # a page is a range of the sorted keys (as etcd reads one): found by bisection, never copied
        lo, hi = key_range(keys, namespace)
        if start is not None:
            lo = bisect_left(keys, start, lo, hi)
        items: list[Stored] = []
        token_out = ""
        remaining: int | None = None
        if match is None:
            end = hi if limit <= 0 else min(hi, lo + limit)
            items = [objects[keys[i]] for i in range(lo, end)]
            if end < hi:
                token_out = _encode_continue(snap_rv, keys[end - 1])
                remaining = hi - end
        else:
            count = 0
            for i in range(lo, hi):
                k = keys[i]
                st = objects[k]
                if match(st.obj):
                    items.append(st)
                    count += 1
                    if 0 < limit == count:
                        if i + 1 < hi:
                            token_out = _encode_continue(snap_rv, k)
                        break
        if has_selector:
            remaining = None
        return ListResult(items, snap_rv, token_out, remaining)

    # ---- create ---------------------------------------------------------------------------
    def create(self, info: ServedResource, namespace: str, obj: Obj, *, manager: str, dry_run: bool,
               subresource: str = "", verb: str = "create") -> Stored:
        return run_sync(self.acreate(info, namespace, obj, manager=manager, dry_run=dry_run, subresource=subresource,
                                     verb=verb))

    def _prepare_create(self, info: ServedResource, obj: Obj, dry_run: bool) -> None:
        """The strategy's `PrepareForCreate`, told whether this is a dry run and what is stored
        beside the object (its allocators read both: `DRY_RUN`, `PEERS`)."""
        token, peers = DRY_RUN.set(dry_run), PEERS.set(self.bucket(info).objects)
        try:
            info.strategy.prepare_for_create(info, obj)
        finally:
            DRY_RUN.reset(token)
            PEERS.reset(peers)

    async def acreate(self, info: ServedResource, namespace: str, obj: Obj, *, manager: str, dry_run: bool,
                      subresource: str = "", caller: Caller | None = None, options: Obj | None = None,
                      verb: str = "create") -> Stored:
        """`verb`: the request's (a PUT or an apply may create too)."""
        if verb == "create" and info.custom and self.crd_terminating(info):
            # the custom resource handler refuses a POST once the CRD is Terminating, before anything else
            raise StatusError(405, "MethodNotAllowed", "create not allowed while custom resource definition is "
                              "terminating", {"group": info.group, "kind": info.resource})
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if info.namespaced:
            if meta.get("namespace") not in (None, "", namespace):
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        name = meta.get("name") or ""
        generated = not name and bool(meta.get("generateName"))
        if generated:
            name = meta["name"] = generate_name(str(meta["generateName"]))
        try:
            self.namespace_check(info, namespace, name)
        except StatusError:
            # admission runs on the decoded object: a body the server cannot decode is a 400 even in
            # a missing or terminating namespace
            info.strategy.decode(info, obj)
            raise
        if _storage_version(meta.get("resourceVersion")):
            # etcd3 storage refuses a version it can parse (a 500 without a reason on the real server,
            # e.g. re-creating `kubectl get -o yaml` output); one it cannot parse it ignores
            raise StatusError(500, "", "resourceVersion should not be set on objects to be created")
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(k, None)
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = now_rfc3339()
        if info.strategy.has_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        info.strategy.decode(info, obj)
        ownerrefs.dedup(obj)  # the create handler's, before its field manager
        if manager and info.strategy.records_managed_fields:
            # the create handler's field manager, before admission and the strategy
            record_update(info, obj, None, manager, subresource)
        self._prepare_create(info, obj, dry_run)
        for admit in self.admission:
            admit(info, namespace, obj, "" if generated else name)
        webhooks = self._webhooks_for(caller)
        if webhooks is not None:
            from .admission import AdmissionCall

            # the webhooks see managedFields already (the field manager runs before admission),
            # and no uid, generation or generated name yet (BeforeCreate sets them afterwards)
            view = copy_json(obj)
            vm = view["metadata"]
            for k in ("uid", "generation"):
                vm.pop(k, None)
            vm["creationTimestamp"] = None
            if generated:
                vm.pop("name", None)
            call = AdmissionCall(info, "CREATE", namespace if info.namespaced else "", "" if generated else name,
                                 view, None, caller, dry_run, subresource,  # type: ignore[arg-type]
                                 _options("CreateOptions", options, dry_run))
            mutated = await webhooks.mutate(call)
            if mutated is not None:
                mm = mutated.setdefault("metadata", {})
                for k in ("uid", "creationTimestamp", "generation", "name"):
                    if k in meta:
                        mm[k] = meta[k]
                    else:
                        mm.pop(k, None)
                if info.namespaced:
                    mm["namespace"] = namespace
                info.strategy.decode(info, mutated)  # the patched object is decoded again
                self._prepare_create(info, mutated, dry_run)
                obj, meta = mutated, mm
        info.strategy.validate_create(info, obj)  # the strategy owns all ObjectMeta validation
        if not name:  # never store a nameless object, whatever a strategy lets through
            raise errors.invalid(info.kind, None, [cause(
                "FieldValueRequired", "Required value: name or generateName is required", "metadata.name")],
                info.group)
        if webhooks is not None:
            from .admission import AdmissionCall

            await webhooks.validate(AdmissionCall(
                info, "CREATE", namespace if info.namespaced else "", name, copy_json(obj), None,
                caller, dry_run, subresource, _options("CreateOptions", options, dry_run)))  # type: ignore[arg-type]
        bucket = self.bucket(info)
        key = (namespace if info.namespaced else "", name)
        if key in bucket.objects:
            raise errors.already_exists(info.resource, name, info.group)
        _drop_empty_meta(obj)
        obj = await self.ato_stored_form(info, obj)
        if key in bucket.objects:  # created while the conversion webhook answered
            raise errors.already_exists(info.resource, name, info.group)
        if dry_run:
            return Stored(obj, 0)
        return self.store.commit(bucket, ADDED, obj, None).new

    # ---- update ---------------------------------------------------------------------------
    def update(self, info: ServedResource, namespace: str, name: str, obj: Obj, *, manager: str,
               dry_run: bool, subresource: str = "", allow_create: bool = False) -> WriteResult:
        """PUT (and the second half of PATCH): optimistic concurrency, strategy, no-op detection."""
        return run_sync(self.aupdate(info, namespace, name, obj, manager=manager, dry_run=dry_run,
                                     subresource=subresource, allow_create=allow_create))

    async def aupdate(self, info: ServedResource, namespace: str, name: str, obj: Obj, *, manager: str,
                      dry_run: bool, subresource: str = "", allow_create: bool = False, caller: Caller | None = None,
                      options: Obj | None = None) -> WriteResult:
        for attempt in range(STALE_RETRIES):
            try:
                return await self._aupdate(info, namespace, name, copy_json(obj) if attempt < STALE_RETRIES - 1
                                           else obj, manager=manager, dry_run=dry_run, subresource=subresource,
                                           allow_create=allow_create, caller=caller, options=options)
            except _Stale:
                continue
        raise errors.conflict(info.resource, name, info.group)

    async def _aupdate(self, info: ServedResource, namespace: str, name: str, obj: Obj, *, manager: str,
                       dry_run: bool, subresource: str, allow_create: bool, caller: Caller | None,
                       options: Obj | None) -> WriteResult:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if meta.get("name") not in (None, name) or not meta.get("name"):
            if meta.get("name"):
                raise errors.bad_request(
                    f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
            meta["name"] = name
        if info.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request")
        bucket = self.bucket(info)
        key = (namespace if info.namespaced else "", name)
        old = bucket.objects.get(key)
        # GuaranteedUpdate checks the body's uid precondition first, against an empty object when
        # there is none: a uid on a missing object is a 409, not a 404
        self._check_uid_precondition(info, meta.get("uid"), old, namespace, name)
        if old is None:
            if allow_create and not subresource:
                if meta.get("resourceVersion"):
                    # a create from a stale read: the create's validation answers first
                    meta.pop("resourceVersion")
                    await self.acreate(info, namespace, obj, manager=manager, dry_run=True, verb="update")
                    raise errors.conflict(info.resource, name, info.group)
                return WriteResult(await self.acreate(info, namespace, obj, manager=manager, dry_run=dry_run,
                                                      caller=caller, options=options, verb="update"), created=True)
            raise errors.not_found(info.resource, name, info.group)
        if meta.get("resourceVersion") in (None, "") and not info.strategy.allow_unconditional_update:
            # Store.Update: the error names the resource where the kind goes (a known upstream TODO)
            raise errors.invalid(info.resource, name, [cause(
                "FieldValueInvalid", "Invalid value: 0x0: must be specified for an update",
                "metadata.resourceVersion")], info.group)
        return await self._aupdate_existing(info, bucket, old, obj, manager=manager, dry_run=dry_run,
                                            subresource=subresource, caller=caller, options=options)

    @staticmethod
    def _check_uid_precondition(info: ServedResource, uid: Any, old: Stored | None, namespace: str,
                                name: str) -> None:
        """`storage.Preconditions.Check` for the uid an update body carries (409 on mismatch)."""
        if uid in (None, ""):
            return
        have = old.obj["metadata"]["uid"] if old is not None else ""
        if uid == have:
            return
        ns = f"{namespace}/" if info.namespaced else ""
        raise errors.conflict(info.resource, name, info.group, message=(
            f'Operation cannot be fulfilled on {errors._qualified(info.resource, info.group)} "{name}": '
            f"StorageError: invalid object, Code: 4, Key: /registry/{info.resource}/{ns}{name}, "
            f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
            f"UID in precondition: {uid}, UID in object meta: {have}"))

    async def _aupdate_existing(self, info: ServedResource, bucket: Bucket, old: Stored, obj: Obj, *, manager: str,
                                dry_run: bool, subresource: str, record: bool = True, caller: Caller | None = None,
                                options: Obj | None = None, patched: bool = False) -> WriteResult:
        """`patched`: the write comes from a PATCH (server-side apply included)."""
        meta = obj["metadata"]
        old_view = await self.aview(info, old)
        old_meta = old_view["metadata"]
        name = old_meta["name"]
        rv = meta.get("resourceVersion")
        if rv not in (None, "") and str(rv) != old_meta["resourceVersion"]:
            raise errors.conflict(info.resource, name, info.group)
        self._check_uid_precondition(info, meta.get("uid"), old, old_meta.get("namespace", ""), name)
        if info.namespaced:
            meta["namespace"] = old_meta.get("namespace", "")
        # fields only the server sets
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            if k in old_meta:
                meta[k] = old_meta[k]
            else:
                meta.pop(k, None)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if not meta.get("generateName") and old_meta.get("generateName"):
            meta.pop("generateName", None)
        info.strategy.decode(info, obj)
        if not patched:
            ownerrefs.dedup(obj)  # the update handler's, before its field manager
        if record and manager and info.strategy.records_managed_fields:
            # the update handler's field manager, before admission and the strategy
            record_update(info, obj, old_view, manager, subresource)
        webhooks = self._webhooks_for(caller)
        if webhooks is not None:
            from .admission import AdmissionCall

            call = AdmissionCall(info, "UPDATE", old_meta.get("namespace", "") if info.namespaced else "", name,
                                 copy_json(obj), copy_json(old_view), caller, dry_run,  # type: ignore[arg-type]
                                 subresource, _options("UpdateOptions", options, dry_run))
            mutated = await webhooks.mutate(call)
            if mutated is not None:
                mm = mutated.setdefault("metadata", {})
                for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                          "resourceVersion", "name", "namespace"):
                    if k in meta:
                        mm[k] = meta[k]
                    else:
                        mm.pop(k, None)
                info.strategy.decode(info, mutated)  # the patched object is decoded again
                obj, meta = mutated, mm
        if patched:
            ownerrefs.dedup(obj, after_admission=True)  # the patch handler's, after mutating admission
        if subresource and subresource != "scale":  # status, a Namespace's finalize
            info.strategy.prepare_for_subresource_update(info, subresource, obj, old_view)
        else:
            peers = PEERS.set(self.bucket(info).objects)
            try:
                info.strategy.prepare_for_update(info, obj, old_view)
            finally:
                PEERS.reset(peers)
        if subresource and subresource != "scale":
            info.strategy.validate_subresource_update(info, subresource, obj, old_view)
        else:
            info.strategy.validate_update(info, obj, old_view)
        _drop_empty_meta(obj)
        if webhooks is not None:
            from .admission import AdmissionCall

            await webhooks.validate(AdmissionCall(
                info, "UPDATE", old_meta.get("namespace", "") if info.namespaced else "", name, copy_json(obj),
                copy_json(old_view), caller, dry_run, subresource,  # type: ignore[arg-type]
                _options("UpdateOptions", options, dry_run)))
        if _same(obj, old_view) and not self._stored_elsewhere(info, old):
            return WriteResult(old)
        obj = await self.ato_stored_form(info, obj)
        if bucket.objects.get(old.key) is not old:
            raise _Stale()  # changed while webhooks were called: GuaranteedUpdate tries again
        if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers") and not (
                (info.group, info.resource) == NAMESPACES and (obj.get("spec") or {}).get("finalizers")):
            # the last finalizer is gone: the object is deleted; watchers see DELETED with the old state
            if dry_run:
                return WriteResult(Stored(obj, old.rv))
            gone = dict(old.obj)
            gone["metadata"] = dict(gone["metadata"])
            ch = self.store.commit(bucket, DELETED, gone, old)
            obj["metadata"]["resourceVersion"] = str(ch.rv)
            return WriteResult(Stored(obj, ch.rv))
        if dry_run:
            return WriteResult(Stored(obj, old.rv))
        return WriteResult(self.store.commit(bucket, MODIFIED, obj, old).new)

    def _stored_elsewhere(self, info: ServedResource, old: Stored) -> bool:
        """Whether `old` is stored in a version other than the storage version: an update then
        writes it even when it changes nothing (the encoded bytes differ; what storage-version
        migration relies on)."""
        storage = getattr(info.strategy, "storage_version", None)
        return storage is not None and old.obj.get("apiVersion") != f"{info.group}/{storage}"

    # ---- patch ----------------------------------------------------------------------------
    def patch(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
              manager: str, dry_run: bool, subresource: str, force: bool,
              decode_yaml: Callable[[bytes], Any]) -> WriteResult:
        return run_sync(self.apatch(info, namespace, name, ptype, body, manager=manager, dry_run=dry_run,
                                    subresource=subresource, force=force, decode_yaml=decode_yaml))

    async def apatch(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
                     manager: str, dry_run: bool, subresource: str, force: bool,
                     decode_yaml: Callable[[bytes], Any], caller: Caller | None = None,
                     options: Obj | None = None) -> WriteResult:
        for _ in range(STALE_RETRIES - 1):
            try:
                return await self._apatch(info, namespace, name, ptype, body, manager=manager, dry_run=dry_run,
                                          subresource=subresource, force=force, decode_yaml=decode_yaml,
                                          caller=caller, options=options)
            except _Stale:
                continue
        try:
            return await self._apatch(info, namespace, name, ptype, body, manager=manager, dry_run=dry_run,
                                      subresource=subresource, force=force, decode_yaml=decode_yaml, caller=caller,
                                      options=options)
        except _Stale:
            raise errors.conflict(info.resource, name, info.group) from None

    async def _apatch(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
                      manager: str, dry_run: bool, subresource: str, force: bool,
                      decode_yaml: Callable[[bytes], Any], caller: Caller | None,
                      options: Obj | None) -> WriteResult:
        bucket = self.bucket(info)
        old = bucket.objects.get((namespace if info.namespaced else "", name))
        if ptype == "apply":
            return await self._aapply(info, bucket, namespace, name, old, body, manager=manager, dry_run=dry_run,
                                      subresource=subresource, force=force, decode_yaml=decode_yaml, caller=caller,
                                      options=options)
        try:
            patch = orjson.loads(body)
        except orjson.JSONDecodeError:
            if ptype == "json":
                raise errors.bad_request("invalid character looking for beginning of value") from None
            raise errors.bad_request("Invalid JSON Patch") from None
        if old is None:
            raise errors.not_found(info.resource, name, info.group)
        new = await self._apatched(info, old, ptype, patch)
        if new["metadata"].get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({new['metadata'].get('name')}) does not match the name on the URL ({name})")
        shown = sprint_v(patch) if ptype == "smp" else None
        try:
            return await self._aupdate_existing(info, bucket, old, new, manager=manager, dry_run=dry_run,
                                                subresource=subresource, caller=caller, options=options,
                                                patched=True)
        except DecodeFailure as e:
            # the patched object does not fit the kind's types: upstream reports the patch itself (its
            # map for a strategic merge patch) or the patched JSON, made again here (the write path
            # changed `new`; not encoded on every write) as an invalid field
            if shown is None:
                shown = gostruct.go_json(gostruct.versioned(info.group, info.version, info.kind),
                                         await self._apatched(info, old, ptype, patch), decoded_paths(ptype, patch))
            msg = f"Invalid value: {json.dumps(shown)}: {e.detail}"
            # NewInvalid with no kind: its message starts with the (empty) kind and a space
            raise StatusError(422, "Invalid", f' "" is invalid: patch: {msg}', {"causes": [
                cause("FieldValueInvalid", msg, "patch")]}) from None

    async def _apatched(self, info: ServedResource, old: Stored, ptype: str, patch: Any) -> Obj:
        """``old`` with a merge, JSON or strategic merge patch applied, in `info`'s kind and version.

        Works on a fresh copy of ``old`` each time, and the patch functions copy the patch's values
        in: the same inputs give the same object again.
        """
        current = await self.aview(info, old)
        if ptype == "merge":
            if not isinstance(patch, dict):
                raise errors.bad_request("Invalid JSON Patch")
            new = json_merge_patch(current, patch, copy=False)  # `current` is a fresh copy of our own
        elif ptype == "json":
            if not isinstance(patch, list):
                raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
            new = json_patch(current, patch)
        else:
            if not isinstance(patch, dict):
                raise errors.bad_request("Invalid JSON Patch")
            new = strategic_merge_patch(current, patch, info)
        if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
            raise errors.bad_request("the patched object is not a valid object")
        if new.get("kind") != info.kind or new.get("apiVersion") != info.api_version:
            new["kind"], new["apiVersion"] = info.kind, info.api_version
        return new

    async def _aapply(self, info: ServedResource, bucket: Bucket, namespace: str, name: str, old: Stored | None,
                      body: bytes, *, manager: str, dry_run: bool, subresource: str, force: bool,
                      decode_yaml: Callable[[bytes], Any], caller: Caller | None = None,
                      options: Obj | None = None) -> WriteResult:
        config = decode_yaml(body)
        if not isinstance(config, dict):
            raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
        cmeta: Obj = config["metadata"] if isinstance(config.get("metadata"), dict) else {}
        mismatch = cmeta.get("name") not in (None, name)
        live = await self.aview(info, old) if old is not None else None
        if live is None and subresource:
            raise errors.not_found(info.resource, name, info.group)
        if mismatch and live is None:
            raise errors.bad_request(
                f"the name of the object ({cmeta.get('name')}) does not match the name on the URL ({name})")
        merged = record_apply(info, live, config, manager, force, subresource)  # conflicts come first
        if mismatch:
            raise errors.bad_request(
                f"the name of the object ({cmeta.get('name')}) does not match the name on the URL ({name})")
        merged.setdefault("metadata", {})["name"] = name
        if live is None:
            st = await self.acreate(info, namespace, merged, manager="", dry_run=dry_run, caller=caller,
                                    options=options, verb="patch")
            return WriteResult(st, created=True)
        return await self._aupdate_existing(info, bucket, old, merged, manager=manager,  # type: ignore[arg-type]
                                            dry_run=dry_run, subresource=subresource, record=False, caller=caller,
                                            options=options, patched=True)

    # ---- scale ----------------------------------------------------------------------------
    def get_scale(self, info: ServedResource, namespace: str, name: str, *, reading: bool = True) -> Obj:
        return run_sync(self.aget_scale(info, namespace, name, reading=reading))

    async def aget_scale(self, info: ServedResource, namespace: str, name: str, *, reading: bool = True) -> Obj:
        """The kind's Scale view; a built-in's GET 404 names `<resource>/scale` (its ScaleREST's own
        error), a PATCH's (the store's) names the resource."""
        old = self.bucket(info).objects.get((namespace if info.namespaced else "", name))
        if old is None:
            scale_rest = reading and not info.custom
            raise errors.not_found(f"{info.resource}/scale" if scale_rest else info.resource, name, info.group)
        return info.strategy.get_scale(info, await self.aview(info, old))

    def update_scale(self, info: ServedResource, namespace: str, name: str, scale: Any, *, manager: str,
                     dry_run: bool) -> Obj:
        return run_sync(self.aupdate_scale(info, namespace, name, scale, manager=manager, dry_run=dry_run))

    async def aupdate_scale(self, info: ServedResource, namespace: str, name: str, scale: Any, *, manager: str,
                            dry_run: bool, caller: Caller | None = None, options: Obj | None = None) -> Obj:
        """PUT `/scale`: the Scale's replicas written into the object through the normal update path.

        As kube-apiserver 1.24's scale handler: the URL's name and namespace are checked first
        (400), the Scale's resourceVersion is a precondition on the object, and managedFields
        change as `managedfields.record_scale` describes.
        """
        if not isinstance(scale, dict):
            raise errors.bad_request("the body of the request must be a Scale object")
        smeta: Obj = scale["metadata"] if isinstance(scale.get("metadata"), dict) else {}
        if smeta.get("name") not in (None, "", name):
            raise errors.bad_request(
                f"the name of the object ({smeta.get('name')}) does not match the name on the URL ({name})")
        if info.namespaced and smeta.get("namespace") not in (None, "", namespace):
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request")
        bucket = self.bucket(info)
        old = bucket.objects.get((namespace if info.namespaced else "", name))
        if old is None:
            raise errors.not_found(info.resource, name, info.group)
        obj = await self.aview(info, old)
        # the Scale's uid and resourceVersion are the update's preconditions (uid checked first)
        self._check_uid_precondition(info, smeta.get("uid"), old, namespace, name)
        rv = smeta.get("resourceVersion")
        if rv and str(rv) != obj["metadata"]["resourceVersion"]:
            raise errors.conflict(info.resource, name, info.group)
        before = (info.strategy.get_scale(info, obj).get("spec") or {}).get("replicas") or 0
        info.strategy.apply_scale(info, obj, scale)
        after = (info.strategy.get_scale(info, obj).get("spec") or {}).get("replicas") or 0
        record_scale(obj, info.strategy.scale_replicas_field(info), info.api_version,
                     manager if info.strategy.scale_has_field_manager and manager else None, before != after,
                     zero=not after)
        try:
            res = await self._aupdate_existing(info, bucket, old, obj, manager=manager, dry_run=dry_run,
                                               subresource="scale", record=False, caller=caller, options=options)
        except _Stale:
            raise errors.conflict(info.resource, name, info.group) from None
        return info.strategy.get_scale(info, await self.aview(info, res.stored))

    def patch_scale(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
                    manager: str, dry_run: bool, decode_yaml: Callable[[bytes], Any]) -> Obj:
        return run_sync(self.apatch_scale(info, namespace, name, ptype, body, manager=manager, dry_run=dry_run,
                                          decode_yaml=decode_yaml))

    async def apatch_scale(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
                           manager: str, dry_run: bool, decode_yaml: Callable[[bytes], Any],
                           caller: Caller | None = None, options: Obj | None = None) -> Obj:
        """PATCH `/scale`: the patch applies to the current Scale, then as `update_scale`."""
        current = await self.aget_scale(info, namespace, name, reading=False)
        try:
            patch = orjson.loads(body) if ptype != "apply" else decode_yaml(body)
        except orjson.JSONDecodeError:
            raise errors.bad_request("Invalid JSON Patch") from None
        if ptype == "json":
            scale = json_patch(current, patch)
        elif isinstance(patch, dict):
            scale = json_merge_patch(current, patch)
        else:
            raise errors.bad_request("Invalid JSON Patch")
        return await self.aupdate_scale(info, namespace, name, scale, manager=manager, dry_run=dry_run,
                                        caller=caller, options=options)

    # ---- delete ---------------------------------------------------------------------------
    def parse_delete_options(self, body: Obj, query: Mapping[str, str]) -> Obj:
        opts = dict(body)
        for k in ("propagationPolicy", "gracePeriodSeconds", "orphanDependents"):
            if k in query:
                opts[k] = query[k]
        pol = opts.get("propagationPolicy")
        if pol is not None and pol not in PROPAGATION:
            raise StatusError(
                422, "Invalid",
                f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "{pol}": '
                'supported values: "Foreground", "Background", "Orphan", "nil"',
                {"group": "meta.k8s.io", "kind": "DeleteOptions", "causes": [cause(
                    "FieldValueNotSupported", f'Unsupported value: "{pol}": supported values: "Foreground", '
                    '"Background", "Orphan", "nil"', "propagationPolicy")]})
        if pol is None and str(opts.get("orphanDependents", "")).lower() == "true":
            opts["propagationPolicy"] = "Orphan"
        return opts

    def delete(self, info: ServedResource, namespace: str, name: str, opts: Obj, *, dry_run: bool,
               manager: str = "") -> tuple[Stored | None, Obj | None]:
        """Returns (object, None) when the object stays (finalizers) or (None, Status) when it is gone."""
        return run_sync(self.adelete(info, namespace, name, opts, dry_run=dry_run, manager=manager))

    async def adelete(self, info: ServedResource, namespace: str, name: str, opts: Obj, *, dry_run: bool,
                      manager: str = "", caller: Caller | None = None) -> tuple[Stored | None, Obj | None]:
        apiwarnings.orphaning_delete(info.strategy.orphans_by_default, opts)
        for _ in range(STALE_RETRIES - 1):
            try:
                return await self._adelete(info, namespace, name, opts, dry_run=dry_run, caller=caller)
            except _Stale:
                continue
        try:
            return await self._adelete(info, namespace, name, opts, dry_run=dry_run, caller=caller)
        except _Stale:
            raise errors.conflict(info.resource, name, info.group) from None

    async def _adelete(self, info: ServedResource, namespace: str, name: str, opts: Obj, *, dry_run: bool,
                       caller: Caller | None) -> tuple[Stored | None, Obj | None]:
        bucket = self.bucket(info)
        old = bucket.objects.get((namespace if info.namespaced else "", name))
        if old is None:
            raise errors.not_found(info.resource, name, info.group)
        meta = old.obj["metadata"]
        pre = opts.get("preconditions") or {}
        if isinstance(pre, dict):
            if pre.get("uid") and pre["uid"] != meta["uid"]:
                raise StatusError(409, "Conflict", (
                    f'Operation cannot be fulfilled on {errors._qualified(info.kind, info.group)} "{name}": the UID in the precondition '
                    f'({pre["uid"]}) does not match the UID in record ({meta["uid"]}). The object might have '
                    "been deleted and then recreated"), {"name": name, **({"group": info.group} if info.group else {}),
                                                        "kind": info.kind})
            if pre.get("resourceVersion") and str(pre["resourceVersion"]) != meta["resourceVersion"]:
                raise StatusError(409, "Conflict", (
                    f'Operation cannot be fulfilled on {errors._qualified(info.kind, info.group)} "{name}": the ResourceVersion in the '
                    f'precondition ({pre["resourceVersion"]}) does not match the ResourceVersion in record '
                    f'({meta["resourceVersion"]}). The object might have been modified'),
                    {"name": name, **({"group": info.group} if info.group else {}), "kind": info.kind})
        special = (info.group, info.resource)
        before = list(meta.get("finalizers") or [])
        fins = gc_finalizers(before, opts, info.strategy.orphans_by_default)
        grace = info.strategy.graceful_delete_seconds(info, old.obj, opts)
        if grace > 0:
            return await self._delete_gracefully(info, bucket, old, fins, grace, dry_run), None
        if meta.get("deletionTimestamp"):
            # already terminating: only the garbage-collection finalizers can change (no admission:
            # the store finalizes the pending deletion without validating it again)
            if fins == before:
                return old, None
            obj = await self.aview(info, old)
            obj["metadata"]["finalizers"] = fins
            return await self._acommit_delete_mark(info, bucket, old, obj, dry_run), None
        webhooks = self._webhooks_for(caller)
        if webhooks is not None:
            from .admission import AdmissionCall

            call = AdmissionCall(info, "DELETE", namespace if info.namespaced else "", name, None,
                                 await self.aview(info, old), caller, dry_run, "",  # type: ignore[arg-type]
                                 _options("DeleteOptions", opts, dry_run))
            await webhooks.mutate(call)
            await webhooks.validate(call)
            if bucket.objects.get(old.key) is not old:
                raise _Stale()
        plain_strategy = type(info.strategy).prepare_for_delete is Strategy.prepare_for_delete
        if caller is not None and self.conversion is not None and self.conversion.needed(
                info, [old.obj], info.api_version):
            await self.aview(info, old)  # the store decodes the object in the request's version first
        if plain_strategy and not fins and special != CRDS:
            return None, await self._adelete_now(info, bucket, old, dry_run)  # the common case, no copy needed
        obj = await self.aview(info, old)
        keep = info.strategy.prepare_for_delete(info, obj)
        if special == CRDS and CRD_FINALIZER not in fins:
            fins.append(CRD_FINALIZER)
        if fins or keep:
            om = obj["metadata"]
            if fins:
                om["finalizers"] = fins
            if om.get("generation") and special != CRDS:
                # markAsDeleting: the spec is final from here on, which controllers see as a new
                # generation (a CRD's own Delete marks it without going through it)
                om["generation"] = int(om["generation"]) + 1
            om["deletionTimestamp"] = now_rfc3339()
            if fins and special != CRDS:  # a CRD's own Delete sets no grace period
                om["deletionGracePeriodSeconds"] = 0
            if special == CRDS:
                status = obj.setdefault("status", {})
                conds = status["conditions"] = list(status.get("conditions") or [])
                conds.append({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress",
                              "message": "CustomResource deletion is in progress",
                              "lastTransitionTime": now_rfc3339()})
            return await self._acommit_delete_mark(info, bucket, old, obj, dry_run), None
        return None, await self._adelete_now(info, bucket, old, dry_run)

    async def _delete_gracefully(self, info: ServedResource, bucket: Bucket, old: Stored, fins: Sequence[str],
                           grace: int, dry_run: bool) -> Stored:
        """`BeforeDelete` with a grace period: the object is marked to go `grace` seconds from now
        (or sooner than an earlier mark said) and stays until whoever waits for it deletes it."""
        obj = await self.aview(info, old)
        om = obj["metadata"]
        current = om.get("deletionGracePeriodSeconds")
        if om.get("deletionTimestamp") and current is not None and int(current) <= grace and list(fins) == list(
                om.get("finalizers") or []):
            return old
        at = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=grace)
        om["deletionTimestamp"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        om["deletionGracePeriodSeconds"] = grace
        if fins:
            om["finalizers"] = list(fins)
        if om.get("generation"):
            om["generation"] = int(om["generation"]) + 1
        return await self._acommit_delete_mark(info, bucket, old, obj, dry_run)

    def crd_terminating(self, info: ServedResource) -> bool:
        """Whether the CRD that defines a custom resource has its `Terminating` condition."""
        crd = self.store.bucket("/".join(CRDS)).objects.get(("", info.crd_name))
        conditions = ((crd.obj.get("status") or {}).get("conditions") or []) if crd is not None else []
        return any(c.get("type") == "Terminating" and c.get("status") == "True" for c in conditions
                   if isinstance(c, dict))

    async def _adelete_now(self, info: ServedResource, bucket: Bucket, old: Stored, dry_run: bool) -> Obj:
        """Remove the object (watchers get DELETED with its last state) and return what DELETE answers:
        the Success Status, or the object itself where the registry says `ReturnDeletedObject`."""
        meta = old.obj["metadata"]
        if info.return_deleted_object:
            status = info.strategy.decorate(info, await self.aview(info, old))
        else:
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                      "details": {"name": meta["name"], **({"group": info.group} if info.group else {}),
                                  "kind": info.resource, "uid": meta["uid"]}}
        if not dry_run:
            gone = dict(old.obj)
            gone["metadata"] = dict(gone["metadata"])
            self.store.commit(bucket, DELETED, gone, old)
        return status

    async def _acommit_delete_mark(self, info: ServedResource, bucket: Bucket, old: Stored, obj: Obj,
                                   dry_run: bool) -> Stored:
        obj = await self.ato_stored_form(info, obj)
        if bucket.objects.get(old.key) is not old:
            raise _Stale()
        if dry_run:
            return Stored(obj, old.rv)
        return self.store.commit(bucket, MODIFIED, obj, old).new

    def delete_collection(self, info: ServedResource, namespace: str, opts: Obj, *, dry_run: bool,
                          match: Callable[[Obj], bool] | None) -> ListResult:
        return run_sync(self.adelete_collection(info, namespace, opts, dry_run=dry_run, match=match))

    async def adelete_collection(self, info: ServedResource, namespace: str, opts: Obj, *, dry_run: bool,
                                 match: Callable[[Obj], bool] | None, caller: Caller | None = None) -> ListResult:
        apiwarnings.orphaning_delete(info.strategy.orphans_by_default, opts)
        res = self.list(info, namespace if info.namespaced else None, {}, match, True)
        out: list[Stored] = []
        for st in res.items:
            meta = st.obj["metadata"]
            try:
                obj, _status = await self.adelete(info, meta.get("namespace", ""), meta["name"], opts,
                                                  dry_run=dry_run, caller=caller)
            except StatusError:
                continue
            out.append(obj if obj is not None else st)
        return ListResult(out, self.store.rv)


# ---- small helpers -----------------------------------------------------------------------------
def _options(kind: str, options: Obj | None, dry_run: bool) -> Obj:
    """The operation's options as an AdmissionReview carries them (`CreateOptions`, ...)."""
    out: Obj = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    for key, value in (options or {}).items():
        if key not in ("kind", "apiVersion", "dryRun") and value not in (None, ""):
            out[key] = value
    if dry_run:
        out["dryRun"] = ["All"]
    return out


def gc_finalizers(finalizers: list[str], opts: Obj, orphans_by_default: bool) -> list[str]:
    """`deletionFinalizersForGarbageCollection`: the object's finalizers with `orphan` /
    `foregroundDeletion` recomputed from the delete options, then the finalizers already set, then
    the kind's default policy (each one removed and re-added at the end, as the real server does)."""
    policy = opts.get("propagationPolicy")
    orphan_opt = opts.get("orphanDependents")
    if orphan_opt is not None and not isinstance(orphan_opt, bool):
        orphan_opt = str(orphan_opt).lower() == "true"
    if orphan_opt is not None:
        orphan = bool(orphan_opt)
    elif policy in PROPAGATION:
        orphan = policy == "Orphan"
    elif "orphan" in finalizers or FOREGROUND in finalizers:
        orphan = "orphan" in finalizers
    else:
        orphan = orphans_by_default
    if orphan_opt is not None:
        foreground = False
    elif policy in PROPAGATION:
        foreground = policy == "Foreground"
    else:
        foreground = FOREGROUND in finalizers and "orphan" not in finalizers
    out = [f for f in finalizers if f not in ("orphan", FOREGROUND)]
    if orphan:
        out.append("orphan")
    if foreground:
        out.append(FOREGROUND)
    return out


def _same(new: Obj, old: Obj) -> bool:
    """A no-op write: the object would be stored as the same bytes (Go's encoding of the same
    values: `True` is not `1`, govalues.GO), managedFields compared without their timestamps."""
    if new == old:
        return equal(new, old, GO)
    nm, om = new.get("metadata") or {}, old.get("metadata") or {}
    if {k: v for k, v in new.items() if k != "metadata"} != {k: v for k, v in old.items() if k != "metadata"}:
        return False
    if {k: v for k, v in nm.items() if k != "managedFields"} != {k: v for k, v in om.items() if k != "managedFields"}:
        return False

    def strip(mf: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "time"} for e in mf or []]

    return bool(strip(nm.get("managedFields")) == strip(om.get("managedFields"))) and equal(
        {k: v for k, v in new.items() if k != "metadata"}, {k: v for k, v in old.items() if k != "metadata"}, GO)


def _drop_empty_meta(obj: Obj) -> None:
    meta = obj.get("metadata") or {}
    for k in ("labels", "annotations", "finalizers", "ownerReferences", "managedFields"):
        if k in meta and not meta[k]:
            del meta[k]


def _storage_version(value: Any) -> int:
    """etcd3's `ObjectResourceVersion`: the version as an unsigned integer, 0 when it does not parse."""
    text = str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""
    if not text.isascii() or not text.isdigit():
        return 0
    return int(text) if int(text) < 1 << 64 else 0


def parse_resource_version(text: str) -> int | None:
    """A `resourceVersion` query parameter (None when empty); anything but an unsigned integer is
    the real server's 500 from `strconv.ParseUint`."""
    if not text:
        return None
    try:
        rv = int(text)
        if rv < 0:
            raise ValueError
    except ValueError:
        raise StatusError(500, "", f'resourceVersion: Invalid value: "{text}": strconv.ParseUint: '
                                   f'parsing "{text}": invalid syntax') from None
    return rv


def _encode_continue(rv: int, key: Key) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{key[0]}/{key[1]}\x00"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, Key]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        d = orjson.loads(raw)
        rv = int(d["rv"])
        start = str(d["start"]).rstrip("\x00")
        ns, _, name = start.rpartition("/")
        if rv <= 0:
            raise ValueError
        return rv, (ns, name + "\x00")
    except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError):
        bad = next((i for i, c in enumerate(token) if not ((c.isascii() and c.isalnum()) or c in "-_")),
                   len(token) - 1 if len(token) % 4 == 1 else len(token))
        raise errors.bad_request(
            f"invalid continue token: continue key is not valid: illegal base64 data at input byte {bad}") from None
