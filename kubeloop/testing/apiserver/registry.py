"""The generic request flow shared by every resource (kube-apiserver's generic registry).

get / list / create / update / patch / delete / deletecollection are written once here; what differs
per kind is delegated to `info.strategy` (defaults, validation, generation, status subresource) and
the few kind-specific lifecycles (namespaces, CRDs) are small branches that call `controllers.py`.
Everything is synchronous: a request runs to completion between two awaits, which is what makes
the store's resourceVersion order and the watch fan-out gap-free.
"""

from __future__ import annotations

import base64
import binascii
import json
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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
from .resources import DRY_RUN, ServedResource, Strategy
from .shapes import Obj
from .storage import Bucket, Commit, Key, Stored, VersionedStore, key_range

NAMESPACES = ("", "namespaces")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
PROPAGATION = ("Foreground", "Background", "Orphan")
FOREGROUND = "foregroundDeletion"


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
        self.admission: list[Callable[[ServedResource, str, Obj], None]] = []

    # ---- helpers ------------------------------------------------------------------------
    def bucket(self, info: ServedResource) -> Bucket:
        return self.store.bucket(info.storage_key)

    def view(self, info: ServedResource, stored: Stored) -> Obj:
        """A fresh, mutable copy of a stored object in `info`'s version (with kind/apiVersion)."""
        obj: Obj = orjson.loads(stored.body)
        out = {"kind": stored.obj.get("kind", info.kind), "apiVersion": stored.obj.get("apiVersion",
                                                                                          info.api_version)}
        out.update(obj)
        if type(info.strategy).from_storage is not Strategy.from_storage:
            out = info.strategy.from_storage(info, out)
        out["kind"] = info.kind
        out["apiVersion"] = info.api_version
        return out

    def to_stored_form(self, info: ServedResource, obj: Obj) -> Obj:
        obj["kind"] = info.kind
        obj["apiVersion"] = info.api_version
        if is_identity(info.strategy):
            return obj
        return info.strategy.to_storage(info, obj)

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
        if not name and meta.get("generateName"):
            name = meta["name"] = generate_name(str(meta["generateName"]))
        try:
            self.namespace_check(info, namespace, name)
        except StatusError:
            # admission runs on the decoded object: a body the server cannot decode is a 400 even in
            # a missing or terminating namespace
            info.strategy.decode(info, obj)
            raise
        if meta.get("resourceVersion") not in (None, "", "0", 0):
            # etcd3 storage refuses it (a 500 on the real server, e.g. re-creating `kubectl get -o yaml` output)
            raise errors.internal_error("resourceVersion should not be set on objects to be created")
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
        if manager:  # the create handler's field manager, before admission and the strategy
            record_update(info, obj, None, manager, subresource)
        token = DRY_RUN.set(dry_run)
        try:
            info.strategy.prepare_for_create(info, obj)
        finally:
            DRY_RUN.reset(token)
        for admit in self.admission:
            admit(info, namespace, obj)
        info.strategy.validate_create(info, obj)  # the strategy owns all ObjectMeta validation
        if not name:  # never store a nameless object, whatever a strategy lets through
            raise errors.invalid(info.kind, None, [cause(
                "FieldValueRequired", "Required value: name or generateName is required", "metadata.name")],
                info.group)
        bucket = self.bucket(info)
        key = (namespace if info.namespaced else "", name)
        if key in bucket.objects:
            raise errors.already_exists(info.resource, name, info.group)
        _drop_empty_meta(obj)
        obj = self.to_stored_form(info, obj)
        if dry_run:
            return Stored(obj, 0)
        return self.store.commit(bucket, ADDED, obj, None).new

    # ---- update ---------------------------------------------------------------------------
    def update(self, info: ServedResource, namespace: str, name: str, obj: Obj, *, manager: str,
               dry_run: bool, subresource: str = "", allow_create: bool = False) -> WriteResult:
        """PUT (and the second half of PATCH): optimistic concurrency, strategy, no-op detection."""
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
                    self.create(info, namespace, obj, manager=manager, dry_run=True, verb="update")
                    raise errors.conflict(info.resource, name, info.group)
                return WriteResult(self.create(info, namespace, obj, manager=manager, dry_run=dry_run, verb="update"),
                                   created=True)
            raise errors.not_found(info.resource, name, info.group)
        if meta.get("resourceVersion") in (None, "") and not info.strategy.allow_unconditional_update:
            # Store.Update: the error names the resource where the kind goes (a known upstream TODO)
            raise errors.invalid(info.resource, name, [cause(
                "FieldValueInvalid", "Invalid value: 0x0: must be specified for an update",
                "metadata.resourceVersion")], info.group)
        return self._update_existing(info, bucket, old, obj, manager=manager, dry_run=dry_run,
                                     subresource=subresource)

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

    def _update_existing(self, info: ServedResource, bucket: Bucket, old: Stored, obj: Obj, *, manager: str,
                         dry_run: bool, subresource: str, record: bool = True, patched: bool = False) -> WriteResult:
        """`patched`: the write comes from a PATCH (server-side apply included)."""
        meta = obj["metadata"]
        old_view = self.view(info, old)
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
        if record and manager:  # the update handler's field manager, before the strategy
            record_update(info, obj, old_view, manager, subresource)
        if patched:
            ownerrefs.dedup(obj, after_admission=True)  # the patch handler's, after it
        if subresource and subresource != "scale":  # status, a Namespace's finalize
            info.strategy.prepare_for_subresource_update(info, subresource, obj, old_view)
        else:
            info.strategy.prepare_for_update(info, obj, old_view)
        status_write = subresource == "status"
        if status_write:
            info.strategy.validate_status_update(info, obj, old_view)
        else:
            info.strategy.validate_update(info, obj, old_view)
        _drop_empty_meta(obj)
        if _same(obj, old_view):
            return WriteResult(old)
        obj = self.to_stored_form(info, obj)
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

    # ---- patch ----------------------------------------------------------------------------
    def patch(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
              manager: str, dry_run: bool, subresource: str, force: bool,
              decode_yaml: Callable[[bytes], Any]) -> WriteResult:
        bucket = self.bucket(info)
        old = bucket.objects.get((namespace if info.namespaced else "", name))
        if ptype == "apply":
            return self._apply(info, bucket, namespace, name, old, body, manager=manager, dry_run=dry_run,
                               subresource=subresource, force=force, decode_yaml=decode_yaml)
        try:
            patch = orjson.loads(body)
        except orjson.JSONDecodeError:
            if ptype == "json":
                raise errors.bad_request("invalid character looking for beginning of value") from None
            raise errors.bad_request("Invalid JSON Patch") from None
        if old is None:
            raise errors.not_found(info.resource, name, info.group)
        new = self._patched(info, old, ptype, patch)
        if new["metadata"].get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({new['metadata'].get('name')}) does not match the name on the URL ({name})")
        shown = sprint_v(patch) if ptype == "smp" else None
        try:
            return self._update_existing(info, bucket, old, new, manager=manager, dry_run=dry_run,
                                         subresource=subresource, patched=True)
        except DecodeFailure as e:
            # the patched object does not fit the kind's types: upstream reports the patch itself (its
            # map for a strategic merge patch) or the patched JSON, made again here (the write path
            # changed `new`; not encoded on every write) as an invalid field
            if shown is None:
                shown = gostruct.go_json(gostruct.versioned(info.group, info.version, info.kind),
                                         self._patched(info, old, ptype, patch), decoded_paths(ptype, patch))
            msg = f"Invalid value: {json.dumps(shown)}: {e.detail}"
            # NewInvalid with no kind: its message starts with the (empty) kind and a space
            raise StatusError(422, "Invalid", f' "" is invalid: patch: {msg}', {"causes": [
                cause("FieldValueInvalid", msg, "patch")]}) from None

    def _patched(self, info: ServedResource, old: Stored, ptype: str, patch: Any) -> Obj:
        """``old`` with a merge, JSON or strategic merge patch applied, in `info`'s kind and version.

        Works on a fresh copy of ``old`` each time, and the patch functions copy the patch's values
        in: the same inputs give the same object again.
        """
        current = self.view(info, old)
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

    def _apply(self, info: ServedResource, bucket: Bucket, namespace: str, name: str, old: Stored | None,
               body: bytes, *, manager: str, dry_run: bool, subresource: str, force: bool,
               decode_yaml: Callable[[bytes], Any]) -> WriteResult:
        config = decode_yaml(body)
        if not isinstance(config, dict):
            raise errors.bad_request("error decoding YAML: the apply configuration must be an object")
        cmeta: Obj = config["metadata"] if isinstance(config.get("metadata"), dict) else {}
        mismatch = cmeta.get("name") not in (None, name)
        live = self.view(info, old) if old is not None else None
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
            st = self.create(info, namespace, merged, manager="", dry_run=dry_run, verb="patch")
            return WriteResult(st, created=True)
        return self._update_existing(info, bucket, old, merged, manager=manager, dry_run=dry_run,  # type: ignore[arg-type]
                                     subresource=subresource, record=False, patched=True)

    # ---- scale ----------------------------------------------------------------------------
    def get_scale(self, info: ServedResource, namespace: str, name: str, *, reading: bool = True) -> Obj:
        """The kind's Scale view; a built-in's GET 404 names `<resource>/scale` (its ScaleREST's own
        error), a PATCH's (the store's) names the resource."""
        old = self.bucket(info).objects.get((namespace if info.namespaced else "", name))
        if old is None:
            scale_rest = reading and not info.custom
            raise errors.not_found(f"{info.resource}/scale" if scale_rest else info.resource, name, info.group)
        return info.strategy.get_scale(info, self.view(info, old))

    def update_scale(self, info: ServedResource, namespace: str, name: str, scale: Any, *, manager: str,
                     dry_run: bool) -> Obj:
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
        obj = self.view(info, old)
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
        res = self._update_existing(info, bucket, old, obj, manager=manager, dry_run=dry_run, subresource="scale",
                                    record=False)
        return info.strategy.get_scale(info, self.view(info, res.stored))

    def patch_scale(self, info: ServedResource, namespace: str, name: str, ptype: str, body: bytes, *,
                    manager: str, dry_run: bool, decode_yaml: Callable[[bytes], Any]) -> Obj:
        """PATCH `/scale`: the patch applies to the current Scale, then as `update_scale`."""
        current = self.get_scale(info, namespace, name, reading=False)
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
        return self.update_scale(info, namespace, name, scale, manager=manager, dry_run=dry_run)

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
        apiwarnings.orphaning_delete(info.strategy.orphans_by_default, opts)
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
        if meta.get("deletionTimestamp"):
            # already terminating: only the garbage-collection finalizers can change
            if fins == before:
                return old, None
            obj = self.view(info, old)
            obj["metadata"]["finalizers"] = fins
            return self._commit_delete_mark(info, bucket, old, obj, dry_run), None
        plain_strategy = type(info.strategy).prepare_for_delete is Strategy.prepare_for_delete
        if plain_strategy and not fins and special != CRDS:
            return None, self._delete_now(info, bucket, old, dry_run)  # the common case, no copy needed
        obj = self.view(info, old)
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
            return self._commit_delete_mark(info, bucket, old, obj, dry_run), None
        return None, self._delete_now(info, bucket, old, dry_run)

    def crd_terminating(self, info: ServedResource) -> bool:
        """Whether the CRD that defines a custom resource has its `Terminating` condition."""
        crd = self.store.bucket("/".join(CRDS)).objects.get(("", info.crd_name))
        conditions = ((crd.obj.get("status") or {}).get("conditions") or []) if crd is not None else []
        return any(c.get("type") == "Terminating" and c.get("status") == "True" for c in conditions
                   if isinstance(c, dict))

    def _delete_now(self, info: ServedResource, bucket: Bucket, old: Stored, dry_run: bool) -> Obj:
        """Remove the object (watchers get DELETED with its last state) and return what DELETE answers:
        the Success Status, or the object itself where the registry says `ReturnDeletedObject`."""
        meta = old.obj["metadata"]
        if info.return_deleted_object:
            status = info.strategy.decorate(info, self.view(info, old))
        else:
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                      "details": {"name": meta["name"], **({"group": info.group} if info.group else {}),
                                  "kind": info.resource, "uid": meta["uid"]}}
        if not dry_run:
            gone = dict(old.obj)
            gone["metadata"] = dict(gone["metadata"])
            self.store.commit(bucket, DELETED, gone, old)
        return status

    def _commit_delete_mark(self, info: ServedResource, bucket: Bucket, old: Stored, obj: Obj,
                            dry_run: bool) -> Stored:
        obj = self.to_stored_form(info, obj)
        if dry_run:
            return Stored(obj, old.rv)
        return self.store.commit(bucket, MODIFIED, obj, old).new

    def delete_collection(self, info: ServedResource, namespace: str, opts: Obj, *, dry_run: bool,
                          match: Callable[[Obj], bool] | None) -> ListResult:
        apiwarnings.orphaning_delete(info.strategy.orphans_by_default, opts)
        res = self.list(info, namespace if info.namespaced else None, {}, match, True)
        out: list[Stored] = []
        for st in res.items:
            meta = st.obj["metadata"]
            try:
                obj, _status = self.delete(info, meta.get("namespace", ""), meta["name"], opts, dry_run=dry_run)
            except StatusError:
                continue
            out.append(obj if obj is not None else st)
        return ListResult(out, self.store.rv)


# ---- small helpers -----------------------------------------------------------------------------
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
