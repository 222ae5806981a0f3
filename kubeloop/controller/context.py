"""`Context`: everything a reconcile gets besides the request.

- ``ctx.get()``: the primary object from the cache (None: it is gone), seeing the controller's
  own writes (read your writes);
- ``ctx.reader(resource)``: the cache of any kind the controller watches (``for_``/``owns``/
  ``watches``), ``ctx.owned(resource)``: the primary's children of a kind it owns;
- ``ctx.client``: a `kubeloop.client.Client` for the request's cluster whose writes are tracked;
- ``ctx.apply(obj)``, ``ctx.apply_status(status)``, ``ctx.patch_status(patch)``: writes that skip
  the server call when nothing would change;
- ``ctx.event(...)``: a Kubernetes Event about the primary (or another object);
- ``ctx.log``: a logger whose every line carries the controller, cluster, namespace and name;
- ``ctx.cache``: the `SharedCache`, for anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubeloop.cache import OWNER_INDEX, FrozenDict, freeze
from kubeloop.controller.apply import apply_object
from kubeloop.controller.logs import RequestLogger, request_logger
from kubeloop.controller.ownership import set_controller_reference
from kubeloop.controller.request import Request
from kubeloop.controller.tracked_client import TrackedClient

_list = list

if TYPE_CHECKING:
    from kubeloop.cache import CacheReader, SharedCache
    from kubeloop.controller.controller import Controller


def _view(obj: Mapping[str, Any] | None) -> FrozenDict | None:
    if obj is None or isinstance(obj, FrozenDict):
        return obj
    return freeze(dict(obj))


class OverlayReader:
    """A cache reader of one kind that shows the controller's own newer writes on ``get``."""

    def __init__(self, ctx: Context, reader: CacheReader, group: str, kind: str) -> None:
        self._ctx = ctx
        self.reader = reader
        self.group = group
        self.kind = kind

    def get(self, name: str, namespace: str = "") -> FrozenDict | None:
        """The object (read-only), or our own newer write of it."""
        cached = self.reader.get(name, namespace)
        tracker = self._ctx._controller.tracker
        if tracker is None:
            return cached
        return _view(tracker.overlay((self._ctx.request.cluster, self.group, self.kind, namespace, name), cached))

    def list(self, namespace: str | None = None, label_selector: Any = None,
             field_selector: Any = None) -> _list[FrozenDict]:
        """Cached objects (as the informer has them)."""
        return self.reader.list(namespace, label_selector, field_selector)

    def by_index(self, index: str, key: str) -> _list[FrozenDict]:
        """Cached objects filed under ``key`` in ``index``."""
        return self.reader.by_index(index, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)


class Context:
    """What one reconcile of one request gets (see the module docstring). Built per reconcile."""

    def __init__(self, controller: Controller, request: Request, client: TrackedClient, reconcile_id: str) -> None:
        self._controller = controller
        self.request = request
        self.client = client
        self.reconcile_id = reconcile_id
        self._log: RequestLogger | None = None

    @property
    def log(self) -> RequestLogger:
        """A logger whose lines carry the controller, cluster, namespace, name and reconcile id."""
        log = self._log
        if log is None:
            log = self._log = request_logger(self._controller.log, self._controller.name, self.request,
                                             self.reconcile_id)
        return log

    # ------------------------------------------------------------------ identity

    @property
    def controller(self) -> str:
        """The controller's name (also its default field manager)."""
        return self._controller.name

    @property
    def cluster(self) -> str:
        return self.request.cluster

    @property
    def field_manager(self) -> str:
        """The field manager name used by ``apply``."""
        return self._controller.field_manager

    @property
    def cache(self) -> SharedCache:
        """The shared cache the controller runs on."""
        cache = self._controller.cache
        assert cache is not None
        return cache

    # ------------------------------------------------------------------ reads

    def get(self) -> FrozenDict | None:
        """The primary object (read-only), or None if it does not exist (deleted)."""
        req = self.request
        return self.primary_reader().get(req.name, req.namespace)

    def primary_reader(self) -> OverlayReader:
        """The cache of the primary kind in this cluster."""
        return self.reader(self._controller.for_resource)

    def reader(self, resource: str) -> OverlayReader:
        """The cache of ``resource`` (as named in ``for_``/``owns``/``watches``) in this cluster."""
        src = self._controller._source_for(self.request.cluster, resource)
        return OverlayReader(self, src.handle.reader, src.group, src.kind)

    def owned(self, resource: str, owner: Mapping[str, Any] | None = None) -> list[FrozenDict]:
        """The cached objects of ``resource`` whose ownerReferences name ``owner`` (default: the primary)."""
        owner = owner if owner is not None else self.get()
        if owner is None:
            return []
        uid = (owner.get("metadata") or {}).get("uid")
        if not uid:
            return []
        return self.reader(resource).by_index(OWNER_INDEX, uid)

    # ------------------------------------------------------------------ writes

    async def apply(self, obj: Mapping[str, Any], *, owner: Mapping[str, Any] | None = None, force: bool = True,
                    subresource: str | None = None) -> Mapping[str, Any]:
        """Server-side apply ``obj`` as this controller, unless the cache shows it would change nothing.

        ``owner``: make it the controller owner of ``obj`` first (``set_controller_reference``).
        Returns the server's answer, or the cached object when the call was skipped.
        """
        if owner is not None:
            obj = set_controller_reference(owner, dict(obj))
        return await apply_object(self, obj, force=force, subresource=subresource)

    async def apply_status(self, status: Mapping[str, Any], *, obj: Mapping[str, Any] | None = None,
                           force: bool = True) -> Mapping[str, Any]:
        """Server-side apply ``status`` to the primary's (or ``obj``'s) status subresource."""
        from kubeloop.controller.status import apply_status

        return await apply_status(self, status, obj=obj, force=force)

    async def patch_status(self, patch: Mapping[str, Any], *, obj: Mapping[str, Any] | None = None,
                           resource_version: str | None = None) -> Mapping[str, Any]:
        """JSON merge-patch the primary's (or ``obj``'s) status; skipped if the cache already matches."""
        from kubeloop.controller.status import patch_status

        return await patch_status(self, patch, obj=obj, resource_version=resource_version)

    # ------------------------------------------------------------------ events

    def event(self, type: str, reason: str, note: str, *, obj: Mapping[str, Any] | None = None,
              action: str | None = None, related: Mapping[str, Any] | None = None) -> None:
        """Record a Kubernetes Event about ``obj`` (default: the primary). Never blocks, never raises."""
        target = obj if obj is not None else self.get()
        if target is None:
            return
        recorder = self._controller.recorder
        if recorder is not None:
            recorder.record(self.request.cluster, target, type=type, reason=reason, note=note,
                            action=action or reason, related=related)
