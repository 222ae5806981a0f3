"""`Context`: everything a reconcile gets besides the request.

- ``ctx.get()``: the primary object from the cache (None: it is gone), seeing the controller's
  own writes (read your writes);
- ``ctx.reader(resource)``: the cache of any kind the controller watches (``for_``/``owns``/
  ``watches``; a name or a typed resource class), ``ctx.owned(resource)``: the primary's children of a kind it owns; ``ctx.get(Type)``
  and ``ctx.owned(Type)`` read them as a typed `kubeloop.resources.CustomResource`;
- ``ctx.client``: a `kubeloop.client.Client` for the request's cluster whose writes are tracked
  (a write hook: every write path is seen by read-your-writes);
- ``ctx.apply(obj)``, ``ctx.apply_status(status, part=None)``, ``ctx.patch_status(patch)``: writes
  that skip the server call when nothing would change;
- ``ctx.event(...)``: a Kubernetes Event about the primary (or another object);
- ``ctx.log``: a logger whose every line carries the controller, cluster, namespace and name;
- ``ctx.now()``: the time by the controller's clock (virtual in tests, `kubeloop.testing.VirtualClock`);
- ``ctx.cache``: the `SharedCache`, for anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol, Self, TypeVar, overload

from kubeloop.cache import OWNER_INDEX, FrozenDict, SharedCache
from kubeloop.client import Client, ResourceRef
from kubeloop.controller._apply import Applied, can_skip, fingerprint
from kubeloop.controller._logs import RequestLogger, request_logger
from kubeloop.controller._request import Request
from kubeloop.controller._scope import OverlayReader, RunView
from kubeloop.controller._status import (
    status_apply_body,
    status_contains,
    status_field_manager,
    status_patch_body,
)
from kubeloop.controller._targets import TargetKey
from kubeloop.meta import resource_version_of, set_controller_reference, uid_of
from kubeloop.queue import REAL_CLOCK, Clock


class TypedResource(Protocol):
    """A typed resource class (`kubeloop.resources.CustomResource`), seen from here without importing
    pydantic: the layer below this one defines it."""

    @classmethod
    def resource(cls) -> str: ...

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Self: ...

    def to_object(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=TypedResource)

ResourceArg = str | type[TypedResource]
"""What the builder (``for_``, ``owns``, ``watches``), ``ctx.reader`` and ``Manager.informer`` take: a
``group/version/Kind`` name or a typed resource class (``WebApp`` for ``WebApp.resource()``)."""


def resource_name(resource: object) -> str:
    """The ``group/version/Kind`` of a `ResourceArg` (a name as it is); a clear error for anything else."""
    if isinstance(resource, str):
        return resource
    if isinstance(resource, type) and callable(getattr(resource, "from_object", None)):
        return resource.resource()  # type: ignore[attr-defined]
    raise TypeError(f"expected a resource name (group/version/Kind) or a kubeloop.resources.CustomResource "
                    f"class, got {resource!r}")


class Context:
    """What one reconcile of one request gets (see the module docstring). Built per reconcile."""

    def __init__(self, run: RunView, request: Request, client: Client, reconcile_id: str, *,
                 clock: Clock = REAL_CLOCK) -> None:
        self._rt = run
        self.request = request
        self.client = client
        self.reconcile_id = reconcile_id
        self._clock = clock
        self._log: RequestLogger | None = None
        self.targets_asked: set[TargetKey] = set()  # what this reconcile watched (see `watch_target`)

    def now(self) -> datetime:
        """The time now (aware, UTC) by the clock the controller schedules by.

        Use it instead of ``datetime.now()``/``time.time()`` for anything compared with a
        ``requeue_after``: under `kubeloop.testing.VirtualClock` both move together.
        """
        return self._clock.wall()

    @property
    def log(self) -> RequestLogger:
        """A logger whose lines carry the controller, cluster, namespace, name and reconcile id."""
        log = self._log
        if log is None:
            log = self._log = request_logger(self._rt.log, self._rt.name, self.request, self.reconcile_id)
        return log

    # ------------------------------------------------------------------ identity

    @property
    def controller(self) -> str:
        """The controller's name (also its default field manager)."""
        return self._rt.name

    @property
    def cluster(self) -> str:
        """The request's cluster."""
        return self.request.cluster

    @property
    def field_manager(self) -> str:
        """The field manager name used by ``apply``."""
        return self._rt.field_manager

    @property
    def cache(self) -> SharedCache:
        """The shared cache the controller runs on."""
        return self._rt.cache

    # ------------------------------------------------------------------ reads

    @overload
    def get(self) -> FrozenDict | None: ...

    @overload
    def get(self, as_type: type[R]) -> R | None: ...

    def get(self, as_type: type[R] | None = None) -> FrozenDict | R | None:
        """The primary object (read-only), or None if it does not exist (deleted).

        ``ctx.get(WebApp)`` reads it as that `CustomResource` class (``WebApp.from_object``: validated,
        frozen; `ResourceValidationError` if it does not match). Each typed read converts again.
        """
        req = self.request
        obj = self.primary_reader().get(req.name, req.namespace)
        if as_type is None or obj is None:
            return obj
        resource_name(as_type)
        return as_type.from_object(obj)

    def primary_reader(self) -> OverlayReader:
        """The cache of the primary kind in this cluster."""
        return self.reader(self._rt.for_resource)

    def reader(self, resource: ResourceArg) -> OverlayReader:
        """The cache of ``resource`` (as in ``for_``/``owns``/``watches``: a name or a typed resource
        class) in this cluster."""
        return self._rt.reader(self.request.cluster, resource_name(resource))

    @overload
    def owned(self, resource: str, owner: Mapping[str, Any] | None = None) -> list[FrozenDict]: ...

    @overload
    def owned(self, resource: type[R], owner: Mapping[str, Any] | None = None) -> list[R]: ...

    def owned(self, resource: str | type[R], owner: Mapping[str, Any] | None = None) -> list[FrozenDict] | list[R]:
        """The cached objects of ``resource`` whose ownerReferences name ``owner`` (default: the primary).

        ``resource`` is a name as in ``owns()`` (read-only views), or a `CustomResource` class: the
        children are then read as that type (validated, frozen).
        """
        if isinstance(resource, str):
            name, typed = resource, None
        else:
            name, typed = resource_name(resource), resource
            if self._rt.metadata_only(self.request.cluster, name):
                raise TypeError(f"ctx.owned({typed.__name__}): the controller watches {name} metadata-only (the "
                                f"default of owns()); declare .owns({typed.__name__}, metadata_only=False) to "
                                "read the children typed")
        owner = owner if owner is not None else self.get()
        if owner is None:
            return []
        uid = (owner.get("metadata") or {}).get("uid")
        if not uid:
            return []
        children = self.reader(name).by_index(OWNER_INDEX, uid)
        if typed is None:
            return children
        return [typed.from_object(c) for c in children]

    async def watch_target(self, resource: str, name: str, *, namespace: str | None = None,
                           cluster: str | None = None) -> FrozenDict | None:
        """The object ``name`` of ``resource`` (any kind, e.g. ``"helm.toolkit.fluxcd.io/v2/HelmRelease"``)
        in ``cluster`` (default: the request's), read-only from a cache, or None if it does not exist;
        from now on its changes (create, update, delete) re-reconcile this request.

        ``namespace`` defaults to the request's for a namespaced kind. What a successful reconcile
        asked for is what the request watches: targets it no longer asks for are released, and
        their cache is closed once no parent needs it (see `kubeloop.controller._targets`). The first
        call on a new {cluster, kind} waits (bounded) for its cache to sync. Raises a `TargetError`:
        `UnknownCluster`, `ClusterUnreachable`, `KindNotServed` or `TargetNotSynced` (uncaught, the
        reconcile is logged and retried with backoff).
        """
        return await self._rt.targets.watch(self.request, self.targets_asked, resource, name, namespace, cluster)

    # ------------------------------------------------------------------ writes

    async def apply(self, obj: Mapping[str, Any], *, owner: Mapping[str, Any] | TypedResource | None = None,
                    force: bool = True, subresource: str | None = None) -> Mapping[str, Any]:
        """Server-side apply ``obj`` as this controller, unless the cache shows it would change nothing.

        ``owner``: make it the controller owner of ``obj`` first (``set_controller_reference``); an
        object or a typed resource (``ctx.get(WebApp)``).
        A namespaced object without a namespace gets the request's. Returns the server's answer,
        or the cached (read-only) object when the call was skipped (see `kubeloop.controller._apply`).
        """
        if owner is not None:  # on a copy: the caller's object (and its metadata) stay as they were
            owner = owner if isinstance(owner, Mapping) else owner.to_object()
            obj = set_controller_reference(owner, {**obj, "metadata": dict(obj.get("metadata") or {})})
        return await self._apply(obj, force=force, subresource=subresource, field_manager=self._rt.field_manager)

    async def _apply(self, obj: Mapping[str, Any], *, force: bool, subresource: str | None,
                     field_manager: str) -> Mapping[str, Any]:
        rt, client, req = self._rt, self.client, self.request
        res = await client.resolve(ResourceRef.of(obj))
        meta = obj.get("metadata") or {}
        if res.namespaced and not meta.get("namespace") and req.namespace:
            obj = {**obj, "metadata": {**meta, "namespace": req.namespace}}
            meta = obj["metadata"]
        if not meta.get("name"):
            raise ValueError("apply needs metadata.name")
        key = (req.cluster, res.group, res.kind, meta.get("namespace") or "" if res.namespaced else "",
               str(meta["name"]))
        memory_key = (key, field_manager, subresource)
        fp = fingerprint(obj)
        live = rt.read(key)
        if live is not None and can_skip(live, obj, rt.applied.get(memory_key), fp):
            rt.skipped_write()
            return live
        try:
            result = await client.apply(obj, field_manager=field_manager, force=force, subresource=subresource)
        except BaseException:
            rt.applied.forget(memory_key)
            raise
        rt.applied.put(memory_key, Applied(fp, resource_version_of(result), uid_of(result)))
        return result

    def _status_target(self, obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
        target = obj if obj is not None else self.get()
        if target is None:
            raise LookupError(f"{self.request}: the object is not in the cache (deleted?); no status to write")
        return target

    async def apply_status(self, status: Mapping[str, Any], *, obj: Mapping[str, Any] | None = None,
                           force: bool = True, part: str | None = None) -> Mapping[str, Any]:
        """Server-side apply ``status`` to the primary's (or ``obj``'s) status subresource.

        ``status`` is the *whole* status this controller owns, not a change: as with any server-side
        apply, a field it applied before and leaves out now is removed. Build the full desired status
        and apply it once per reconcile. A status written from separate places (conditions in one,
        counts in another) names each ``part``: each part is applied by a field manager of its own
        (``<field manager>/<part>``, see `status_field_manager`), so applying one part never removes
        another's fields; within a part, the rule above holds.
        """
        body = status_apply_body(self._status_target(obj), status)
        manager = self.field_manager if part is None else status_field_manager(self.field_manager, part)
        return await self._apply(body, force=force, subresource="status", field_manager=manager)

    async def patch_status(self, patch: Mapping[str, Any], *, obj: Mapping[str, Any] | None = None,
                           resource_version: str | None = None) -> Mapping[str, Any]:
        """JSON merge-patch the primary's (or ``obj``'s) status; skipped if the cache already matches."""
        target = self._status_target(obj)
        meta = target.get("metadata") or {}
        name, namespace = str(meta.get("name")), meta.get("namespace") or None
        live = self.primary_reader().get(name, namespace or "") if obj is None else target
        if live is not None and status_contains(live, patch):
            self._rt.skipped_write()
            return live
        return await self.client.patch_status(f"{target.get('apiVersion')}/{target.get('kind')}", name,
                                              status_patch_body(patch, resource_version), namespace=namespace,
                                              type="merge", field_manager=self.field_manager)

    # ------------------------------------------------------------------ events

    def event(self, type: str, reason: str, note: str, *, obj: Mapping[str, Any] | None = None,
              action: str | None = None, related: Mapping[str, Any] | None = None) -> None:
        """Record a Kubernetes Event about ``obj`` (default: the primary). Never blocks; raises only for a
        bad call (see `EventRecorder.record`)."""
        target = obj if obj is not None else self.get()
        if target is None:
            return
        recorder = self._rt.recorder
        if recorder is not None:
            recorder.record(self.request.cluster, target, type=type, reason=reason, note=note,
                            action=action or reason, related=related)
